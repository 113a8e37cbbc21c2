! SPDX-License-Identifier: BSD-3-Clause
! What piano must see of a Fortran program, in each binding: compiled with
! -DBINDING_F08 (use mpi_f08), -DBINDING_MODULE (use mpi) or neither
! (mpif.h); -DLARGE_COUNT with use mpi_f08: check 1 with MPI_COUNT_KIND
! counts (the MPI-4 procedures, which call the C large-count calls). Two
! ranks.
!  1. background progress: rank 1 posts a large MPI_Irecv, then polls a flag
!     file without any MPI call until rank 0's MPI_Wait on the matching
!     MPI_Isend has returned (a timeout means nothing progressed rank 1's
!     MPI: natively, the expected failure); data and status checked;
!  2. persistent requests: MPI_Send_init/MPI_Recv_init started twice with
!     MPI_Startall, completed by MPI_Waitall, freed;
!  3. MPI_Ibcast and MPI_Iallreduce, completed by MPI_Waitany (beside an
!     MPI_REQUEST_NULL: its index is 1-based) and MPI_Wait;
!  4. one MPI_Waitall on a tracked request (a large receive) and untracked
!     ones (a small send, MPI_REQUEST_NULL), statuses checked, then an
!     MPI_Testall that finds nothing left;
!  5. tracked requests completed by MPI_Test, MPI_Testany and MPI_Testsome
!     loops (Open MPI's use mpi_f08 calls pmpi_test_ and the like for
!     them: piano must see those completions too).
! That piano tracked the requests is checked from outside, on PIANO_STATS
! (fortran_bindings.sh): every rank "tracked N" and "still pending 0".
! usage: test_fortran_bindings init|thread [timeout_s]
program test_fortran_bindings
#include "fortran_binding.h"
#if defined(BINDING_F08)
#define REQUEST type(MPI_Request)
#define STATUS type(MPI_Status)
#define STATUSES(n) type(MPI_Status) :: statuses(n)
#define SOURCE_OF(s) s%MPI_SOURCE
#define TAG_OF(s) s%MPI_TAG
#define TAG_IN(ss, k) ss(k)%MPI_TAG
#define STATUS_K(ss, k) ss(k)
#else
#define REQUEST integer
#define STATUS integer, dimension(MPI_STATUS_SIZE)
#define STATUSES(n) integer :: statuses(MPI_STATUS_SIZE, n)
#define SOURCE_OF(s) s(MPI_SOURCE)
#define TAG_OF(s) s(MPI_TAG)
#define TAG_IN(ss, k) ss(MPI_TAG, k)
#define STATUS_K(ss, k) ss(:, k)
#endif
  integer, parameter :: n = 2 * 1024 * 1024
#if defined(LARGE_COUNT)
  ! The MPI_COUNT_KIND procedures (MPI-4) for the background-progress check.
  integer(kind=MPI_COUNT_KIND), parameter :: n1 = n
#else
  integer, parameter :: n1 = n
#endif
  double precision, allocatable :: buf(:), pbuf(:)
  integer :: ierr, rank, provided, stamp, t0, t1, rate, round, idx, count, small(4), small2(4)
  integer :: bval, sval, ssum
  REQUEST :: req, reqs(3), preq(1), creqs(3)
  STATUS :: status
  STATUSES(3)
  character(len=64) :: flagfile, arg
  logical :: there, flag
  double precision :: timeout

  call get_command_argument(1, arg)
  timeout = 20d0
  if (command_argument_count() >= 2) then
    call get_command_argument(2, flagfile)
    read (flagfile, *) timeout
  end if
  if (arg == 'thread') then
    call MPI_Init_thread(MPI_THREAD_FUNNELED, provided, ierr)
    if (ierr /= MPI_SUCCESS .or. provided < MPI_THREAD_FUNNELED) call fail('MPI_Init_thread')
  else
    call MPI_Init(ierr)
  end if
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  allocate (buf(n), pbuf(n))
  call system_clock(stamp)
  call MPI_Bcast(stamp, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  ! In the working directory (the build tree under CTest), not a shared /tmp.
  write (flagfile, '(A,I0,A)') 'piano-fbind-', stamp, '.flag'

  ! 1. background progress
  if (rank == 0) then
    buf = 42d0
    call MPI_Isend(buf, n1, MPI_DOUBLE_PRECISION, 1, 7, MPI_COMM_WORLD, req, ierr)
    call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
    open (unit=10, file=flagfile, status='replace')
    close (10)
  else
    buf = 0d0
    call MPI_Irecv(buf, n1, MPI_DOUBLE_PRECISION, 0, 7, MPI_COMM_WORLD, req, ierr)
    call system_clock(t0, rate)
    there = .false.
    do while (.not. there)
      inquire (file=flagfile, exist=there)
      call system_clock(t1)
      if (.not. there .and. dble(t1 - t0) / rate > timeout) then
        print '(A)', 'rank 1: no background progress: rank 0''s wait did not return'
        call MPI_Wait(req, status, ierr)
        call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
      end if
    end do
    call MPI_Wait(req, status, ierr)
    if (buf(1) /= 42d0 .or. buf(n) /= 42d0 .or. SOURCE_OF(status) /= 0 .or. TAG_OF(status) /= 7) &
      call fail('data or status of the large receive')
    open (unit=10, file=flagfile, status='old')
    close (10, status='delete')
  end if

  ! 2. persistent requests, started twice
  if (rank == 0) then
    call MPI_Send_init(pbuf, n, MPI_DOUBLE_PRECISION, 1, 8, MPI_COMM_WORLD, preq(1), ierr)
  else
    call MPI_Recv_init(pbuf, n, MPI_DOUBLE_PRECISION, 0, 8, MPI_COMM_WORLD, preq(1), ierr)
  end if
  do round = 1, 2
    pbuf = dble(rank * 10 + round)
    call MPI_Startall(1, preq, ierr)
    call MPI_Waitall(1, preq, statuses, ierr)
    if (rank == 1 .and. (pbuf(n) /= dble(round) .or. TAG_IN(statuses, 1) /= 8)) &
      call fail('persistent receive')
  end do
  call MPI_Request_free(preq(1), ierr)
  if (preq(1) /= MPI_REQUEST_NULL) call fail('MPI_Request_free left a handle')

  ! 3. two non-blocking collectives
  bval = 0
  if (rank == 0) bval = 1234
  sval = rank + 1
  creqs(1) = MPI_REQUEST_NULL
  call MPI_Ibcast(bval, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, creqs(2), ierr)
  call MPI_Iallreduce(sval, ssum, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, creqs(3), ierr)
  call MPI_Waitany(3, creqs, idx, status, ierr)
  if (idx /= 2 .and. idx /= 3) call fail('MPI_Waitany index')
  if (creqs(idx) /= MPI_REQUEST_NULL) call fail('MPI_Waitany left the handle')
  call MPI_Wait(creqs(5 - idx), status, ierr)
  if (bval /= 1234 .or. ssum /= 3) call fail('MPI_Ibcast or MPI_Iallreduce result')

  ! 4. tracked and untracked requests in one MPI_Waitall
  if (rank == 0) then
    small = (/ 1, 2, 3, 4 /)
    call MPI_Isend(small, 4, MPI_INTEGER, 1, 11, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Isend(buf, n, MPI_DOUBLE_PRECISION, 1, 12, MPI_COMM_WORLD, reqs(2), ierr)
  else
    call MPI_Irecv(small2, 4, MPI_INTEGER, 0, 11, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_Irecv(buf, n, MPI_DOUBLE_PRECISION, 0, 12, MPI_COMM_WORLD, reqs(2), ierr)
  end if
  reqs(3) = MPI_REQUEST_NULL
  call MPI_Waitall(3, reqs, statuses, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_Waitall')
  if (rank == 1) then
    call MPI_Get_count(STATUS_K(statuses, 1), MPI_INTEGER, count, ierr)
    if (TAG_IN(statuses, 1) /= 11 .or. TAG_IN(statuses, 2) /= 12 .or. count /= 4 .or. &
        small2(4) /= 4) call fail('MPI_Waitall statuses')
  end if
  call MPI_Testall(3, reqs, flag, MPI_STATUSES_IGNORE, ierr)
  if (.not. flag) call fail('MPI_Testall on completed requests')

  ! 5. tracked requests completed by test loops
  do round = 1, 3
    if (rank == 0) then
      call MPI_Isend(buf, n, MPI_DOUBLE_PRECISION, 1, 20 + round, MPI_COMM_WORLD, reqs(1), ierr)
    else
      call MPI_Irecv(buf, n, MPI_DOUBLE_PRECISION, 0, 20 + round, MPI_COMM_WORLD, reqs(1), ierr)
    end if
    flag = .false.
    count = 0
    do while (.not. flag .and. count == 0)
      if (round == 1) then
        call MPI_Test(reqs(1), flag, MPI_STATUS_IGNORE, ierr)
      else if (round == 2) then
        call MPI_Testany(1, reqs, idx, flag, MPI_STATUS_IGNORE, ierr)
      else
        call MPI_Testsome(1, reqs, count, small, MPI_STATUSES_IGNORE, ierr)
      end if
      if (ierr /= MPI_SUCCESS) call fail('MPI_Test, MPI_Testany or MPI_Testsome')
    end do
    if (reqs(1) /= MPI_REQUEST_NULL) call fail('a test loop left the handle')
  end do

  if (rank == 1) print '(A)', 'fortran bindings: all checks passed'
  deallocate (buf, pbuf)
  call MPI_Finalize(ierr)

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    integer :: e
    print '(A,I0,A,A)', 'rank ', rank, ': FAILED: ', what
    call MPI_Abort(MPI_COMM_WORLD, 1, e)
  end subroutine fail

end program test_fortran_bindings

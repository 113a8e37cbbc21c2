! SPDX-License-Identifier: BSD-3-Clause
! Background progress and completion semantics seen from Fortran (mpif.h).
! Rank 1 posts a large MPI_IRECV and then polls a flag file, making no MPI
! call, until rank 0's MPI_WAIT on the matching MPI_ISEND has returned; a
! timeout means nothing progressed rank 1's MPI. Then MPI_WAITANY (1-based
! index) and MPI_WAITALL statuses are checked.
! usage: test_fortran [timeout_s]
program test_fortran
  implicit none
  include 'mpif.h'
  integer, parameter :: n = 2 * 1024 * 1024
  double precision, allocatable :: buf(:)
  integer :: ierr, rank, provided, req, reqs(2), idx, stamp, t0, t1, rate
  integer :: status(MPI_STATUS_SIZE), statuses(MPI_STATUS_SIZE, 2)
  integer :: small(4), small2(4)
  character(len=64) :: flagfile, arg
  logical :: there
  double precision :: timeout

  timeout = 20d0
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) timeout
  end if
  call MPI_INIT_THREAD(MPI_THREAD_SINGLE, provided, ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  allocate (buf(n))
  call system_clock(stamp)
  call MPI_BCAST(stamp, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  ! In the working directory (the build tree under CTest), not a shared /tmp.
  write (flagfile, '(A,I0,A)') 'piano-ftest-', stamp, '.flag'

  if (rank == 0) then
    buf = 42d0
    call MPI_ISEND(buf, n, MPI_DOUBLE_PRECISION, 1, 7, MPI_COMM_WORLD, req, ierr)
    call MPI_WAIT(req, MPI_STATUS_IGNORE, ierr)
    open (unit=10, file=flagfile, status='replace')
    close (10)
  else
    buf = 0d0
    call MPI_IRECV(buf, n, MPI_DOUBLE_PRECISION, 0, 7, MPI_COMM_WORLD, req, ierr)
    call system_clock(t0, rate)
    there = .false.
    do while (.not. there)
      inquire (file=flagfile, exist=there)
      call system_clock(t1)
      if (.not. there .and. dble(t1 - t0) / rate > timeout) then
        print '(A)', 'rank 1: no background progress: rank 0''s wait did not return'
        call MPI_WAIT(req, status, ierr)
        call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
      end if
    end do
    call MPI_WAIT(req, status, ierr)
    if (buf(1) /= 42d0 .or. buf(n) /= 42d0 .or. status(MPI_SOURCE) /= 0) then
      print '(A)', 'rank 1: wrong data or status'
      call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
    end if
    open (unit=10, file=flagfile, status='old')
    close (10, status='delete')
  end if

  ! Completion calls: 1-based indices and per-request statuses.
  if (rank == 0) then
    small = (/ 1, 2, 3, 4 /)
    call MPI_SEND(small, 4, MPI_INTEGER, 1, 11, MPI_COMM_WORLD, ierr)
    call MPI_SEND(buf, n, MPI_DOUBLE_PRECISION, 1, 12, MPI_COMM_WORLD, ierr)
    call MPI_SEND(small, 2, MPI_INTEGER, 1, 13, MPI_COMM_WORLD, ierr)
  else
    reqs(1) = MPI_REQUEST_NULL
    call MPI_IRECV(small2, 4, MPI_INTEGER, 0, 11, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_WAITANY(2, reqs, idx, status, ierr)
    if (idx /= 2 .or. reqs(2) /= MPI_REQUEST_NULL .or. status(MPI_TAG) /= 11 &
        .or. small2(4) /= 4) then
      print '(A,I0)', 'rank 1: MPI_WAITANY gave index ', idx
      call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
    end if
    call MPI_IRECV(buf, n, MPI_DOUBLE_PRECISION, 0, 12, MPI_COMM_WORLD, reqs(1), ierr)
    call MPI_IRECV(small2, 4, MPI_INTEGER, 0, 13, MPI_COMM_WORLD, reqs(2), ierr)
    call MPI_WAITALL(2, reqs, statuses, ierr)
    call MPI_GET_COUNT(statuses(:, 2), MPI_INTEGER, idx, ierr)
    if (statuses(MPI_TAG, 1) /= 12 .or. statuses(MPI_TAG, 2) /= 13 .or. idx /= 2) then
      print '(A)', 'rank 1: MPI_WAITALL statuses are wrong'
      call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
    end if
    print '(A)', 'fortran: all checks passed'
  end if
  deallocate (buf)
  call MPI_FINALIZE(ierr)
end program test_fortran

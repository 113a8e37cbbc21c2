! SPDX-License-Identifier: BSD-3-Clause
! bench_ring_fortran_<mpi>: the small-message ring of bench_smallmsg, from
! Fortran (mpif.h): blocking 8-byte MPI_SEND / MPI_RECV around the ranks,
! microseconds per hop. What a Fortran program pays for the thread level
! the MPI runs at (docs/mpi.md, "Serialized mode").
!
!   bench_ring_fortran_<mpi> [LAPS [REPS]]   (2 or more ranks; defaults
!                                             40000 laps, 7 samples)
!
! Prints the MPI's thread level as the MPI reports it to the program, and
! the median, minimum and maximum of the samples.
program ring_fortran
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nproc, i, r, laps, reps, provided, n
  integer :: status(MPI_STATUS_SIZE)
  character(len=32) :: arg
  double precision :: buf, t0
  double precision, allocatable :: t(:)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  call MPI_Query_thread(provided, ierr)
  laps = 40000
  reps = 7
  if (command_argument_count() >= 1) then
    call get_command_argument(1, arg)
    read (arg, *) laps
  end if
  if (command_argument_count() >= 2) then
    call get_command_argument(2, arg)
    read (arg, *) reps
  end if
  if (nproc < 2 .or. laps < 1 .or. reps < 1) then
    if (rank == 0) print '(a)', 'bench_ring_fortran: needs 2 or more ranks, LAPS and REPS >= 1'
    call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  allocate (t(reps))
  buf = 1.0d0
  do r = 1, reps
    call MPI_Barrier(MPI_COMM_WORLD, ierr)
    t0 = MPI_Wtime()
    do i = 1, laps
      if (rank == 0) then
        call MPI_Send(buf, 1, MPI_DOUBLE_PRECISION, 1, 0, MPI_COMM_WORLD, ierr)
        call MPI_Recv(buf, 1, MPI_DOUBLE_PRECISION, nproc - 1, 0, MPI_COMM_WORLD, status, ierr)
      else
        call MPI_Recv(buf, 1, MPI_DOUBLE_PRECISION, rank - 1, 0, MPI_COMM_WORLD, status, ierr)
        call MPI_Send(buf, 1, MPI_DOUBLE_PRECISION, mod(rank + 1, nproc), 0, MPI_COMM_WORLD, ierr)
      end if
    end do
    t(r) = (MPI_Wtime() - t0) / (dble(laps) * nproc) * 1.0d6
  end do
  if (rank == 0) then
    call sort(t)
    n = (reps + 1) / 2
    print '(a,i0,a,i0,a,i0)', '# ranks: ', nproc, ', laps: ', laps, ', thread level provided: ', provided
    print '(a)', '#  kernel  bytes samples  median_us     min_us     max_us'
    print '(a,i7,f11.3,f11.3,f11.3)', '    ring      8', reps, t(n), t(1), t(reps)
  end if
  call MPI_Finalize(ierr)
contains
  subroutine sort(a)
    double precision, intent(inout) :: a(:)
    double precision :: x
    integer :: i, j
    do i = 1, size(a)
      do j = i + 1, size(a)
        if (a(j) < a(i)) then
          x = a(i)
          a(i) = a(j)
          a(j) = x
        end if
      end do
    end do
  end subroutine
end program

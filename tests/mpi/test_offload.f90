! SPDX-License-Identifier: BSD-3-Clause
! Submission offload from Fortran (use mpi): MPI's non-overtaking rule
! between the MPI_Isend calls piano defers (PIANO_OFFLOAD=always) and the
! other sends of the same program, made through the Fortran bindings
! (Open MPI's call PMPI_Ssend and PMPI_Sendrecv directly: piano binds them
! so that the queued sends go first). Rank 0 sends N integers 1..N to
! rank 1 on three tags, each with MPI_Isend, MPI_Ssend, MPI_Bsend or
! MPI_Sendrecv in turn; rank 1 receives them with MPI_ANY_TAG and checks
! that they come in order.
program offload_order
  use mpi
  implicit none
  integer, parameter :: n = 2000
  integer :: ierr, rank, i, provided, got, nreq, bad, bsize
  integer :: st(MPI_STATUS_SIZE), reqs(n), buf(n)
  character, allocatable :: bbuf(:)
  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  bad = 0
  if (rank == 0) then
    bsize = n * (4 + MPI_BSEND_OVERHEAD)
    allocate(bbuf(bsize))
    call MPI_Buffer_attach(bbuf, bsize, ierr)
    nreq = 0
    do i = 1, n
      buf(i) = i
      select case (mod(i, 5))
      case (0)
        call MPI_Ssend(buf(i), 1, MPI_INTEGER, 1, mod(i, 3), MPI_COMM_WORLD, ierr)
      case (1)
        call MPI_Sendrecv(buf(i), 1, MPI_INTEGER, 1, mod(i, 3), got, 0, MPI_INTEGER, &
                          MPI_PROC_NULL, 0, MPI_COMM_WORLD, st, ierr)
      case (2)
        call MPI_Bsend(buf(i), 1, MPI_INTEGER, 1, mod(i, 3), MPI_COMM_WORLD, ierr)
      case default
        nreq = nreq + 1
        call MPI_Isend(buf(i), 1, MPI_INTEGER, 1, mod(i, 3), MPI_COMM_WORLD, reqs(nreq), ierr)
      end select
    end do
    call MPI_Waitall(nreq, reqs, MPI_STATUSES_IGNORE, ierr)
    call MPI_Buffer_detach(bbuf, bsize, ierr)
  else
    do i = 1, n
      call MPI_Recv(got, 1, MPI_INTEGER, 0, MPI_ANY_TAG, MPI_COMM_WORLD, st, ierr)
      if (got /= i) bad = bad + 1
    end do
    if (bad == 0) then
      print '(a)', 'fortran offload: all messages in order'
    else
      print '(a,i0,a)', 'fortran offload: ', bad, ' messages out of order'
    end if
  end if
  call MPI_Finalize(ierr)
end program offload_order

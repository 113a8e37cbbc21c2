! SPDX-License-Identifier: BSD-3-Clause
! A Fortran (mpif.h) program in serialized mode: while a receive is in
! flight (piano's threads may call the MPI), the program calls procedures
! that piano does not bind itself (MPI_COMM_RANK, MPI_TYPE_SIZE,
! MPI_COMM_COMPARE: Open MPI's own call PMPI_ directly) for 100 ms and
! prints how many calls it made. fortran_gate.sh then checks, from
! PIANO_STATS, that those calls went through piano's gate ("application
! calls fenced": the fenced path is on from the engine's first background
! call, within a timer period of the receive's start).
program fortran_gate
  implicit none
  include 'mpif.h'
  integer, parameter :: n = 65536
  integer :: ierr, rank, nproc, peer, calls, r, sz, cmp, req
  double precision :: t0
  integer :: got(n), msg(n)
  integer :: status(MPI_STATUS_SIZE)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nproc, ierr)
  if (nproc /= 2) then
    print '(a)', 'fortran gate: needs 2 ranks'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  peer = 1 - rank
  got = -1
  msg = rank + 100
  ! 256 KiB: above the eager limit, so piano tracks it.
  call MPI_Irecv(got, n, MPI_INTEGER, peer, 7, MPI_COMM_WORLD, req, ierr)
  calls = 0
  t0 = MPI_Wtime()
  do while (MPI_Wtime() - t0 < 0.1d0)
    calls = calls + 3
    call MPI_Comm_rank(MPI_COMM_WORLD, r, ierr)
    call MPI_Type_size(MPI_DOUBLE_PRECISION, sz, ierr)
    call MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, cmp, ierr)
    if (r /= rank .or. sz /= 8 .or. cmp /= MPI_IDENT .or. ierr /= MPI_SUCCESS) then
      print '(a)', 'fortran gate: a call returned a wrong result'
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end do
  ! Both receives stay in flight until both loops are done.
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Send(msg, n, MPI_INTEGER, peer, 7, MPI_COMM_WORLD, ierr)
  call MPI_Wait(req, status, ierr)
  if (any(got /= peer + 100)) then
    print '(a)', 'fortran gate: wrong message'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
  print '(a,i0,a,i0,a)', 'fortran gate: rank ', rank, ': ', calls, ' calls'
  call MPI_Finalize(ierr)
end program

! SPDX-License-Identifier: BSD-3-Clause
! A Fortran program (mpif.h, or `use mpi_f08` with -DBINDING_F08; with
! -DCALL_PMPI, mpif.h calling the profiling name PMPI_COMM_RANK) in
! serialized mode: while a receive is in flight (piano's threads may call
! the MPI), the program calls procedures
! that piano does not bind itself (MPI_COMM_RANK, MPI_TYPE_SIZE,
! MPI_COMM_COMPARE: Open MPI's own call PMPI_ directly) for 100 ms and
! prints how many calls it made. fortran_gate.sh then checks, from
! PIANO_STATS, that those calls went through piano's gate ("application
! calls fenced": the fenced path is on from the engine's first background
! call, within a timer period of the receive's start).
program fortran_gate
#ifdef BINDING_F08
  use mpi_f08
  use, intrinsic :: iso_c_binding, only: c_ptr, c_loc, c_intptr_t
  implicit none
  type(MPI_Request) :: req
  type(MPI_Status) :: status
  type(c_ptr) :: addr
#else
  implicit none
  include 'mpif.h'
  integer :: req
  integer :: status(MPI_STATUS_SIZE)
#endif
  integer, parameter :: n = 65536
  integer :: ierr, rank, nproc, peer, calls, r, sz, cmp
  integer :: got(n), msg(n), bsize
  integer, target :: bbuf(1024)
  double precision :: t0
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
#ifdef CALL_PMPI
    call PMPI_Comm_rank(MPI_COMM_WORLD, r, ierr)
#else
    call MPI_Comm_rank(MPI_COMM_WORLD, r, ierr)
#endif
    call MPI_Type_size(MPI_DOUBLE_PRECISION, sz, ierr)
    call MPI_Comm_compare(MPI_COMM_WORLD, MPI_COMM_WORLD, cmp, ierr)
    if (r /= rank .or. sz /= 8 .or. cmp /= MPI_IDENT .or. ierr /= MPI_SUCCESS) then
      print '(a)', 'fortran gate: a call returned a wrong result'
      call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
    end if
  end do
  ! MPI_BUFFER_DETACH, which Open MPI's use mpi_f08 library implements
  ! itself (the address comes back as a C pointer), in flight as well.
  call MPI_Buffer_attach(bbuf, 4096, ierr)
#ifdef BINDING_F08
  call MPI_Buffer_detach(addr, bsize, ierr)
  if (transfer(addr, 0_c_intptr_t) /= transfer(c_loc(bbuf), 0_c_intptr_t)) bsize = -1
#else
  call MPI_Buffer_detach(bbuf, bsize, ierr)
#endif
  if (bsize /= 4096 .or. ierr /= MPI_SUCCESS) then
    print '(a)', 'fortran gate: MPI_BUFFER_DETACH returned a wrong buffer'
    call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
  end if
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

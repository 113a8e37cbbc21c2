! SPDX-License-Identifier: BSD-3-Clause
! The overlap report's call sites from Fortran (report_fortran.sh): two
! subroutines of the program, report_site_one and report_site_two, each
! exchange a message above every eager limit with the other rank, from
! their own MPI_ISEND and MPI_IRECV calls. The report must name these
! subroutines (or, where it names sites by module and offset, this
! program), never the Fortran binding's procedures in piano's library or
! the MPI's. Compiled with -g; run on 2 ranks.
subroutine report_site_one(buf, n, peer)
#include "fortran_binding.h"
  integer, intent(in) :: n, peer
  double precision :: buf(n, 2)
#if defined(BINDING_F08)
  type(MPI_Request) :: reqs(2)
#else
  integer :: reqs(2)
#endif
  integer :: ierr
  call MPI_IRECV(buf(1, 2), n, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_ISEND(buf(1, 1), n, MPI_DOUBLE_PRECISION, peer, 1, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_WAITALL(2, reqs, MPI_STATUSES_IGNORE, ierr)
end subroutine report_site_one

subroutine report_site_two(buf, n, peer)
#include "fortran_binding.h"
  integer, intent(in) :: n, peer
  double precision :: buf(n, 2)
#if defined(BINDING_F08)
  type(MPI_Request) :: reqs(2)
#else
  integer :: reqs(2)
#endif
  integer :: ierr
  call MPI_IRECV(buf(1, 2), n, MPI_DOUBLE_PRECISION, peer, 2, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_ISEND(buf(1, 1), n, MPI_DOUBLE_PRECISION, peer, 2, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_WAITALL(2, reqs, MPI_STATUSES_IGNORE, ierr)
end subroutine report_site_two

program report_fortran
#include "fortran_binding.h"
  integer, parameter :: n = 16384 ! 128 KiB
  double precision, allocatable :: buf(:, :)
  integer :: ierr, rank, nranks, i
  call MPI_INIT(ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  if (nranks /= 2) then
    print '(a)', 'report fortran: check failed: run on 2 ranks'
    call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
  end if
  allocate(buf(n, 2))
  buf = rank
  do i = 1, 5
    call report_site_one(buf, n, 1 - rank)
    call report_site_two(buf, n, 1 - rank)
  end do
  if (any(buf(:, 2) /= 1 - rank)) then
    print '(a)', 'report fortran: check failed: wrong data'
    call MPI_ABORT(MPI_COMM_WORLD, 1, ierr)
  end if
  call MPI_FINALIZE(ierr)
  if (rank == 0) print '(a)', 'report fortran: exchanges done'
end program report_fortran

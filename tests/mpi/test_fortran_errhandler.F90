! SPDX-License-Identifier: BSD-3-Clause
! A graph collective called from Fortran that fails in the call reports the
! error as the MPI does: through the communicator's error handler, then in
! ierror, with the request MPI_REQUEST_NULL; the communicator stays usable.
! The calls are Open MPI's MPI_IALLTOALLW in place, which piano's binding
! converts and runs as a graph under PIANO_COLL=graph, and MPI_IALLTOALLV,
! whose wrapper is generated (tools/gen-fortran.py). Its receive datatype
! holds two integers 2**47 - 2**21 bytes apart, so that the copy each block
! is staged into cannot be had on any rank, whatever the overcommit setting
! (the span is larger than any hole in a 47-bit address space). Nothing is
! sent: the call fails before any node runs. Built for each binding as
! fortran_binding.h says. Prints "fortran errhandler: all checks passed" on
! rank 0.
module ferr_count
#include "fortran_binding.h"
  integer :: handled = 0, handled_code = 0
contains
#if defined(BINDING_F08)
  subroutine count_error(comm, code)
    type(MPI_Comm) :: comm
    integer :: code
    handled = handled + 1
    handled_code = code
  end subroutine count_error
#else
  subroutine count_error(comm, code)
    integer :: comm, code
    handled = handled + 1
    handled_code = code
  end subroutine count_error
#endif
end module ferr_count

program test_fortran_errhandler
  use ferr_count
#if defined(BINDING_F08)
#define REQUEST type(MPI_Request)
#define COMM type(MPI_Comm)
#define DTYPE type(MPI_Datatype)
#define ERRHANDLER type(MPI_Errhandler)
#else
#define REQUEST integer
#define COMM integer
#define DTYPE integer
#define ERRHANDLER integer
#endif
  integer :: ierr, rc, provided, rank, nranks, j, one, total, bad, lens(2)
  integer(kind=MPI_ADDRESS_KIND) :: apart_displs(2)
  integer, allocatable :: rbuf(:), counts(:), displs(:)
  DTYPE, allocatable :: types(:)
  DTYPE :: apart
  COMM :: comm
  ERRHANDLER :: eh
  REQUEST :: req

  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  bad = 0
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  call MPI_Comm_create_errhandler(count_error, eh, ierr)
  call MPI_Comm_set_errhandler(comm, eh, ierr)

  lens = 1
  apart_displs(1) = 0
  apart_displs(2) = 2_MPI_ADDRESS_KIND**47 - 2_MPI_ADDRESS_KIND**21
  call MPI_Type_create_hindexed(2, lens, apart_displs, MPI_INTEGER, apart, ierr)
  call MPI_Type_commit(apart, ierr)
  allocate(rbuf(2 * nranks), counts(nranks), displs(nranks), types(nranks))
  rbuf = 0
  do j = 1, nranks
    counts(j) = 1
    displs(j) = (j - 1) * 8
    types(j) = apart
  end do

  ! piano's own wrapper.
  call not_null(req)
  call MPI_Ialltoallw(MPI_IN_PLACE, counts, displs, types, rbuf, counts, displs, types, &
                      comm, req, rc)
  call expect_failed('MPI_IALLTOALLW', rc, 1)

  ! A generated wrapper: MPI_IALLTOALLV in place, one receive datatype for
  ! every block.
  call not_null(req)
  call MPI_Ialltoallv(MPI_IN_PLACE, counts, displs, apart, rbuf, counts, displs, apart, &
                      comm, req, rc)
  call expect_failed('MPI_IALLTOALLV', rc, 2)

  ! The communicator goes on: a graph collective on it.
  one = 1
  total = 0
  call MPI_Iallreduce(one, total, 1, MPI_INTEGER, MPI_SUM, comm, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  if (ierr /= MPI_SUCCESS .or. total /= nranks .or. handled /= 2) then
    print '(a,i0,a,i0,a,i0)', 'check failed: rank ', rank, ': sum ', total, ', handler ', handled
    bad = 1
  end if

  call MPI_Type_free(apart, ierr)
  call MPI_Errhandler_free(eh, ierr)
  call MPI_Comm_free(comm, ierr)
  call MPI_Allreduce(MPI_IN_PLACE, bad, 1, MPI_INTEGER, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. bad == 0) print '(a)', 'fortran errhandler: all checks passed'
  call MPI_Finalize(ierr)
contains
  ! A handle that is not null: the failing call must make it null.
  subroutine not_null(r)
    REQUEST, intent(out) :: r
#if defined(BINDING_F08)
    r%MPI_VAL = 12345
#else
    r = 12345
#endif
    handled_code = 0
  end subroutine not_null

  ! The call `what` returned rc: an error, the handler's calls now
  ! `times` in all (the last one with rc), and the null request.
  subroutine expect_failed(what, rc, times)
    character(len=*), intent(in) :: what
    integer, intent(in) :: rc, times
    if (rc == MPI_SUCCESS .or. handled /= times .or. handled_code /= rc .or. &
        req /= MPI_REQUEST_NULL) then
      print '(a,i0,a,a,a,i0,a,i0,a,i0,a,l1)', 'check failed: rank ', rank, ': ', what, ' ', rc, &
            ', handler ran ', handled, ' times in all (code ', handled_code, &
            '), request null: ', req == MPI_REQUEST_NULL
      bad = 1
    end if
  end subroutine expect_failed
end program test_fortran_errhandler

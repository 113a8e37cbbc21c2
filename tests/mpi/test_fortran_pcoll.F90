! SPDX-License-Identifier: BSD-3-Clause
! Open MPI's persistent collectives (its pcollreq extension: MPIX_<coll>_init)
! from Fortran, in each binding: compiled with -DBINDING_F08 (use mpi_f08,
! use mpi_f08_ext), -DBINDING_MODULE (use mpi, use mpi_ext) or neither
! (mpif.h, mpif-ext.h). Two or more ranks. Eight persistent collectives,
! initialized once and started RUNS times with new data by MPI_Startall,
! completed by MPI_Waitall: on a duplicate of MPI_COMM_WORLD an allreduce
! (MPI_SUM), a broadcast from the last rank, an all-to-all, a
! reduce-scatter-block (MPI_SUM), a barrier, an allreduce with a
! non-commutative operation made by MPI_Op_create and freed right after
! its init (a (x) b = 2a + b, applied in rank order), an all-to-all with
! arrays of datatypes (MPI_Alltoallw's, which piano converts itself); on
! a ring of MPI_Dist_graph_create_adjacent (each rank receives from the
! previous one, sends to the next) a neighbourhood all-to-all with arrays
! of datatypes. Every result is compared with its value computed here.
! Under PIANO_COLL=graph the ctest entry asks PIANO_STATS to count the
! persistent graphs: all eight on every rank (the freed operation held by
! its graph). With the argument keep-op the operation is freed at the
! end instead (Open MPI 4.1.4's own persistent allreduce crashes when the
! program frees its operation after the init: natively, only that form
! passes).
! usage: test_fortran_pcoll [keep-op]
module fpcoll_ops
#include "fortran_binding.h"
contains
#if defined(BINDING_F08)
  subroutine twice_plus(invec, inoutvec, len, datatype)
    use, intrinsic :: iso_c_binding, only: c_ptr, c_f_pointer
    type(c_ptr), value :: invec, inoutvec
    integer :: len
    type(MPI_Datatype) :: datatype
    integer, pointer :: a(:), b(:)
    call c_f_pointer(invec, a, [len])
    call c_f_pointer(inoutvec, b, [len])
    b = 2 * a + b
  end subroutine twice_plus
#else
  subroutine twice_plus(invec, inoutvec, len, datatype)
    integer :: len, datatype
    integer :: invec(len), inoutvec(len)
    inoutvec = 2 * invec + inoutvec
  end subroutine twice_plus
#endif
end module fpcoll_ops

program test_fortran_pcoll
  use fpcoll_ops
#if defined(BINDING_F08)
  use mpi_f08_ext
#elif defined(BINDING_MODULE)
  use mpi_ext
#endif
  implicit none
#if !defined(BINDING_F08) && !defined(BINDING_MODULE)
  include 'mpif-ext.h'
#endif
#if defined(BINDING_F08)
#define REQUEST type(MPI_Request)
#define COMM type(MPI_Comm)
#define OP type(MPI_Op)
#else
#define REQUEST integer
#define COMM integer
#define OP integer
#define DTYPE integer
#endif
#if defined(BINDING_F08)
#define DTYPE type(MPI_Datatype)
#endif
  integer, parameter :: n = 1500, runs = 3, ncoll = 8
  integer :: ierr, rank, size, provided, run, i, k, root, expect, bad, left, right
  integer, allocatable :: s1(:), r1(:), b2(:), s3(:), r3(:), s4(:), r4(:), s6(:), r6(:)
  integer, allocatable :: s7(:), r7(:), counts(:), displs(:), s8(:), r8(:)
  integer(kind=MPI_ADDRESS_KIND) :: adispl(1)
  DTYPE, allocatable :: types(:)
  REQUEST :: reqs(ncoll)
  COMM :: comm, ring
  OP :: op
  character(len=16) :: arg
  logical :: keep_op

  arg = ''
  if (command_argument_count() >= 1) call get_command_argument(1, arg)
  keep_op = arg == 'keep-op'
  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, comm, ierr)
  root = size - 1
  allocate (s1(n), r1(n), b2(n), s3(n * size), r3(n * size), s4(n * size), r4(n), s6(n), r6(n))
  allocate (s7(n * size), r7(n * size), counts(size), displs(size), types(size), s8(n), r8(n))
  left = mod(rank + size - 1, size)
  right = mod(rank + 1, size)
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, [left], MPI_UNWEIGHTED, 1, [right], &
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, .false., ring, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Dist_graph_create_adjacent')
  do k = 1, size
    counts(k) = n
    displs(k) = (k - 1) * n * 4
    types(k) = MPI_INTEGER
  end do
  adispl(1) = 0

  call MPIX_Allreduce_init(s1, r1, n, MPI_INTEGER, MPI_SUM, comm, MPI_INFO_NULL, reqs(1), ierr)
  call check(ierr == MPI_SUCCESS, 'MPIX_Allreduce_init')
  call MPIX_Bcast_init(b2, n, MPI_INTEGER, root, comm, MPI_INFO_NULL, reqs(2), ierr)
  call check(ierr == MPI_SUCCESS, 'MPIX_Bcast_init')
  call MPIX_Alltoall_init(s3, n, MPI_INTEGER, r3, n, MPI_INTEGER, comm, MPI_INFO_NULL, reqs(3), ierr)
  call check(ierr == MPI_SUCCESS, 'MPIX_Alltoall_init')
  call MPIX_Reduce_scatter_block_init(s4, r4, n, MPI_INTEGER, MPI_SUM, comm, MPI_INFO_NULL, &
                                      reqs(4), ierr)
  call check(ierr == MPI_SUCCESS, 'MPIX_Reduce_scatter_block_init')
  call MPIX_Barrier_init(comm, MPI_INFO_NULL, reqs(5), ierr)
  call check(ierr == MPI_SUCCESS, 'MPIX_Barrier_init')
  call MPI_Op_create(twice_plus, .false., op, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Op_create')
  call MPIX_Allreduce_init(s6, r6, n, MPI_INTEGER, op, comm, MPI_INFO_NULL, reqs(6), ierr)
  call check(ierr == MPI_SUCCESS, 'MPIX_Allreduce_init with a user-defined operation')
  ! Freed at once: the persistent collective must still apply it.
  if (.not. keep_op) call free_op()
  call MPIX_Alltoallw_init(s7, counts, displs, types, r7, counts, displs, types, comm, &
                           MPI_INFO_NULL, reqs(7), ierr)
  call check(ierr == MPI_SUCCESS, 'MPIX_Alltoallw_init')
  call MPIX_Neighbor_alltoallw_init(s8, counts, adispl, types, r8, counts, adispl, types, ring, &
                                    MPI_INFO_NULL, reqs(8), ierr)
  call check(ierr == MPI_SUCCESS, 'MPIX_Neighbor_alltoallw_init')

  do run = 1, runs
    do i = 1, n
      s1(i) = value(rank, i, run)
      b2(i) = -1
      if (rank == root) b2(i) = value(root, i, run)
      s6(i) = value(rank, i, run)
      s8(i) = value(rank, i, run)
    end do
    do k = 0, size - 1
      do i = 1, n
        s3(k * n + i) = value(rank, k * n + i, run)
        s4(k * n + i) = value(rank, k * n + i, run)
        s7(k * n + i) = value(rank, k * n + i, run)
      end do
    end do
    r1 = 0
    r3 = 0
    r4 = 0
    r6 = 0
    r7 = 0
    r8 = 0
    call MPI_Startall(ncoll, reqs, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Startall')
    call MPI_Waitall(ncoll, reqs, MPI_STATUSES_IGNORE, ierr)
    call check(ierr == MPI_SUCCESS, 'MPI_Waitall')
    bad = 0
    do i = 1, n
      expect = 0
      do k = 0, size - 1
        expect = expect + value(k, i, run)
      end do
      if (r1(i) /= expect) bad = bad + 1
      if (b2(i) /= value(root, i, run)) bad = bad + 1
      expect = 0
      do k = 0, size - 1
        expect = expect + value(k, rank * n + i, run)
      end do
      if (r4(i) /= expect) bad = bad + 1
      ! ((x0 (x) x1) (x) x2) ..., a (x) b = 2a + b
      expect = value(0, i, run)
      do k = 1, size - 1
        expect = 2 * expect + value(k, i, run)
      end do
      if (r6(i) /= expect) bad = bad + 1
      if (r8(i) /= value(left, i, run)) bad = bad + 1
      do k = 0, size - 1
        if (r3(k * n + i) /= value(k, rank * n + i, run)) bad = bad + 1
        if (r7(k * n + i) /= value(k, rank * n + i, run)) bad = bad + 1
      end do
    end do
    call check(bad == 0, 'results of a run')
  end do

  do k = 1, ncoll
    call MPI_Request_free(reqs(k), ierr)
  end do
  if (keep_op) call free_op()
  call MPI_Comm_free(comm, ierr)
  call MPI_Comm_free(ring, ierr)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  if (rank == 0) print '(A)', 'fortran pcoll: all checks passed'
  call MPI_Finalize(ierr)

contains

  integer function value(who, i, run)
    integer, intent(in) :: who, i, run
    value = who * 7919 + i * 3 + run * 31 + 1
  end function value

  subroutine free_op()
    call MPI_Op_free(op, ierr)
    call check(ierr == MPI_SUCCESS .and. op == MPI_OP_NULL, 'MPI_Op_free')
  end subroutine free_op

  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer :: e
    if (.not. ok) then
      print '(A,I0,A,A)', 'rank ', rank, ': check failed: ', what
      call MPI_Abort(MPI_COMM_WORLD, 1, e)
    end if
  end subroutine check
end program test_fortran_pcoll

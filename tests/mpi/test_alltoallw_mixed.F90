! SPDX-License-Identifier: BSD-3-Clause
! The Fortran side of test_alltoallw_mixed.c, `use mpi`, or `use mpi_f08`
! with -DBINDING_F08: the same MPI_IALLTOALLW calls, communicators and
! MPI_INEIGHBOR_ALLTOALLW, the same blocks, the same bounded waits; with
! -DHAVE_BARRIER_INIT (MPICH: MPI-4), the persistent barrier.
program alltoallw_mixed
#if defined(BINDING_F08)
  use mpi_f08
#define COMM type(MPI_Comm)
#define DTYPE type(MPI_Datatype)
#define REQUEST type(MPI_Request)
#else
  use mpi
#define COMM integer
#define DTYPE integer
#define REQUEST integer
#endif
  implicit none
  integer :: ierr, provided, rank, nranks, i, j, k, d, ok, dests(2), srcs(2)
  COMM :: ring, split, cart
  DTYPE :: pair
  REQUEST :: req
  integer(kind=MPI_ADDRESS_KIND) :: adisp(2)
  logical :: periodic(1), weighted
  integer, allocatable :: sbuf(:), rbuf(:), cnt(:), one(:), disp(:)
  DTYPE, allocatable :: st(:), rt(:)
  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided, ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  allocate(sbuf(2 * nranks), rbuf(2 * nranks), cnt(nranks), one(nranks), disp(nranks), &
           st(nranks), rt(nranks))
  call MPI_Type_contiguous(2, MPI_INTEGER, pair, ierr)
  call MPI_Type_commit(pair, ierr)
  do j = 0, nranks - 1
    cnt(j + 1) = 2
    one(j + 1) = 1
    disp(j + 1) = j * 2 * 4
    st(j + 1) = MPI_INTEGER
    rt(j + 1) = pair
    do k = 0, 1
      sbuf(2 * j + k + 1) = rank * 100 + j * 10 + k
      rbuf(2 * j + k + 1) = -1
    end do
  end do
  ok = 1
  call MPI_Ialltoallw(sbuf, cnt, disp, st, rbuf, one, disp, rt, MPI_COMM_WORLD, req, ierr)
  if (ierr /= MPI_SUCCESS) ok = 0
  call wait_bounded(req)
  call check('')
  rbuf = sbuf
  call MPI_Comm_split(MPI_COMM_WORLD, 0, rank, split, ierr)
  call MPI_Ialltoallw(MPI_IN_PLACE, cnt, disp, st, rbuf, one, disp, rt, split, req, ierr)
  if (ierr /= MPI_SUCCESS) ok = 0
  call wait_bounded(req)
  call MPI_Comm_free(split, ierr)
  call check(', in place')
  periodic(1) = .true.
  call MPI_Cart_create(MPI_COMM_WORLD, 1, [nranks], periodic, .false., cart, ierr)
  rbuf = -1
  call MPI_Ialltoallw(sbuf, cnt, disp, st, rbuf, one, disp, rt, cart, req, ierr)
  if (ierr /= MPI_SUCCESS) ok = 0
  call wait_bounded(req)
  call check(', Cartesian')
  call MPI_Comm_free(cart, ierr)
  dests = [mod(rank + nranks - 1, nranks), mod(rank + 1, nranks)]
  srcs = [dests(2), dests(1)]
  call MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, MPI_UNWEIGHTED, 2, dests, &
                                      MPI_UNWEIGHTED, MPI_INFO_NULL, .false., ring, ierr)
  ! MPI_UNWEIGHTED must reach the MPI as such.
  call MPI_Dist_graph_neighbors_count(ring, i, j, weighted, ierr)
  if (weighted .or. i /= 2 .or. j /= 2) then
    print '(a)', 'alltoallw mixed: Fortran rank: the ring is weighted or of the wrong degree'
    ok = 0
  end if
  adisp(1) = 0
  adisp(2) = 8
  do d = 0, 1
    do k = 0, 1
      sbuf(2 * d + k + 1) = rank * 100 + d * 10 + k
      rbuf(2 * d + k + 1) = -1
    end do
  end do
  call MPI_Ineighbor_alltoallw(sbuf, cnt, adisp, st, rbuf, one, adisp, rt, ring, req, ierr)
  if (ierr /= MPI_SUCCESS) ok = 0
  call wait_bounded(req)
  do d = 0, 1
    do k = 0, 1
      if (rbuf(2 * d + k + 1) /= srcs(d + 1) * 100 + d * 10 + k) then
        print '(a,i0,a,i0,a,i0)', 'alltoallw mixed: Fortran rank, neighbours: block ', d, &
              '[', k, '] = ', rbuf(2 * d + k + 1)
        ok = 0
      end if
    end do
  end do
  call MPI_Comm_free(ring, ierr)
#if defined(HAVE_BARRIER_INIT)
  call MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, req, ierr)
  do i = 1, 2
    call MPI_Start(req, ierr)
    call wait_bounded(req)
  end do
  call MPI_Request_free(req, ierr)
#endif
  call MPI_Allreduce(MPI_IN_PLACE, ok, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
  call MPI_Type_free(pair, ierr)
  call MPI_Finalize(ierr)
  if (ok /= 1) stop 1
contains
  subroutine wait_bounded(r)
    REQUEST, intent(inout) :: r
    logical :: done
    double precision :: t0
    t0 = MPI_Wtime()
    done = .false.
    do while (.not. done)
      call MPI_Test(r, done, MPI_STATUS_IGNORE, ierr)
      if (.not. done .and. MPI_Wtime() - t0 > 20d0) then
        print '(a)', 'alltoallw mixed: Fortran rank: timed out'
        call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
      end if
    end do
  end subroutine wait_bounded
  subroutine check(what)
    character(len=*), intent(in) :: what
    do i = 0, nranks - 1
      do k = 0, 1
        if (rbuf(2 * i + k + 1) /= i * 100 + rank * 10 + k) then
          print '(a,a,a,i0,a,i0,a,i0)', 'alltoallw mixed: Fortran rank', what, ': block ', i, &
                '[', k, '] = ', rbuf(2 * i + k + 1)
          ok = 0
        end if
      end do
    end do
  end subroutine check
end program alltoallw_mixed

! SPDX-License-Identifier: BSD-3-Clause
! MPI-IO from Fortran (mpif.h) beside background progress. Open MPI's
! Fortran bindings call PMPI_ directly, so the layer wraps MPI_FILE_OPEN,
! MPI_FILE_CLOSE and the transfers itself: a file call closes the gate, and
! a file piano did not see opened could not keep it closed for the requests
! of the MPI's own (docs/mpi.md, "The gate"); without those wrappers this
! test crashes on Open MPI.
! Non-blocking and blocking writes and reads in a loop, the data checked, while a large
! receive (tracked) stays pending so that the progress task runs. The file
! name is a blank-padded variable, as Fortran programs pass it: the wrapper
! must drop the blanks as Open MPI does, or MPI_FILE_DELETE (Open MPI's own
! binding) misses the file and the directory cannot be removed.
! The directory is made with mkdtemp and removed.
program test_file
  use, intrinsic :: iso_c_binding
  implicit none
  include 'mpif.h'
  interface
    function mkdtemp(template) bind(C, name='mkdtemp')
      import :: c_ptr, c_char
      character(kind=c_char) :: template(*)
      type(c_ptr) :: mkdtemp
    end function mkdtemp
    function rmdir(path) bind(C, name='rmdir')
      import :: c_int, c_char
      character(kind=c_char) :: path(*)
      integer(c_int) :: rmdir
    end function rmdir
  end interface
  integer, parameter :: n = 8192, big = 4 * 1024 * 1024, iters = 60
  integer :: ierr, rank, nranks, provided, it, k, i, fh, q, peer, from
  integer :: reqs(2), q2(2), idx
  integer(kind=MPI_OFFSET_KIND) :: off, disp, pos
  integer :: st(MPI_STATUS_SIZE), cnt
  integer :: both(2 * 8192)
  integer, allocatable :: w(:), r(:)
  character, allocatable :: bigin(:), bigout(:)
  character(len=256) :: dir
  character(len=300) :: path
  character(kind=c_char, len=256) :: tmpl

  call MPI_INIT_THREAD(MPI_THREAD_SINGLE, provided, ierr)
  call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
  call MPI_COMM_SIZE(MPI_COMM_WORLD, nranks, ierr)
  dir = ' '
  if (rank == 0) then
    tmpl = '/tmp/piano-ffile-XXXXXX' // c_null_char
    if (.not. c_associated(mkdtemp(tmpl))) call fail('mkdtemp failed')
    dir = tmpl(1:index(tmpl, c_null_char) - 1)
  end if
  call MPI_BCAST(dir, len(dir), MPI_CHARACTER, 0, MPI_COMM_WORLD, ierr)
  path = trim(dir) // '/data'

  allocate (w(n), r(n), bigin(big), bigout(big))
  peer = mod(rank + 1, nranks)
  from = mod(rank + nranks - 1, nranks)
  call MPI_IRECV(bigin, big, MPI_CHARACTER, from, 42, MPI_COMM_WORLD, reqs(1), ierr)

  off = int(rank, MPI_OFFSET_KIND) * n * 4
  do it = 1, iters
    call MPI_FILE_OPEN(MPI_COMM_WORLD, path, MPI_MODE_RDWR + MPI_MODE_CREATE, &
                       MPI_INFO_NULL, fh, ierr)
    if (ierr /= MPI_SUCCESS) call fail('MPI_FILE_OPEN failed')
    do k = 1, 8
      w = [(it * 100003 + k * 7919 + i * 31 + rank, i = 1, n)]
      ! Two requests in flight (not MPI_WAITALL: docs/mpi.md, "Known limits").
      call MPI_FILE_IWRITE_AT(fh, off, w, n / 2, MPI_INTEGER, q2(1), ierr)
      call MPI_FILE_IWRITE_AT(fh, off + n * 2, w(n / 2 + 1), n / 2, MPI_INTEGER, q2(2), ierr)
      call MPI_WAITANY(2, q2, idx, MPI_STATUS_IGNORE, ierr)
      call MPI_WAITANY(2, q2, idx, MPI_STATUS_IGNORE, ierr)
      r = 0
      call MPI_FILE_IREAD_AT(fh, off, r, n, MPI_INTEGER, q, ierr)
      call MPI_WAIT(q, MPI_STATUS_IGNORE, ierr)
      if (any(r /= w)) call fail('read back different data')
      w = w + 1
      call MPI_FILE_WRITE_AT(fh, off, w, n, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
      r = 0
      call MPI_FILE_READ_AT(fh, off, r, n, MPI_INTEGER, MPI_STATUS_IGNORE, ierr)
      if (any(r /= w)) call fail('read back different data (blocking)')
    end do
    call MPI_FILE_CLOSE(fh, ierr)
    if (ierr /= MPI_SUCCESS .or. fh /= MPI_FILE_NULL) call fail('MPI_FILE_CLOSE')
  end do

  ! A view whose etype is an INTEGER, in a region of the file of this rank's
  ! own: a non-blocking write through the individual pointer moves it by
  ! etypes (piano must see MPI_FILE_SET_VIEW, which Open MPI's Fortran
  ! binding passes to PMPI_ directly), a split collective writes the next
  ! part, a blocking collective reads both back.
  call MPI_FILE_OPEN(MPI_COMM_WORLD, path, MPI_MODE_RDWR + MPI_MODE_CREATE, &
                     MPI_INFO_NULL, fh, ierr)
  disp = (int(nranks, MPI_OFFSET_KIND) + 2 * rank) * n * 4
  call MPI_FILE_SET_VIEW(fh, disp, MPI_INTEGER, MPI_INTEGER, 'native', MPI_INFO_NULL, ierr)
  if (ierr /= MPI_SUCCESS) call fail('MPI_FILE_SET_VIEW')
  w = [(i * 7 + rank, i = 1, n)]
  call MPI_FILE_IWRITE(fh, w, n, MPI_INTEGER, q, ierr)
  call MPI_FILE_GET_POSITION(fh, pos, ierr)
  if (pos /= n) call fail('pointer not moved by etypes after MPI_FILE_IWRITE')
  call MPI_WAIT(q, st, ierr)
  r = w + 1
  call MPI_FILE_WRITE_ALL_BEGIN(fh, r, n, MPI_INTEGER, ierr)
  call MPI_FILE_WRITE_ALL_END(fh, r, st, ierr)
  call MPI_GET_COUNT(st, MPI_INTEGER, cnt, ierr)
  if (cnt /= n) call fail('count of MPI_FILE_WRITE_ALL_END')
  call MPI_FILE_GET_POSITION(fh, pos, ierr)
  if (pos /= 2 * n) call fail('pointer after the split collective')
  call MPI_FILE_SYNC(fh, ierr)
  call MPI_FILE_READ_AT_ALL(fh, 0_MPI_OFFSET_KIND, both, 2 * n, MPI_INTEGER, st, ierr)
  if (any(both(1:n) /= w) .or. any(both(n + 1:) /= w + 1)) call fail('view read back')
  call MPI_FILE_CLOSE(fh, ierr)

  bigout = 'b'
  call MPI_ISEND(bigout, big, MPI_CHARACTER, peer, 42, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_WAITALL(2, reqs, MPI_STATUSES_IGNORE, ierr)
  if (bigin(1) /= 'b' .or. bigin(big) /= 'b') call fail('large message')
  call MPI_BARRIER(MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    call MPI_FILE_DELETE(path, MPI_INFO_NULL, ierr)
    if (rmdir(trim(dir) // c_null_char) /= 0) call fail('directory not empty: blanks kept?')
    print '(A,I0,A)', 'fortran file: all checks passed (', nranks, ' ranks)'
  end if
  call MPI_FINALIZE(ierr)

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    integer :: e
    print '(A,I0,2A)', 'rank ', rank, ': ', what
    call MPI_ABORT(MPI_COMM_WORLD, 1, e)
  end subroutine fail

end program test_file

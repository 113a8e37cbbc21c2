! SPDX-License-Identifier: BSD-3-Clause
! Non-blocking file transfers from `use mpi_f08` (docs/mpi.md, "Fortran").
! MPICH's f08 MPI_FILE_OPEN, SET_VIEW, GET_POSITION... call PMPI_ directly
! and Open MPI's f08 procedures call its mpif.h ones: piano must see the open
! and the view through its own Fortran wrappers to make the transfers.
! Rank 0, on a file of its own (a blank-padded name, in a directory made with
! mkdtemp): a view whose etype is an INTEGER; MPI_FILE_IWRITE of 64 MiB from
! every other 1 KiB block of a buffer; the pointer must have moved by etypes
! (MPI_FILE_GET_POSITION answers without waiting for the transfer).
! Then it computes without MPI calls until the file has its full size
! (INQUIRE), and the transfer must not have been made inside the call. Fails
! after SECONDS (the first argument) with "no background progress"; the data
! is read back and compared. Rank 1 waits at a barrier.
program test_file_f08
  use mpi_f08
  use, intrinsic :: iso_c_binding
  implicit none
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
  integer, parameter :: n = 16 * 1024 * 1024, blk = 256
  integer :: rank, provided, i, ok
  integer(kind=MPI_OFFSET_KIND) :: pos
  integer(kind=8) :: sz, t0, t1, rate
  integer, allocatable :: wide(:), back(:)
  type(MPI_File) :: fh
  type(MPI_Datatype) :: every_other
  type(MPI_Request) :: req
  type(MPI_Status) :: st
  character(len=256) :: dir, arg
  character(len=300) :: path
  character(kind=c_char, len=256) :: tmpl
  real :: limit
  logical :: inside, seen
  double precision :: x

  call MPI_Init_thread(MPI_THREAD_MULTIPLE, provided)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  limit = 20
  if (command_argument_count() > 0) then
    call get_command_argument(1, arg)
    read (arg, *) limit
  end if
  ok = 1
  if (rank == 0) then
    tmpl = '/tmp/piano-ff08-XXXXXX' // c_null_char
    if (.not. c_associated(mkdtemp(tmpl))) call fail('mkdtemp failed')
    dir = tmpl(1:index(tmpl, c_null_char) - 1)
    path = trim(dir) // '/data'
    allocate (wide(2 * n), back(n))
    wide = -1
    do i = 0, n - 1
      wide(i / blk * 2 * blk + mod(i, blk) + 1) = i * 7 + 1
    end do
    call MPI_Type_vector(n / blk, blk, 2 * blk, MPI_INTEGER, every_other)
    call MPI_Type_commit(every_other)
    call MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR + MPI_MODE_CREATE, &
                       MPI_INFO_NULL, fh)
    call MPI_File_set_view(fh, 0_MPI_OFFSET_KIND, MPI_INTEGER, MPI_INTEGER, 'native', &
                           MPI_INFO_NULL)
    call MPI_File_iwrite(fh, wide, 1, every_other, req)
    call system_clock(t0, rate)
    inquire (file=trim(path), size=sz)
    call system_clock(t1)
    ! Made inside the call, the transfer overlapped nothing. A check that
    ! came late (the rank lost its CPU) proves nothing either way.
    inside = sz == 4_8 * n .and. (t1 - t0) * 1000 / rate < 5
    call MPI_File_get_position(fh, pos)
    if (pos /= n) call fail('pointer not moved by etypes after MPI_File_iwrite')
    seen = .false.
    x = 1
    call system_clock(t0)
    do while (.not. seen)
      do i = 1, 100000
        x = x * 1.0000001d0 + 1d-9
      end do
      inquire (file=trim(path), size=sz)
      seen = sz == 4_8 * n
      call system_clock(t1)
      if (real(t1 - t0) / rate > limit) exit
    end do
    call MPI_Wait(req, st)
    call MPI_File_read_at(fh, 0_MPI_OFFSET_KIND, back, n, MPI_INTEGER, st)
    if (any(back /= [(i * 7 + 1, i = 0, n - 1)])) call fail('read back different data')
    call MPI_File_close(fh)
    call MPI_File_delete(path, MPI_INFO_NULL)
    if (rmdir(trim(dir) // c_null_char) /= 0) call fail('cannot remove the directory')
    if (inside) then
      print '(A)', 'rank 0: no background progress: the call made the whole transfer'
      ok = 0
    else if (.not. seen) then
      print '(A,F6.2,A)', 'rank 0: no background progress after ', limit, ' s'
      ok = 0
    else
      print '(A,F7.4,A)', 'rank 0: the file was whole after ', real(t1 - t0) / rate, &
        ' s of computation'
    end if
    call MPI_Type_free(every_other)
  end if
  call MPI_Bcast(ok, 1, MPI_INTEGER, 0, MPI_COMM_WORLD)
  call MPI_Finalize()
  if (ok /= 1) stop 1
  if (rank == 0) print '(A)', 'fortran file f08: all checks passed'

contains

  subroutine fail(what)
    character(len=*), intent(in) :: what
    print '(A,I0,2A)', 'rank ', rank, ': ', what
    call MPI_Abort(MPI_COMM_WORLD, 1)
  end subroutine fail

end program test_file_f08

! The MPI binding of a Fortran test, chosen when it is compiled:
! -DBINDING_F08 (use mpi_f08), -DBINDING_MODULE (use mpi) or neither
! (mpif.h). Included where the use statements go (cpp, -cpp).
#if defined(BINDING_F08)
  use mpi_f08
#elif defined(BINDING_MODULE)
  use mpi
#endif
  implicit none
#if !defined(BINDING_F08) && !defined(BINDING_MODULE)
  include 'mpif.h'
#endif

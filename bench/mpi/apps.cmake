# MPI application benchmarks, included from bench/mpi/CMakeLists.txt:
#   interference.c  compute-kernel slowdown while communication is pending
#   halo.c          1-D ghost-cell exchange + triad workload (strong scaling)
#   nbc.c           overlap and CPU time of non-blocking collectives (OSU)
# each linked with bench_common2.c and built once per MPI found (see
# src/mpi) as bench_<prog>_<flavour>. One smoke test per program and MPI
# runs a tiny configuration with 2 ranks through piano-run and checks only
# the exit status (never the numbers: the machine is shared).
include(CheckCCompilerFlag)
# MPICH's mpi.h trips gcc 12's -Wstringop-overflow on MPI_STATUSES_IGNORE.
check_c_compiler_flag(-Wno-stringop-overflow PIANO_APPS_HAVE_WNO_STRINGOP)

find_program(PIANO_MPIRUN_openmpi NAMES mpirun.openmpi)
find_program(PIANO_MPIRUN_mpich NAMES mpiexec.mpich)

set(PIANO_APPS interference halo nbc)
# Tiny configurations: a few seconds each, even under load.
set(PIANO_APPS_SMOKE_interference
    --quick --rounds 1 --reps 2 --triad-elems 256K --dgemm-calls 1 --msg 1M)
set(PIANO_APPS_SMOKE_halo
    --quick --halo 64K --work 256K --scaling --iters 2 --reps 2 --warmup 0)
set(PIANO_APPS_SMOKE_nbc --quick --sizes 4,64K --reps 2 --target-ms 1)

foreach(flavour IN LISTS PIANO_MPI_FLAVOURS)
  foreach(prog IN LISTS PIANO_APPS)
    set(exe bench_${prog}_${flavour})
    add_executable(${exe} ${CMAKE_CURRENT_LIST_DIR}/${prog}.c
                          ${CMAKE_CURRENT_LIST_DIR}/bench_common2.c)
    target_include_directories(${exe} PRIVATE ${CMAKE_CURRENT_LIST_DIR}
                               ${PIANO_MPI_INC_${flavour}})
    target_link_directories(${exe} PRIVATE ${PIANO_MPI_LIBDIRS_${flavour}})
    target_link_libraries(${exe} PRIVATE ${PIANO_MPI_LIBS_${flavour}} Threads::Threads m)
    if(PIANO_APPS_HAVE_WNO_STRINGOP)
      target_compile_options(${exe} PRIVATE -Wno-stringop-overflow)
    endif()
    # The smoke test runs it through piano-run: the library must exist.
    add_dependencies(${exe} piano-mpi-${flavour})
    install(TARGETS ${exe} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

    if(NOT BUILD_TESTING OR NOT PIANO_MPIRUN_${flavour})
      continue()
    endif()
    if(flavour STREQUAL "openmpi")
      set(launch ${PIANO_MPIRUN_openmpi} --oversubscribe -np 2)
    else()
      set(launch ${PIANO_MPIRUN_mpich} -n 2)
    endif()
    set(test bench.${flavour}.${prog}_smoke)
    add_test(NAME ${test}
      COMMAND ${launch} ${PROJECT_BINARY_DIR}/piano-run $<TARGET_FILE:${exe}>
              ${PIANO_APPS_SMOKE_${prog}} --label smoke)
    set_tests_properties(${test} PROPERTIES
      LABELS bench
      TIMEOUT 120
      RUN_SERIAL TRUE
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
  endforeach()
endforeach()

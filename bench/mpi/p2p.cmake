# Point-to-point and multithreading MPI benchmarks, included from
# bench/mpi/CMakeLists.txt:
#   bench_latency_<flavour>     ping-pong latency, 1 B..64 KiB (latency.c)
#   bench_mthreads_<flavour>    1toN, NtoN, Nload (mthreads.c)
#   bench_reactivity_<flavour>  latency under k compute threads per core
#                               (reactivity.c)
# built once per MPI found (PIANO_MPI_FLAVOURS, see src/mpi), with the shared
# helpers of bench_mpi_common.c compiled once per MPI into
# piano_bench_mpi_common_<flavour> (a static library other benchmarks may
# link too). Each program gets a CTest smoke test, bench.<flavour>.<prog>_smoke,
# that runs a tiny configuration on 2 ranks through piano-run and checks
# only that it exits 0 (never the numbers: the machine is shared).
include(CheckCCompilerFlag)
# MPICH's mpi.h trips gcc 12's -Wstringop-overflow on MPI_STATUSES_IGNORE.
check_c_compiler_flag(-Wno-stringop-overflow PIANO_BENCH_P2P_HAVE_WNO_STRINGOP)
find_library(PIANO_BENCH_P2P_LIBM m)
find_program(PIANO_MPIRUN_openmpi NAMES mpirun.openmpi)
find_program(PIANO_MPIRUN_mpich NAMES mpiexec.mpich)

set(PIANO_BENCH_P2P_PROGRAMS latency mthreads reactivity)
# Tiny configurations for the smoke tests (a few seconds each).
set(PIANO_BENCH_P2P_SMOKE_latency
    --sizes 1,4K,64K --iters 200 --warmup 5 --max-time 1 --label smoke)
set(PIANO_BENCH_P2P_SMOKE_mthreads
    --threads 1,2 --iters 50 --warmup 2 --size 64K --load-iters 5
    --alone-time 0.05 --max-time 0.3 --label smoke)
set(PIANO_BENCH_P2P_SMOKE_reactivity
    --compute-threads 0,1 --iters 30 --warmup 2 --gap-us 500 --max-time 0.5
    --label smoke)

foreach(flavour IN LISTS PIANO_MPI_FLAVOURS)
  set(common piano_bench_mpi_common_${flavour})
  if(NOT TARGET ${common})
    add_library(${common} STATIC ${CMAKE_CURRENT_LIST_DIR}/bench_mpi_common.c)
    target_include_directories(${common} PUBLIC ${CMAKE_CURRENT_LIST_DIR}
                               ${PIANO_MPI_INC_${flavour}})
    target_link_directories(${common} PUBLIC ${PIANO_MPI_LIBDIRS_${flavour}})
    target_link_libraries(${common} PUBLIC ${PIANO_MPI_LIBS_${flavour}}
                          Threads::Threads ${CMAKE_DL_LIBS})
    if(PIANO_BENCH_P2P_LIBM)
      target_link_libraries(${common} PUBLIC ${PIANO_BENCH_P2P_LIBM})
    endif()
    if(PIANO_BENCH_P2P_HAVE_WNO_STRINGOP)
      target_compile_options(${common} PUBLIC -Wno-stringop-overflow)
    endif()
  endif()

  if(flavour STREQUAL "openmpi")
    set(launch ${PIANO_MPIRUN_openmpi} --oversubscribe -np 2)
  else()
    set(launch ${PIANO_MPIRUN_mpich} -n 2)
  endif()

  foreach(prog IN LISTS PIANO_BENCH_P2P_PROGRAMS)
    set(exe bench_${prog}_${flavour})
    add_executable(${exe} ${CMAKE_CURRENT_LIST_DIR}/${prog}.c)
    target_link_libraries(${exe} PRIVATE ${common})
    # The smoke test runs it through piano-run: the library must exist.
    add_dependencies(${exe} piano-mpi-${flavour})
    install(TARGETS ${exe} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})

    if(NOT BUILD_TESTING OR NOT PIANO_MPIRUN_${flavour})
      continue()
    endif()
    set(test bench.${flavour}.${prog}_smoke)
    add_test(NAME ${test}
      COMMAND ${launch} ${PROJECT_BINARY_DIR}/piano-run $<TARGET_FILE:${exe}>
              ${PIANO_BENCH_P2P_SMOKE_${prog}})
    set_tests_properties(${test} PROPERTIES
      LABELS bench
      TIMEOUT 120
      RUN_SERIAL TRUE
      ENVIRONMENT "OMPI_ALLOW_RUN_AS_ROOT=1;OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1;OMPI_MCA_rmaps_base_oversubscribe=1")
  endforeach()
endforeach()

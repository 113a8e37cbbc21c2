/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The real-application set's control (bench/apps/lammps.sh --control): a
 * library that does nothing, preloaded into the application the way
 * piano-run preloads piano. Being loaded at all changes a process: one more
 * object in every symbol scope, the MPI's own blocks at other places in the
 * heap after MPI_Init. The control run measures what that costs an
 * application, so that the report can tell it from what piano's work costs.
 */
int piano_bench_preload_control;

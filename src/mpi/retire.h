/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Idle threads retired over TCP (retire.c): where they must stay at
 * SCHED_IDLE for their MPI calls and no CPU of the node is spare, idle
 * threads are paused for good once the MPI's traffic is seen on a TCP
 * connection (docs/mpi.md, "Idle threads in the MPI").
 */
#ifndef PIANO_MPI_RETIRE_H
#define PIANO_MPI_RETIRE_H

#include <stdbool.h>

/* At set-up, after piano_init and before the socket watcher starts: whether
 * the watcher should look for the MPI's TCP connections. `raising`: idle
 * threads raise themselves for their MPI calls (starve_setup()'s decision).
 * `tell`: this process reports the retirement (the node's rank 0). */
void retire_setup(bool raising, bool tell);
/* Still looking: the watcher skips retire_mpi_found() once it is not. */
bool retire_watching(void);
/* The watcher found a TCP connection of the MPI's (mpi_sock_kind(), not the
 * run-time's): decide, once, and stop looking. */
void retire_mpi_found(void);
/* PIANO_STATS: whether the idle threads were retired. */
bool retire_done(void);

#endif

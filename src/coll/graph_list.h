/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The running graphs of the process (graph_list.c), which the MPI layer's
 * progress task advances in the background.
 */
#ifndef PIANO_COLL_GRAPH_LIST_H
#define PIANO_COLL_GRAPH_LIST_H

#include <piano/graph.h>
#include <stdbool.h>

/* How many graphs run; one background step of each that no other thread is
 * advancing (returns the nodes finished). The caller goes through the gate. */
long graphs_running(void);
unsigned graphs_progress(void);
/* SEND and RECV nodes the calling thread has posted so far (graph_step.c):
 * the socket watcher tells by it whether its round started a transfer. */
unsigned long graph_posts(void);

/* Threads that advance every running graph themselves, back to back (the
 * MPI layer's waits on graph requests): while one does, the background
 * steps stand back. A second stepper would only take the list from it
 * (graphs_progress() skips a list another thread holds) and contend for
 * the MPI's locks: MPICH's Ialltoall of 1 MiB across two hosts waited
 * 11-29 ms with the progress task stepping beside the wait, 8.9 ms
 * without piano's threads (docs/coll.md). */
void graphs_drive_begin(void);
void graphs_drive_end(void);
bool graphs_driven(void);

/* A waiter that found another thread already waiting steps this long before
 * it sleeps (graph_run.c, src/mpi/wait.c): a wait that lasts a millisecond
 * waits for a peer that is not running (descheduled, or computing), and a
 * wake-up (tens of us measured here) is then a few per cent of
 * it. */
#define GRAPH_SLEEP_AFTER_NS 1000000u

/* A started graph is listed until a step ends its run; the step's caller
 * unlists it before publishing the final state. */
void graph_list_add(piano_graph_t *g);
void graph_list_remove(piano_graph_t *g);

#endif

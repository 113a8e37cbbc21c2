/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Idle threads in the MPI (starve.c): an idle thread raises itself to
 * SCHED_OTHER for its MPI calls where it may, and a call it makes at
 * SCHED_IDLE is raised by a thread that starts to wait natively. A thread
 * preempted at SCHED_IDLE inside an MPI call keeps what the call holds (a
 * socket, a lock, a rendezvous it took over) until its core is idle.
 */
#ifndef PIANO_MPI_STARVE_H
#define PIANO_MPI_STARVE_H

#include <stdbool.h>

struct poker;

/* PIANO_MPI_RAISE_CALLS, and whether this process reports a refusal, at
 * set-up. */
void starve_setup(bool raise, bool tell);

/* Whether idle threads raise themselves for their MPI calls (the decision
 * starve_setup() was given). */
bool starve_raising(void);
/* Around an engine thread's MPI calls (a progress round, offloaded posts):
 * an idle thread switches to SCHED_OTHER and back; returns whether it did
 * (then pass true to starve_lower()). Does not nest: an inner call returns
 * false. Other threads, and where it is not permitted: false. */
bool starve_raise(void);
void starve_lower(bool raised);
/* PIANO_STATS: calls raised so far, and whether a raise was refused. */
unsigned long long starve_raised(bool *refused);

/* This thread is about to make a progress call: returns its record, marked
 * inside (seq_cst store), or NULL when the thread does not run at
 * SCHED_IDLE. The caller then checks for a native waiter (seq_cst load) and
 * backs out with starve_end() if there is one: with the waiter's
 * starve_relieve() after its seq_cst increment, either side sees the other. */
struct poker *starve_begin(void);
/* The progress call has returned (p may be NULL): the thread goes back to
 * SCHED_IDLE if a waiter raised it. */
void starve_end(struct poker *p);
/* Called by a thread about to wait in the MPI's own wait: raises every
 * thread inside a progress call to SCHED_OTHER until its call returns, or,
 * where that is not permitted, gives it the CPU until then. */
void starve_relieve(void);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Progress calls made at SCHED_IDLE, and raising them when a waiter needs
 * them (starve.c). A background progress call may take over a piece of the
 * MPI's work that lasts (a rendezvous receive); a thread that then waits in
 * the MPI's own wait must not leave it starved.
 */
#ifndef PIANO_MPI_STARVE_H
#define PIANO_MPI_STARVE_H

struct poker;

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

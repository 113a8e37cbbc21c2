/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The socket watcher's wake-up (watch_wake.c): its pipe and its quiet flag,
 * below both the watcher that sleeps on them (watch.c) and the progress
 * kick that nudges it (progress.c).
 */
#ifndef PIANO_MPI_WATCH_WAKE_H
#define PIANO_MPI_WATCH_WAKE_H

#include "hidden.h"
#include <stdatomic.h>
#include <stdbool.h>

/* The pipe, non-blocking and close-on-exec at both ends: 0 or PIANO_ESYS. */
int watch_wake_open(void);
void watch_wake_close(void);
/* Its read end, for the watcher's poll(); -1 when closed. */
int watch_wake_fd(void);
/* Reads what was written, so that poll() waits again. */
void watch_wake_drain(void);
/* Writes a byte (the shutdown, a nudge): false if the pipe is not open or
 * the write failed for another reason than a full pipe. */
bool watch_wake_write(void);

/* Set by the watcher while it blocks without listening for arrivals,
 * because nothing a round can help is pending (watch.c, "Quiet"); cleared
 * by watch_nudge_slow() (which then writes the pipe) or by the watcher
 * when poll() returns. */
extern PIANO_HIDDEN _Atomic int watch_quiet_flag;
void watch_nudge_slow(void);
/* Set by the watcher while it rests (watch.c, "Rest"): it then wakes only
 * for what needs its rounds, a delegated wait, or a graph collective when
 * the timer does not tick for it (watch_rest_awaited()); cleared by
 * whoever writes the pipe for it (progress_kick()) or by the watcher when
 * poll() returns. */
extern PIANO_HIDDEN _Atomic int watch_rest_flag;
/* The timer ticks at least every WATCH_GRAPH_TICK_US while a graph runs
 * (it has a thread and a period no longer): a graph then needs no watcher
 * round, and a resting watcher stays at rest for it. Written once by
 * watch_setup() (relaxed). */
#define WATCH_GRAPH_TICK_US 10000
extern PIANO_HIDDEN _Atomic bool watch_graphs_ticked;

/* Something a watcher round can help became pending (a tracked operation,
 * a delegated wait, a graph): wakes the watcher if it is quiet. The fence
 * orders the caller's publication of that operation before the load of
 * the flag (a Dekker pair with the watcher's fence after raising it). */
static inline void watch_nudge(void)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&watch_quiet_flag, memory_order_relaxed))
		watch_nudge_slow();
}

#endif

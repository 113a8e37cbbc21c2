/* SPDX-License-Identifier: BSD-3-Clause */
/* The socket watcher (watch.c): kernel-blocking progress for socket
 * transports, in a blocking helper. */
#ifndef PIANO_MPI_WATCH_H
#define PIANO_MPI_WATCH_H

#include <stdatomic.h>

int watch_setup(void);
void watch_shutdown(void);

/* Something a watcher round can help became pending (a tracked operation,
 * a delegated wait, a graph): wakes the watcher if it blocks without
 * listening for arrivals (watch.c, "quiet"). The fence orders the caller's
 * publication of that operation before the load of the flag (Dekker pair
 * with the watcher's go_quiet()). */
extern _Atomic int watch_quiet_flag;
void watch_nudge_slow(void);
static inline void watch_nudge(void)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&watch_quiet_flag, memory_order_relaxed))
		watch_nudge_slow();
}

/* What the watcher did (PIANO_STATS): wake-ups by a socket event, the
 * follow-up rounds (watch.c), rounds that called the MPI, wake-ups that
 * found the gate closed or a native waiter (no round), and pauses of
 * arrivals after rounds nobody needed. Read after watch_shutdown() only:
 * the counters belong to the watcher task. */
struct watch_stats {
	unsigned long long woken, follow_ups, rounds, held_off, holds, scans;
};
void watch_stats(struct watch_stats *out);

#endif

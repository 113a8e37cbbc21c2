/* SPDX-License-Identifier: BSD-3-Clause */
/* The socket watcher (watch.c): kernel-blocking progress for socket
 * transports, in a blocking helper. */
#ifndef PIANO_MPI_WATCH_H
#define PIANO_MPI_WATCH_H

int watch_setup(void);
void watch_shutdown(void);

/* What the watcher did (PIANO_STATS): wake-ups by a socket event, the
 * follow-up rounds (watch.c), rounds that called the MPI, wake-ups that
 * found the gate closed or a native waiter (no round), and pauses of
 * arrivals after rounds nobody needed. Read after watch_shutdown() only:
 * the counters belong to the watcher task. */
struct watch_stats {
	unsigned long long woken, follow_ups, rounds, held_off, holds, rests, scans, unconnected;
};
void watch_stats(struct watch_stats *out);

#endif

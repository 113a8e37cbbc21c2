/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Statistics (stats.c): counters per polling point, one block per polling
 * thread. Calls nothing of piano.
 */
#ifndef PIANO_STATS_H
#define PIANO_STATS_H

#include "state.h"

enum { STAT_ROUNDS, STAT_RUN, STAT_EMPTY, STAT_TIME, STAT_COUNT };

/* One block per thread that ever polled; written only by that thread
 * (relaxed load+store), read by anyone (relaxed). Freed at finalize. */
struct stats_block {
	_Atomic uint64_t v[PIANO_POINT_COUNT][STAT_COUNT];
	struct stats_block *next;
};

struct stats_block *stats_local(struct piano_engine *e);
void stats_add(struct stats_block *b, int point, int stat, uint64_t n);
void stats_free_all(struct piano_engine *e);
/* The table of piano_stats_print, given the thread count of each point. */
void stats_print(const int nthreads[PIANO_POINT_COUNT]);

#endif

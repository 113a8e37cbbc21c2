/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Counters per polling point. Each thread that polls owns one block
 * (single writer: relaxed load + store, no atomic read-modify-write on the
 * hot path); readers add up every block with relaxed loads. Blocks are
 * linked with a lock-free push and freed at finalize.
 */
#include "stats.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

struct stats_tls {
	unsigned gen;
	struct stats_block *b;
};
static _Thread_local struct stats_tls stats_tls;

/* Fallback for a thread that cannot allocate its block: counted nowhere. */
static struct stats_block stats_sink;

struct stats_block *stats_local(struct piano_engine *e)
{
	if (stats_tls.gen == e->gen && stats_tls.b)
		return stats_tls.b;
	struct stats_block *b = calloc(1, sizeof(*b));
	if (!b)
		return &stats_sink;
	struct stats_block *old = atomic_load_explicit(&e->stats_head, memory_order_relaxed);
	do {
		b->next = old;
	} while (!atomic_compare_exchange_weak_explicit(&e->stats_head, &old, b,
	                                                memory_order_release,
	                                                memory_order_relaxed));
	stats_tls.gen = e->gen;
	stats_tls.b = b;
	return b;
}

void stats_add(struct stats_block *b, int point, int stat, uint64_t n)
{
	if (b == &stats_sink)
		return;
	_Atomic uint64_t *v = &b->v[point][stat];
	atomic_store_explicit(v, atomic_load_explicit(v, memory_order_relaxed) + n,
	                      memory_order_relaxed);
}

void stats_free_all(struct piano_engine *e)
{
	struct stats_block *b = atomic_exchange(&e->stats_head, NULL);
	while (b) {
		struct stats_block *n = b->next;
		free(b);
		b = n;
	}
}

PIANO_API const char *piano_point_name(int point)
{
	static const char *names[PIANO_POINT_COUNT] = { "explicit", "idle", "timer", "block" };
	if (point < 0 || point >= PIANO_POINT_COUNT)
		return NULL;
	return names[point];
}

PIANO_API int piano_stats_get(int point, struct piano_stats *out)
{
	struct piano_engine *e = engine_get();
	if (!out || point < 0 || point >= PIANO_POINT_COUNT)
		return PIANO_EINVAL;
	if (!e)
		return PIANO_ENOTINIT;
	uint64_t s[STAT_COUNT] = { 0 };
	for (struct stats_block *b = atomic_load_explicit(&e->stats_head, memory_order_acquire);
	     b; b = b->next)
		for (int i = 0; i < STAT_COUNT; i++)
			s[i] += atomic_load_explicit(&b->v[point][i], memory_order_relaxed);
	out->rounds = s[STAT_ROUNDS];
	out->ltasks_run = s[STAT_RUN];
	out->empty_rounds = s[STAT_EMPTY];
	out->time_ns = s[STAT_TIME];
	return 0;
}

void stats_print(const int nthreads[PIANO_POINT_COUNT])
{
	fprintf(stderr, "# piano %s statistics (pid %ld)\n", PIANO_VERSION_STRING,
	        (long)getpid());
	fprintf(stderr, "# %-9s %8s %14s %14s %14s %12s\n", "point", "threads", "rounds",
	        "ltasks_run", "empty_rounds", "time_ms");
	for (int i = 0; i < PIANO_POINT_COUNT; i++) {
		struct piano_stats s;
		piano_stats_get(i, &s);
		fprintf(stderr, "  %-9s %8d %14llu %14llu %14llu %12.2f\n", piano_point_name(i),
		        nthreads[i], (unsigned long long)s.rounds, (unsigned long long)s.ltasks_run,
		        (unsigned long long)s.empty_rounds, (double)s.time_ns / 1e6);
	}
}

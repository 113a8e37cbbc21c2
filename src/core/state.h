/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The engine's state: one instance per process, allocated, published and
 * freed by engine.c (piano_init, piano_finalize), read by every layer
 * through engine_get() or a pointer passed down. Each field is written by
 * the file named next to it and read by the layers above it.
 */
#ifndef PIANO_STATE_H
#define PIANO_STATE_H

#include "config.h"
#include "handoff.h"

#include <piano/piano.h>

#include <hwloc.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct piano_queue;
struct idle_thread;
struct stats_block;

struct piano_engine {
	struct piano_config cfg; /* engine.c (config_load), immutable afterwards */
	/* topo.c (topo_build), immutable afterwards */
	hwloc_topology_t topo;
	struct piano_queue *queues;
	int nqueues;
	int *cpu_leaf; /* os cpu index -> leaf queue */
	int ncpus;
	unsigned gen; /* engine.c: engine generation, invalidates TLS caches */

	_Atomic int stopping; /* engine.c: set once, when the threads must stop */
	/* park.c: threads with nothing to do sleep on park_seq; a submitter
	 * that sees nparked > 0 bumps park_seq and wakes them. Both sides use
	 * seq_cst so one of them always sees the other (Dekker pattern). */
	_Atomic uint32_t park_seq;
	_Atomic int nparked;

	struct idle_thread *idle_threads; /* idle.c */
	int nidle;
	/* idle.c: IDLE_RUN, IDLE_PAUSED (piano_idle_pause: the threads sleep
	 * on this word) or IDLE_STOP (idle_stop); see idle.c for the protocol. */
	_Atomic uint32_t idle_state;
	pthread_t timer_thread; /* timer.c */
	int has_timer;
	/* timer.c, PIANO_TIMER_MODE=demand: the timerfd the timer thread
	 * reads (-1 otherwise), the holds, whether the timerfd is armed and
	 * with which interval (written under timer_lock; `timer_armed` and
	 * `timer_rescue` read lock-free by the holds' fast paths, timer.c
	 * says how), and what predicts a hold's length (written by the
	 * threads that take the count from 0 and back). */
	int timer_fd;
	_Atomic long timer_holds; /* PIANO_TIMER_PREDICTED holds */
	_Atomic long timer_sure;  /* the others */
	pthread_mutex_t timer_lock;
	_Atomic int timer_armed;
	_Atomic int timer_rescue; /* armed as a one-shot rescue (timer.c) */
	uint64_t timer_interval_ns;
	_Atomic uint64_t timer_hold_start;
	_Atomic int timer_short_streak;
	_Atomic int timer_rescue_shift; /* next rescue: RESCUE_PERIODS << shift periods on */
	/* piano_timer_renew() (timer.c): written under timer_lock, `timer_slow`
	 * read lock-free as a hint. */
	_Atomic int timer_slow;    /* the interval is above the period */
	_Atomic int timer_renewed; /* restart the count of empty rounds */
	/* PIANO_TIMER_BUDGET (timer.c): no tick before this time (0: none);
	 * written by the timer thread under timer_lock, read under it by
	 * timer_set() and rescue_expired(). The counters: written by the
	 * timer thread, read by the statistics (relaxed). */
	uint64_t timer_budget_until;
	_Atomic uint64_t timer_empty_rounds, timer_empty_cpu_ns, timer_budget_waits;
	struct handoff handoff;    /* handoff.c */
	pthread_t *helper_threads; /* helpers.c */
	int nhelpers;
	hwloc_bitmap_t bind_set; /* topo.c: PIANO_BIND_CPUS parsed, NULL = anywhere */

	pthread_mutex_t stats_lock;
	_Atomic(struct stats_block *) stats_head; /* stats.c */
};

extern _Atomic(struct piano_engine *) piano_engine_g;

static inline struct piano_engine *engine_get(void)
{
	return atomic_load_explicit(&piano_engine_g, memory_order_acquire);
}

static inline bool engine_stopping(struct piano_engine *e)
{
	return atomic_load_explicit(&e->stopping, memory_order_acquire);
}

/* Whether anything besides explicit polling makes progress. */
static inline bool engine_has_threads(const struct piano_engine *e)
{
	return e->nidle > 0 || e->has_timer;
}

#endif

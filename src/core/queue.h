/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Queues (queue.c): a lock-free submission list and a main list run by
 * whoever wins the trylock. A queue calls nothing of piano but the platform
 * and, to run a task, ltask_run (ltask.c): the one call that goes up a
 * layer, since running tasks is what a queue is for.
 */
#ifndef PIANO_QUEUE_H
#define PIANO_QUEUE_H

#include "state.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define PIANO_CACHELINE 64

struct piano_ltask;

struct piano_queue {
	/* Submission side: lock-free, written by submitters. Treiber stack. */
	_Alignas(PIANO_CACHELINE) _Atomic(struct piano_ltask *) sub_head;
	/* Tasks in this queue (submission list + main list). Incremented by
	 * submitters before the push, decremented by the owner when a task
	 * leaves; > 0 whenever a task is anywhere in the queue, so peeking it
	 * never misses a task in transit between the two lists. */
	_Atomic long nlive;
	_Atomic uint64_t submitted;

	/* Main side: the lock is a mask, only ever try-locked. */
	_Alignas(PIANO_CACHELINE) _Atomic int lock;
	struct piano_ltask *head, *tail; /* owner only */
	/* Start of the last round that held the lock: written by the owner,
	 * read (relaxed) by the timer thread, which skips queues that somebody
	 * polled during its last period. */
	_Atomic uint64_t polled_ns;
	/* A holder at SCHED_IDLE, for the timer's rescue (queue_rescue): its
	 * thread id while it holds the lock, 0 otherwise; QUEUE_RAISING while
	 * the timer raises it to SCHED_OTHER, then QUEUE_RAISED (or
	 * QUEUE_DENIED). Only the holder moves it from its id to 0 and from
	 * QUEUE_RAISED/QUEUE_DENIED to 0; only the timer from an id to
	 * QUEUE_RAISING and on: so the holder's return to SCHED_IDLE always
	 * follows the raise. */
	_Atomic int holder;

	/* Immutable after init. */
	_Alignas(PIANO_CACHELINE) int index;
	int parent;
	int depth;
	int nchildren;
	int *children;
	uint64_t div;               /* product of ancestors' arities (polling divisor) */
	hwloc_obj_t obj;
	hwloc_bitmap_t cpuset;
};

/* Poller context: who polls, and its counters (set up by policy.c). */
struct poller {
	struct piano_engine *e;
	int point;
	struct stats_block *st;
	bool idle_thread;           /* may boost to SCHED_OTHER while holding a queue */
	bool boosted;
	int rescue_tid;             /* an idle thread's id (the timer may raise it), else 0 */
	uint64_t t0;                /* start of the current busy round, 0 if none */
};

void queue_push(struct piano_queue *q, struct piano_ltask *t);
unsigned queue_poll(struct poller *p, struct piano_queue *q);
static inline bool queue_busy(struct piano_queue *q)
{
	return atomic_load_explicit(&q->nlive, memory_order_seq_cst) > 0;
}
/* The timer's rescue of a masked queue: if q is held by a thread at
 * SCHED_IDLE (a preempted idle thread, while every core is busy), raise it
 * to SCHED_OTHER until it lets the queue go. The caller decides that q was
 * held long enough. 1 when it raised one, 0 when there was none to raise,
 * -errno when the raise was refused. */
int queue_rescue(struct piano_queue *q);
/* Whether any queue holds a task. */
bool queue_any_busy(const struct piano_engine *e);

#endif

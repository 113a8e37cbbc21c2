/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One queue = a lock-free submission list + a main list owned by whoever
 * wins the trylock (the "mask").
 *
 * Submission (any thread, never touches the main list or the lock):
 *   nlive++ (seq_cst), then push on sub_head with a CAS (seq_cst, which
 *   includes release: the task's fields written before the push are visible
 *   to the owner that takes the list with an acquire exchange). The caller
 *   then wakes parked threads (park_notify, park.c).
 * Polling (owner only):
 *   peek nlive; trylock (plain load first so a busy queue costs a read, not
 *   a cache-line steal); take the whole submission list with one exchange,
 *   reverse it (the list is LIFO) and append it to the main list; run the
 *   main list; unlock (release).
 * A poller that loses the trylock skips the queue: someone else is already
 * running its tasks. Nobody ever spins on the lock.
 */
#include "queue.h"
#include "ltask.h"
#include "sys.h"

void queue_push(struct piano_queue *q, struct piano_ltask *t)
{
	atomic_fetch_add_explicit(&q->nlive, 1, memory_order_seq_cst);
	atomic_fetch_add_explicit(&q->submitted, 1, memory_order_relaxed);
	struct piano_ltask *old = atomic_load_explicit(&q->sub_head, memory_order_relaxed);
	do {
		t->next = old;
	} while (!atomic_compare_exchange_weak_explicit(&q->sub_head, &old, t,
	                                                memory_order_seq_cst,
	                                                memory_order_relaxed));
}

static bool queue_trylock(struct piano_queue *q)
{
	if (atomic_load_explicit(&q->lock, memory_order_relaxed))
		return false;
	return !atomic_exchange_explicit(&q->lock, 1, memory_order_acquire);
}

static void queue_unlock(struct piano_queue *q)
{
	atomic_store_explicit(&q->lock, 0, memory_order_release);
}

/* Owner only: moves the submitted tasks, in submission order, to the tail. */
static void queue_absorb(struct piano_queue *q)
{
	if (!atomic_load_explicit(&q->sub_head, memory_order_relaxed))
		return;
	struct piano_ltask *t = atomic_exchange_explicit(&q->sub_head, NULL,
	                                                 memory_order_acquire);
	struct piano_ltask *rev = NULL, *last = t;
	while (t) {
		struct piano_ltask *n = t->next;
		t->next = rev;
		rev = t;
		t = n;
	}
	if (!rev)
		return;
	if (q->tail)
		q->tail->next = rev;
	else
		q->head = rev;
	q->tail = last;
}

/* Owner only: runs every task of the main list once. */
static unsigned queue_run(struct poller *p, struct piano_queue *q)
{
	unsigned work = 0;
	struct piano_ltask *prev = NULL, *t = q->head;
	while (t) {
		/* ltask_run may hand t to someone else (finished, freed, or given
		 * to a helper): read the link first. */
		struct piano_ltask *next = t->next;
		unsigned w = ltask_run(p, t);
		if (w & 1u) {
			/* t left the queue. */
			if (prev)
				prev->next = next;
			else
				q->head = next;
			if (q->tail == t)
				q->tail = prev;
			atomic_fetch_sub_explicit(&q->nlive, 1, memory_order_release);
		} else {
			prev = t;
		}
		work += w >> 1;
		t = next;
	}
	return work;
}

enum { QUEUE_RAISING = -1, QUEUE_RAISED = -2, QUEUE_DENIED = -3 };

int queue_rescue(struct piano_queue *q)
{
	int tid = atomic_load_explicit(&q->holder, memory_order_acquire);
	if (tid <= 0 ||
	    !atomic_compare_exchange_strong_explicit(&q->holder, &tid, QUEUE_RAISING,
	                                             memory_order_acq_rel, memory_order_relaxed))
		return 0;
	int rc = sys_sched_normal_tid(tid);
	/* Release: the holder reads the outcome, then acts on it. */
	atomic_store_explicit(&q->holder, rc == 0 ? QUEUE_RAISED : QUEUE_DENIED,
	                      memory_order_release);
	return rc == 0 ? 1 : rc;
}

/* The holder lets its record go; if the timer raised it, back to SCHED_IDLE
 * (after the raise: the timer's QUEUE_RAISING is waited out). */
static void queue_unwatch(struct piano_queue *q, int tid)
{
	int v = tid;
	if (atomic_compare_exchange_strong_explicit(&q->holder, &v, 0, memory_order_acq_rel,
	                                            memory_order_acquire))
		return;
	while (v == QUEUE_RAISING) {
		sys_yield();
		v = atomic_load_explicit(&q->holder, memory_order_acquire);
	}
	atomic_store_explicit(&q->holder, 0, memory_order_relaxed);
	if (v == QUEUE_RAISED)
		sys_sched_idle();
}

unsigned queue_poll(struct poller *p, struct piano_queue *q)
{
	if (!queue_busy(q)) {
		return 0;
	}
	if (p->idle_thread && !p->boosted) {
		/* Holding a queue at SCHED_IDLE would mask it for everybody as
		 * long as the cores are busy: run at normal priority meanwhile.
		 * Before the trylock: preempted between the two, a SCHED_IDLE
		 * thread on a busy core could hold the queue for many ms. */
		p->boosted = sys_sched_normal() == 0;
	}
	if (!queue_trylock(q))
		return 0;
	if (!p->t0)
		p->t0 = sys_now_ns();
	atomic_store_explicit(&q->polled_ns, p->t0, memory_order_relaxed);
	/* At SCHED_IDLE, on record: the timer may raise this thread if it
	 * keeps the queue too long (queue_rescue). */
	int watched = p->boosted ? 0 : p->rescue_tid;
	if (watched)
		atomic_store_explicit(&q->holder, watched, memory_order_release);
	queue_absorb(q);
	unsigned work = queue_run(p, q);
	if (watched)
		queue_unwatch(q, watched);
	queue_unlock(q);
	return work;
}

bool queue_any_busy(const struct piano_engine *e)
{
	for (int i = 0; i < e->nqueues; i++)
		if (queue_busy(&e->queues[i]))
			return true;
	return false;
}

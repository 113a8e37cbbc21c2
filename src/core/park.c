/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parking: idle and timer threads sleep on engine->park_seq while no queue
 * holds a task, and a submission wakes them. Both halves are here.
 *
 * Sleeper (park_wait): nparked++ (seq_cst), then read every queue's task
 * count (seq_cst, queue_any_busy), sleep only if all are zero.
 * Waker (park_notify, right after queue_push): the push's nlive++ (seq_cst),
 * then read nparked (seq_cst), wake if > 0.
 * With sequentially consistent operations on both sides, at least one of
 * them sees the other (Dekker pattern): no wake-up is lost.
 */
#include "park.h"
#include "queue.h"
#include "sys.h"

/* Wakes every parked or napping thread (submissions, threads_stop()). */
void park_wake(struct piano_engine *e)
{
	atomic_fetch_add_explicit(&e->park_seq, 1, memory_order_seq_cst);
	sys_futex_wake(&e->park_seq, INT32_MAX);
}

void park_notify(struct piano_engine *e)
{
	/* Pairs with the seq_cst increment of nparked in park_wait(). */
	if (atomic_load_explicit(&e->nparked, memory_order_seq_cst) > 0)
		park_wake(e);
}

/* Sleeps until a submission bumps park_seq (or timeout_ns, 0 = none). */
void park_wait(struct piano_engine *e, uint64_t timeout_ns)
{
	uint32_t seq = atomic_load_explicit(&e->park_seq, memory_order_seq_cst);
	atomic_fetch_add_explicit(&e->nparked, 1, memory_order_seq_cst);
	if (!queue_any_busy(e) && !engine_stopping(e))
		sys_futex_wait(&e->park_seq, seq, timeout_ns);
	atomic_fetch_sub_explicit(&e->nparked, 1, memory_order_seq_cst);
}

/* Sleeps for ns, or until threads_stop() or a submission wakes parked
 * threads: finalize never waits for a long idle pause or timer period. */
void park_nap(struct piano_engine *e, uint64_t ns)
{
	uint32_t seq = atomic_load_explicit(&e->park_seq, memory_order_seq_cst);
	if (!engine_stopping(e))
		sys_futex_wait(&e->park_seq, seq, ns);
}

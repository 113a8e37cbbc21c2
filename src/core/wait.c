/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Waiters, the polling point of a thread that waits: a wait polls
 * explicitly (the caller's branch, plus the awaited task's queue) for
 * PIANO_SPIN_US, then sleeps on the completion word (cond_block, cond.c).
 * A wait never sleeps when no idle or timer thread exists, since nobody
 * else would run the tasks.
 */
#include "cond.h"
#include "location.h"
#include "ltask.h"
#include "policy.h"
#include "queue.h"
#include "sys.h"

/* Explicit polling phase. Returns 0, PIANO_ETIMEDOUT, or 1 = go and block. */
static int spin_phase(piano_cond_t *c, uint32_t mask, uint64_t deadline, int poll_queue,
                      long spin_us)
{
	struct piano_engine *e = engine_get();
	if (spin_us < 0)
		spin_us = e ? e->cfg.spin_us : 0;
	uint64_t spin_end = sys_now_ns() + (uint64_t)spin_us * 1000u;
	/* Without progress threads nobody else would run the tasks: never block. */
	bool can_block = !e || engine_has_threads(e);
	struct poller p;
	int leaf = 0;
	if (e) {
		poller_init(&p, e, PIANO_POINT_EXPLICIT);
		leaf = location_leaf(e);
		/* The branch poll already covers the task's queue if it is an
		 * ancestor of ours (or everything in no-thread mode). */
		for (int q = leaf; q >= 0 && poll_queue >= 0; q = e->queues[q].parent)
			if (q == poll_queue)
				poll_queue = -1;
		if (!e->cfg.progression)
			poll_queue = -1;
	}
	for (unsigned i = 0;; i++) {
		if (piano_cond_get(c) & mask)
			return 0;
		if (e) {
			unsigned work = 0;
			if (poll_queue >= 0)
				work = queue_poll(&p, &e->queues[poll_queue]);
			work += poll_branch(&p, leaf);
			poller_end_round(&p, work);
		} else {
			sys_cpu_relax();
		}
		if (i % 16 == 15) {
			uint64_t now = sys_now_ns();
			if (now >= deadline)
				return PIANO_ETIMEDOUT;
			if (now >= spin_end) {
				if (can_block)
					return 1;
				sys_yield();
			}
		}
	}
}

/* poll_queue: the awaited task's queue, or -1; spin_us < 0: PIANO_SPIN_US. */
static int wait_until(piano_cond_t *c, uint32_t mask, long timeout_us, int poll_queue,
                      long spin_us)
{
	if (piano_cond_get(c) & mask)
		return 0;
	if (ltask_current_tls)
		return PIANO_EDEADLK;
	uint64_t deadline = timeout_us < 0 ? UINT64_MAX
	                                   : sys_now_ns() + (uint64_t)timeout_us * 1000u;
	int rc = spin_phase(c, mask, deadline, poll_queue, spin_us);
	if (rc <= 0)
		return rc;
	return cond_block(c, mask, deadline);
}

PIANO_API int piano_cond_wait(piano_cond_t *c, uint32_t mask)
{
	if (!c || !mask || (mask & ~PIANO_COND_MASK))
		return PIANO_EINVAL;
	return wait_until(c, mask, -1, -1, -1);
}

PIANO_API int piano_cond_wait_timeout(piano_cond_t *c, uint32_t mask, long timeout_us)
{
	if (!c || !mask || (mask & ~PIANO_COND_MASK) || timeout_us < 0)
		return PIANO_EINVAL;
	return wait_until(c, mask, timeout_us, -1, -1);
}

PIANO_API int piano_cond_wait_spin(piano_cond_t *c, uint32_t mask, long spin_us)
{
	if (!c || !mask || (mask & ~PIANO_COND_MASK) || spin_us < 0)
		return PIANO_EINVAL;
	return wait_until(c, mask, -1, -1, spin_us);
}

PIANO_API int piano_cond_wait_all(piano_cond_t *const *conds, size_t n, uint32_t mask)
{
	if ((!conds && n) || !mask || (mask & ~PIANO_COND_MASK))
		return PIANO_EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!conds[i])
			return PIANO_EINVAL;
	/* Total time is the slowest cond's: waiting in order costs nothing more. */
	for (size_t i = 0; i < n; i++) {
		int rc = wait_until(conds[i], mask, -1, -1, -1);
		if (rc)
			return rc;
	}
	return 0;
}

PIANO_API int piano_ltask_wait(piano_ltask_t *t)
{
	if (!t)
		return PIANO_EINVAL;
	if (!engine_get())
		return PIANO_ENOTINIT;
	if ((t->flags & PIANO_LTASK_NOWAIT) ||
	    atomic_load_explicit(&t->state, memory_order_acquire) == PIANO_LTASK_INIT)
		return PIANO_ESTATE;
	int rc = piano_ltask_test(t);
	if (rc != PIANO_EAGAIN)
		return rc;
	if (ltask_current_tls)
		return PIANO_EDEADLK;
	rc = wait_until(&t->done, DONE_ANY, -1, t->queue, -1);
	if (rc)
		return rc;
	return piano_ltask_test(t);
}

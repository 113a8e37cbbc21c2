/*
 * Completion objects. The word holds 31 status bits and a WAITERS bit.
 *
 * Signal: one CAS loop sets the bits and clears WAITERS (release); if WAITERS
 * was set, a futex wake follows. After the CAS the signaller never reads or
 * writes the object again (the futex wake only hashes the address), so a
 * waiter that observes the bits may free the object immediately.
 * Wait: poll explicitly for PIANO_SPIN_US, then set WAITERS with a CAS and
 * sleep on the futex with the exact value seen, so a signal between the
 * check and the sleep makes the sleep return at once.
 */
#include "internal.h"
#include "sys.h"

#include <limits.h>

#define COND_WAITERS 0x80000000u

static uint32_t *word(piano_cond_t *c) { return &c->word; }

PIANO_API int piano_cond_init(piano_cond_t *c, uint32_t bits)
{
	if (!c || (bits & ~PIANO_COND_MASK))
		return PIANO_EINVAL;
	__atomic_store_n(word(c), bits, __ATOMIC_RELEASE);
	return 0;
}

PIANO_API int piano_cond_signal(piano_cond_t *c, uint32_t bits)
{
	if (!c || !bits || (bits & ~PIANO_COND_MASK))
		return PIANO_EINVAL;
	uint32_t old = __atomic_load_n(word(c), __ATOMIC_RELAXED), nw;
	do {
		nw = (old | bits) & ~COND_WAITERS;
	} while (!__atomic_compare_exchange_n(word(c), &old, nw, 1, __ATOMIC_RELEASE,
	                                      __ATOMIC_RELAXED));
	if (old & COND_WAITERS)
		sys_futex_wake(word(c), INT_MAX);
	return 0;
}

PIANO_API int piano_cond_clear(piano_cond_t *c, uint32_t bits)
{
	if (!c || (bits & ~PIANO_COND_MASK))
		return PIANO_EINVAL;
	__atomic_fetch_and(word(c), ~bits, __ATOMIC_RELEASE);
	return 0;
}

PIANO_API uint32_t piano_cond_get(const piano_cond_t *c)
{
	return c ? __atomic_load_n(&c->word, __ATOMIC_ACQUIRE) & PIANO_COND_MASK : 0;
}

PIANO_API int piano_cond_test(const piano_cond_t *c, uint32_t mask)
{
	if (!c || !mask)
		return PIANO_EINVAL;
	return (piano_cond_get(c) & mask) ? 0 : PIANO_EAGAIN;
}

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

static int block_phase(piano_cond_t *c, uint32_t mask, uint64_t deadline)
{
	for (;;) {
		uint32_t old = __atomic_load_n(word(c), __ATOMIC_ACQUIRE);
		if (old & mask)
			return 0;
		uint64_t now = sys_now_ns();
		if (now >= deadline)
			return PIANO_ETIMEDOUT;
		if (!(old & COND_WAITERS)) {
			if (!__atomic_compare_exchange_n(word(c), &old, old | COND_WAITERS, 0,
			                                 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
				continue;
			old |= COND_WAITERS;
		}
		sys_futex_wait(word(c), old, deadline == UINT64_MAX ? 0 : deadline - now);
	}
}

int cond_wait_poll(piano_cond_t *c, uint32_t mask, long timeout_us, int poll_queue, long spin_us)
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
	return block_phase(c, mask, deadline);
}

PIANO_API int piano_cond_wait(piano_cond_t *c, uint32_t mask)
{
	if (!c || !mask || (mask & ~PIANO_COND_MASK))
		return PIANO_EINVAL;
	return cond_wait_poll(c, mask, -1, -1, -1);
}

PIANO_API int piano_cond_wait_timeout(piano_cond_t *c, uint32_t mask, long timeout_us)
{
	if (!c || !mask || (mask & ~PIANO_COND_MASK) || timeout_us < 0)
		return PIANO_EINVAL;
	return cond_wait_poll(c, mask, timeout_us, -1, -1);
}

PIANO_API int piano_cond_wait_spin(piano_cond_t *c, uint32_t mask, long spin_us)
{
	if (!c || !mask || (mask & ~PIANO_COND_MASK) || spin_us < 0)
		return PIANO_EINVAL;
	return cond_wait_poll(c, mask, -1, -1, spin_us);
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
		int rc = cond_wait_poll(conds[i], mask, -1, -1, -1);
		if (rc)
			return rc;
	}
	return 0;
}

PIANO_API int piano_cond_destroy(piano_cond_t *c)
{
	if (!c)
		return PIANO_EINVAL;
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion objects. The word holds 31 status bits and a WAITERS bit.
 *
 * Signal: one CAS loop sets the bits and clears WAITERS (release); if WAITERS
 * was set, a futex wake follows. After the CAS the signaller never reads or
 * writes the object again (the futex wake only hashes the address), so a
 * waiter that observes the bits may free the object immediately.
 * Block (cond_block, after a waiter's polling phase in wait.c): set WAITERS
 * with a CAS and sleep on the futex with the exact value seen, so a signal
 * between the check and the sleep makes the sleep return at once.
 */
#include "cond.h"
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

int cond_block(piano_cond_t *c, uint32_t mask, uint64_t deadline)
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

PIANO_API int piano_cond_destroy(piano_cond_t *c)
{
	if (!c)
		return PIANO_EINVAL;
	return 0;
}

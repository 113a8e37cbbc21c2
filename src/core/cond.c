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
#include <stdatomic.h>

#define COND_WAITERS 0x80000000u

/* The public struct holds a plain uint32_t so that <piano/piano.h> stays
 * valid C++ (no _Atomic there before C++23) and can be embedded anywhere;
 * every access goes through this atomic view of the same word, which has
 * the same size and alignment on every target piano builds for. */
_Static_assert(sizeof(_Atomic uint32_t) == sizeof(uint32_t) &&
                       _Alignof(_Atomic uint32_t) == _Alignof(uint32_t),
               "piano_cond_t's word must be usable as an _Atomic uint32_t");

static _Atomic uint32_t *word(const piano_cond_t *c) { return (_Atomic uint32_t *)&c->word; }

PIANO_API int piano_cond_init(piano_cond_t *c, uint32_t bits)
{
	if (!c || (bits & ~PIANO_COND_MASK))
		return PIANO_EINVAL;
	atomic_store_explicit(word(c), bits, memory_order_release);
	return 0;
}

PIANO_API int piano_cond_signal(piano_cond_t *c, uint32_t bits)
{
	if (!c || !bits || (bits & ~PIANO_COND_MASK))
		return PIANO_EINVAL;
	uint32_t old = atomic_load_explicit(word(c), memory_order_relaxed), nw;
	/* Release, partner: the acquire loads in piano_cond_get() and
	 * cond_block(): what the signaller did before is visible to a waiter
	 * that sees the bits. */
	do {
		nw = (old | bits) & ~COND_WAITERS;
	} while (!atomic_compare_exchange_weak_explicit(word(c), &old, nw, memory_order_release,
	                                                memory_order_relaxed));
	if (old & COND_WAITERS)
		sys_futex_wake(word(c), INT_MAX);
	return 0;
}

PIANO_API int piano_cond_clear(piano_cond_t *c, uint32_t bits)
{
	if (!c || (bits & ~PIANO_COND_MASK))
		return PIANO_EINVAL;
	atomic_fetch_and_explicit(word(c), ~bits, memory_order_release);
	return 0;
}

PIANO_API uint32_t piano_cond_get(const piano_cond_t *c)
{
	return c ? atomic_load_explicit(word(c), memory_order_acquire) & PIANO_COND_MASK : 0;
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
		uint32_t old = atomic_load_explicit(word(c), memory_order_acquire);
		if (old & mask)
			return 0;
		uint64_t now = sys_now_ns();
		if (now >= deadline)
			return PIANO_ETIMEDOUT;
		if (!(old & COND_WAITERS)) {
			if (!atomic_compare_exchange_strong_explicit(word(c), &old,
			                                             old | COND_WAITERS,
			                                             memory_order_acquire,
			                                             memory_order_relaxed))
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

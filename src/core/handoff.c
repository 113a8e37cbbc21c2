/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hand-off list: tasks a poller gives to a blocking helper (ltask.c,
 * handoff_offer) and the helpers take from it (helpers.c, handoff_take).
 * nfree counts the helpers ready to take a task; an offer claims one with a
 * CAS first, so a task is never handed off without a helper to serve it.
 */
#include "handoff.h"
#include "ltask.h"
#include "state.h"

void handoff_init(struct handoff *h)
{
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->cond, NULL);
}

void handoff_destroy(struct handoff *h)
{
	atomic_store(&h->nfree, 0);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->cond);
}

bool handoff_offer(struct piano_engine *e, struct piano_ltask *t)
{
	struct handoff *h = &e->handoff;
	long f = atomic_load_explicit(&h->nfree, memory_order_relaxed);
	do {
		if (f <= 0 || engine_stopping(e))
			return false;
	} while (!atomic_compare_exchange_weak(&h->nfree, &f, f - 1));
	atomic_store_explicit(&t->state, PIANO_LTASK_BLOCKED, memory_order_relaxed);
	pthread_mutex_lock(&h->lock);
	t->next = h->head;
	h->head = t;
	pthread_cond_signal(&h->cond);
	pthread_mutex_unlock(&h->lock);
	return true;
}

struct piano_ltask *handoff_take(struct piano_engine *e)
{
	struct handoff *h = &e->handoff;
	pthread_mutex_lock(&h->lock);
	while (!h->head && !engine_stopping(e))
		pthread_cond_wait(&h->cond, &h->lock);
	struct piano_ltask *t = h->head;
	if (t)
		h->head = t->next;
	pthread_mutex_unlock(&h->lock);
	return t;
}

void handoff_ready(struct handoff *h)
{
	atomic_fetch_add(&h->nfree, 1);
}

void handoff_close(struct handoff *h)
{
	pthread_mutex_lock(&h->lock);
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
}

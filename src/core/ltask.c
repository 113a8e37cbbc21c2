/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Light tasks: state machine and public calls.
 *
 * Who writes what:
 * - state: the submitter (CAS to QUEUED), then whoever runs the task (queue
 *   owner or blocking helper). Informational except for the submit CAS.
 * - req: any thread sets bits (fetch_or); the runner reads them (acquire)
 *   before and after each call of the callback; cleared by the submitter.
 * - done: the final status. ltask_finish() sets it with one atomic
 *   operation as the very last access to the task, so a waiter that sees
 *   it may destroy the task at once. test/wait/destroy/submit trust only
 *   this word, never `state`.
 */
#include "ltask.h"
#include "handoff.h"
#include "location.h"
#include "park.h"
#include "queue.h"
#include "stats.h"
#include "topo.h"
#include "sys.h"

#include <stdlib.h>
#include <string.h>

_Thread_local struct piano_ltask *ltask_current_tls LTASK_TLS;
/* The polling point of the round that runs ltask_current_tls (-1: none). */
static _Thread_local int ltask_point_tls = -1;

static bool in_flight(const struct piano_ltask *t)
{
	return atomic_load_explicit(&t->state, memory_order_acquire) != PIANO_LTASK_INIT &&
	       !(piano_cond_get(&t->done) & DONE_ANY);
}

void ltask_finish(struct piano_ltask *t, unsigned done)
{
	atomic_store_explicit(&t->state,
	                      done == DONE_COMPLETED ? PIANO_LTASK_COMPLETED : PIANO_LTASK_CANCELED,
	                      memory_order_release);
	if (t->flags & PIANO_LTASK_NOWAIT) {
		/* Nobody may touch a NOWAIT task after submit: we own it. */
		t->dtor(t->arg);
		free(t);
		return;
	}
	piano_cond_signal(&t->done, done); /* last access to t */
}

/* The push before the wake-up: the submitter's half of parking (park.c). */
void ltask_enqueue(struct piano_engine *e, struct piano_ltask *t)
{
	queue_push(&e->queues[t->queue], t);
	park_notify(e);
}

static bool ltask_handoff(struct poller *p, struct piano_ltask *t)
{
	uint64_t now = sys_now_ns();
	if (!t->first_poll_ns) {
		t->first_poll_ns = now;
		if (t->block_delay_ns) /* delay 0: event-driven, hand over at once */
			return false;
	} else if (now - t->first_poll_ns < t->block_delay_ns) {
		return false;
	}
	return handoff_offer(p->e, t);
}

/*
 * Runs t once for the owner of its queue. Returns (work << 1) | left, where
 * left = 1 when t left the queue (finished or handed to a helper) and must be
 * unlinked without being touched again.
 */
unsigned ltask_run(struct poller *p, struct piano_ltask *t)
{
	/* Store RUNNING, then read req; request() sets req, then reads state
	 * (both seq_cst). Whoever comes second sees the other: a request made
	 * while the task still reads QUEUED is seen here, so a cancelled task
	 * never starts again. */
	atomic_store_explicit(&t->state, PIANO_LTASK_RUNNING, memory_order_seq_cst);
	unsigned req = atomic_load_explicit(&t->req, memory_order_seq_cst);
	if (req) {
		ltask_finish(t, (req & REQ_CANCEL) ? DONE_CANCELED : DONE_COMPLETED);
		return (1u << 1) | 1u;
	}
	struct piano_ltask *saved = ltask_current_tls;
	int saved_point = ltask_point_tls;
	ltask_current_tls = t;
	ltask_point_tls = p->point;
	unsigned w = t->fn(t->arg);
	ltask_current_tls = saved;
	ltask_point_tls = saved_point;
	stats_add(p->st, p->point, STAT_RUN, 1);
	if (w > (UINT32_MAX >> 2))
		w = UINT32_MAX >> 2;

	req = atomic_load_explicit(&t->req, memory_order_acquire);
	if (req & REQ_CANCEL) {
		ltask_finish(t, DONE_CANCELED);
		return ((w + 1) << 1) | 1u;
	}
	if ((req & REQ_COMPLETE) || (t->flags & PIANO_LTASK_ONESHOT)) {
		ltask_finish(t, DONE_COMPLETED);
		return ((w + 1) << 1) | 1u;
	}
	/* A helper running the task after an event keeps it (helper_serve). */
	if (t->block && !w && p->point != PIANO_POINT_BLOCK && ltask_handoff(p, t))
		return (w << 1) | 1u;
	if (w)
		t->first_poll_ns = 0; /* progress: restart the blocking delay */
	atomic_store_explicit(&t->state,
	                      p->point == PIANO_POINT_BLOCK ? PIANO_LTASK_BLOCKED : PIANO_LTASK_QUEUED,
	                      memory_order_relaxed);
	return w << 1;
}

/* ------------------------------------------------------------- public API */

PIANO_API int piano_ltask_create(piano_ltask_fn fn, void *arg, unsigned flags,
                                 piano_ltask_t **out)
{
	if (!fn || !out || (flags & ~(unsigned)(PIANO_LTASK_ONESHOT | PIANO_LTASK_NOWAIT)))
		return PIANO_EINVAL;
	struct piano_ltask *t = calloc(1, sizeof(*t));
	if (!t)
		return PIANO_ENOMEM;
	t->fn = fn;
	t->arg = arg;
	t->flags = flags;
	t->bound_queue = -1;
	t->queue = -1;
	atomic_init(&t->state, PIANO_LTASK_INIT);
	atomic_init(&t->req, 0);
	piano_cond_init(&t->done, 0);
	*out = t;
	return 0;
}

PIANO_API int piano_ltask_set_name(piano_ltask_t *t, const char *name)
{
	if (!t || !name)
		return PIANO_EINVAL;
	if (in_flight(t))
		return PIANO_EBUSY;
	strncpy(t->name, name, sizeof(t->name) - 1);
	t->name[sizeof(t->name) - 1] = '\0';
	return 0;
}

PIANO_API const char *piano_ltask_name(const piano_ltask_t *t)
{
	return t ? t->name : NULL;
}

PIANO_API int piano_ltask_set_dtor(piano_ltask_t *t, piano_ltask_dtor_fn dtor)
{
	if (!t || !dtor)
		return PIANO_EINVAL;
	if (in_flight(t))
		return PIANO_EBUSY;
	t->dtor = dtor;
	return 0;
}

PIANO_API int piano_ltask_set_blocking(piano_ltask_t *t, piano_ltask_block_fn block,
                                       long delay_us)
{
	if (!t || !block)
		return PIANO_EINVAL;
	if (in_flight(t))
		return PIANO_EBUSY;
	long d = delay_us;
	if (d < 0) {
		struct piano_engine *e = engine_get();
		if (!e)
			return PIANO_ENOTINIT;
		d = e->cfg.block_delay_us;
	}
	t->block = block;
	t->block_delay_ns = (uint64_t)d * 1000u;
	return 0;
}

PIANO_API int piano_ltask_bind(piano_ltask_t *t, hwloc_const_cpuset_t set)
{
	struct piano_engine *e = engine_get();
	if (!t || !set)
		return PIANO_EINVAL;
	if (!e)
		return PIANO_ENOTINIT;
	if (in_flight(t))
		return PIANO_EBUSY;
	t->bound_queue = topo_queue_for_set(e, set);
	return 0;
}

PIANO_API int piano_ltask_bind_queue(piano_ltask_t *t, int queue)
{
	struct piano_engine *e = engine_get();
	if (!t)
		return PIANO_EINVAL;
	if (!e)
		return PIANO_ENOTINIT;
	if (queue < 0 || queue >= e->nqueues)
		return PIANO_ERANGE;
	if (in_flight(t))
		return PIANO_EBUSY;
	t->bound_queue = queue;
	return 0;
}

PIANO_API int piano_ltask_queue(const piano_ltask_t *t, int *queue)
{
	if (!t || !queue)
		return PIANO_EINVAL;
	*queue = t->bound_queue >= 0 ? t->bound_queue : t->queue;
	return 0;
}

/* INIT or finished -> QUEUED, exactly once even with racing submitters. */
static int claim_for_submit(struct piano_ltask *t)
{
	int st = atomic_load_explicit(&t->state, memory_order_acquire);
	if (st != PIANO_LTASK_INIT) {
		if (!(piano_cond_get(&t->done) & DONE_ANY))
			return PIANO_EBUSY;
		/* done is published after state, so st is final here. */
		st = atomic_load_explicit(&t->state, memory_order_acquire);
		if (st != PIANO_LTASK_COMPLETED && st != PIANO_LTASK_CANCELED)
			return PIANO_EBUSY;
	}
	if (!atomic_compare_exchange_strong_explicit(&t->state, &st, PIANO_LTASK_QUEUED,
	                                             memory_order_acq_rel,
	                                             memory_order_relaxed))
		return PIANO_EBUSY;
	piano_cond_clear(&t->done, DONE_ANY);
	return 0;
}

PIANO_API int piano_ltask_submit(piano_ltask_t *t)
{
	struct piano_engine *e = engine_get();
	if (!t)
		return PIANO_EINVAL;
	if (!e)
		return PIANO_ENOTINIT;
	if ((t->flags & PIANO_LTASK_NOWAIT) && !t->dtor)
		return PIANO_EINVAL;
	if (t->bound_queue >= e->nqueues)
		return PIANO_ERANGE;
	int rc = claim_for_submit(t);
	if (rc)
		return rc;
	atomic_store_explicit(&t->req, 0, memory_order_relaxed);
	t->first_poll_ns = 0;
	t->queue = t->bound_queue >= 0 ? t->bound_queue : location_bind_queue(e);
	/* Event-driven: waiting for a poller to hand it over would leave the
	 * event unwatched while no poller runs (no idle core, long timer). */
	if (t->block && !t->block_delay_ns && handoff_offer(e, t))
		return 0;
	ltask_enqueue(e, t);
	return 0;
}

static int request(struct piano_ltask *t, unsigned bit)
{
	if (!t)
		return PIANO_EINVAL;
	if (!in_flight(t))
		return PIANO_ESTATE;
	/* seq_cst: pairs with the RUNNING store in ltask_run(). */
	atomic_fetch_or_explicit(&t->req, bit, memory_order_seq_cst);
	return 0;
}

PIANO_API int piano_ltask_complete(piano_ltask_t *t) { return request(t, REQ_COMPLETE); }
PIANO_API int piano_ltask_cancel(piano_ltask_t *t) { return request(t, REQ_CANCEL); }

PIANO_API int piano_ltask_test(const piano_ltask_t *t)
{
	if (!t)
		return PIANO_EINVAL;
	uint32_t d = piano_cond_get(&t->done);
	if (d & DONE_COMPLETED)
		return 0;
	if (d & DONE_CANCELED)
		return PIANO_ECANCELED;
	return PIANO_EAGAIN;
}

PIANO_API int piano_ltask_state(const piano_ltask_t *t)
{
	if (!t)
		return PIANO_EINVAL;
	uint32_t d = piano_cond_get(&t->done);
	if (d & DONE_COMPLETED)
		return PIANO_LTASK_COMPLETED;
	if (d & DONE_CANCELED)
		return PIANO_LTASK_CANCELED;
	int st = atomic_load_explicit(&t->state, memory_order_acquire);
	/* Between the state store and the done signal the task is finishing;
	 * report it as running until the status is published. */
	if (st == PIANO_LTASK_COMPLETED || st == PIANO_LTASK_CANCELED)
		return PIANO_LTASK_RUNNING;
	return st;
}

PIANO_API piano_ltask_t *piano_ltask_current(void) { return ltask_current_tls; }

PIANO_API int piano_point_current(void) { return ltask_point_tls; }

PIANO_API int piano_ltask_destroy(piano_ltask_t *t)
{
	if (!t)
		return PIANO_EINVAL;
	if (in_flight(t))
		return PIANO_EBUSY;
	free(t);
	return 0;
}

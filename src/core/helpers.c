/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Blocking helpers: threads that serve the tasks of the hand-off list
 * (handoff.c) by sleeping in their blocking callback, so that an event is
 * noticed even when no poller gets a CPU.
 */
#include "helpers.h"
#include "handoff.h"
#include "ltask.h"
#include "policy.h"
#include "topo.h"
#include "warn.h"
#include "sys.h"

#include <stdlib.h>
#include <string.h>

static void helper_resubmit(struct piano_engine *e, struct piano_ltask *t)
{
	t->first_poll_ns = 0;
	atomic_store_explicit(&t->state, PIANO_LTASK_QUEUED, memory_order_relaxed);
	ltask_enqueue(e, t);
}

/* Returns true when t finished (and must not be touched again). */
static bool helper_check_req(struct piano_ltask *t)
{
	unsigned req = atomic_load_explicit(&t->req, memory_order_acquire);
	if (!req)
		return false;
	ltask_finish(t, (req & REQ_CANCEL) ? DONE_CANCELED : DONE_COMPLETED);
	return true;
}

/*
 * Serves one handed-off task: block, and after an event run the task at
 * once rather than wait for a poller. A task with a blocking delay goes
 * back to its queue afterwards; a task with delay 0 is purely event-driven
 * and stays with the helper (block, run, block...) until it finishes, an
 * error, or the engine stops.
 */
static void helper_serve(struct piano_engine *e, struct poller *p, struct piano_ltask *t)
{
	for (;;) {
		if (helper_check_req(t))
			return;
		if (engine_stopping(e))
			break;
		int r = t->block(t->arg, (int)e->cfg.block_timeout_ms);
		if (helper_check_req(t))
			return;
		if (r > 0) {
			p->t0 = sys_now_ns();
			unsigned w = ltask_run(p, t);
			poller_end_round(p, w >> 1);
			if (w & 1u)
				return;
		}
		if (r < 0 || t->block_delay_ns)
			break;
	}
	helper_resubmit(e, t);
}

static void *helper_main(void *arg)
{
	struct piano_engine *e = arg;
	topo_bind_thread(e, e->bind_set); /* see timer_main */
	struct poller p;
	poller_init(&p, e, PIANO_POINT_BLOCK);
	struct piano_ltask *t;
	while ((t = handoff_take(e))) {
		helper_serve(e, &p, t);
		handoff_ready(&e->handoff);
	}
	return NULL;
}

int helpers_start(struct piano_engine *e)
{
	int n = (int)e->cfg.block_helpers;
	if (n == 0)
		return 0;
	e->helper_threads = calloc((size_t)n, sizeof(pthread_t));
	if (!e->helper_threads)
		return PIANO_ENOMEM;
	for (int i = 0; i < n; i++) {
		int err = pthread_create(&e->helper_threads[i], NULL, helper_main, e);
		if (err) {
			piano_warn("cannot create a blocking helper thread: %s", strerror(err));
			return PIANO_ESYS;
		}
		sys_thread_name(e->helper_threads[i], "piano-block");
		e->nhelpers++;
		handoff_ready(&e->handoff);
	}
	return 0;
}

/* After engine->stopping is set: a helper hands its task back to its queue. */
void helpers_stop(struct piano_engine *e)
{
	handoff_close(&e->handoff);
	for (int i = 0; i < e->nhelpers; i++)
		pthread_join(e->helper_threads[i], NULL);
	free(e->helper_threads);
	e->helper_threads = NULL;
	e->nhelpers = 0;
}

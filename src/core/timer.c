/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The timer thread: a regular thread (not a POSIX timer, whose signal
 * handler context cannot take locks) that sleeps for a period and polls the
 * queues nobody polled meanwhile (poll_unpolled, policy.c), the safety net
 * when every core is busy; it parks (park.c) when no queue holds a task.
 */
#include "timer.h"
#include "park.h"
#include "policy.h"
#include "queue.h"
#include "topo.h"
#include "warn.h"
#include "sys.h"

#include <string.h>

/*
 * With PIANO_TIMER_MAX_US above the period, the period doubles after each
 * round that did no work, up to that limit, and is back to
 * PIANO_TIMER_PERIOD_US after a round that did some or a park. A wake-up
 * that preempts a computing thread costs tens of µs on a virtual machine:
 * while the pending tasks wait for a remote peer, the timer then wakes less
 * often, at the price of a longer reaction when every core is busy (not
 * the default: docs/performance.md has both numbers).
 */
static uint64_t timer_next(const struct piano_engine *e, uint64_t cur, unsigned work)
{
	uint64_t period = (uint64_t)e->cfg.timer_period_us * 1000u;
	uint64_t max = (uint64_t)e->cfg.timer_max_us * 1000u;
	if (work || max <= period)
		return period;
	return cur * 2 < max ? cur * 2 : max;
}

static void *timer_main(void *arg)
{
	struct piano_engine *e = arg;
	uint64_t period = (uint64_t)e->cfg.timer_period_us * 1000u;
	uint64_t sleep_ns = period;
	sys_thread_name("piano-timer");
	/* Explicitly, even without PIANO_BIND_CPUS: threads inherit the
	 * creator's binding, and an MPI launcher binds each rank to one core,
	 * where the timer would only take time from its own rank. */
	topo_bind_thread(e, e->bind_set);
	struct poller p;
	poller_init(&p, e, PIANO_POINT_TIMER);
	while (!engine_stopping(e)) {
		if (!queue_any_busy(e)) {
			park_wait(e, 0);
			sleep_ns = period;
			continue;
		}
		park_nap(e, sleep_ns);
		if (engine_stopping(e))
			break;
		/* A queue counts as unpolled after the base period, whatever
		 * the current sleep: others' polls keep the timer quiet. */
		unsigned work = poll_unpolled(&p, period);
		poller_end_round(&p, work);
		sleep_ns = timer_next(e, sleep_ns, work);
	}
	return NULL;
}

int timer_start(struct piano_engine *e)
{
	if (e->cfg.timer_period_us <= 0)
		return 0;
	int err = pthread_create(&e->timer_thread, NULL, timer_main, e);
	if (err) {
		piano_warn("cannot create the timer thread: %s", strerror(err));
		return PIANO_ESYS;
	}
	e->has_timer = 1;
	return 0;
}

void timer_stop(struct piano_engine *e)
{
	if (e->has_timer)
		pthread_join(e->timer_thread, NULL);
	e->has_timer = 0;
}

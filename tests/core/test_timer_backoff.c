/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.timer_backoff — PIANO_TIMER_MAX_US: the timer's period doubles after
 * rounds that did no work, up to the limit, and stays at
 * PIANO_TIMER_PERIOD_US while rounds do work.
 *
 * Only the timer polls (no idle threads, no helpers, the main thread only
 * sleeps). Period 1 ms, limit 16 ms, RUN_MS per phase:
 *   idle task (returns 0): rounds at 1, 2, 4, 8, then every 16 ms: about
 *     RUN_MS / 16 runs; asserted < RUN_MS / 4 (a fixed period gives RUN_MS);
 *   busy task (returns 1): about RUN_MS runs; asserted > RUN_MS / 3, so a
 *     timer that backs off regardless of work (at most RUN_MS / 16 + 4)
 *     fails, and a loaded machine delaying wake-ups does not;
 *   a task that reports work every fourth round (a transfer moving in
 *     steps): the back-off starts only after 8 empty rounds in a row, so
 *     about RUN_MS runs; asserted > RUN_MS / 3 (doubling at every empty
 *     round gives rounds at 1, 2, 4, 8 ms: about RUN_MS / 4).
 */
#include "common.h"

#define RUN_MS 400

static atomic_int runs;

/* arg 0: never works, 1: always, 4: every fourth run. */
static unsigned cb(void *arg)
{
	int n = atomic_fetch_add(&runs, 1);
	unsigned every = (unsigned)(uintptr_t)arg;
	return every && (unsigned)n % every == 0;
}

static int phase_runs(unsigned work)
{
	piano_ltask_t *t;
	atomic_store(&runs, 0);
	CHECK_OK(piano_ltask_create(cb, (void *)(uintptr_t)work, PIANO_LTASK_REPEAT, &t));
	CHECK_OK(piano_ltask_submit(t));
	test_sleep_us(RUN_MS * 1000);
	CHECK_OK(piano_ltask_cancel(t));
	CHECK_EQ(piano_ltask_wait(t), PIANO_ECANCELED);
	CHECK_OK(piano_ltask_destroy(t));
	return atomic_load(&runs);
}

int main(void)
{
	test_watchdog(30);
	test_setenv("PIANO_PROGRESSION", "1");
	test_setenv("PIANO_IDLE_LEVEL", "none");
	test_setenv("PIANO_BLOCK_HELPERS", "0");
	test_setenv("PIANO_TIMER_PERIOD_US", "1000");
	test_setenv("PIANO_TIMER_MAX_US", "16000");
	CHECK_OK(piano_init());
	CHECK_EQ(test_thread_count(PIANO_POINT_TIMER), 1);

	test_phase("a task that never reports work");
	int idle = phase_runs(0);
	test_phase("a task that always reports work");
	int busy = phase_runs(1);
	test_phase("a task that reports work every fourth round");
	int steps = phase_runs(4);
	printf("timer_backoff: %d runs in %d ms without work, %d with work, %d with work every "
	       "fourth round\n",
	       idle, RUN_MS, busy, steps);
	CHECK(idle < RUN_MS / 4, "%d timer runs in %d ms of a task without work: no back-off "
	      "(limit 16 ms)", idle, RUN_MS);
	CHECK(busy > RUN_MS / 3, "%d timer runs in %d ms of a task that works: the period "
	      "(1 ms) was not kept", busy, RUN_MS);
	CHECK(steps > RUN_MS / 3,
	      "%d timer runs in %d ms of a task that works every fourth "
	      "round: the period doubled between its steps",
	      steps, RUN_MS);

	CHECK_OK(piano_finalize());
	printf("timer_backoff: ok\n");
	return TEST_PASS;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.timer_budget — PIANO_TIMER_BUDGET: the timer's rounds without work
 * take at most that share of a core, measured in the timer thread's CPU
 * time, whatever the period; rounds that do work keep the period.
 *
 * Only the timer polls (no idle threads, no helpers, the main thread only
 * sleeps). Period 1 ms, no back-off (PIANO_TIMER_MAX_US=0), budget 10 per
 * mille; the task burns BURN_US of the timer thread's CPU at each run. For
 * RUN_MS per phase, in both timer modes (queues; demand under a hold):
 *   a task without work (returns 0): 1 % of RUN_MS is RUN_MS * 10 µs, plus
 *     the first window's credit (1 ms): about RUN_MS / 20 + 5 runs;
 *     asserted < RUN_MS / 10 (without the budget: about RUN_MS / 1.2);
 *   a task that works (returns 1): the period, about RUN_MS / 1.2 runs;
 *     asserted > RUN_MS / 4, so a budget that charges work rounds fails;
 *   a task that works every fourth run (a transfer moving in steps): the
 *     three rounds between its steps (600 µs) fit in the credit a work
 *     round leaves, so about RUN_MS / 1.2 runs; asserted > RUN_MS / 4.
 */
#include "common.h"

#include <stdbool.h>

#define RUN_MS 600
#define BURN_US 200

static atomic_int runs;

/* Burns `us` of the calling thread's CPU time (not wall time: a loaded
 * machine that preempts the thread must not shorten the burn). */
static void burn_cpu_us(long us)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

/* arg 0: never works, 1: always, 4: every fourth run. */
static unsigned cb(void *arg)
{
	int n = atomic_fetch_add(&runs, 1);
	unsigned every = (unsigned)(uintptr_t)arg;
	burn_cpu_us(BURN_US);
	return every && (unsigned)n % every == 0;
}

static int phase_runs(unsigned work, bool demand)
{
	piano_ltask_t *t;
	atomic_store(&runs, 0);
	CHECK_OK(piano_ltask_create(cb, (void *)(uintptr_t)work, PIANO_LTASK_REPEAT, &t));
	CHECK_OK(piano_ltask_submit(t));
	if (demand)
		CHECK_OK(piano_timer_hold(0));
	test_sleep_us(RUN_MS * 1000);
	if (demand)
		CHECK_OK(piano_timer_release(0));
	CHECK_OK(piano_ltask_cancel(t));
	CHECK_EQ(piano_ltask_wait(t), PIANO_ECANCELED);
	CHECK_OK(piano_ltask_destroy(t));
	return atomic_load(&runs);
}

static void run_mode(const char *mode)
{
	bool demand = strcmp(mode, "demand") == 0;
	test_setenv("PIANO_TIMER_MODE", mode);
	CHECK_OK(piano_init());
	CHECK_EQ(test_thread_count(PIANO_POINT_TIMER), 1);

	test_phase(demand ? "demand: a task without work" : "queues: a task without work");
	int idle = phase_runs(0, demand);
	test_phase(demand ? "demand: a task that works" : "queues: a task that works");
	int busy = phase_runs(1, demand);
	test_phase(demand ? "demand: work every fourth round" : "queues: work every fourth round");
	int steps = phase_runs(4, demand);
	printf("timer_budget (%s): %d runs in %d ms without work, %d with work, %d with work "
	       "every fourth round\n",
	       mode, idle, RUN_MS, busy, steps);
	CHECK(idle < RUN_MS / 10,
	      "%s: %d timer runs of %d µs in %d ms of a task without work: over the budget "
	      "(1 %% of a core)",
	      mode, idle, BURN_US, RUN_MS);
	CHECK(busy > RUN_MS / 4,
	      "%s: %d timer runs in %d ms of a task that works: the period "
	      "(1 ms) was not kept",
	      mode, busy, RUN_MS);
	CHECK(steps > RUN_MS / 4,
	      "%s: %d timer runs in %d ms of a task that works every fourth round: the "
	      "budget put off its steps",
	      mode, steps, RUN_MS);
	CHECK_OK(piano_finalize());
}

int main(void)
{
	test_watchdog(60);
	test_setenv("PIANO_PROGRESSION", "1");
	test_setenv("PIANO_IDLE_LEVEL", "none");
	test_setenv("PIANO_BLOCK_HELPERS", "0");
	test_setenv("PIANO_TIMER_PERIOD_US", "1000");
	test_setenv("PIANO_TIMER_MAX_US", "0");
	test_setenv("PIANO_TIMER_BUDGET", "10");
	run_mode("queues");
	run_mode("demand");
	printf("timer_budget: ok\n");
	return TEST_PASS;
}

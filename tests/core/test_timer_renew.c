/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.timer_renew — piano_timer_renew(): new work ends the timer's
 * back-off (PIANO_TIMER_MAX_US), in both timer modes.
 *
 * Only the timer polls (no idle threads, no helpers). Period 1 ms, limit
 * 64 ms, a task that never reports work (an operation waiting for a late
 * peer): after 400 ms the timer ticks every 64 ms, so a window of WINDOW_MS
 * holds at most 1-2 runs (asserted <= 2: the back-off took place). Right
 * after a renew the period is 1 ms again and the count of empty rounds
 * starts over (8 rounds at 1 ms, then 2, 4, 8 ms...): about 11 runs in the
 * window; asserted >= 4, so a renew that changes nothing (1-2 runs) fails
 * while a loaded machine delaying wake-ups does not.
 */
#include "common.h"

#include <stdbool.h>
#include <string.h>

#define WINDOW_MS 40

static atomic_int runs;

static unsigned cb(void *arg)
{
	(void)arg;
	atomic_fetch_add(&runs, 1);
	return 0;
}

static int runs_during(int ms)
{
	int before = atomic_load(&runs);
	test_sleep_us(ms * 1000);
	return atomic_load(&runs) - before;
}

static void check_mode(const char *mode)
{
	piano_ltask_t *t;
	test_setenv("PIANO_TIMER_MODE", mode);
	CHECK_OK(piano_init());
	CHECK_EQ(test_thread_count(PIANO_POINT_TIMER), 1);
	bool demand = strcmp(mode, "demand") == 0;
	if (demand)
		CHECK_OK(piano_timer_hold(0));
	CHECK_OK(piano_ltask_create(cb, NULL, PIANO_LTASK_REPEAT, &t));
	CHECK_OK(piano_ltask_submit(t));
	CHECK_OK(piano_timer_renew()); /* not backed off yet: nothing to do */

	test_phase("backed off");
	test_sleep_us(400 * 1000);
	int slow = runs_during(WINDOW_MS);
	test_phase("renewed");
	CHECK_OK(piano_timer_renew());
	int renewed = runs_during(WINDOW_MS);
	printf("timer_renew (%s): %d runs in %d ms backed off, %d right after a renew\n", mode,
	       slow, WINDOW_MS, renewed);
	CHECK(slow <= 2,
	      "%s: %d runs in %d ms after 400 ms without work: no back-off (limit 64 ms)", mode,
	      slow, WINDOW_MS);
	CHECK(renewed >= 4,
	      "%s: %d runs in the %d ms after piano_timer_renew(): the back-off went on "
	      "(period 1 ms)",
	      mode, renewed, WINDOW_MS);

	CHECK_OK(piano_ltask_cancel(t));
	CHECK_EQ(piano_ltask_wait(t), PIANO_ECANCELED);
	CHECK_OK(piano_ltask_destroy(t));
	if (demand)
		CHECK_OK(piano_timer_release(0));
	CHECK_OK(piano_finalize());
}

int main(void)
{
	test_watchdog(30);
	test_setenv("PIANO_PROGRESSION", "1");
	test_setenv("PIANO_IDLE_LEVEL", "none");
	test_setenv("PIANO_BLOCK_HELPERS", "0");
	test_setenv("PIANO_TIMER_PERIOD_US", "1000");
	test_setenv("PIANO_TIMER_MAX_US", "64000");
	CHECK_RC(piano_timer_renew(), PIANO_ENOTINIT);
	check_mode("demand");
	check_mode("queues");
	CHECK_RC(piano_timer_renew(), PIANO_ENOTINIT);
	printf("timer_renew: ok\n");
	return TEST_PASS;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.point_idle — idle threads progress tasks on their own: with the timer
 * and the blocking helpers off and one idle thread (PIANO_IDLE_LEVEL=machine),
 * a repeat task that completes itself after 1000 runs finishes while the
 * submitting thread only sleeps (it never polls); all runs are counted under
 * the IDLE point, none under EXPLICIT, and piano_point_current() in the
 * callback says IDLE.
 */
#include "common.h"

#define NRUNS 1000

static atomic_int runs;

static unsigned cb(void *arg)
{
	(void)arg;
	int n = atomic_fetch_add(&runs, 1) + 1;
	CHECK(piano_point_current() == PIANO_POINT_IDLE,
	      "piano_point_current() in the callback is %d, expected IDLE (%d)",
	      piano_point_current(), PIANO_POINT_IDLE);
	CHECK(n <= NRUNS, "task ran %d times after completing itself at %d", n, NRUNS);
	if (n == NRUNS)
		CHECK_OK(piano_ltask_complete(piano_ltask_current()));
	return 1;
}

int main(void)
{
	piano_ltask_t *t;

	test_watchdog(50);
	test_setenv("PIANO_PROGRESSION", "1");
	test_setenv("PIANO_IDLE_LEVEL", "machine");
	test_setenv("PIANO_TIMER_PERIOD_US", "0");
	test_setenv("PIANO_BLOCK_HELPERS", "0");
	CHECK_OK(piano_init());

	CHECK_EQ(test_thread_count(PIANO_POINT_IDLE), 1);
	CHECK_EQ(test_thread_count(PIANO_POINT_TIMER), 0);
	CHECK_EQ(test_thread_count(PIANO_POINT_BLOCK), 0);

	CHECK_OK(piano_ltask_create(cb, NULL, PIANO_LTASK_REPEAT, &t));
	CHECK_OK(piano_ltask_submit(t));
	test_phase("sleeping until the idle thread completes the task");
	double deadline = test_now() + 10.0;
	while (piano_ltask_test(t) == PIANO_EAGAIN) {
		CHECK(test_now() < deadline,
		      "task not completed within 10 s without polling (runs=%d, state %s)",
		      atomic_load(&runs), test_statename(piano_ltask_state(t)));
		test_sleep_us(1000);
	}
	CHECK_RC(piano_ltask_test(t), 0);
	CHECK_EQ(atomic_load(&runs), NRUNS);

	struct piano_stats idle = test_stats(PIANO_POINT_IDLE);
	struct piano_stats expl = test_stats(PIANO_POINT_EXPLICIT);
	struct piano_stats timer = test_stats(PIANO_POINT_TIMER);
	CHECK(idle.ltasks_run >= NRUNS, "IDLE ltasks_run = %llu, expected >= %d",
	      (unsigned long long)idle.ltasks_run, NRUNS);
	CHECK(expl.ltasks_run == 0, "EXPLICIT ltasks_run = %llu, expected 0 (nobody polled)",
	      (unsigned long long)expl.ltasks_run);
	CHECK(timer.ltasks_run == 0, "TIMER ltasks_run = %llu with the timer disabled",
	      (unsigned long long)timer.ltasks_run);

	CHECK_OK(piano_ltask_destroy(t));
	test_phase("piano_finalize");
	CHECK_OK(piano_finalize());
	printf("point_idle: ok\n");
	return TEST_PASS;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.point_timer — the timer thread progresses tasks when every core is
 * busy: no idle threads, no blocking helpers, PIANO_TIMER_PERIOD_US=1000, one
 * busy-looping thread (no piano calls) per CPU; a repeat task that completes
 * itself after 20 runs finishes while the submitting thread only sleeps; the
 * runs are counted under TIMER only, and piano_point_current() in the
 * callback says TIMER (-1 outside any callback).
 */
#include "common.h"

#define NRUNS 20

static atomic_int runs;

static unsigned cb(void *arg)
{
	(void)arg;
	int n = atomic_fetch_add(&runs, 1) + 1;
	CHECK(piano_point_current() == PIANO_POINT_TIMER,
	      "piano_point_current() in the callback is %d, expected TIMER (%d)",
	      piano_point_current(), PIANO_POINT_TIMER);
	CHECK(n <= NRUNS, "task ran %d times after completing itself at %d", n, NRUNS);
	if (n == NRUNS)
		CHECK_OK(piano_ltask_complete(piano_ltask_current()));
	return 1;
}

int main(void)
{
	piano_ltask_t *t;
	static struct test_spinners spin;

	test_watchdog(50);
	test_setenv("PIANO_PROGRESSION", "1");
	test_setenv("PIANO_IDLE_LEVEL", "none");
	test_setenv("PIANO_TIMER_PERIOD_US", "1000");
	test_setenv("PIANO_BLOCK_HELPERS", "0");
	CHECK_OK(piano_init());

	CHECK_EQ(test_thread_count(PIANO_POINT_TIMER), 1);
	CHECK_EQ(test_thread_count(PIANO_POINT_IDLE), 0);
	CHECK_EQ(test_thread_count(PIANO_POINT_BLOCK), 0);

	int ncpu = test_ncpus();
	test_spinners_start(&spin, ncpu);

	CHECK_EQ(piano_point_current(), -1);
	CHECK_OK(piano_ltask_create(cb, NULL, PIANO_LTASK_REPEAT, &t));
	CHECK_OK(piano_ltask_submit(t));
	test_phase("sleeping until the timer thread completes the task");
	double deadline = test_now() + 10.0;
	while (piano_ltask_test(t) == PIANO_EAGAIN) {
		if (test_now() >= deadline) {
			test_spinners_stop(&spin);
			FAIL("task not completed within 10 s with %d spinners (runs=%d, state %s)",
			     ncpu, atomic_load(&runs), test_statename(piano_ltask_state(t)));
		}
		test_sleep_us(1000);
	}
	test_spinners_stop(&spin);
	CHECK_RC(piano_ltask_test(t), 0);
	CHECK_EQ(atomic_load(&runs), NRUNS);

	struct piano_stats timer = test_stats(PIANO_POINT_TIMER);
	struct piano_stats expl = test_stats(PIANO_POINT_EXPLICIT);
	struct piano_stats idle = test_stats(PIANO_POINT_IDLE);
	CHECK(timer.ltasks_run >= NRUNS, "TIMER ltasks_run = %llu, expected >= %d",
	      (unsigned long long)timer.ltasks_run, NRUNS);
	CHECK(expl.ltasks_run == 0, "EXPLICIT ltasks_run = %llu, expected 0 (nobody polled)",
	      (unsigned long long)expl.ltasks_run);
	CHECK(idle.ltasks_run == 0, "IDLE ltasks_run = %llu with PIANO_IDLE_LEVEL=none",
	      (unsigned long long)idle.ltasks_run);

	CHECK_OK(piano_ltask_destroy(t));
	test_phase("piano_finalize");
	CHECK_OK(piano_finalize());
	printf("point_timer: ok (%d spinners)\n", ncpu);
	return TEST_PASS;
}

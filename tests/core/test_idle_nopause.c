/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.idle_nopause — an idle thread configured with no pause at all
 * (PIANO_IDLE_PERIOD_US=0, PIANO_IDLE_YIELD_US=0: "only sched_yield()")
 * keeps polling a task that never reports work. A zero-length pause must be
 * a yield: it once became an untimed sleep that lasted until the next
 * submission, which never came, so the task below stalled.
 */
#include "common.h"

#define NRUNS 1000

static atomic_int runs;

static unsigned cb(void *arg)
{
	(void)arg;
	if (atomic_fetch_add(&runs, 1) + 1 == NRUNS)
		CHECK_OK(piano_ltask_complete(piano_ltask_current()));
	return 0; /* never any work: the idle thread pauses after every round */
}

int main(void)
{
	piano_ltask_t *t;

	test_watchdog(50);
	test_setenv("PIANO_PROGRESSION", "1");
	test_setenv("PIANO_IDLE_LEVEL", "machine");
	test_setenv("PIANO_IDLE_PERIOD_US", "0");
	test_setenv("PIANO_IDLE_YIELD_US", "0");
	test_setenv("PIANO_TIMER_PERIOD_US", "0");
	test_setenv("PIANO_BLOCK_HELPERS", "0");
	CHECK_OK(piano_init());
	CHECK_EQ(test_thread_count(PIANO_POINT_IDLE), 1);

	CHECK_OK(piano_ltask_create(cb, NULL, PIANO_LTASK_REPEAT, &t));
	CHECK_OK(piano_ltask_submit(t));
	test_phase("sleeping until the idle thread has run the task NRUNS times");
	double deadline = test_now() + 10.0;
	while (piano_ltask_test(t) == PIANO_EAGAIN) {
		CHECK(test_now() < deadline,
		      "task not completed within 10 s by an idle thread without pauses (runs=%d)",
		      atomic_load(&runs));
		test_sleep_us(1000);
	}
	CHECK_EQ(atomic_load(&runs), NRUNS);
	struct piano_stats idle = test_stats(PIANO_POINT_IDLE);
	CHECK(idle.ltasks_run >= NRUNS, "IDLE ltasks_run = %llu, expected >= %d",
	      (unsigned long long)idle.ltasks_run, NRUNS);

	CHECK_OK(piano_ltask_destroy(t));
	CHECK_OK(piano_finalize());
	printf("idle_nopause: ok\n");
	return TEST_PASS;
}

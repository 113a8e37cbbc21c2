/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.idle_pause — piano_idle_pause() stops the idle threads: a task that
 * only they run (no timer, no helper, nobody polls) is not run at all while
 * they are paused, and runs again after piano_idle_resume(); finalize ends
 * paused threads without a hang. Both calls are idempotent and say
 * PIANO_ENOTINIT outside piano_init()/piano_finalize().
 */
#include "common.h"

static atomic_int runs;

static unsigned cb(void *arg)
{
	(void)arg;
	atomic_fetch_add(&runs, 1);
	return 0; /* no work: the idle thread pauses between rounds */
}

/* Sleeps until the task has run `more` times beyond `from`, or 10 s. */
static void wait_runs(int from, int more, const char *what)
{
	double deadline = test_now() + 10.0;
	while (atomic_load(&runs) < from + more) {
		CHECK(test_now() < deadline, "%s: %d runs in 10 s, expected %d", what,
		      atomic_load(&runs) - from, more);
		test_sleep_us(1000);
	}
}

int main(void)
{
	piano_ltask_t *t;

	test_watchdog(60);
	CHECK_EQ(piano_idle_pause(), PIANO_ENOTINIT);
	CHECK_EQ(piano_idle_resume(), PIANO_ENOTINIT);
	test_setenv("PIANO_PROGRESSION", "1");
	test_setenv("PIANO_IDLE_LEVEL", "machine");
	test_setenv("PIANO_IDLE_PERIOD_US", "100");
	test_setenv("PIANO_TIMER_PERIOD_US", "0");
	test_setenv("PIANO_BLOCK_HELPERS", "0");
	CHECK_OK(piano_init());
	CHECK_EQ(test_thread_count(PIANO_POINT_IDLE), 1);
	CHECK_OK(piano_ltask_create(cb, NULL, PIANO_LTASK_REPEAT, &t));
	CHECK_OK(piano_ltask_submit(t));

	test_phase("waiting for the idle thread to run the task");
	wait_runs(0, 100, "before the pause");

	test_phase("paused");
	CHECK_OK(piano_idle_pause());
	CHECK_OK(piano_idle_pause()); /* idempotent */
	test_sleep_us(50000);         /* the round in progress ends */
	int paused_at = atomic_load(&runs);
	test_sleep_us(300000);
	CHECK(atomic_load(&runs) == paused_at,
	      "the task ran %d times in 300 ms while the idle threads were paused",
	      atomic_load(&runs) - paused_at);

	test_phase("resumed");
	CHECK_OK(piano_idle_resume());
	CHECK_OK(piano_idle_resume());
	wait_runs(paused_at, 100, "after the resume");

	test_phase("finalize with the idle threads paused");
	CHECK_OK(piano_idle_pause());
	CHECK_OK(piano_ltask_cancel(t));
	CHECK_EQ(piano_ltask_wait(t), PIANO_ECANCELED);
	CHECK_OK(piano_ltask_destroy(t));
	CHECK_OK(piano_finalize());
	CHECK_EQ(piano_idle_pause(), PIANO_ENOTINIT);
	printf("idle_pause: ok\n");
	return TEST_PASS;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.point_explicit — no-thread mode (PIANO_PROGRESSION=0): the engine
 * starts no thread, submitted tasks stay QUEUED until the application polls,
 * and piano_poll() / piano_ltask_wait() run them; the work is counted under
 * the EXPLICIT polling point only, which piano_point_current() names in
 * the callbacks.
 */
#include "common.h"

#define NT 3

static atomic_int runs[NT + 1];

static unsigned cb(void *arg)
{
	atomic_fetch_add((atomic_int *)arg, 1);
	CHECK(piano_point_current() == PIANO_POINT_EXPLICIT,
	      "piano_point_current() in the callback is %d, expected EXPLICIT (%d)",
	      piano_point_current(), PIANO_POINT_EXPLICIT);
	return 1;
}

int main(void)
{
	piano_ltask_t *t[NT + 1];
	struct piano_stats s0, s1, s2;

	test_watchdog(50);
	/* settings that would start threads if progression were on */
	test_setenv("PIANO_PROGRESSION", "0");
	test_setenv("PIANO_IDLE_LEVEL", "machine");
	test_setenv("PIANO_TIMER_PERIOD_US", "1000");
	test_setenv("PIANO_BLOCK_HELPERS", "2");
	CHECK_OK(piano_init());

	CHECK_EQ(test_thread_count(PIANO_POINT_IDLE), 0);
	CHECK_EQ(test_thread_count(PIANO_POINT_TIMER), 0);
	CHECK_EQ(test_thread_count(PIANO_POINT_BLOCK), 0);

	s0 = test_stats(PIANO_POINT_EXPLICIT);
	for (int i = 0; i <= NT; i++)
		CHECK_OK(piano_ltask_create(cb, &runs[i], PIANO_LTASK_ONESHOT, &t[i]));
	for (int i = 0; i < NT; i++)
		CHECK_OK(piano_ltask_submit(t[i]));

	test_sleep_us(50000);
	for (int i = 0; i < NT; i++) {
		CHECK_STATE(t[i], PIANO_LTASK_QUEUED);
		CHECK_EQ(atomic_load(&runs[i]), 0);
	}

	/* one explicit poll visits every queue in no-thread mode */
	test_phase("piano_poll");
	int rc = piano_poll();
	CHECK(rc >= NT, "piano_poll() returned %d (%s), expected >= %d", rc,
	      test_errname(rc), NT);
	for (int i = 0; i < NT; i++) {
		CHECK_STATE(t[i], PIANO_LTASK_COMPLETED);
		CHECK_EQ(atomic_load(&runs[i]), 1);
	}
	s1 = test_stats(PIANO_POINT_EXPLICIT);
	CHECK(s1.rounds > s0.rounds, "EXPLICIT rounds did not increase (%llu -> %llu)",
	      (unsigned long long)s0.rounds, (unsigned long long)s1.rounds);
	CHECK(s1.ltasks_run >= s0.ltasks_run + NT,
	      "EXPLICIT ltasks_run %llu -> %llu, expected +%d",
	      (unsigned long long)s0.ltasks_run, (unsigned long long)s1.ltasks_run, NT);

	/* an empty poll does nothing */
	rc = piano_poll();
	CHECK_RC(rc, 0);
	CHECK_RC(piano_poll_all(), 0);

	/* piano_ltask_wait polls by itself */
	CHECK_OK(piano_ltask_submit(t[NT]));
	test_sleep_us(20000);
	CHECK_STATE(t[NT], PIANO_LTASK_QUEUED);
	test_phase("piano_ltask_wait in no-thread mode");
	CHECK_RC(piano_ltask_wait(t[NT]), 0);
	CHECK_EQ(atomic_load(&runs[NT]), 1);
	s2 = test_stats(PIANO_POINT_EXPLICIT);
	CHECK(s2.ltasks_run >= s1.ltasks_run + 1,
	      "EXPLICIT ltasks_run did not count the run done by piano_ltask_wait (%llu -> %llu)",
	      (unsigned long long)s1.ltasks_run, (unsigned long long)s2.ltasks_run);

	/* nothing ran anywhere else */
	for (int p = PIANO_POINT_IDLE; p < PIANO_POINT_COUNT; p++) {
		struct piano_stats s = test_stats(p);
		CHECK(s.ltasks_run == 0 && s.rounds == 0,
		      "point %s: rounds=%llu ltasks_run=%llu in no-thread mode, expected 0",
		      piano_point_name(p), (unsigned long long)s.rounds,
		      (unsigned long long)s.ltasks_run);
	}
	CHECK_EQ(test_thread_count(PIANO_POINT_IDLE), 0);
	CHECK_EQ(test_thread_count(PIANO_POINT_TIMER), 0);
	CHECK_EQ(test_thread_count(PIANO_POINT_BLOCK), 0);

	for (int i = 0; i <= NT; i++)
		CHECK_OK(piano_ltask_destroy(t[i]));
	test_phase("piano_finalize");
	CHECK_OK(piano_finalize());
	printf("point_explicit: ok\n");
	return TEST_PASS;
}

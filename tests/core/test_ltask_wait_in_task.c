/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.ltask_wait_in_task — from inside a running ltask callback:
 * piano_ltask_wait() on another (queued) task returns PIANO_EDEADLK instead of
 * hanging; piano_cond_wait() / piano_cond_wait_timeout() on an unset cond
 * return PIANO_EDEADLK and on a set cond return 0; piano_poll() returns 0
 * (not re-entrant: the other queued task does not run).
 *
 * PIANO_PROGRESSION=0: the callback runs in this thread's piano_poll(); the
 * other task is submitted from inside the callback (which the API allows).
 * A hang is reported by the watchdog with the step that hung.
 */
#include "common.h"

static piano_ltask_t *ta, *tb;
static piano_cond_t unset, set;
static atomic_int runs_a, runs_b;
static int rc_submit, rc_wait, rc_cwait_unset, rc_cwait_set, rc_cwait_to_unset, rc_cwait_to_set,
	rc_poll, runs_b_after_poll;

static unsigned cb_b(void *arg)
{
	(void)arg;
	atomic_fetch_add(&runs_b, 1);
	return 1;
}

static unsigned cb_a(void *arg)
{
	(void)arg;
	atomic_fetch_add(&runs_a, 1);
	/* submitted from inside (allowed), so it is certainly still queued */
	rc_submit = piano_ltask_submit(tb);
	test_phase("inside a callback: piano_ltask_wait(other queued task)");
	rc_wait = piano_ltask_wait(tb);
	test_phase("inside a callback: piano_cond_wait(unset cond)");
	rc_cwait_unset = piano_cond_wait(&unset, 1);
	test_phase("inside a callback: piano_cond_wait(set cond)");
	rc_cwait_set = piano_cond_wait(&set, 1);
	test_phase("inside a callback: piano_cond_wait_timeout(unset cond, 1 s)");
	rc_cwait_to_unset = piano_cond_wait_timeout(&unset, 1, 1000000);
	test_phase("inside a callback: piano_cond_wait_timeout(set cond, 1 s)");
	rc_cwait_to_set = piano_cond_wait_timeout(&set, 1, 1000000);
	test_phase("inside a callback: piano_poll()");
	int before = atomic_load(&runs_b);
	rc_poll = piano_poll();
	runs_b_after_poll = atomic_load(&runs_b) - before;
	test_phase("returning from the callback");
	return 1;
}

int main(void)
{
	test_watchdog(30);
	test_setenv("PIANO_PROGRESSION", "0");
	CHECK_OK(piano_init());
	CHECK_OK(piano_cond_init(&unset, 0));
	CHECK_OK(piano_cond_init(&set, 0));
	CHECK_OK(piano_cond_signal(&set, 1));

	CHECK_OK(piano_ltask_create(cb_b, NULL, PIANO_LTASK_ONESHOT, &tb));
	CHECK_OK(piano_ltask_create(cb_a, NULL, PIANO_LTASK_ONESHOT, &ta));
	CHECK_OK(piano_ltask_submit(ta));

	test_phase("piano_ltask_wait(A) from main");
	CHECK_RC(piano_ltask_wait(ta), 0);
	CHECK_EQ(atomic_load(&runs_a), 1);

	CHECK_RC(rc_submit, 0);
	CHECK_RC(rc_wait, PIANO_EDEADLK);
	CHECK_RC(rc_cwait_unset, PIANO_EDEADLK);
	CHECK_RC(rc_cwait_set, 0);
	CHECK_RC(rc_cwait_to_unset, PIANO_EDEADLK);
	CHECK_RC(rc_cwait_to_set, 0);
	CHECK_RC(rc_poll, 0);
	CHECK(runs_b_after_poll == 0,
	      "piano_poll() inside a callback ran another task (%d runs)", runs_b_after_poll);
	CHECK(piano_cond_test(&unset, 1) == PIANO_EAGAIN, "unset cond became set");

	test_phase("piano_ltask_wait(B) from main");
	CHECK_RC(piano_ltask_wait(tb), 0);
	CHECK_EQ(atomic_load(&runs_b), 1);

	CHECK_OK(piano_ltask_destroy(ta));
	CHECK_OK(piano_ltask_destroy(tb));
	CHECK_OK(piano_cond_destroy(&unset));
	CHECK_OK(piano_cond_destroy(&set));
	test_phase("piano_finalize");
	CHECK_OK(piano_finalize());
	printf("ltask_wait_in_task: ok\n");
	return TEST_PASS;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.ltask_cancel — piano_ltask_cancel():
 *  - a queued task that never ran: CANCELED at the next poll, callback never
 *    runs, wait/test return PIANO_ECANCELED, it can be submitted again;
 *  - a running repeat task (cancelled from another thread while its callback
 *    is blocked): the current call finishes, it never runs again, CANCELED;
 *  - cancel of a task not in flight (INIT, COMPLETED, CANCELED) is
 *    PIANO_ESTATE; destroy and submit of a queued task are PIANO_EBUSY.
 *
 * PIANO_PROGRESSION=0: only this test's threads poll.
 */
#include "common.h"

static atomic_int runs_a;
static unsigned cb_count(void *arg)
{
	atomic_fetch_add((atomic_int *)arg, 1);
	return 1;
}

/* part B */
static atomic_int runs_b, in_cb, release_cb, stop_poller;

static unsigned cb_block(void *arg)
{
	(void)arg;
	int n = atomic_fetch_add(&runs_b, 1) + 1;
	if (n == 1) {
		double deadline = test_now() + 20.0;
		atomic_store(&in_cb, 1);
		while (!atomic_load(&release_cb)) {
			CHECK(test_now() < deadline, "callback never released");
			sched_yield();
		}
	}
	return 1;
}

static void *poller(void *arg)
{
	(void)arg;
	while (!atomic_load(&stop_poller)) {
		int rc = piano_poll();
		CHECK(rc >= 0, "piano_poll() in poller thread returned %d (%s)", rc,
		      test_errname(rc));
		if (rc == 0)
			sched_yield();
	}
	return NULL;
}

static void poll_n(int n)
{
	for (int i = 0; i < n; i++) {
		int rc = piano_poll();
		CHECK(rc >= 0, "piano_poll() returned %d (%s)", rc, test_errname(rc));
	}
}

int main(void)
{
	piano_ltask_t *t;
	pthread_t th;

	test_watchdog(50);
	test_setenv("PIANO_PROGRESSION", "0");
	CHECK_OK(piano_init());

	/* A: cancel a pending task */
	CHECK_OK(piano_ltask_create(cb_count, &runs_a, PIANO_LTASK_ONESHOT, &t));
	CHECK_RC(piano_ltask_cancel(t), PIANO_ESTATE); /* INIT: not in flight */
	CHECK_STATE(t, PIANO_LTASK_INIT);
	CHECK_OK(piano_ltask_submit(t));
	CHECK_RC(piano_ltask_submit(t), PIANO_EBUSY);
	CHECK_RC(piano_ltask_destroy(t), PIANO_EBUSY);
	CHECK_STATE(t, PIANO_LTASK_QUEUED);
	CHECK_OK(piano_ltask_cancel(t));
	test_phase("polling a cancelled pending task");
	poll_n(1);
	CHECK_STATE(t, PIANO_LTASK_CANCELED);
	CHECK_EQ(atomic_load(&runs_a), 0);
	CHECK_RC(piano_ltask_test(t), PIANO_ECANCELED);
	CHECK_RC(piano_ltask_wait(t), PIANO_ECANCELED);
	CHECK_RC(piano_ltask_cancel(t), PIANO_ESTATE); /* CANCELED: not in flight */
	poll_n(5);
	CHECK_EQ(atomic_load(&runs_a), 0);
	/* a cancelled task can be submitted again and then runs */
	CHECK_OK(piano_ltask_submit(t));
	test_phase("waiting for a resubmitted cancelled task");
	CHECK_RC(piano_ltask_wait(t), 0);
	CHECK_EQ(atomic_load(&runs_a), 1);
	CHECK_STATE(t, PIANO_LTASK_COMPLETED);
	CHECK_RC(piano_ltask_cancel(t), PIANO_ESTATE); /* COMPLETED: not in flight */
	CHECK_STATE(t, PIANO_LTASK_COMPLETED);
	CHECK_OK(piano_ltask_destroy(t));

	/* B: cancel a running repeat task from another thread */
	CHECK_OK(piano_ltask_create(cb_block, NULL, PIANO_LTASK_REPEAT, &t));
	CHECK_OK(piano_ltask_submit(t));
	test_thread_start(&th, poller, NULL);
	double deadline = test_now() + 10.0;
	test_phase("waiting for the poller thread to run the task");
	while (!atomic_load(&in_cb)) {
		CHECK(test_now() < deadline, "the poller thread did not run the task within 10 s");
		test_sleep_us(100);
	}
	CHECK_STATE(t, PIANO_LTASK_RUNNING);
	CHECK_OK(piano_ltask_cancel(t));
	/* the current call is still running: not finished yet */
	CHECK_RC(piano_ltask_test(t), PIANO_EAGAIN);
	atomic_store(&release_cb, 1);
	test_phase("piano_ltask_wait on a cancelled running task");
	CHECK_RC(piano_ltask_wait(t), PIANO_ECANCELED);
	CHECK_STATE(t, PIANO_LTASK_CANCELED);
	/* let the poller go on for a while: the task must not run again */
	test_sleep_us(50000);
	atomic_store(&stop_poller, 1);
	pthread_join(th, NULL);
	poll_n(10);
	CHECK_EQ(atomic_load(&runs_b), 1);
	CHECK_STATE(t, PIANO_LTASK_CANCELED);
	CHECK_RC(piano_ltask_test(t), PIANO_ECANCELED);
	CHECK_OK(piano_ltask_destroy(t));

	test_phase("piano_finalize");
	CHECK_OK(piano_finalize());
	printf("ltask_cancel: ok\n");
	return TEST_PASS;
}

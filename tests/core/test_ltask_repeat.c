/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.ltask_repeat — a PIANO_LTASK_REPEAT task runs until it calls
 * piano_ltask_complete(piano_ltask_current()) from inside its callback, and
 * then never again; piano_ltask_current() is the task inside the callback and
 * NULL outside; piano_ltask_complete() from outside on a queued task
 * completes it at its next visit without running it again.
 *
 * PIANO_PROGRESSION=0: nothing runs unless this thread polls.
 */
#include "common.h"

#define NRUNS 7

static piano_ltask_t *t1, *t2;
static atomic_int runs1, runs2;

static unsigned cb1(void *arg)
{
	(void)arg;
	piano_ltask_t *cur = piano_ltask_current();
	CHECK(cur == t1, "piano_ltask_current() inside is %p, expected %p",
	      (void *)cur, (void *)t1);
	int n = atomic_fetch_add(&runs1, 1) + 1;
	CHECK(n <= NRUNS, "repeat task ran %d times, it completed itself at run %d",
	      n, NRUNS);
	if (n == NRUNS)
		CHECK_OK(piano_ltask_complete(cur));
	return 1;
}

static unsigned cb2(void *arg)
{
	(void)arg;
	CHECK(piano_ltask_current() == t2, "piano_ltask_current() inside is wrong");
	atomic_fetch_add(&runs2, 1);
	return 1;
}

int main(void)
{
	test_watchdog(50);
	test_setenv("PIANO_PROGRESSION", "0");
	CHECK_OK(piano_init());
	CHECK(piano_ltask_current() == NULL,
	      "piano_ltask_current() outside any callback is %p, expected NULL",
	      (void *)piano_ltask_current());

	/* 1. completes itself from inside after NRUNS runs */
	CHECK_OK(piano_ltask_create(cb1, NULL, PIANO_LTASK_REPEAT, &t1));
	CHECK_OK(piano_ltask_submit(t1));
	test_phase("polling the self-completing repeat task");
	for (int i = 0; i < 100 * NRUNS && piano_ltask_test(t1) == PIANO_EAGAIN; i++) {
		int rc = piano_poll();
		CHECK(rc >= 0, "piano_poll() returned %d (%s)", rc, test_errname(rc));
		CHECK(piano_ltask_current() == NULL,
		      "piano_ltask_current() after piano_poll() is not NULL");
	}
	CHECK_RC(piano_ltask_test(t1), 0);
	CHECK_STATE(t1, PIANO_LTASK_COMPLETED);
	CHECK_EQ(atomic_load(&runs1), NRUNS);
	for (int i = 0; i < 20; i++)
		CHECK(piano_poll() >= 0, "piano_poll failed");
	CHECK_EQ(atomic_load(&runs1), NRUNS);
	CHECK_RC(piano_ltask_wait(t1), 0);
	CHECK(piano_ltask_current() == NULL, "piano_ltask_current() outside is not NULL");

	/* 2. complete() from outside while queued */
	CHECK_OK(piano_ltask_create(cb2, NULL, PIANO_LTASK_REPEAT, &t2));
	CHECK_OK(piano_ltask_submit(t2));
	for (int i = 0; i < 3; i++)
		CHECK(piano_poll() >= 0, "piano_poll failed");
	int before = atomic_load(&runs2);
	CHECK(before >= 1, "repeat task did not run during 3 polls (runs=%d)", before);
	CHECK_RC(piano_ltask_test(t2), PIANO_EAGAIN);
	CHECK_STATE(t2, PIANO_LTASK_QUEUED);
	CHECK_OK(piano_ltask_complete(t2));
	test_phase("polling after piano_ltask_complete() from outside");
	for (int i = 0; i < 10; i++)
		CHECK(piano_poll() >= 0, "piano_poll failed");
	CHECK_STATE(t2, PIANO_LTASK_COMPLETED);
	CHECK_RC(piano_ltask_test(t2), 0);
	CHECK_RC(piano_ltask_wait(t2), 0);
	CHECK(atomic_load(&runs2) == before,
	      "task completed from outside ran again: %d runs before complete(), %d after",
	      before, atomic_load(&runs2));

	CHECK_OK(piano_ltask_destroy(t1));
	CHECK_OK(piano_ltask_destroy(t2));
	test_phase("piano_finalize");
	CHECK_OK(piano_finalize());
	printf("ltask_repeat: ok\n");
	return TEST_PASS;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.ltask_oneshot — a PIANO_LTASK_ONESHOT task runs exactly once per
 * submission: INIT -> QUEUED -> RUNNING (inside its callback) -> COMPLETED,
 * wait returns 0, test returns 0 afterwards, a resubmission after completion
 * runs it again, destroy frees it.
 *
 * PIANO_PROGRESSION=0: nothing runs unless this thread polls, so every state
 * observed here is deterministic.
 */
#include "common.h"

static int magic;
static piano_ltask_t *task;
static atomic_int runs;
static atomic_int state_inside = -100;

static unsigned cb(void *arg)
{
	CHECK(arg == &magic, "callback got arg %p, expected %p", arg, (void *)&magic);
	CHECK(piano_ltask_current() == task,
	      "piano_ltask_current() inside the callback is %p, expected the task %p",
	      (void *)piano_ltask_current(), (void *)task);
	atomic_store(&state_inside, piano_ltask_state(task));
	atomic_fetch_add(&runs, 1);
	return 1;
}

int main(void)
{
	int rc;

	test_watchdog(50);
	test_setenv("PIANO_PROGRESSION", "0");
	CHECK_OK(piano_init());

	CHECK_OK(piano_ltask_create(cb, &magic, PIANO_LTASK_ONESHOT, &task));
	CHECK(task != NULL, "piano_ltask_create returned 0 but a NULL task");
	CHECK_STATE(task, PIANO_LTASK_INIT);
	CHECK_RC(piano_ltask_test(task), PIANO_EAGAIN);
	/* never submitted: nothing to wait for */
	CHECK_RC(piano_ltask_wait(task), PIANO_ESTATE);

	CHECK_OK(piano_ltask_submit(task));
	CHECK_STATE(task, PIANO_LTASK_QUEUED);
	CHECK_RC(piano_ltask_test(task), PIANO_EAGAIN);
	CHECK_EQ(atomic_load(&runs), 0);

	/* In no-thread mode one poll visits every queue. */
	test_phase("first piano_poll");
	rc = piano_poll();
	CHECK(rc >= 1, "piano_poll() returned %d (%s), expected >= 1 (the task ran)",
	      rc, test_errname(rc));
	CHECK_EQ(atomic_load(&runs), 1);
	CHECK(atomic_load(&state_inside) == PIANO_LTASK_RUNNING,
	      "state inside the callback was %s, expected RUNNING",
	      test_statename(atomic_load(&state_inside)));
	CHECK_STATE(task, PIANO_LTASK_COMPLETED);
	CHECK_RC(piano_ltask_test(task), 0);
	test_phase("piano_ltask_wait on a completed task");
	CHECK_RC(piano_ltask_wait(task), 0);
	CHECK_RC(piano_ltask_test(task), 0);

	/* exactly once: more polls do not run it again */
	for (int i = 0; i < 10; i++) {
		rc = piano_poll();
		CHECK(rc >= 0, "piano_poll() returned %d (%s)", rc, test_errname(rc));
	}
	CHECK_EQ(atomic_load(&runs), 1);
	CHECK_STATE(task, PIANO_LTASK_COMPLETED);

	/* resubmission after completion runs it once more */
	CHECK_OK(piano_ltask_submit(task));
	CHECK_STATE(task, PIANO_LTASK_QUEUED);
	CHECK_RC(piano_ltask_test(task), PIANO_EAGAIN);
	CHECK_EQ(atomic_load(&runs), 1);
	test_phase("piano_ltask_wait after resubmission (no-thread mode: wait polls)");
	CHECK_RC(piano_ltask_wait(task), 0);
	CHECK_EQ(atomic_load(&runs), 2);
	CHECK_STATE(task, PIANO_LTASK_COMPLETED);
	for (int i = 0; i < 10; i++)
		CHECK(piano_poll() >= 0, "piano_poll failed");
	CHECK_EQ(atomic_load(&runs), 2);

	CHECK_OK(piano_ltask_destroy(task));
	test_phase("piano_finalize");
	CHECK_OK(piano_finalize());
	CHECK_EQ(piano_initialized(), 0);
	printf("ltask_oneshot: ok\n");
	return TEST_PASS;
}

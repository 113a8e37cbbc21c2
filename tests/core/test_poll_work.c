/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.poll_work — piano_poll()'s return value is the amount of work done:
 * the sum of the callbacks' return values plus the number of tasks that
 * finished; 0 when nothing was done (PIANO_PROGRESSION=0, so only this
 * thread runs tasks and one poll visits every queue).
 */
#include "common.h"

static unsigned ret_arg(void *arg)
{
	return (unsigned)(uintptr_t)arg;
}

int main(void)
{
	piano_ltask_t *a, *b, *c, *r7, *r0;

	test_watchdog(50);
	test_setenv("PIANO_PROGRESSION", "0");
	CHECK_OK(piano_init());
	CHECK_RC(piano_poll(), 0);

	/* three one-shot tasks returning 5, 0, 2: 7 + 3 finished = 10 */
	CHECK_OK(piano_ltask_create(ret_arg, (void *)(uintptr_t)5, PIANO_LTASK_ONESHOT, &a));
	CHECK_OK(piano_ltask_create(ret_arg, (void *)(uintptr_t)0, PIANO_LTASK_ONESHOT, &b));
	CHECK_OK(piano_ltask_create(ret_arg, (void *)(uintptr_t)2, PIANO_LTASK_ONESHOT, &c));
	CHECK_OK(piano_ltask_submit(a));
	CHECK_OK(piano_ltask_submit(b));
	CHECK_OK(piano_ltask_submit(c));
	CHECK_RC(piano_poll(), 10);
	CHECK_RC(piano_poll(), 0);

	/* a repeat task returning 7 (not finishing): 7 per poll */
	CHECK_OK(piano_ltask_create(ret_arg, (void *)(uintptr_t)7, PIANO_LTASK_REPEAT, &r7));
	CHECK_OK(piano_ltask_submit(r7));
	CHECK_RC(piano_poll(), 7);
	CHECK_RC(piano_poll(), 7);

	/* plus a repeat task returning 0: still 7 */
	CHECK_OK(piano_ltask_create(ret_arg, (void *)(uintptr_t)0, PIANO_LTASK_REPEAT, &r0));
	CHECK_OK(piano_ltask_submit(r0));
	CHECK_RC(piano_poll(), 7);

	/* completing r7 from outside: it finishes without running (1) */
	CHECK_OK(piano_ltask_complete(r7));
	CHECK_RC(piano_poll(), 1);
	CHECK_STATE(r7, PIANO_LTASK_COMPLETED);
	/* only r0 is left: nothing done */
	CHECK_RC(piano_poll(), 0);
	CHECK_RC(piano_poll_all(), 0);
	CHECK_OK(piano_ltask_cancel(r0));
	CHECK_RC(piano_poll_all(), 1);
	CHECK_STATE(r0, PIANO_LTASK_CANCELED);
	CHECK_RC(piano_poll(), 0);

	CHECK_OK(piano_ltask_destroy(a));
	CHECK_OK(piano_ltask_destroy(b));
	CHECK_OK(piano_ltask_destroy(c));
	CHECK_OK(piano_ltask_destroy(r7));
	CHECK_OK(piano_ltask_destroy(r0));
	CHECK_OK(piano_finalize());
	printf("poll_work: ok\n");
	return TEST_PASS;
}

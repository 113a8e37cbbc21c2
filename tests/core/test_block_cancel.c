/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.block_cancel — blocking helpers and the task life cycle:
 *  A. cancelling a task while a helper sleeps in its blocking callback:
 *     state BLOCKED while the helper has it; after piano_ltask_cancel() and
 *     the event, the task is CANCELED without running its callback again;
 *  B. a blocking callback that fails (returns < 0) puts the task back in its
 *     queue: it keeps being polled normally and completes.
 * One helper, the timer as the only poller (no idle threads), delay 0.
 */
#include "common.h"

#include <poll.h>

static int fds[2];
static atomic_int runs, blocks, in_block, cancelled;
static atomic_int runs_after_cancel, blocks_after_cancel;

static unsigned cb(void *arg)
{
	(void)arg;
	atomic_fetch_add(&runs, 1);
	if (atomic_load(&cancelled))
		atomic_fetch_add(&runs_after_cancel, 1);
	return 0; /* never any work: the engine hands it to the helper */
}

static int block(void *arg, int timeout_ms)
{
	(void)arg;
	struct pollfd p = { .fd = fds[0], .events = POLLIN, .revents = 0 };
	atomic_fetch_add(&blocks, 1);
	if (atomic_load(&cancelled))
		atomic_fetch_add(&blocks_after_cancel, 1);
	atomic_store(&in_block, 1);
	int r = poll(&p, 1, timeout_ms);
	atomic_store(&in_block, 0);
	return r < 0 ? -1 : r;
}

static atomic_int b_runs, b_blocks;

static unsigned cb_b(void *arg)
{
	(void)arg;
	if (atomic_fetch_add(&b_runs, 1) + 1 >= 50)
		CHECK_OK(piano_ltask_complete(piano_ltask_current()));
	return 0;
}

static int block_fail(void *arg, int timeout_ms)
{
	(void)arg;
	(void)timeout_ms;
	atomic_fetch_add(&b_blocks, 1);
	return -1;
}

int main(void)
{
	piano_ltask_t *t;

	test_watchdog(60);
	test_setenv("PIANO_PROGRESSION", "1");
	test_setenv("PIANO_IDLE_LEVEL", "none");
	test_setenv("PIANO_TIMER_PERIOD_US", "1000");
	test_setenv("PIANO_BLOCK_HELPERS", "1");
	/* the helper sleeps up to 10 s per call: the cancel below certainly
	 * happens while it sleeps */
	test_setenv("PIANO_BLOCK_TIMEOUT_MS", "10000");
	CHECK_OK(piano_init());
	CHECK_EQ(test_thread_count(PIANO_POINT_BLOCK), 1);
	CHECK(pipe(fds) == 0, "pipe: %s", strerror(errno));

	/* A */
	test_phase("A: waiting for the helper to take the task");
	CHECK_OK(piano_ltask_create(cb, NULL, PIANO_LTASK_REPEAT, &t));
	CHECK_OK(piano_ltask_set_blocking(t, block, 0));
	CHECK_OK(piano_ltask_submit(t));
	double deadline = test_now() + 10.0;
	while (!atomic_load(&in_block)) {
		CHECK(test_now() < deadline, "A: the helper did not call the blocking callback "
		      "within 10 s (runs=%d, state %s)", atomic_load(&runs),
		      test_statename(piano_ltask_state(t)));
		test_sleep_us(1000);
	}
	CHECK_STATE(t, PIANO_LTASK_BLOCKED);
	atomic_store(&cancelled, 1);
	CHECK_OK(piano_ltask_cancel(t));
	CHECK(write(fds[1], "x", 1) == 1, "write: %s", strerror(errno));
	test_phase("A: piano_ltask_wait after cancelling a blocked task");
	CHECK_RC(piano_ltask_wait(t), PIANO_ECANCELED);
	CHECK_STATE(t, PIANO_LTASK_CANCELED);
	test_sleep_us(20000);
	CHECK(atomic_load(&runs_after_cancel) == 0,
	      "A: the callback ran %d times after the blocked task was cancelled",
	      atomic_load(&runs_after_cancel));
	CHECK(atomic_load(&blocks_after_cancel) == 0,
	      "A: the blocking callback was called %d more times after the cancel",
	      atomic_load(&blocks_after_cancel));
	CHECK_OK(piano_ltask_destroy(t));

	/* B */
	test_phase("B: blocking callback failing");
	CHECK_OK(piano_ltask_create(cb_b, NULL, PIANO_LTASK_REPEAT, &t));
	CHECK_OK(piano_ltask_set_blocking(t, block_fail, 0));
	CHECK_OK(piano_ltask_submit(t));
	deadline = test_now() + 10.0;
	while (piano_ltask_test(t) == PIANO_EAGAIN) {
		CHECK(test_now() < deadline, "B: task not completed within 10 s (runs=%d, "
		      "blocking calls=%d, state %s)", atomic_load(&b_runs),
		      atomic_load(&b_blocks), test_statename(piano_ltask_state(t)));
		test_sleep_us(1000);
	}
	CHECK_RC(piano_ltask_wait(t), 0);
	CHECK_EQ(atomic_load(&b_runs), 50);
	CHECK(atomic_load(&b_blocks) >= 1, "B: the failing blocking callback was never called");
	CHECK_OK(piano_ltask_destroy(t));

	close(fds[0]);
	close(fds[1]);
	test_phase("piano_finalize");
	CHECK_OK(piano_finalize());
	printf("block_cancel: ok (B: %d runs, %d failed blocking calls)\n", atomic_load(&b_runs),
	       atomic_load(&b_blocks));
	return TEST_PASS;
}

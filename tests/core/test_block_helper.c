/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.block_helper — a blocking helper sleeps in the kernel on behalf of a
 * task whose work arrives on a file descriptor: no idle threads, a timer,
 * one helper (PIANO_BLOCK_HELPERS=1, PIANO_BLOCK_DELAY_US=2000), every CPU
 * busy with spinner threads. The task's callback reads a pipe without
 * blocking and completes once it got the byte; its blocking callback does
 * poll(POLLIN, timeout_ms). A writer writes the byte after 200 ms and once
 * the helper called the blocking callback, i.e. after the task was handed
 * to the helper: the run that consumes it happens in the
 * helper (BLOCK ltasks_run >= 1) and the task completes within 10 s.
 */
#include "common.h"

#include <poll.h>

static int fds[2];
static atomic_int runs, got, blocks, block_events, bad_timeout;

static unsigned cb(void *arg)
{
	(void)arg;
	char c;
	atomic_fetch_add(&runs, 1);
	ssize_t r = read(fds[0], &c, 1);
	if (r == 1) {
		CHECK(c == 'x', "read byte 0x%02x, expected 'x'", (unsigned char)c);
		atomic_store(&got, 1);
		CHECK_OK(piano_ltask_complete(piano_ltask_current()));
		return 1;
	}
	CHECK(r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK),
	      "non-blocking read returned %zd (%s)", r, strerror(errno));
	return 0;
}

static int block(void *arg, int timeout_ms)
{
	(void)arg;
	struct pollfd p = { .fd = fds[0], .events = POLLIN, .revents = 0 };
	atomic_fetch_add(&blocks, 1);
	if (timeout_ms < 0 || timeout_ms > 10000)
		atomic_store(&bad_timeout, timeout_ms);
	int r = poll(&p, 1, timeout_ms);
	if (r > 0)
		atomic_fetch_add(&block_events, 1);
	return r < 0 ? -1 : r;
}

/* Writes once the helper called the blocking callback (and at least 200 ms
 * after the start): on a loaded machine the timer may not have polled the
 * task long enough to hand it over by then, and a byte written earlier is
 * rightly consumed by the timer's run. From the callback's entry the task is
 * the helper's until poll() returns, which with PIANO_BLOCK_TIMEOUT_MS=10000
 * only the byte makes it do. */
static void *writer(void *arg)
{
	(void)arg;
	test_sleep_us(200000);
	double deadline = test_now() + 8.0;
	while (atomic_load(&blocks) == 0 && test_now() < deadline)
		test_sleep_us(1000);
	ssize_t r = write(fds[1], "x", 1);
	CHECK(r == 1, "write to the pipe failed: %s", strerror(errno));
	return NULL;
}

int main(void)
{
	piano_ltask_t *t;
	pthread_t wth;
	static struct test_spinners spin;

	test_watchdog(50);
	test_setenv("PIANO_PROGRESSION", "1");
	test_setenv("PIANO_IDLE_LEVEL", "none");
	test_setenv("PIANO_TIMER_PERIOD_US", "1000");
	test_setenv("PIANO_BLOCK_HELPERS", "1");
	test_setenv("PIANO_BLOCK_DELAY_US", "2000");
	test_setenv("PIANO_BLOCK_TIMEOUT_MS", "10000");
	CHECK_OK(piano_init());
	CHECK_EQ(test_thread_count(PIANO_POINT_BLOCK), 1);
	CHECK_EQ(test_thread_count(PIANO_POINT_IDLE), 0);

	CHECK(pipe(fds) == 0, "pipe: %s", strerror(errno));
	CHECK(fcntl(fds[0], F_SETFL, O_NONBLOCK) == 0, "fcntl: %s", strerror(errno));

	CHECK_OK(piano_ltask_create(cb, NULL, PIANO_LTASK_REPEAT, &t));
	CHECK_OK(piano_ltask_set_name(t, "pipe-reader"));
	/* negative delay: use PIANO_BLOCK_DELAY_US */
	CHECK_OK(piano_ltask_set_blocking(t, block, -1));

	int ncpu = test_ncpus();
	test_spinners_start(&spin, ncpu);
	CHECK_OK(piano_ltask_submit(t));
	test_thread_start(&wth, writer, NULL);

	test_phase("sleeping until the task got its byte");
	int seen_blocked = 0;
	double deadline = test_now() + 10.0;
	while (piano_ltask_test(t) == PIANO_EAGAIN) {
		if (test_now() >= deadline) {
			test_spinners_stop(&spin);
			FAIL("task not completed within 10 s (runs=%d, block calls=%d, "
			     "events=%d, got=%d, state %s)",
			     atomic_load(&runs), atomic_load(&blocks),
			     atomic_load(&block_events), atomic_load(&got),
			     test_statename(piano_ltask_state(t)));
		}
		if (piano_ltask_state(t) == PIANO_LTASK_BLOCKED)
			seen_blocked = 1;
		test_sleep_us(1000);
	}
	test_spinners_stop(&spin);
	pthread_join(wth, NULL);
	CHECK_RC(piano_ltask_wait(t), 0);
	CHECK_EQ(atomic_load(&got), 1);
	CHECK(atomic_load(&blocks) >= 1, "the blocking callback was never called");
	CHECK(atomic_load(&bad_timeout) == 0, "blocking callback got timeout_ms=%d",
	      atomic_load(&bad_timeout));
	CHECK(atomic_load(&block_events) >= 1,
	      "the blocking callback never saw the event (the byte was consumed elsewhere)");

	struct piano_stats blk = test_stats(PIANO_POINT_BLOCK);
	struct piano_stats timer = test_stats(PIANO_POINT_TIMER);
	CHECK(blk.ltasks_run >= 1,
	      "BLOCK ltasks_run = %llu: the run after the event did not happen in the helper "
	      "(TIMER ltasks_run = %llu, task runs = %d)",
	      (unsigned long long)blk.ltasks_run, (unsigned long long)timer.ltasks_run,
	      atomic_load(&runs));
	CHECK_EQ(test_thread_count(PIANO_POINT_BLOCK), 1);
	printf("block_helper: ok (runs=%d block calls=%d BLOCK ltasks_run=%llu TIMER "
	       "ltasks_run=%llu, BLOCKED state %s)\n",
	       atomic_load(&runs), atomic_load(&blocks), (unsigned long long)blk.ltasks_run,
	       (unsigned long long)timer.ltasks_run, seen_blocked ? "observed" : "not sampled");

	CHECK_OK(piano_ltask_destroy(t));
	close(fds[0]);
	close(fds[1]);
	test_phase("piano_finalize");
	CHECK_OK(piano_finalize());
	return TEST_PASS;
}

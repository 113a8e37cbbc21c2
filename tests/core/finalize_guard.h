/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared by the finalize tests: piano_finalize() under a watchdog that fails
 * the test if it has not returned within a limit.
 */
#ifndef PIANO_TEST_FINALIZE_GUARD_H
#define PIANO_TEST_FINALIZE_GUARD_H

#include "common.h"

/* Fails the test if finalize has not returned by the deadline. */
struct fin_guard {
	atomic_int done;
	double limit;
	const char *what;
	pthread_t th;
};

static void *guard_main(void *arg)
{
	struct fin_guard *g = arg;
	double deadline = test_now() + g->limit;
	while (!atomic_load(&g->done)) {
		if (test_now() > deadline)
			FAIL("%s: piano_finalize() has not returned after %.0f s", g->what, g->limit);
		test_sleep_us(10000);
	}
	return NULL;
}

static void timed_finalize(const char *what, double limit, char *msg, size_t msgsize)
{
	static struct fin_guard g;
	struct test_capture cap;
	atomic_store(&g.done, 0);
	g.limit = limit;
	g.what = what;
	test_thread_start(&g.th, guard_main, &g);
	if (msg)
		test_capture_begin(&cap);
	double t0 = test_now();
	int rc = piano_finalize();
	double dt = test_now() - t0;
	if (msg)
		test_capture_end(&cap, msg, msgsize);
	atomic_store(&g.done, 1);
	pthread_join(g.th, NULL);
	CHECK(rc == 0, "%s: piano_finalize() returned %d (%s)", what, rc, test_errname(rc));
	printf("  %s: finalize took %.3f s\n", what, dt);
}

#endif

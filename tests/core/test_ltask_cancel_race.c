/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.ltask_cancel_race — "a queued task never runs again" holds under
 * concurrency: two threads poll continuously while the main thread submits a
 * repeat task and, at a random moment, cancels it (even iterations) or
 * completes it from outside (odd iterations), then reads its state. When
 * the state read AFTER piano_ltask_cancel()/piano_ltask_complete() returned
 * is QUEUED, the callback must not be entered afterwards (a call already
 * started would have shown RUNNING). piano_ltask_wait() must return
 * PIANO_ECANCELED / 0 accordingly.
 *
 * The race window is a few instructions wide, so the loop runs for 3 s (at
 * most 4000000 iterations, 200000 with PIANO_TEST_SCALE=small, or argv[1])
 * and stops at the first violation. A correct engine never fails it; a
 * buggy one fails it with high probability, not certainty.
 */
#include "common.h"

static piano_ltask_t *task;
static atomic_int entries, stop;
static atomic_int request_done, queued_after_request;
static atomic_long late_entries, strict_violations;
static atomic_long first_violation = -1;
static atomic_long iteration;

static unsigned cb(void *arg)
{
	(void)arg;
	atomic_fetch_add(&entries, 1);
	if (atomic_load(&request_done)) {
		atomic_fetch_add(&late_entries, 1);
		if (atomic_load(&queued_after_request)) {
			long none = -1;
			atomic_fetch_add(&strict_violations, 1);
			atomic_compare_exchange_strong(&first_violation, &none,
			                               atomic_load(&iteration));
		}
	}
	return 1;
}

static void *poller(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		int rc = piano_poll();
		CHECK(rc >= 0, "piano_poll() returned %d (%s)", rc, test_errname(rc));
	}
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t th[2];
	long iters = test_scale(4000000, 200000);
	long done = 0;
	unsigned seed = 7;

	if (argc > 1)
		iters = atol(argv[1]);
	test_watchdog(110);
	test_setenv("PIANO_PROGRESSION", "0");
	CHECK_OK(piano_init());
	CHECK_OK(piano_ltask_create(cb, NULL, PIANO_LTASK_REPEAT, &task));
	for (int i = 0; i < 2; i++)
		test_thread_start(&th[i], poller, NULL);

	test_phase("cancel/complete race loop");
	double end = test_now() + 3.0;
	for (long i = 0; i < iters; i++) {
		if (atomic_load(&strict_violations) || ((i & 1023) == 0 && test_now() > end))
			break;
		done = i + 1;
		int cancel = (i % 2) == 0;
		atomic_store(&iteration, i);
		atomic_store(&request_done, 0);
		atomic_store(&queued_after_request, 0);
		CHECK_OK(piano_ltask_submit(task));
		/* request at a random moment: before, during or between runs */
		int e0 = atomic_load(&entries);
		unsigned spins = rand_r(&seed) % 512;
		while (spins-- && atomic_load(&entries) == e0)
			;
		CHECK_OK(cancel ? piano_ltask_cancel(task) : piano_ltask_complete(task));
		int st = piano_ltask_state(task);
		atomic_store(&queued_after_request, st == PIANO_LTASK_QUEUED);
		atomic_store(&request_done, 1);
		int rc = piano_ltask_wait(task);
		if (rc != (cancel ? PIANO_ECANCELED : 0))
			FAIL("iteration %ld: piano_ltask_wait returned %d (%s) after %s", i, rc,
			     test_errname(rc), cancel ? "cancel" : "complete");
	}
	atomic_store(&stop, 1);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	CHECK_OK(piano_ltask_destroy(task));
	CHECK_OK(piano_finalize());

	printf("ltask_cancel_race: %ld iterations, %d callback entries, %ld entries after the "
	       "request returned, %ld of them while the state read after the request was "
	       "QUEUED\n",
	       done, atomic_load(&entries), atomic_load(&late_entries),
	       atomic_load(&strict_violations));
	CHECK(atomic_load(&strict_violations) == 0,
	      "%ld times (first at iteration %ld) the task ran after piano_ltask_cancel()/"
	      "piano_ltask_complete() returned although piano_ltask_state() read after "
	      "that call said QUEUED: a queued task ran again",
	      atomic_load(&strict_violations), atomic_load(&first_violation));
	return TEST_PASS;
}

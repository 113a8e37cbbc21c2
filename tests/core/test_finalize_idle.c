/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.finalize_idle — the last piano_finalize() is bounded with progression
 * threads too: idle threads configured with the longest valid pauses
 * (PIANO_IDLE_PERIOD_US=1000000, PIANO_IDLE_COEF=100000, so a pause "after a
 * round in which the thread's branch held no task while other queues did" is
 * documented as period x coef), one idle thread per core, and a repeat task
 * that never completes, bound to the last core's queue (outside the first
 * idle thread's branch). Once the idle threads had time to start such a
 * pause, piano_finalize() (PIANO_FINALIZE_TIMEOUT_MS=200) must return within
 * 20 s. Skipped (77) with fewer than 2 cores.
 */
#include "finalize_guard.h"

static atomic_int forever_runs;
/* task deliberately left unfinished by finalize: kept reachable */
static piano_ltask_t *left_c;

static unsigned cb_forever(void *arg)
{
	(void)arg;
	atomic_fetch_add(&forever_runs, 1);
	return 0;
}

static int part_c(void)
{
	test_phase("C: finalize with the longest idle pauses");
	test_clear_env();
	test_setenv("PIANO_PROGRESSION", "1");
	test_setenv("PIANO_QUEUE_LEVEL", "core");
	test_setenv("PIANO_IDLE_LEVEL", "core");
	test_setenv("PIANO_IDLE_PERIOD_US", "1000000");
	test_setenv("PIANO_IDLE_COEF", "100000");
	test_setenv("PIANO_FINALIZE_TIMEOUT_MS", "200");
	CHECK_OK(piano_init());
	int nq = 0, last_leaf = -1, nleaves = 0;
	CHECK_OK(piano_queue_count(&nq));
	for (int i = 0; i < nq; i++) {
		struct piano_queue_info qi;
		CHECK_OK(piano_queue_info(i, &qi));
		if (qi.nchildren == 0) {
			last_leaf = i;
			nleaves++;
		}
	}
	if (nleaves < 2 || test_thread_count(PIANO_POINT_IDLE) < 2) {
		printf("  C: skipped (fewer than 2 cores)\n");
		CHECK_OK(piano_finalize());
		return TEST_SKIP;
	}
	CHECK_OK(piano_ltask_create(cb_forever, NULL, PIANO_LTASK_REPEAT, &left_c));
	CHECK_OK(piano_ltask_set_name(left_c, "forever-task-c"));
	CHECK_OK(piano_ltask_bind_queue(left_c, last_leaf));
	CHECK_OK(piano_ltask_submit(left_c));
	/* let the idle threads see work outside their branch and pause */
	test_sleep_us(300000);
	timed_finalize("C", 20.0, NULL, 0);
	return TEST_PASS;
}

int main(void)
{
	test_watchdog(110);
	int rc = part_c();
	if (rc == TEST_PASS)
		printf("finalize_idle: ok\n");
	return rc;
}

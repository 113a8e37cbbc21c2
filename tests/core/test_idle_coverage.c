/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.idle_coverage — the idle threads together poll every queue: on a
 * synthetic topology ("pack:2 core:2 pu:2"), for each queue level (core, pu)
 * and each idle level (machine, package, core, pu), with the timer and the
 * blocking helpers off, one repeat task bound to each queue (completing
 * itself after 5 runs) finishes while the main thread only sleeps; the runs
 * are counted under IDLE, none under EXPLICIT.
 */
#include "common.h"

#define MAXQ 64
#define NRUNS 5

static atomic_int runs[MAXQ];

static unsigned cb(void *arg)
{
	atomic_int *n = arg;
	int v = atomic_fetch_add(n, 1) + 1;
	CHECK(v <= NRUNS, "task ran %d times after completing itself at %d", v, NRUNS);
	if (v == NRUNS)
		CHECK_OK(piano_ltask_complete(piano_ltask_current()));
	return 1;
}

static void run_config(const char *qlevel, const char *ilevel, int expect_idle)
{
	piano_ltask_t *t[MAXQ];
	int nq = 0;
	char cfg[96];

	snprintf(cfg, sizeof cfg, "queue level %s, idle level %s", qlevel, ilevel);
	test_phase(cfg);
	test_clear_env();
	test_setenv("HWLOC_SYNTHETIC", "pack:2 core:2 pu:2");
	test_setenv("PIANO_PROGRESSION", "1");
	test_setenv("PIANO_QUEUE_LEVEL", qlevel);
	test_setenv("PIANO_IDLE_LEVEL", ilevel);
	test_setenv("PIANO_TIMER_PERIOD_US", "0");
	test_setenv("PIANO_BLOCK_HELPERS", "0");
	CHECK_OK(piano_init());
	CHECK_OK(piano_queue_count(&nq));
	CHECK(nq >= 1 && nq <= MAXQ, "[%s] %d queues", cfg, nq);
	int nidle = test_thread_count(PIANO_POINT_IDLE);
	CHECK(nidle == expect_idle, "[%s] %d idle threads, expected %d", cfg, nidle, expect_idle);

	for (int i = 0; i < nq; i++) {
		atomic_store(&runs[i], 0);
		CHECK_OK(piano_ltask_create(cb, &runs[i], PIANO_LTASK_REPEAT, &t[i]));
		CHECK_OK(piano_ltask_bind_queue(t[i], i));
		CHECK_OK(piano_ltask_submit(t[i]));
	}
	double deadline = test_now() + 10.0;
	for (;;) {
		int left = 0;
		for (int i = 0; i < nq; i++)
			left += piano_ltask_test(t[i]) != 0;
		if (!left)
			break;
		if (test_now() > deadline) {
			for (int i = 0; i < nq; i++) {
				struct piano_queue_info qi;
				if (piano_ltask_test(t[i]) == 0)
					continue;
				CHECK_OK(piano_queue_info(i, &qi));
				fprintf(stderr, "  queue %d (%s L#%d): task not completed, %d runs\n",
				        i, qi.type, qi.logical_index, atomic_load(&runs[i]));
			}
			FAIL("[%s] %d of %d tasks not completed by the idle threads within 10 s",
			     cfg, left, nq);
		}
		test_sleep_us(1000);
	}
	for (int i = 0; i < nq; i++)
		CHECK_EQ(atomic_load(&runs[i]), NRUNS);
	struct piano_stats idle = test_stats(PIANO_POINT_IDLE);
	struct piano_stats expl = test_stats(PIANO_POINT_EXPLICIT);
	CHECK(idle.ltasks_run >= (uint64_t)(nq * NRUNS), "[%s] IDLE ltasks_run %llu < %d", cfg,
	      (unsigned long long)idle.ltasks_run, nq * NRUNS);
	CHECK(expl.ltasks_run == 0, "[%s] EXPLICIT ltasks_run %llu, expected 0", cfg,
	      (unsigned long long)expl.ltasks_run);
	for (int i = 0; i < nq; i++)
		CHECK_OK(piano_ltask_destroy(t[i]));
	CHECK_OK(piano_finalize());
	printf("  [%s] %d queues, %d idle threads: ok\n", cfg, nq, nidle);
}

int main(void)
{
	static const char *const qlevels[] = { "core", "pu" };
	static const char *const ilevels[] = { "machine", "package", "core", "pu" };
	static const int nidle[] = { 1, 2, 4, 8 };

	test_watchdog(110);
	for (int q = 0; q < 2; q++)
		for (int i = 0; i < 4; i++)
			run_config(qlevels[q], ilevels[i], nidle[i]);
	printf("idle_coverage: ok\n");
	return TEST_PASS;
}

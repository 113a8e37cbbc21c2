/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.thread_names — when piano_init() returns, every thread that
 * piano_thread_count() counts already carries its name (piano-idle,
 * piano-timer, piano-block) in /proc: tools and tests that look for the
 * engine's threads by name right after the start must find them all. A
 * thread that names itself when it first runs is unnamed for a while after
 * piano_init() returns: a test that looks for it then may skip on one rank
 * and leave the other waiting. Many starts in a row, each looked at at
 * once.
 */
#include "common.h"
#include "../threads.h"

#define STARTS 100

static int count_one(pid_t tid, void *arg)
{
	(void)tid;
	(*(int *)arg)++;
	return 0;
}

static int named(const char *name)
{
	int n = 0;
	return test_each_thread(name, count_one, &n) < 0 ? -1 : n;
}

int main(void)
{
	static const struct {
		int point;
		const char *name;
	} kinds[] = { { PIANO_POINT_IDLE, "piano-idle" },
	              { PIANO_POINT_TIMER, "piano-timer" },
	              { PIANO_POINT_BLOCK, "piano-block" } };

	test_watchdog(50);
	test_setenv("PIANO_PROGRESSION", "1");
	test_setenv("PIANO_IDLE_LEVEL", "core");
	test_setenv("PIANO_BLOCK_HELPERS", "1");
	if (named("piano-") < 0) {
		printf("thread_names: no /proc/self/task here: skipped\n");
		return TEST_SKIP;
	}
	int missing = 0;
	for (int s = 0; s < STARTS; s++) {
		CHECK_OK(piano_init());
		for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
			int want = test_thread_count(kinds[k].point), found = named(kinds[k].name);
			CHECK(want >= 1, "start %d: no %s thread counted", s, kinds[k].name);
			if (found != want) {
				printf("start %d: %d %s threads counted, %d found by name\n", s, want,
				       kinds[k].name, found);
				missing++;
			}
		}
		CHECK_OK(piano_finalize());
	}
	CHECK(missing == 0, "%d of %d starts had threads without their name", missing, STARTS);
	printf("thread_names: ok (%d starts)\n", STARTS);
	return 0;
}

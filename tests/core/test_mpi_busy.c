/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.mpi_busy — the MPI layer's busy-call detection (src/mpi/busy.c),
 * alone, with made-up durations:
 *  - a call is busy when it lasts over 4 times the thread's floor (its
 *    shortest call lately) and over the process's threshold;
 *  - the floor remembers a short call for one to two windows of
 *    BUSY_WINDOW calls, then forgets it (a thread that moved to a colder
 *    core is judged by its new costs);
 *  - each thread has its own floor;
 *  - the process's threshold is 4 times the median of the empty calls, at
 *    least 1 us; huge durations do not overflow;
 *  - the timer's confirmation: a busy call counts only after a busy one,
 *    so a lone slow call among empty ones does not.
 */
#include "common.h"

#include "busy.h" /* src/mpi */

static void no_busy(struct busy_floor *f, uint64_t dt, uint64_t min, const char *why)
{
	CHECK(!busy_call(f, dt, min), "%s: %llu ns counted busy", why, (unsigned long long)dt);
}

static void busy(struct busy_floor *f, uint64_t dt, uint64_t min, const char *why)
{
	CHECK(busy_call(f, dt, min), "%s: %llu ns not counted busy", why, (unsigned long long)dt);
}

int main(void)
{
	/* Against the floor: 4 times the shortest call. */
	struct busy_floor f = BUSY_FLOOR_INIT;
	no_busy(&f, 1000, 100, "first call (its own floor)");
	no_busy(&f, 4000, 100, "4x the floor");
	busy(&f, 4001, 100, "over 4x the floor");
	no_busy(&f, 250, 100, "a shorter call lowers the floor");
	busy(&f, 1001, 100, "over 4x the new floor");

	/* The process threshold wins over a low floor. */
	struct busy_floor g = BUSY_FLOOR_INIT;
	no_busy(&g, 10, 1000, "tiny call");
	no_busy(&g, 900, 1000, "under the threshold, over 4x the floor");
	busy(&g, 1001, 1000, "over the threshold");

	/* Windows: 64 calls of 100 ns, then calls of 1000 ns. The 100 ns floor
	 * holds for the rest of the next window, and goes at its end. */
	struct busy_floor w = BUSY_FLOOR_INIT;
	for (int i = 0; i < BUSY_WINDOW; i++)
		no_busy(&w, 100, 1, "steady 100 ns");
	for (int i = 0; i < BUSY_WINDOW - 1; i++)
		busy(&w, 1000, 1, "1000 ns against the remembered 100 ns floor");
	no_busy(&w, 1000, 1, "1000 ns once the 100 ns window is over");
	for (int i = 0; i < 3 * BUSY_WINDOW; i++)
		no_busy(&w, 1000, 1, "steady 1000 ns");
	busy(&w, 4001, 1, "over 4x the new floor");

	/* One thread's floor does not move another's. */
	struct busy_floor a = BUSY_FLOOR_INIT, b = BUSY_FLOOR_INIT;
	no_busy(&a, 100, 1, "thread a");
	no_busy(&b, 3000, 1, "thread b, cold caches");
	no_busy(&b, 3500, 1, "thread b, still its own floor");
	busy(&a, 3500, 1, "thread a, the same call is work");

	/* No overflow near the top of the range. */
	struct busy_floor h = BUSY_FLOOR_INIT;
	no_busy(&h, UINT64_MAX / 2, 1, "huge floor");
	no_busy(&h, UINT64_MAX - 1, 1, "4x a huge floor saturates");

	/* The process threshold. */
	uint64_t v[33];
	for (int i = 0; i < 33; i++)
		v[i] = (uint64_t)((i * 7) % 33) * 100 + 50; /* a permutation of 50..3250 */
	uint64_t t = busy_threshold(v, 33);
	CHECK(t == 4 * 1650, "threshold %llu, expected 4 x median 1650", (unsigned long long)t);
	for (int i = 0; i < 33; i++)
		v[i] = 30 + (uint64_t)i;
	t = busy_threshold(v, 33);
	CHECK(t == 1000, "threshold %llu, expected the 1 us minimum", (unsigned long long)t);

	/* The timer's confirmation. */
	struct busy_pair p = { 0 };
	const bool calls[] = { false, true, false, false, true, true, true, false, true };
	const bool counted[] = { false, false, false, false, false, true, true, false, false };
	for (int i = 0; i < (int)(sizeof calls / sizeof calls[0]); i++)
		CHECK(busy_confirm(&p, calls[i]) == counted[i], "call %d (%s): counted %s", i,
		      calls[i] ? "busy" : "empty", counted[i] ? "no" : "yes");

	printf("busy-call detection: floor, windows, threshold, confirmation as specified\n");
	return TEST_PASS;
}

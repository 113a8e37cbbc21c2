/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Whether a progress call of the MPI did work (busy.c). The MPI does not
 * say; a call that lasts several times an empty one moved data or advanced
 * a protocol. No MPI here: progress.c times the calls, the unit test
 * (tests/core/test_mpi_busy.c) drives it alone.
 *
 * "An empty one" depends on the calling thread: the timer wakes on a core
 * where another thread computed, and its empty calls take 2-4 us with cold
 * caches against 0.25 us for a waiter's; against a global figure every
 * timer round looked busy. So each thread keeps its own floor, the shortest
 * call it made lately (the minimum over the current and the previous window
 * of BUSY_WINDOW calls), and a call is busy when it lasts over 4 times that
 * floor and over the process's least busy duration.
 */
#ifndef PIANO_MPI_BUSY_H
#define PIANO_MPI_BUSY_H

#include <stdbool.h>
#include <stdint.h>

enum { BUSY_WINDOW = 64 };

struct busy_floor {
	uint64_t min_prev, min_cur;
	unsigned n;
};

#define BUSY_FLOOR_INIT                   \
	{                                 \
		UINT64_MAX, UINT64_MAX, 0 \
	}

/* Records a call of dt ns in f and says whether it was busy (over 4 times
 * f's floor and over min_busy_ns). */
bool busy_call(struct busy_floor *f, uint64_t dt, uint64_t min_busy_ns);

/* The process's least busy duration from n timed empty calls (reordered):
 * 4 times their median, at least 1 us, so that clock noise does not look
 * like work. */
uint64_t busy_threshold(uint64_t *empty_ns, int n);

/*
 * The timer's judgement (progress.c): a call busy by its duration counts
 * only when the caller's previous call was busy too. The timer's empty
 * calls are cold, and some still last like work: beside a triad
 * (bench_interference's pending phase, Open MPI, a receive whose peer
 * sends only at the end of the phase) one in 8-14 took 12-56 us, and each
 * put the timer back to its period for 8 more rounds (27 ticks in a 40 ms
 * phase instead of ~16, each taking the computing core for ~40 us). A
 * transfer moving in steps makes every call busy (11-61 us, or hundreds,
 * per call on shared memory): it keeps the period from its second call on.
 */
struct busy_pair {
	bool last; /* the previous call was busy */
};

bool busy_confirm(struct busy_pair *p, bool busy);

#endif

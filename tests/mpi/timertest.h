/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The timer tests (test_timer_*.c): two ranks under piano, which count the
 * timer's rounds with piano_stats_get (libpiano-mpi).
 */
#ifndef PIANO_TIMERTEST_H
#define PIANO_TIMERTEST_H

#include "mpitest.h"

#include <piano/piano.h>

static uint64_t timer_rounds(void)
{
	struct piano_stats st;
	CHECK(piano_stats_get(PIANO_POINT_TIMER, &st) == 0);
	return st.rounds;
}

/* MPI_Init on 2 ranks; the rank, or -1 (after MPI_Finalize and a message)
 * when this process has no timer thread: the test is then skipped. */
static int timertest_init(int *argc, char ***argv)
{
	int rank, size, nthreads = 0;
	MPI_Init(argc, argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	CHECK(size == 2);
	CHECK(piano_thread_count(PIANO_POINT_TIMER, &nthreads) == 0);
	if (!mpitest_all(nthreads == 1)) {
		printf("rank %d: no timer thread on some rank: skipped\n", rank);
		MPI_Finalize();
		return -1;
	}
	return rank;
}

#endif

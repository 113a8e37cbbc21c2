/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The timer stays quiet while nothing is in flight (docs/mpi.md, "Do no
 * harm"): after a tracked exchange has completed, the progress task lingers
 * but the timer does not tick while both ranks compute; a long pending
 * receive, once the ranks' holds are known to last, gets its ticks. Two
 * ranks under piano; the counts come from piano_stats_get (libpiano-mpi).
 */
#include "timertest.h"

#include <stdlib.h>
#include <time.h>

#define BIG (1 << 20) /* above every eager limit: tracked */
#define ROUNDS 20
#define COMPUTE_MS 30

int main(int argc, char **argv)
{
	int rank = timertest_init(&argc, &argv);
	if (rank < 0)
		return 77;
	char *buf = calloc(BIG, 1);
	CHECK(buf);
	int peer = 1 - rank, ok = 1;

	/* Short holds: a receive posted and waited for at once. */
	uint64_t quiet = 0;
	for (int i = 0; i < ROUNDS; i++) {
		MPI_Request req;
		if (rank == 0) {
			CHECK_MPI(MPI_Irecv(buf, BIG, MPI_CHAR, peer, 0, MPI_COMM_WORLD, &req));
			CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
		} else {
			CHECK_MPI(MPI_Send(buf, BIG, MPI_CHAR, peer, 0, MPI_COMM_WORLD));
		}
		uint64_t r0 = timer_rounds();
		mpitest_spin_ms(COMPUTE_MS); /* the progress task lingers meanwhile */
		quiet += timer_rounds() - r0;
	}
	/* A timer ticking whenever the task is queued: ~10 per window (the
	 * 10 ms linger at 1 ms). */
	if (quiet > ROUNDS / 2) {
		printf("rank %d: %llu timer rounds in %d windows with nothing in flight\n", rank,
		       (unsigned long long)quiet, ROUNDS);
		ok = 0;
	}

	/* Long holds: rank 0's receive pending while both compute, its
	 * message sent only after the computation (a message sent at once
	 * would finish at the first tick, and a finished receive holds
	 * nothing); the first one ends the streak of short holds, the second
	 * is ticked. */
	uint64_t ticked = 0;
	for (int i = 0; i < 2; i++) {
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			MPI_Request req;
			CHECK_MPI(MPI_Irecv(buf, BIG, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &req));
			uint64_t r0 = timer_rounds();
			mpitest_spin_ms(100);
			ticked = timer_rounds() - r0;
			CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
		} else {
			mpitest_spin_ms(100);
			CHECK_MPI(MPI_Send(buf, BIG, MPI_CHAR, peer, 1, MPI_COMM_WORLD));
		}
	}
	if (rank == 0 && ticked < 5) {
		printf("rank 0: %llu timer rounds in 100 ms with a receive in flight\n",
		       (unsigned long long)ticked);
		ok = 0;
	}
	printf("rank %d: %llu timer rounds while quiet, %llu while in flight\n", rank,
	       (unsigned long long)quiet, (unsigned long long)ticked);
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	free(buf);
	MPI_Finalize();
	return ok ? 0 : 1;
}

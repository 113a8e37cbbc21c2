/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Serialized mode: the timer does not tick while the application waits in
 * the MPI's own call (track.h, track_native_wait_begin()): the wait
 * progresses the MPI itself and the gate keeps piano's calls out, so a tick
 * could only take a core from a computation, such as the slower peer's this
 * wait is for. The same receive, pending while rank 0 computes outside the
 * MPI, still gets its ticks. Two ranks under piano; the counts come from
 * piano_stats_get (libpiano-mpi).
 */
#include "timertest.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BIG (1 << 20) /* above every eager limit: tracked */
#define COMPUTE_MS 100
#define WAIT_MS 300

int main(int argc, char **argv)
{
	int rank = timertest_init(&argc, &argv);
	if (rank < 0)
		return 77;
	const char *level = getenv("PIANO_MPI_THREAD_LEVEL");
	if (level && strcmp(level, "auto") && strcmp(level, "serialized")) {
		printf("rank %d: not serialized mode: skipped\n", rank);
		MPI_Finalize();
		return 77;
	}
	char *buf = calloc(BIG, 1);
	CHECK(buf);
	int ok = 1;
	uint64_t computing = 0, waiting = 0;
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		MPI_Request req;
		CHECK_MPI(MPI_Irecv(buf, BIG, MPI_CHAR, 1, 0, MPI_COMM_WORLD, &req));
		uint64_t r0 = timer_rounds();
		mpitest_spin_ms(COMPUTE_MS);
		uint64_t r1 = timer_rounds();
		CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE)); /* rank 1 sends WAIT_MS later */
		uint64_t r2 = timer_rounds();
		computing = r1 - r0;
		waiting = r2 - r1;
		/* At 1 ms: ~100 ticks while computing. Without the hold set
		 * aside, ~300 while waiting. */
		if (computing < 5) {
			printf("rank 0: %llu timer rounds in %d ms of computation with a receive "
			       "in flight\n",
			       (unsigned long long)computing, COMPUTE_MS);
			ok = 0;
		}
		if (waiting > WAIT_MS / 10) {
			printf("rank 0: %llu timer rounds in a native wait of %d ms\n",
			       (unsigned long long)waiting, WAIT_MS);
			ok = 0;
		}
		printf("rank 0: %llu timer rounds while computing, %llu while waiting\n",
		       (unsigned long long)computing, (unsigned long long)waiting);
	} else {
		mpitest_spin_ms(COMPUTE_MS + WAIT_MS);
		CHECK_MPI(MPI_Send(buf, BIG, MPI_CHAR, 0, 0, MPI_COMM_WORLD));
	}
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	free(buf);
	MPI_Finalize();
	return ok ? 0 : 1;
}

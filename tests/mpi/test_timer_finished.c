/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A request that finished holds nothing (track_check_finished, serialized
 * mode): rank 0 sends a message above every eager limit and computes for
 * 300 ms before its MPI_Wait, while rank 1 receives it at once. Once the
 * MPI has finished the send, the timer stops ticking for it although the
 * application has not completed it yet: in the window's last 200 ms rank
 * 0's timer makes at most a few rounds, where a timer held until the wait
 * ticks every 1-4 ms (50 rounds or more). The data is checked too. Two
 * ranks under piano; the counts come from piano_stats_get (libpiano-mpi).
 */
#include "timertest.h"

#include <stdlib.h>

#define BIG (1 << 20) /* above every eager limit: tracked */
#define FIRST_MS 100  /* time for the send to finish */
#define QUIET_MS 200
#define MAX_QUIET_ROUNDS 10

int main(int argc, char **argv)
{
	int rank = timertest_init(&argc, &argv);
	if (rank < 0)
		return 77;
	unsigned char *buf = malloc(BIG);
	CHECK(buf);
	int ok = 1;
	uint64_t quiet = 0;
	for (int round = 0; round < 2; round++) {
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0) {
			for (int i = 0; i < BIG; i++)
				buf[i] = (unsigned char)(i * 7 + round);
			MPI_Request req;
			CHECK_MPI(MPI_Isend(buf, BIG, MPI_BYTE, 1, round, MPI_COMM_WORLD, &req));
			mpitest_spin_ms(FIRST_MS);
			uint64_t r0 = timer_rounds();
			mpitest_spin_ms(QUIET_MS);
			quiet = timer_rounds() - r0;
			CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
			if (quiet > MAX_QUIET_ROUNDS) {
				printf("rank 0: %llu timer rounds in %d ms after the send finished\n",
				       (unsigned long long)quiet, QUIET_MS);
				ok = 0;
			}
		} else {
			CHECK_MPI(MPI_Recv(buf, BIG, MPI_BYTE, 0, round, MPI_COMM_WORLD,
			                   MPI_STATUS_IGNORE));
			for (int i = 0; i < BIG && ok; i++)
				if (buf[i] != (unsigned char)(i * 7 + round)) {
					printf("rank 1: byte %d wrong\n", i);
					ok = 0;
				}
		}
	}
	if (rank == 0)
		printf("rank 0: %llu timer rounds in %d ms after the send finished\n",
		       (unsigned long long)quiet, QUIET_MS);
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	free(buf);
	MPI_Finalize();
	return ok ? 0 : 1;
}

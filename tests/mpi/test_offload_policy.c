/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PIANO_OFFLOAD=1 decides from what it observes (src/mpi/offload.c): a
 * phase whose sends are waited for at once must not keep offload off
 * through the phase after it, in which the application computes and an
 * idle core can post its sends.
 *
 * Rank 0 sends rank 1 PROMPT messages, each MPI_Isend followed at once by
 * MPI_Wait (nothing to overlap: the application posts the send itself),
 * then COMPUTE messages, each MPI_Isend followed by 1 ms without MPI calls
 * and MPI_Wait. Rank 1 receives them in order and checks their contents.
 * The test's pass expression wants rank 0's statistics (PIANO_STATS) to
 * count at least 40 sends posted by the engine: the sends of the second
 * phase, which a process that took the first phase's prompt sends for a
 * missing idle core posts directly.
 *
 * With PIANO_IDLE_LEVEL=none and a 10 s timer period nobody but the
 * application posts the queue, as on a node without an idle core: the
 * other test wants the statistics to count runs of direct sends after
 * late ones.
 */
#include "mpitest.h"

#include <string.h>
#include <time.h>

#define PROMPT 400
#define COMPUTE 300
#define LEN 8

static void fill(unsigned char *b, int i)
{
	for (int k = 0; k < LEN; k++)
		b[k] = (unsigned char)(i * 31 + k);
}

int main(int argc, char **argv)
{
	int provided, rank, size;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	CHECK(size == 2);
	unsigned char buf[LEN], want[LEN];
	if (rank == 0) {
		const struct timespec ms = { 0, 1000000 };
		for (int i = 0; i < PROMPT + COMPUTE; i++) {
			MPI_Request r;
			fill(buf, i);
			MPI_Isend(buf, LEN, MPI_BYTE, 1, 5, MPI_COMM_WORLD, &r);
			if (i >= PROMPT)
				nanosleep(&ms, NULL);
			MPI_Wait(&r, MPI_STATUS_IGNORE);
		}
	} else {
		for (int i = 0; i < PROMPT + COMPUTE; i++) {
			MPI_Recv(buf, LEN, MPI_BYTE, 0, 5, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			fill(want, i);
			CHECK(memcmp(buf, want, LEN) == 0);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("offload policy: %d messages\n", PROMPT + COMPUTE);
	MPI_Finalize();
	return 0;
}

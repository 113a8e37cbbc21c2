/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Graph collectives and the MPI's own non-blocking collectives interleaved
 * on new communicators (run with PIANO_COLL=graph:ibcast): each round makes
 * a communicator (MPI_Comm_dup, MPI_Comm_split, or MPI_Comm_idup), posts an
 * MPI_Ibcast (a graph: the communicator's first, which needs its shadow),
 * lets rank 0 alone drive the MPI for a few milliseconds, then posts an
 * MPI_Iallreduce (the MPI's) and checks both results. On Open MPI a shadow
 * made by MPI_Comm_idup at the first graph collective let the idup's
 * internal allreduces exchange data with the application's MPI_Iallreduce
 * (wrong sums, then MPI_ERR_TRUNCATE).
 */
#include "mpitest.h"

enum { ROUNDS = 40 };

int main(int argc, char **argv)
{
	int provided, rank, size;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int round = 0; round < ROUNDS; round++) {
		MPI_Comm c;
		switch (round % 3) {
		case 0: CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &c)); break;
		case 1: CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, size - rank, &c)); break;
		default: {
			MPI_Request r;
			CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &c, &r));
			CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
		}
		}
		int crank;
		MPI_Comm_rank(c, &crank);
		int b = crank == 0 ? 1000 + round : -1, mine = crank + 1, sum = 0;
		MPI_Request r[2];
		CHECK_MPI(MPI_Ibcast(&b, 1, MPI_INT, 0, c, &r[0]));
		if (crank == 0) {
			/* Only this rank drives the MPI meanwhile. */
			double t = MPI_Wtime();
			int flag;
			while (MPI_Wtime() - t < 0.005)
				CHECK_MPI(MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE));
		}
		CHECK_MPI(MPI_Iallreduce(&mine, &sum, 1, MPI_INT, MPI_SUM, c, &r[1]));
		CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
		CHECK(b == 1000 + round);
		CHECK(sum == size * (size + 1) / 2);
		CHECK_MPI(MPI_Comm_free(&c));
	}
	MPI_Finalize();
	if (rank == 0)
		printf("coll mixed: %d rounds passed\n", ROUNDS);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Communicators created and freed in a loop, with no collective between:
 * run with PIANO_COLL=graph, where each gets a shadow at its creation
 * (coll_shadow.h), 3,000 times by MPI_Comm_split and 3,000 by
 * MPI_Comm_dup. The shadows of the freed ones must be freed as well, or
 * MPICH runs out of its 2,048 context ids ("Too many communicators") and
 * aborts. A graph collective on the last one checks that shadows still
 * work after the churn.
 */
#include "mpitest.h"

int main(int argc, char **argv)
{
	int provided, rank, size;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	for (int i = 0; i < 3000; i++) {
		MPI_Comm c, d;
		CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &c));
		CHECK_MPI(MPI_Comm_dup(c, &d));
		CHECK_MPI(MPI_Comm_free(&c));
		if (i < 2999) {
			CHECK_MPI(MPI_Comm_free(&d));
			continue;
		}
		int in = rank + 1, sum = 0;
		MPI_Request req;
		CHECK_MPI(MPI_Iallreduce(&in, &sum, 1, MPI_INT, MPI_SUM, d, &req));
		CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
		CHECK(sum == size * (size + 1) / 2);
		CHECK_MPI(MPI_Comm_free(&d));
	}
	if (rank == 0)
		fprintf(stderr, "comm churn: all checks passed\n");
	MPI_Finalize();
	return 0;
}

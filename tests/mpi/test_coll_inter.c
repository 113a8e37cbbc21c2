/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Non-blocking `v` collectives on an inter-communicator, which the MPI's
 * own run (graphs take intra-communicators only): their arrays have the
 * remote group's size, so the layer must read no more of them than that
 * while it decides (the ASan build catches an over-read). Ranks 0 .. n-2
 * form one group and the last rank the other, so the bigger group's
 * arrays hold a single element. MPI_Ialltoallv and MPI_Iallgatherv, their
 * results checked. At least 3 ranks (77 otherwise). Prints "coll inter: all checks passed" on rank 0.
 */
#include "mpitest.h"

#include <stdbool.h>

int main(int argc, char **argv)
{
	int provided, rank, size;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size < 3) {
		MPI_Finalize();
		return 77;
	}
	bool last = rank == size - 1;
	MPI_Comm local, inter;
	CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, last, rank, &local));
	/* Each group's leader is its local rank 0; the remote leader in
	 * MPI_COMM_WORLD: rank 0 for the last rank, the last rank for the
	 * others. */
	CHECK_MPI(MPI_Intercomm_create(local, 0, MPI_COMM_WORLD, last ? 0 : size - 1, 7, &inter));
	int lsize, rsize, lrank;
	CHECK_MPI(MPI_Comm_size(inter, &lsize));
	CHECK_MPI(MPI_Comm_remote_size(inter, &rsize));
	CHECK_MPI(MPI_Comm_rank(inter, &lrank));
	CHECK(rsize == (last ? size - 1 : 1) && lsize == (last ? 1 : size - 1));

	/* Exactly rsize elements each, on the heap. */
	int *scounts = malloc(sizeof(int) * (size_t)rsize),
	    *sdispls = malloc(sizeof(int) * (size_t)rsize);
	int *rcounts = malloc(sizeof(int) * (size_t)rsize),
	    *rdispls = malloc(sizeof(int) * (size_t)rsize);
	int *sbuf = malloc(sizeof(int) * (size_t)rsize),
	    *rbuf = malloc(sizeof(int) * (size_t)rsize);
	CHECK(scounts && sdispls && rcounts && rdispls && sbuf && rbuf);
	for (int j = 0; j < rsize; j++) {
		scounts[j] = rcounts[j] = 1;
		sdispls[j] = rdispls[j] = j;
		sbuf[j] = 1000 * rank + j;
		rbuf[j] = -7;
	}
	MPI_Request q;
	CHECK_MPI(MPI_Ialltoallv(sbuf, scounts, sdispls, MPI_INT, rbuf, rcounts, rdispls, MPI_INT,
	                         inter, &q));
	CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
	/* Remote rank j (in its group) sent me element lrank. */
	for (int j = 0; j < rsize; j++) {
		int world = last ? j : size - 1;
		CHECK(rbuf[j] == 1000 * world + lrank);
	}

	/* Every rank of the remote group contributes one int. */
	int mine = 100 + rank;
	CHECK_MPI(MPI_Iallgatherv(&mine, 1, MPI_INT, rbuf, rcounts, rdispls, MPI_INT, inter, &q));
	CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
	for (int j = 0; j < rsize; j++)
		CHECK(rbuf[j] == 100 + (last ? j : size - 1));

	free(scounts);
	free(sdispls);
	free(rcounts);
	free(rdispls);
	free(sbuf);
	free(rbuf);
	CHECK_MPI(MPI_Comm_free(&inter));
	CHECK_MPI(MPI_Comm_free(&local));
	CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("coll inter: all checks passed\n");
	MPI_Finalize();
	return 0;
}

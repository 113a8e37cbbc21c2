/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Ialltoallw between a C rank and a Fortran rank of one job
 * (test_alltoallw_mixed.f90), both under piano with PIANO_COLL taking
 * ialltoall: both must run the same exchange (piano's graph), or neither
 * completes. Rank 0 is this program. Blocks of 2 ints: sent as 2 MPI_INT at
 * a byte displacement, received as 1 contiguous type of 2 ints; block j from
 * rank i holds i*100 + j*10 + k. Then the same in place on a communicator
 * made by MPI_Comm_split (each rank's piano makes its shadow there, C and
 * Fortran alike, or the ranks wait in different calls), the first again on
 * a communicator made by MPI_Cart_create, then MPI_Ineighbor_alltoallw on
 * a ring made by MPI_Dist_graph_create_adjacent (weights 1 here,
 * MPI_UNWEIGHTED in Fortran, which must reach the MPI as such): the block
 * sent to destination d (left, right) holds rank*100 + d*10 + k; block d
 * comes from source d (right, left), which sent it as its own block d;
 * with MPI-4 (MPICH), a persistent barrier started twice.
 * Each wait gives up
 * after 20 s ("timed out": the ranks ran different exchanges). The ranks
 * agree with MPI_Allreduce; rank 0 prints the verdict.
 */
#include "mpitest.h"

#include <stdlib.h>

static int wait_bounded(MPI_Request *r)
{
	double t0 = MPI_Wtime();
	int done = 0;
	while (!done) {
		CHECK_MPI(MPI_Test(r, &done, MPI_STATUS_IGNORE));
		if (!done && MPI_Wtime() - t0 > 20.0) {
			printf("alltoallw mixed: C rank: timed out\n");
			fflush(stdout);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	return 0;
}

/* The all-to-all's blocks received by `rank`; `what` names the call. */
static int blocks_ok(const int *rbuf, int rank, int size, const char *what)
{
	int ok = 1;
	for (int i = 0; i < size; i++)
		for (int k = 0; k < 2; k++)
			if (rbuf[2 * i + k] != i * 100 + rank * 10 + k) {
				printf("alltoallw mixed: C rank%s: block %d[%d] = %d\n", what, i, k,
				       rbuf[2 * i + k]);
				ok = 0;
			}
	return ok;
}

int main(int argc, char **argv)
{
	int provided, rank, size;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	int *sbuf = malloc(sizeof(int) * 2 * (size_t)size);
	int *rbuf = malloc(sizeof(int) * 2 * (size_t)size);
	int *cnt = malloc(sizeof(int) * (size_t)size), *one = malloc(sizeof(int) * (size_t)size);
	int *disp = malloc(sizeof(int) * (size_t)size);
	MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * (size_t)size);
	MPI_Datatype *rt = malloc(sizeof(MPI_Datatype) * (size_t)size);
	CHECK(sbuf && rbuf && cnt && one && disp && st && rt);
	MPI_Datatype pair;
	CHECK_MPI(MPI_Type_contiguous(2, MPI_INT, &pair));
	CHECK_MPI(MPI_Type_commit(&pair));
	for (int j = 0; j < size; j++) {
		cnt[j] = 2;
		one[j] = 1;
		disp[j] = j * 2 * (int)sizeof(int);
		st[j] = MPI_INT;
		rt[j] = pair;
		for (int k = 0; k < 2; k++) {
			sbuf[2 * j + k] = rank * 100 + j * 10 + k;
			rbuf[2 * j + k] = -1;
		}
	}
	int ok = 1;
	MPI_Request r;
	CHECK_MPI(MPI_Ialltoallw(sbuf, cnt, disp, st, rbuf, one, disp, rt, MPI_COMM_WORLD, &r));
	wait_bounded(&r);
	ok &= blocks_ok(rbuf, rank, size, "");
	for (int j = 0; j < 2 * size; j++)
		rbuf[j] = sbuf[j];
	MPI_Comm split;
	CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &split));
	CHECK_MPI(MPI_Ialltoallw(MPI_IN_PLACE, NULL, NULL, NULL, rbuf, one, disp, rt, split, &r));
	wait_bounded(&r);
	MPI_Comm_free(&split);
	ok &= blocks_ok(rbuf, rank, size, ", in place");
	MPI_Comm cart;
	int periodic = 1;
	CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, &size, &periodic, 0, &cart));
	for (int j = 0; j < 2 * size; j++)
		rbuf[j] = -1;
	CHECK_MPI(MPI_Ialltoallw(sbuf, cnt, disp, st, rbuf, one, disp, rt, cart, &r));
	wait_bounded(&r);
	ok &= blocks_ok(rbuf, rank, size, ", Cartesian");
	MPI_Comm_free(&cart);
	MPI_Comm ring;
	int left = (rank + size - 1) % size, right = (rank + 1) % size;
	int dests[2] = { left, right }, srcs[2] = { right, left }, w[2] = { 1, 1 };
	CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, srcs, w, 2, dests, w,
	                                         MPI_INFO_NULL, 0, &ring));
	MPI_Aint adisp[2] = { 0, 2 * sizeof(int) };
	for (int d = 0; d < 2; d++)
		for (int k = 0; k < 2; k++) {
			sbuf[2 * d + k] = rank * 100 + d * 10 + k;
			rbuf[2 * d + k] = -1;
		}
	CHECK_MPI(MPI_Ineighbor_alltoallw(sbuf, cnt, adisp, st, rbuf, one, adisp, rt, ring, &r));
	wait_bounded(&r);
	for (int d = 0; d < 2; d++)
		for (int k = 0; k < 2; k++)
			if (rbuf[2 * d + k] != srcs[d] * 100 + d * 10 + k) {
				printf("alltoallw mixed: C rank, neighbours: block %d[%d] = %d\n",
				       d, k, rbuf[2 * d + k]);
				ok = 0;
			}
	MPI_Comm_free(&ring);
#if MPI_VERSION >= 4
	/* MPI-4's persistent barrier, started twice (the Fortran rank's too). */
	CHECK_MPI(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r));
	for (int i = 0; i < 2; i++) {
		CHECK_MPI(MPI_Start(&r));
		wait_bounded(&r);
	}
	CHECK_MPI(MPI_Request_free(&r));
#endif
	CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
	if (rank == 0)
		printf("alltoallw mixed: %s\n", ok ? "all ranks ok" : "FAILED");
	MPI_Type_free(&pair);
	free(sbuf);
	free(rbuf);
	free(cnt);
	free(one);
	free(disp);
	free(st);
	free(rt);
	MPI_Finalize();
	return ok ? 0 : 1;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reuse of finished graph collectives (PIANO_COLL=graph, PIANO_COLL_CACHE,
 * docs/coll.md "Reuse"): a collective called again with the same arguments
 * runs the graph built for the earlier call, on its new tags. Checked
 * against the MPI's blocking collectives, with new data at every call:
 *   - every collective that may be reused, 25 times each with the same
 *     buffers and arguments, and in place where MPI allows it;
 *   - two MPI_Ibarrier in flight at once, and an Iallreduce between two
 *     calls of another (same key, different tags in flight);
 *   - a derived datatype freed and made again between calls with another
 *     extent (the MPI tends to give the same handle back): never reused;
 *   - a communicator freed and another made with its ranks in the reverse
 *     order (the same handle again, most likely): the broadcast from its
 *     rank 0 must come from the new rank 0.
 * The ctest entry asks PIANO_STATS for the number of reused graphs; with
 * PIANO_COLL_CACHE=0 it must be 0. Any number of ranks. Prints "coll
 * reuse: all checks passed" on rank 0.
 */
#include "mpitest.h"

#include <stdbool.h>
#include <string.h>

#define N 37 /* elements per rank's block: not a power of two */
#define ROUNDS 25

static int rank, size;

static int val(int round, int r, int i) { return 1000 * round + 37 * r + i; }

static void wait1(MPI_Request *r) { CHECK_MPI(MPI_Wait(r, MPI_STATUS_IGNORE)); }

static void same_calls(void)
{
	int *a = malloc(sizeof(int) * N * (size_t)size),
	    *b = malloc(sizeof(int) * N * (size_t)size);
	int *c = malloc(sizeof(int) * N * (size_t)size),
	    *d = malloc(sizeof(int) * N * (size_t)size);
	CHECK(a && b && c && d);
	for (int round = 0; round < ROUNDS; round++) {
		MPI_Request r;
		for (int i = 0; i < N * size; i++)
			a[i] = val(round, rank, i);

		/* Iallreduce, out of place and in place. */
		CHECK_MPI(MPI_Iallreduce(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
		wait1(&r);
		CHECK_MPI(MPI_Allreduce(a, c, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
		CHECK(!memcmp(b, c, sizeof(int) * N));
		memcpy(d, a, sizeof(int) * N);
		CHECK_MPI(MPI_Iallreduce(MPI_IN_PLACE, d, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD, &r));
		wait1(&r);
		CHECK_MPI(MPI_Allreduce(a, c, N, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
		CHECK(!memcmp(d, c, sizeof(int) * N));

		/* Ibcast from the last rank. */
		memcpy(b, a, sizeof(int) * N);
		CHECK_MPI(MPI_Ibcast(b, N, MPI_INT, size - 1, MPI_COMM_WORLD, &r));
		wait1(&r);
		for (int i = 0; i < N; i++)
			CHECK(b[i] == val(round, size - 1, i));

		/* Ireduce to rank 0, with a product (another key). */
		CHECK_MPI(MPI_Ireduce(a, b, N, MPI_INT, MPI_BXOR, 0, MPI_COMM_WORLD, &r));
		wait1(&r);
		CHECK_MPI(MPI_Reduce(a, c, N, MPI_INT, MPI_BXOR, 0, MPI_COMM_WORLD));
		if (rank == 0)
			CHECK(!memcmp(b, c, sizeof(int) * N));

		/* Ialltoall and Iallgather. */
		CHECK_MPI(MPI_Ialltoall(a, N, MPI_INT, b, N, MPI_INT, MPI_COMM_WORLD, &r));
		wait1(&r);
		CHECK_MPI(MPI_Alltoall(a, N, MPI_INT, c, N, MPI_INT, MPI_COMM_WORLD));
		CHECK(!memcmp(b, c, sizeof(int) * N * (size_t)size));
		CHECK_MPI(MPI_Iallgather(a, N, MPI_INT, b, N, MPI_INT, MPI_COMM_WORLD, &r));
		wait1(&r);
		CHECK_MPI(MPI_Allgather(a, N, MPI_INT, c, N, MPI_INT, MPI_COMM_WORLD));
		CHECK(!memcmp(b, c, sizeof(int) * N * (size_t)size));

		/* Igather and Iscatter, rooted at rank 0. */
		CHECK_MPI(MPI_Igather(a, N, MPI_INT, b, N, MPI_INT, 0, MPI_COMM_WORLD, &r));
		wait1(&r);
		CHECK_MPI(MPI_Gather(a, N, MPI_INT, c, N, MPI_INT, 0, MPI_COMM_WORLD));
		if (rank == 0)
			CHECK(!memcmp(b, c, sizeof(int) * N * (size_t)size));
		CHECK_MPI(MPI_Iscatter(a, N, MPI_INT, b, N, MPI_INT, 0, MPI_COMM_WORLD, &r));
		wait1(&r);
		CHECK_MPI(MPI_Scatter(a, N, MPI_INT, c, N, MPI_INT, 0, MPI_COMM_WORLD));
		CHECK(!memcmp(b, c, sizeof(int) * N));

		/* Ireduce_scatter_block, Iscan, Iexscan. */
		CHECK_MPI(MPI_Ireduce_scatter_block(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
		wait1(&r);
		CHECK_MPI(MPI_Reduce_scatter_block(a, c, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
		CHECK(!memcmp(b, c, sizeof(int) * N));
		CHECK_MPI(MPI_Iscan(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
		wait1(&r);
		CHECK_MPI(MPI_Scan(a, c, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
		CHECK(!memcmp(b, c, sizeof(int) * N));
		CHECK_MPI(MPI_Iexscan(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
		wait1(&r);
		CHECK_MPI(MPI_Exscan(a, c, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
		if (rank > 0) /* rank 0's result is undefined */
			CHECK(!memcmp(b, c, sizeof(int) * N));

		/* Two barriers in flight at once (equal keys), completed in
		 * reverse order; then an Iallreduce started while another with the
		 * same key is in flight (different output buffers: two keys). */
		MPI_Request rb[2];
		CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &rb[0]));
		CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &rb[1]));
		wait1(&rb[1]);
		wait1(&rb[0]);
		MPI_Request rr[2];
		CHECK_MPI(MPI_Iallreduce(a, b, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rr[0]));
		CHECK_MPI(MPI_Iallreduce(a, d, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &rr[1]));
		CHECK_MPI(MPI_Waitall(2, rr, MPI_STATUSES_IGNORE));
		CHECK_MPI(MPI_Allreduce(a, c, N, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
		CHECK(!memcmp(b, c, sizeof(int) * N) && !memcmp(d, c, sizeof(int) * N));
	}
	free(a);
	free(b);
	free(c);
	free(d);
}

/* A vector type freed and made again with another stride between two
 * allgathers on the same buffers: the blocks' places in the receive buffer
 * follow the type's extent, which the second call must take from the new
 * type. */
static void remade_type(void)
{
	enum { CNT = 8, STRIDE_MAX = 4, SPAN = CNT * STRIDE_MAX };
	int sb[SPAN], *rb = malloc(sizeof(int) * SPAN * (size_t)size);
	CHECK(rb);
	for (int round = 0; round < 2 * ROUNDS; round++) {
		int stride = 2 + round % 3, ext = (CNT - 1) * stride + 1;
		MPI_Datatype t;
		CHECK_MPI(MPI_Type_vector(CNT, 1, stride, MPI_INT, &t));
		CHECK_MPI(MPI_Type_commit(&t));
		for (int i = 0; i < SPAN; i++)
			sb[i] = val(round, rank, i);
		for (int i = 0; i < SPAN * size; i++)
			rb[i] = -1;
		MPI_Request r;
		CHECK_MPI(MPI_Iallgather(sb, 1, t, rb, 1, t, MPI_COMM_WORLD, &r));
		wait1(&r);
		for (int i = 0; i < SPAN * size; i++) {
			int j = i / ext, k = i % ext;
			bool in = j < size && k % stride == 0;
			CHECK(rb[i] == (in ? val(round, j, k) : -1));
		}
		CHECK_MPI(MPI_Type_free(&t));
	}
	free(rb);
}

/* A communicator freed and another made with the ranks reversed: its
 * broadcast from rank 0 comes from the world's last rank. */
static void remade_comm(void)
{
	for (int round = 0; round < ROUNDS; round++) {
		bool reversed = round % 2;
		MPI_Comm c;
		CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, reversed ? size - rank : rank, &c));
		int x = rank;
		MPI_Request r;
		CHECK_MPI(MPI_Ibcast(&x, 1, MPI_INT, 0, c, &r));
		wait1(&r);
		CHECK(x == (reversed ? size - 1 : 0));
		CHECK_MPI(MPI_Comm_free(&c));
	}
}

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	same_calls();
	remade_type();
	remade_comm();
	CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("coll reuse: all checks passed\n");
	MPI_Finalize();
	return 0;
}

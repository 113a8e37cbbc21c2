/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Graph engine: REDUCE nodes. A chain reduction to rank 0 built with the
 * graph API (rank r receives the partial result of ranks r+1.., reduces its
 * own data into it, sends it on), compared with MPI_Reduce: MPI_SUM on
 * doubles, and a user-defined non-commutative operation (composition of
 * affine maps) on a vector datatype whose gaps must stay untouched. On rank
 * 0 a COPY node then packs the vector result into a contiguous buffer.
 */
#include "mpitest.h"

#include <piano/graph.h>
#include <string.h>

#define NDBL 1000
#define NVEC 2   /* elements of the vector type */
#define BLOCKS 4 /* per element: 4 blocks of 2 unsigned (an affine map a,b), stride 3 */
#define SPAN (NVEC * BLOCKS * 3)
#define GAP 0xdeadbeefu

static MPI_Datatype vec;

/* inout = in o inout: x -> in.a * (inout.a * x + inout.b) + in.b */
static void compose(void *in, void *inout, int *len, MPI_Datatype *type)
{
	CHECK(*type == vec);
	const unsigned *a = in;
	unsigned *b = inout;
	for (int e = 0; e < *len; e++)
		for (int k = 0; k < BLOCKS; k++) {
			size_t o = (size_t)e * BLOCKS * 3 + (size_t)k * 3;
			unsigned na = a[o] * b[o], nb = a[o] * b[o + 1] + a[o + 1];
			b[o] = na;
			b[o + 1] = nb;
		}
}

/* The chain reduction of mine into acc at rank 0 (acc: scratch elsewhere).
 * Returns the graph's last node on rank 0 (-1 elsewhere). */
static int chain(piano_graph_t *g, void *mine, void *acc, int count, MPI_Datatype type, MPI_Op op,
                 int rank, int size, int tag)
{
	if (rank == size - 1) {
		if (size == 1) {
			int copy;
			CHECK(piano_graph_add_copy(g, mine, count, type, acc, count, type, &copy) ==
			      0);
			return copy;
		}
		CHECK(piano_graph_add_send(g, mine, count, type, rank - 1, tag, NULL) == 0);
		return -1;
	}
	int recv, red;
	CHECK(piano_graph_add_recv(g, acc, count, type, rank + 1, tag, &recv) == 0);
	CHECK(piano_graph_add_reduce(g, mine, acc, count, type, op, &red) == 0);
	CHECK(piano_graph_add_edge(g, recv, red) == 0);
	if (rank == 0)
		return red;
	int send;
	CHECK(piano_graph_add_send(g, acc, count, type, rank - 1, tag, &send) == 0);
	CHECK(piano_graph_add_edge(g, red, send) == 0);
	return -1;
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	CHECK_MPI(MPI_Type_vector(BLOCKS, 2, 3, MPI_UNSIGNED, &vec));
	CHECK_MPI(MPI_Type_commit(&vec));
	MPI_Datatype vec_r; /* one element spans BLOCKS * 3 unsigned */
	CHECK_MPI(MPI_Type_create_resized(vec, 0, BLOCKS * 3 * sizeof(unsigned), &vec_r));
	CHECK_MPI(MPI_Type_commit(&vec_r));
	MPI_Datatype tmp = vec;
	vec = vec_r; /* what compose() is called with */
	MPI_Op op;
	CHECK_MPI(MPI_Op_create(compose, 0, &op));

	double dmine[NDBL], dacc[NDBL], dref[NDBL];
	unsigned umine[SPAN], uacc[SPAN], uref[SPAN], packed[NVEC * BLOCKS * 2];
	for (int i = 0; i < NDBL; i++)
		dmine[i] = rank * 1000.0 + i;
	for (int i = 0; i < SPAN; i++) {
		umine[i] = i % 3 == 2 ? GAP : (unsigned)(rank * 7 + i * 3 + 1);
		uacc[i] = uref[i] = GAP;
	}

	piano_graph_t *g;
	CHECK(piano_graph_create(MPI_COMM_WORLD, &g) == 0);
	chain(g, dmine, dacc, NDBL, MPI_DOUBLE, MPI_SUM, rank, size, 1);
	int last = chain(g, umine, uacc, NVEC, vec, op, rank, size, 2);
	if (rank == 0) {
		int copy;
		CHECK(piano_graph_add_copy(g, uacc, NVEC, vec, packed, NVEC * BLOCKS * 2,
		                           MPI_UNSIGNED, &copy) == 0);
		CHECK(piano_graph_add_edge(g, last, copy) == 0);
	}
	CHECK(piano_graph_commit(g) == 0);
	CHECK(piano_graph_start(g) == 0);
	CHECK(piano_graph_wait(g) == 0);

	CHECK_MPI(MPI_Reduce(dmine, dref, NDBL, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD));
	CHECK_MPI(MPI_Reduce(umine, uref, NVEC, vec, op, 0, MPI_COMM_WORLD));
	if (rank == 0) {
		for (int i = 0; i < NDBL; i++)
			CHECK(dacc[i] == dref[i]);
		for (int i = 0; i < SPAN; i++) {
			CHECK(uacc[i] == uref[i]);
			if (i % 3 == 2)
				CHECK(uacc[i] == GAP);
		}
		for (int i = 0; i < NVEC * BLOCKS * 2; i++)
			CHECK(packed[i] == uacc[i / 2 * 3 + i % 2]);
		/* Non-commutative indeed: the other order differs. */
		if (size > 1) {
			unsigned x[SPAN], y[SPAN];
			memcpy(x, umine, sizeof(x));
			for (int i = 0; i < SPAN; i++)
				y[i] = i % 3 == 2 ? GAP : (unsigned)(7 + i * 3 + 1);
			int n = NVEC;
			compose(y, x, &n, &vec);
			CHECK(memcmp(x, uref, sizeof(x)) != 0);
		}
		printf("graph reduce: %d ranks, MPI_SUM and a non-commutative user op on a "
		       "vector type: as MPI_Reduce\n",
		       size);
	}
	CHECK(piano_graph_free(g) == 0);
	MPI_Op_free(&op);
	MPI_Type_free(&vec_r);
	MPI_Type_free(&tmp);
	MPI_Finalize();
	return 0;
}

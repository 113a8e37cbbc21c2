/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Handles freed while a non-blocking collective runs (PIANO_COLL=graph,
 * docs/coll.md "Datatypes and operations"). MPI-4.0 §2.5.1: an object
 * freed while a pending operation uses it stays valid for that operation.
 * Each call below frees its derived datatypes or its user-defined operation
 * right after the call and makes another one (of another extent, or
 * another function) before the wait, so a graph that still names the freed
 * handle posts with the new object, or with none; rank 0 enters each call
 * late, so the other ranks' graphs post their later messages and reduce
 * after the free. Results are compared with the MPI's blocking collectives:
 *   - MPI_Ibcast of a vector type (binomial tree: a rank's send to its
 *     children posts once its own receive completed);
 *   - MPI_Iallreduce and MPI_Ireduce_scatter_block with a user-defined sum;
 *   - MPI_Igatherv into a vector type;
 *   - MPI_Ialltoallw with a derived type per peer;
 *   - MPI_Iallreduce with an operation made through its profiling name
 *     (PMPI_Op_create, unknown to piano: the MPI's own must run it);
 *   - MPI_Iallreduce with MPI_MAXLOC on MPI_DOUBLE_INT, a named type
 *     outside piano's cache of predefined ones: the graph must use it, not
 *     a duplicate (MPICH knows the pair types by their handles);
 *   - arguments the call ignores (a gather's receive type off the root, a
 *     scatter's send type, an in-place allgather's send type) holding a
 *     freed datatype's handle: nothing may use them, nor duplicate them.
 * Any number of ranks. Prints "coll free: all checks passed" on rank 0.
 */
#include "mpitest.h"

#include <string.h>
#include <unistd.h>

#define N 1000
#define ROUNDS 10

static int rank, size;

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
	(void)type;
	for (int i = 0; i < *len; i++)
		((double *)inout)[i] += ((const double *)in)[i];
}

static void max_fn(void *in, void *inout, int *len, MPI_Datatype *type)
{
	(void)type;
	for (int i = 0; i < *len; i++)
		if (((const double *)in)[i] > ((double *)inout)[i])
			((double *)inout)[i] = ((const double *)in)[i];
}

/* Rank 0 late, so that the others' graphs run past their call. */
static void late(void)
{
	if (rank == 0)
		usleep(10000);
}

/* A type of another extent that MPI may give the freed handle to. */
static MPI_Datatype decoy(void)
{
	MPI_Datatype t;
	CHECK_MPI(MPI_Type_contiguous(3, MPI_CHAR, &t));
	CHECK_MPI(MPI_Type_commit(&t));
	return t;
}

static void wait_and_free_decoy(MPI_Request *r, MPI_Datatype *d)
{
	CHECK_MPI(MPI_Wait(r, MPI_STATUS_IGNORE));
	CHECK_MPI(MPI_Type_free(d));
}

static void bcast_vector(int round)
{
	double *b = calloc(2 * N, sizeof(double));
	CHECK(b);
	if (rank == 0)
		for (int i = 0; i < 2 * N; i++)
			b[i] = i + round;
	MPI_Datatype v;
	CHECK_MPI(MPI_Type_vector(N, 1, 2, MPI_DOUBLE, &v));
	CHECK_MPI(MPI_Type_commit(&v));
	MPI_Request r;
	late();
	CHECK_MPI(MPI_Ibcast(b, 1, v, 0, MPI_COMM_WORLD, &r));
	CHECK_MPI(MPI_Type_free(&v));
	MPI_Datatype d = decoy();
	wait_and_free_decoy(&r, &d);
	for (int i = 0; i < N; i++) {
		CHECK(b[2 * i] == 2 * i + round);
		CHECK(rank == 0 || b[2 * i + 1] == 0);
	}
	free(b);
}

static void reductions(int round)
{
	double *s = malloc(sizeof(double) * N * (size_t)size),
	       *r = malloc(sizeof(double) * N * (size_t)size),
	       *c = malloc(sizeof(double) * N * (size_t)size);
	CHECK(s && r && c);
	for (int i = 0; i < N * size; i++)
		s[i] = (i % 97) + rank + round;
	CHECK_MPI(MPI_Allreduce(s, c, N * size, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD));

	MPI_Op op, other;
	MPI_Request q;
	CHECK_MPI(MPI_Op_create(sum_fn, 1, &op));
	late();
	CHECK_MPI(MPI_Iallreduce(s, r, N, MPI_DOUBLE, op, MPI_COMM_WORLD, &q));
	CHECK_MPI(MPI_Op_free(&op));
	CHECK(op == MPI_OP_NULL);
	CHECK_MPI(MPI_Op_create(max_fn, 1, &other));
	CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
	CHECK_MPI(MPI_Op_free(&other));
	CHECK(!memcmp(r, c, sizeof(double) * N));

	CHECK_MPI(MPI_Op_create(sum_fn, 1, &op));
	late();
	CHECK_MPI(MPI_Ireduce_scatter_block(s, r, N, MPI_DOUBLE, op, MPI_COMM_WORLD, &q));
	CHECK_MPI(MPI_Op_free(&op));
	CHECK_MPI(MPI_Op_create(max_fn, 1, &other));
	CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
	CHECK_MPI(MPI_Op_free(&other));
	CHECK(!memcmp(r, c + (size_t)rank * N, sizeof(double) * N));

	/* Made behind piano's back: the MPI's own runs it, and may free it
	 * whenever it likes. */
	CHECK_MPI(PMPI_Op_create(sum_fn, 1, &op));
	late();
	CHECK_MPI(MPI_Iallreduce(s, r, N, MPI_DOUBLE, op, MPI_COMM_WORLD, &q));
	CHECK_MPI(PMPI_Op_free(&op));
	CHECK_MPI(PMPI_Op_create(max_fn, 1, &other));
	CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
	CHECK_MPI(PMPI_Op_free(&other));
	CHECK(!memcmp(r, c, sizeof(double) * N));
	free(s);
	free(r);
	free(c);
}

/* Rank i sends i + 1 doubles; the root receives block i every other
 * double, at block offset 2 * N * i. */
static void gatherv_vector(int round)
{
	int n = rank + 1;
	double *s = malloc(sizeof(double) * (size_t)n),
	       *r = calloc(2 * (size_t)N * (size_t)size, sizeof(double));
	int *counts = malloc(sizeof(int) * (size_t)size),
	    *displs = malloc(sizeof(int) * (size_t)size);
	CHECK(s && r && counts && displs);
	for (int i = 0; i < n; i++)
		s[i] = 100 * rank + i + round;
	for (int i = 0; i < size; i++) {
		counts[i] = i + 1;
		displs[i] = N * i; /* in extents of the resized pair: 2 * N doubles */
	}
	MPI_Datatype every_other, t;
	CHECK_MPI(MPI_Type_vector(1, 1, 2, MPI_DOUBLE, &every_other));
	CHECK_MPI(MPI_Type_create_resized(every_other, 0, 2 * sizeof(double), &t));
	CHECK_MPI(MPI_Type_free(&every_other));
	CHECK_MPI(MPI_Type_commit(&t));
	MPI_Request q;
	late();
	CHECK_MPI(MPI_Igatherv(s, n, MPI_DOUBLE, r, counts, displs, t, 0, MPI_COMM_WORLD, &q));
	CHECK_MPI(MPI_Type_free(&t));
	MPI_Datatype d = decoy();
	wait_and_free_decoy(&q, &d);
	if (rank == 0)
		for (int i = 0; i < size; i++)
			for (int k = 0; k < 2 * N; k++) {
				double want = k % 2 == 0 && k / 2 < i + 1 ? 100 * i + k / 2 + round
				                                          : 0;
				CHECK(r[2 * (size_t)N * i + k] == want);
			}
	free(s);
	free(r);
	free(counts);
	free(displs);
}

/* Each peer's block as a contiguous type of its own, all freed at once. */
static void alltoallw_types(int round)
{
	int *s = malloc(sizeof(int) * N * (size_t)size),
	    *r = malloc(sizeof(int) * N * (size_t)size),
	    *c = malloc(sizeof(int) * N * (size_t)size);
	int *counts = malloc(sizeof(int) * (size_t)size),
	    *displs = malloc(sizeof(int) * (size_t)size);
	MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)size),
	             *decoys = malloc(sizeof(MPI_Datatype) * (size_t)size);
	CHECK(s && r && c && counts && displs && types && decoys);
	for (int i = 0; i < N * size; i++)
		s[i] = 1000 * rank + i + round;
	CHECK_MPI(MPI_Alltoall(s, N, MPI_INT, c, N, MPI_INT, MPI_COMM_WORLD));
	for (int i = 0; i < size; i++) {
		counts[i] = 1;
		displs[i] = (int)(sizeof(int) * N * (size_t)i);
		CHECK_MPI(MPI_Type_contiguous(N, MPI_INT, &types[i]));
		CHECK_MPI(MPI_Type_commit(&types[i]));
	}
	MPI_Request q;
	late();
	CHECK_MPI(MPI_Ialltoallw(s, counts, displs, types, r, counts, displs, types, MPI_COMM_WORLD,
	                         &q));
	for (int i = 0; i < size; i++) {
		CHECK_MPI(MPI_Type_free(&types[i]));
		decoys[i] = decoy();
	}
	CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
	for (int i = 0; i < size; i++)
		CHECK_MPI(MPI_Type_free(&decoys[i]));
	CHECK(!memcmp(r, c, sizeof(int) * N * (size_t)size));
	free(s);
	free(r);
	free(c);
	free(counts);
	free(displs);
	free(types);
	free(decoys);
}

static void maxloc_pairs(int round)
{
	struct pair {
		double v;
		int i;
	} *s = malloc(sizeof(*s) * N), *r = malloc(sizeof(*r) * N);
	CHECK(s && r);
	for (int k = 0; k < N; k++) {
		s[k].v = (7 * k + 13 * rank + round) % 17;
		s[k].i = rank;
	}
	MPI_Request q;
	late();
	CHECK_MPI(MPI_Iallreduce(s, r, N, MPI_DOUBLE_INT, MPI_MAXLOC, MPI_COMM_WORLD, &q));
	CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
	for (int k = 0; k < N; k++) {
		double best = -1;
		int at = -1;
		for (int p = 0; p < size; p++) {
			double v = (7 * k + 13 * p + round) % 17;
			if (v > best) {
				best = v;
				at = p;
			}
		}
		CHECK(r[k].v == best && r[k].i == at);
	}
	free(s);
	free(r);
}

static void ignored_types(int round)
{
	int *s = malloc(sizeof(int) * N * (size_t)size),
	    *r = malloc(sizeof(int) * N * (size_t)size);
	CHECK(s && r);
	MPI_Datatype stale;
	CHECK_MPI(MPI_Type_vector(2, 1, 3, MPI_INT, &stale));
	CHECK_MPI(MPI_Type_commit(&stale));
	MPI_Datatype freed = stale;
	CHECK_MPI(MPI_Type_free(&stale));
	for (int i = 0; i < N * size; i++)
		s[i] = 1000 * rank + i + round;
	MPI_Request q;

	memset(r, 0, sizeof(int) * N * (size_t)size);
	CHECK_MPI(MPI_Igather(s, N, MPI_INT, rank == 0 ? r : NULL, N, rank == 0 ? MPI_INT : freed,
	                      0, MPI_COMM_WORLD, &q));
	CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
	if (rank == 0)
		for (int p = 0; p < size; p++)
			for (int i = 0; i < N; i++)
				CHECK(r[p * N + i] == 1000 * p + i + round);

	CHECK_MPI(MPI_Iscatter(rank == 0 ? s : NULL, N, rank == 0 ? MPI_INT : freed, r, N, MPI_INT,
	                       0, MPI_COMM_WORLD, &q));
	CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
	for (int i = 0; i < N; i++)
		CHECK(r[i] == rank * N + i + round);

	for (int i = 0; i < N; i++)
		r[rank * N + i] = s[i];
	CHECK_MPI(MPI_Iallgather(MPI_IN_PLACE, 0, freed, r, N, MPI_INT, MPI_COMM_WORLD, &q));
	CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
	for (int p = 0; p < size; p++)
		for (int i = 0; i < N; i++)
			CHECK(r[p * N + i] == 1000 * p + i + round);
	free(s);
	free(r);
}

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int round = 0; round < ROUNDS; round++) {
		bcast_vector(round);
		reductions(round);
		gatherv_vector(round);
		alltoallw_types(round);
		ignored_types(round);
		maxloc_pairs(round);
	}
	CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("coll free: all checks passed\n");
	MPI_Finalize();
	return 0;
}

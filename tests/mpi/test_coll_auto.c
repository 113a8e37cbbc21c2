/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PIANO_COLL=auto, the default (docs/coll.md, "The default"), run without
 * PIANO_COLL and with PIANO_STATS=1. argv[1] is the thread level the ranks
 * ask for: `multiple` (every rank), `single` (every rank: serialized mode,
 * no graphs), or `mixed` (rank 0 multiple, the others single: the ranks
 * must agree to run the MPI's collectives everywhere, or rank 0 would run a
 * graph against the others' MPI schedule and the job would hang).
 *
 * Every rank makes the same calls, each result checked against the MPI's
 * blocking reduce-scatter: on MPI_COMM_WORLD an MPI_Ireduce_scatter_block
 * and an MPI_Ireduce_scatter of MPI_SUM over 256 KiB of ints (graphs when
 * auto is on: the AUTO_GRAPHS that CTest looks for in PIANO_STATS), and
 * the same on communicators made from it by MPI_Comm_dup and MPI_Comm_split
 * (graphs too: on Open MPI their shadows are made at creation, on MPICH by
 * idup at their first graph), the same on a communicator made by
 * MPI_Comm_idup (a graph on MPICH only: on Open MPI it has no shadow, since
 * one made there could cross the application's collectives), and calls
 * auto leaves to the MPI: the same on 4 KiB (below PIANO_COLL_AUTO_MIN)
 * and with a non-commutative operation. Then a loop creates and frees a
 * communicator 300 times, with a graph on every tenth one (on MPICH each
 * makes its shadow there, which must go with its communicator).
 */
#include "mpitest.h"

#include <stdlib.h>
#include <string.h>

enum { BIG = 65536, SMALL = 1024 }; /* ints in the whole vector */

/* rank r's input: element i of the vector */
static int input(int r, int i) { return (r + 1) * 7 + i % 1009; }

/* A sum declared non-commutative (auto leaves it to the MPI). */
static void sum_nc(void *in, void *inout, int *len, MPI_Datatype *type)
{
	(void)type;
	for (int i = 0; i < *len; i++)
		((int *)inout)[i] += ((int *)in)[i];
}

/* One MPI_Ireduce_scatter_block (v = 0) or MPI_Ireduce_scatter (v = 1) of
 * n ints on comm with op, checked against MPI_Reduce_scatter_block. */
static void check_one(MPI_Comm comm, int n, MPI_Op op, int v)
{
	int rank, size;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	int block = n / size;
	int *in = malloc(sizeof(int) * (size_t)(block * size));
	int *out = malloc(sizeof(int) * (size_t)block);
	int *want = malloc(sizeof(int) * (size_t)block);
	int *counts = malloc(sizeof(int) * (size_t)size);
	CHECK(in && out && want && counts);
	for (int i = 0; i < block * size; i++)
		in[i] = input(rank, i);
	for (int i = 0; i < size; i++)
		counts[i] = block;
	MPI_Request req;
	if (v)
		CHECK_MPI(MPI_Ireduce_scatter(in, out, counts, MPI_INT, op, comm, &req));
	else
		CHECK_MPI(MPI_Ireduce_scatter_block(in, out, block, MPI_INT, op, comm, &req));
	CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
	CHECK_MPI(MPI_Reduce_scatter_block(in, want, block, MPI_INT, op, comm));
	CHECK(!memcmp(out, want, sizeof(int) * (size_t)block));
	free(counts);
	free(want);
	free(out);
	free(in);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int required;
	if (!strcmp(mode, "multiple")) {
		required = MPI_THREAD_MULTIPLE;
	} else if (!strcmp(mode, "single")) {
		required = MPI_THREAD_SINGLE;
	} else if (!strcmp(mode, "mixed")) {
		/* The rank before MPI_Init, from the launcher. */
		const char *r = getenv("OMPI_COMM_WORLD_RANK");
		if (!r)
			r = getenv("PMI_RANK");
		if (!r) {
			fprintf(stderr, "coll auto: no rank in the environment: skipped\n");
			return 77;
		}
		required = atoi(r) == 0 ? MPI_THREAD_MULTIPLE : MPI_THREAD_SINGLE;
	} else {
		fprintf(stderr, "usage: %s multiple|single|mixed\n", argv[0]);
		return 1;
	}
	int provided, rank;
	MPI_Init_thread(&argc, &argv, required, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Op nc;
	CHECK_MPI(MPI_Op_create(sum_nc, 0, &nc));
	int size;
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm dup, split, idup;
	MPI_Request ireq;
	CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	/* All ranks, in reverse order: the halving's partners differ. */
	CHECK_MPI(MPI_Comm_split(dup, 0, size - rank, &split));
	CHECK_MPI(MPI_Comm_idup(MPI_COMM_WORLD, &idup, &ireq));
	CHECK_MPI(MPI_Wait(&ireq, MPI_STATUS_IGNORE));
	for (int v = 0; v < 2; v++) {
		/* The graphs, where auto is on. */
		check_one(MPI_COMM_WORLD, BIG, MPI_SUM, v);
		check_one(dup, BIG, MPI_SUM, v);
		check_one(split, BIG, MPI_SUM, v);
		check_one(idup, BIG, MPI_SUM, v); /* MPICH only */
		/* The MPI's. */
		check_one(MPI_COMM_WORLD, SMALL, MPI_SUM, v);
		check_one(MPI_COMM_WORLD, BIG, nc, v);
	}
	for (int i = 0; i < 300; i++) {
		MPI_Comm c;
		CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, 0, rank, &c));
		if (i % 10 == 0)
			check_one(c, BIG, MPI_SUM, 0);
		CHECK_MPI(MPI_Comm_free(&c));
	}
	CHECK_MPI(MPI_Comm_free(&idup));
	CHECK_MPI(MPI_Comm_free(&split));
	CHECK_MPI(MPI_Comm_free(&dup));
	CHECK_MPI(MPI_Op_free(&nc));
	if (rank == 0)
		fprintf(stderr, "coll auto: all checks passed (%s)\n", mode);
	MPI_Finalize();
	return 0;
}

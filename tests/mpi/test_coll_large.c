/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The large-count collectives (MPI-4's _c forms: MPI_Count counts, MPI_Aint
 * displacements) under PIANO_COLL=graph (docs/mpi.md, "Large-count calls"):
 *   - rank 0 calls the _c forms while the others call the int forms (one
 *     operation to the MPI): MPI_Iallgatherv, MPI_Ialltoallv (and in
 *     place), MPI_Ialltoallw, MPI_Igatherv, MPI_Iscatterv, and the
 *     persistent MPI_Allgatherv_init, MPI_Alltoallv_init,
 *     MPI_Gatherv_init, MPI_Scatterv_init, MPI_Alltoallw_init started
 *     twice each;
 *   - the same with counts past INT_MAX (of an empty datatype) on rank 0
 *     against counts of 1 on the others: MPI_Ibcast, MPI_Iallgather,
 *     MPI_Ialltoall, MPI_Igather, MPI_Iscatter, MPI_Ineighbor_allgather,
 *     MPI_Ineighbor_alltoall and their persistent inits;
 *   - the neighbourhood `v` and `w` forms, non-blocking and persistent;
 *   - under PIANO_COLL=graph, the reductions (every rank alike) with 7 and
 *     past INT_MAX elements of an empty datatype and an operation that
 *     counts what it is handed;
 *   - the ctest entry asks PIANO_STATS that every rank ran them as graphs;
 *   - a displacement past INT_MAX bytes on every rank (an allgatherv into
 *     2 GiB and a little of memory mapped without reserving it);
 *   - with the argument `big`, a block of 2^31 + 8 bytes (a gatherv whose
 *     last rank sends it to rank 0, then keeps it as the root: about 4 GiB
 *     of memory on the node each), and an all-reduce and a reduce of as
 *     many bytes;
 *   - with `bigpairs`, a broadcast of as many bytes, rank 0 calling
 *     MPI_Ibcast_c, the others MPI_Ibcast with pairs of bytes (2 GiB on
 *     each rank).
 * Each result is checked against the values every rank computes. Skipped
 * (77) where mpi.h is not MPI-4. Prints "coll large: all checks passed" on
 * rank 0.
 */
#include "mpitest.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#if MPI_VERSION >= 4

static int rank, size;

static int val(int who, int k) { return 100000 * who + k + 1; }

/* Counts and displacements (a gap of one element between blocks) in both
 * widths; counts[j] from count_of(j). */
struct layout {
	int *counts, *displs, total;
	MPI_Count *ccounts;
	MPI_Aint *cdispls, *bdispls; /* bdispls: in bytes of ints (alltoallw) */
	MPI_Datatype *types;
};

static struct layout layout_of(int (*count_of)(int j))
{
	struct layout l;
	l.counts = malloc(sizeof(int) * (size_t)size);
	l.displs = malloc(sizeof(int) * (size_t)size);
	l.ccounts = malloc(sizeof(MPI_Count) * (size_t)size);
	l.cdispls = malloc(sizeof(MPI_Aint) * (size_t)size);
	l.bdispls = malloc(sizeof(MPI_Aint) * (size_t)size);
	l.types = malloc(sizeof(MPI_Datatype) * (size_t)size);
	CHECK(l.counts && l.displs && l.ccounts && l.cdispls && l.bdispls && l.types);
	l.total = 0;
	for (int j = 0; j < size; j++) {
		l.ccounts[j] = l.counts[j] = count_of(j);
		l.cdispls[j] = l.displs[j] = l.total;
		l.bdispls[j] = (MPI_Aint)sizeof(int) * l.total;
		l.types[j] = MPI_INT;
		l.total += l.counts[j] + 1;
	}
	return l;
}

static void layout_free(struct layout *l)
{
	free(l->counts);
	free(l->displs);
	free(l->ccounts);
	free(l->cdispls);
	free(l->bdispls);
	free(l->types);
}

static int *ints(int n)
{
	int *p = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
	CHECK(p);
	for (int i = 0; i < n; i++)
		p[i] = -7;
	return p;
}

static int own_count(int j) { return 3 + 2 * j; }
/* What this rank sends to j, and receives from j (what j sends to it). */
static int to_count(int j) { return 1 + j + 2 * rank; }
static int from_count(int j) { return 1 + rank + 2 * j; }
/* Symmetric, for the all-to-all in place. */
static int pair_count(int j) { return 2 + (rank + j) % 3; }

static void wait1(MPI_Request *r) { CHECK_MPI(MPI_Wait(r, MPI_STATUS_IGNORE)); }

/* Starts a persistent request, and completes it or the non-blocking one. */
static void run_wait(bool pers, MPI_Request *q)
{
	if (pers)
		CHECK_MPI(MPI_Start(q));
	CHECK_MPI(MPI_Wait(q, MPI_STATUS_IGNORE));
}

static void done(bool pers, MPI_Request *q)
{
	if (pers)
		CHECK_MPI(MPI_Request_free(q));
}

static void allgatherv(bool pers)
{
	struct layout l = layout_of(own_count);
	int n = own_count(rank), *s = ints(n), *r = ints(l.total);
	MPI_Request q;
	MPI_Info i = MPI_INFO_NULL;
	if (pers && rank == 0)
		CHECK_MPI(MPI_Allgatherv_init_c(s, n, MPI_INT, r, l.ccounts, l.cdispls, MPI_INT,
		                                MPI_COMM_WORLD, i, &q));
	else if (pers)
		CHECK_MPI(MPI_Allgatherv_init(s, n, MPI_INT, r, l.counts, l.displs, MPI_INT,
		                              MPI_COMM_WORLD, i, &q));
	for (int run = 0; run < (pers ? 2 : 1); run++) {
		for (int k = 0; k < n; k++)
			s[k] = val(rank, k + run);
		if (!pers && rank == 0)
			CHECK_MPI(MPI_Iallgatherv_c(s, n, MPI_INT, r, l.ccounts, l.cdispls, MPI_INT,
			                            MPI_COMM_WORLD, &q));
		else if (!pers)
			CHECK_MPI(MPI_Iallgatherv(s, n, MPI_INT, r, l.counts, l.displs, MPI_INT,
			                          MPI_COMM_WORLD, &q));
		run_wait(pers, &q);
		for (int j = 0; j < size; j++)
			for (int k = 0; k < own_count(j); k++)
				CHECK(r[l.displs[j] + k] == val(j, k + run));
	}
	done(pers, &q);
	free(s);
	free(r);
	layout_free(&l);
}

/* w: MPI_Ialltoallw or MPI_Alltoallw_init (MPI_INT per block,
 * displacements in bytes). */
static void alltoallv(bool pers, bool w)
{
	struct layout sl = layout_of(to_count), rl = layout_of(from_count);
	int *s = ints(sl.total), *r = ints(rl.total);
	MPI_Request q;
	MPI_Info i = MPI_INFO_NULL;
	MPI_Comm c = MPI_COMM_WORLD;
	/* The int form's byte displacements of alltoallw are ints. */
	int *sb = ints(size), *rb = ints(size);
	for (int j = 0; j < size; j++) {
		sb[j] = (int)sl.bdispls[j];
		rb[j] = (int)rl.bdispls[j];
	}
	if (pers && w && rank == 0)
		CHECK_MPI(MPI_Alltoallw_init_c(s, sl.ccounts, sl.bdispls, sl.types, r, rl.ccounts,
		                               rl.bdispls, rl.types, c, i, &q));
	else if (pers && w)
		CHECK_MPI(MPI_Alltoallw_init(s, sl.counts, sb, sl.types, r, rl.counts, rb, rl.types,
		                             c, i, &q));
	else if (pers && rank == 0)
		CHECK_MPI(MPI_Alltoallv_init_c(s, sl.ccounts, sl.cdispls, MPI_INT, r, rl.ccounts,
		                               rl.cdispls, MPI_INT, c, i, &q));
	else if (pers)
		CHECK_MPI(MPI_Alltoallv_init(s, sl.counts, sl.displs, MPI_INT, r, rl.counts,
		                             rl.displs, MPI_INT, c, i, &q));
	for (int run = 0; run < (pers ? 2 : 1); run++) {
		for (int j = 0; j < size; j++)
			for (int k = 0; k < to_count(j); k++)
				s[sl.displs[j] + k] = val(rank, 1000 * j + k + run);
		if (!pers && w && rank == 0)
			CHECK_MPI(MPI_Ialltoallw_c(s, sl.ccounts, sl.bdispls, sl.types, r,
			                           rl.ccounts, rl.bdispls, rl.types, c, &q));
		else if (!pers && w)
			CHECK_MPI(MPI_Ialltoallw(s, sl.counts, sb, sl.types, r, rl.counts, rb,
			                         rl.types, c, &q));
		else if (!pers && rank == 0)
			CHECK_MPI(MPI_Ialltoallv_c(s, sl.ccounts, sl.cdispls, MPI_INT, r,
			                           rl.ccounts, rl.cdispls, MPI_INT, c, &q));
		else if (!pers)
			CHECK_MPI(MPI_Ialltoallv(s, sl.counts, sl.displs, MPI_INT, r, rl.counts,
			                         rl.displs, MPI_INT, c, &q));
		run_wait(pers, &q);
		for (int j = 0; j < size; j++)
			for (int k = 0; k < from_count(j); k++)
				CHECK(r[rl.displs[j] + k] == val(j, 1000 * rank + k + run));
	}
	done(pers, &q);
	free(s);
	free(r);
	free(sb);
	free(rb);
	layout_free(&sl);
	layout_free(&rl);
}

static void alltoallv_in_place(void)
{
	struct layout l = layout_of(pair_count);
	int *r = ints(l.total);
	for (int j = 0; j < size; j++)
		for (int k = 0; k < pair_count(j); k++)
			r[l.displs[j] + k] = val(rank, 1000 * j + k);
	MPI_Request q;
	if (rank == 0)
		CHECK_MPI(MPI_Ialltoallv_c(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, r,
		                           l.ccounts, l.cdispls, MPI_INT, MPI_COMM_WORLD, &q));
	else
		CHECK_MPI(MPI_Ialltoallv(MPI_IN_PLACE, NULL, NULL, MPI_DATATYPE_NULL, r, l.counts,
		                         l.displs, MPI_INT, MPI_COMM_WORLD, &q));
	wait1(&q);
	for (int j = 0; j < size; j++)
		for (int k = 0; k < pair_count(j); k++)
			CHECK(r[l.displs[j] + k] == val(j, 1000 * rank + k));
	free(r);
	layout_free(&l);
}

/* Gather to the last rank and scatter from it: root's blocks as the
 * allgatherv's. */
static void rooted(bool pers, bool gather)
{
	int root = size - 1, n = own_count(rank);
	struct layout l = layout_of(own_count);
	int *mine = ints(n), *all = ints(l.total);
	MPI_Request q;
	MPI_Info i = MPI_INFO_NULL;
	MPI_Comm c = MPI_COMM_WORLD;
	bool wide = rank == 0;
	/* Off the root the arrays are ignored: NULL there. */
	bool at = rank == root;
	if (pers && gather && wide)
		CHECK_MPI(MPI_Gatherv_init_c(mine, n, MPI_INT, all, at ? l.ccounts : NULL,
		                             at ? l.cdispls : NULL, MPI_INT, root, c, i, &q));
	else if (pers && gather)
		CHECK_MPI(MPI_Gatherv_init(mine, n, MPI_INT, all, at ? l.counts : NULL,
		                           at ? l.displs : NULL, MPI_INT, root, c, i, &q));
	else if (pers && wide)
		CHECK_MPI(MPI_Scatterv_init_c(all, at ? l.ccounts : NULL, at ? l.cdispls : NULL,
		                              MPI_INT, mine, n, MPI_INT, root, c, i, &q));
	else if (pers)
		CHECK_MPI(MPI_Scatterv_init(all, at ? l.counts : NULL, at ? l.displs : NULL,
		                            MPI_INT, mine, n, MPI_INT, root, c, i, &q));
	for (int run = 0; run < (pers ? 2 : 1); run++) {
		for (int k = 0; k < n; k++)
			mine[k] = gather ? val(rank, k + run) : -7;
		for (int j = 0; j < size; j++)
			for (int k = 0; k < own_count(j); k++)
				all[l.displs[j] + k] = gather ? -7 : val(j, k + run);
		if (!pers && gather && wide)
			CHECK_MPI(MPI_Igatherv_c(mine, n, MPI_INT, all, at ? l.ccounts : NULL,
			                         at ? l.cdispls : NULL, MPI_INT, root, c, &q));
		else if (!pers && gather)
			CHECK_MPI(MPI_Igatherv(mine, n, MPI_INT, all, at ? l.counts : NULL,
			                       at ? l.displs : NULL, MPI_INT, root, c, &q));
		else if (!pers && wide)
			CHECK_MPI(MPI_Iscatterv_c(all, at ? l.ccounts : NULL, at ? l.cdispls : NULL,
			                          MPI_INT, mine, n, MPI_INT, root, c, &q));
		else if (!pers)
			CHECK_MPI(MPI_Iscatterv(all, at ? l.counts : NULL, at ? l.displs : NULL,
			                        MPI_INT, mine, n, MPI_INT, root, c, &q));
		run_wait(pers, &q);
		if (gather && at)
			for (int j = 0; j < size; j++)
				for (int k = 0; k < own_count(j); k++)
					CHECK(all[l.displs[j] + k] == val(j, k + run));
		if (!gather)
			for (int k = 0; k < n; k++)
				CHECK(mine[k] == val(rank, k + run));
	}
	done(pers, &q);
	free(mine);
	free(all);
	layout_free(&l);
}

/*
 * The forms with one count per buffer, and the neighbourhood forms, rank
 * 0 calling the _c forms while the others call the int forms:
 *   - counts past INT_MAX of an empty datatype on rank 0 against counts of
 *     1 on the others (the same empty type signature): both must take the
 *     same path, graph or the MPI's, whatever their counts: the graph's
 *     messages of nothing never meet the MPI's schedule, so a split hangs
 *     (MPICH 4.0.2's own allgather, all-to-all and scatter hang on counts
 *     of 0 there);
 *   - the neighbourhood `v` and `w` forms on a periodic ring, blocks
 *     checked.
 */
static const MPI_Count past = (MPI_Count)INT_MAX + 5;

/* A datatype of no bytes, made once. Never freed: MPICH 4.0.2's own
 * MPI_Allgather_init releases its datatype once too often, and freeing it
 * then asserts. */
static MPI_Datatype empty_type(void)
{
	static MPI_Datatype empty = MPI_DATATYPE_NULL;
	if (empty == MPI_DATATYPE_NULL) {
		CHECK_MPI(MPI_Type_contiguous(0, MPI_INT, &empty));
		CHECK_MPI(MPI_Type_commit(&empty));
	}
	return empty;
}

static void scalar_forms(bool pers)
{
	MPI_Datatype empty = empty_type();
	MPI_Comm ring;
	int dims[1] = { size }, periods[1] = { 1 };
	CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
	MPI_Comm w = MPI_COMM_WORLD;
	MPI_Info i = MPI_INFO_NULL;
	int root = size - 1, buf[1] = { 0 }, out[1] = { 0 };
	bool wide = rank == 0;
	MPI_Count n = wide ? past : 1;
	MPI_Datatype t = empty;
	enum { N = 7 };
	MPI_Request q[N];
	if (pers && wide) {
		CHECK_MPI(MPI_Bcast_init_c(buf, n, t, root, w, i, &q[0]));
		CHECK_MPI(MPI_Allgather_init_c(out, n, t, buf, n, t, w, i, &q[1]));
		CHECK_MPI(MPI_Alltoall_init_c(out, n, t, buf, n, t, w, i, &q[2]));
		CHECK_MPI(MPI_Gather_init_c(out, n, t, buf, n, t, root, w, i, &q[3]));
		CHECK_MPI(MPI_Scatter_init_c(out, n, t, buf, n, t, root, w, i, &q[4]));
		CHECK_MPI(MPI_Neighbor_allgather_init_c(out, n, t, buf, n, t, ring, i, &q[5]));
		CHECK_MPI(MPI_Neighbor_alltoall_init_c(out, n, t, buf, n, t, ring, i, &q[6]));
	} else if (pers) {
		CHECK_MPI(MPI_Bcast_init(buf, 1, t, root, w, i, &q[0]));
		CHECK_MPI(MPI_Allgather_init(out, 1, t, buf, 1, t, w, i, &q[1]));
		CHECK_MPI(MPI_Alltoall_init(out, 1, t, buf, 1, t, w, i, &q[2]));
		CHECK_MPI(MPI_Gather_init(out, 1, t, buf, 1, t, root, w, i, &q[3]));
		CHECK_MPI(MPI_Scatter_init(out, 1, t, buf, 1, t, root, w, i, &q[4]));
		CHECK_MPI(MPI_Neighbor_allgather_init(out, 1, t, buf, 1, t, ring, i, &q[5]));
		CHECK_MPI(MPI_Neighbor_alltoall_init(out, 1, t, buf, 1, t, ring, i, &q[6]));
	}
	for (int run = 0; run < (pers ? 2 : 1); run++) {
		if (pers) {
			CHECK_MPI(MPI_Startall(N, q));
		} else if (wide) {
			CHECK_MPI(MPI_Ibcast_c(buf, n, t, root, w, &q[0]));
			CHECK_MPI(MPI_Iallgather_c(out, n, t, buf, n, t, w, &q[1]));
			CHECK_MPI(MPI_Ialltoall_c(out, n, t, buf, n, t, w, &q[2]));
			CHECK_MPI(MPI_Igather_c(out, n, t, buf, n, t, root, w, &q[3]));
			CHECK_MPI(MPI_Iscatter_c(out, n, t, buf, n, t, root, w, &q[4]));
			CHECK_MPI(MPI_Ineighbor_allgather_c(out, n, t, buf, n, t, ring, &q[5]));
			CHECK_MPI(MPI_Ineighbor_alltoall_c(out, n, t, buf, n, t, ring, &q[6]));
		} else {
			CHECK_MPI(MPI_Ibcast(buf, 1, t, root, w, &q[0]));
			CHECK_MPI(MPI_Iallgather(out, 1, t, buf, 1, t, w, &q[1]));
			CHECK_MPI(MPI_Ialltoall(out, 1, t, buf, 1, t, w, &q[2]));
			CHECK_MPI(MPI_Igather(out, 1, t, buf, 1, t, root, w, &q[3]));
			CHECK_MPI(MPI_Iscatter(out, 1, t, buf, 1, t, root, w, &q[4]));
			CHECK_MPI(MPI_Ineighbor_allgather(out, 1, t, buf, 1, t, ring, &q[5]));
			CHECK_MPI(MPI_Ineighbor_alltoall(out, 1, t, buf, 1, t, ring, &q[6]));
		}
		CHECK_MPI(MPI_Waitall(N, q, MPI_STATUSES_IGNORE));
		CHECK(buf[0] == 0 && out[0] == 0);
	}
	for (int k = 0; pers && k < N; k++)
		CHECK_MPI(MPI_Request_free(&q[k]));
	MPI_Comm_free(&ring);
}

/* Elements the counting operation was handed on this rank, by any thread
 * (a graph's reductions may run on piano's). */
static _Atomic long long counted;

static void count_elements(void *in, void *inout, int *len, MPI_Datatype *type)
{
	(void)in;
	(void)inout;
	(void)type;
	atomic_fetch_add(&counted, *len);
}

/* The elements every rank's operation was handed since the last call. */
static long long counted_everywhere(void)
{
	long long mine = atomic_exchange(&counted, 0), all = 0;
	CHECK_MPI(MPI_Allreduce(&mine, &all, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD));
	return all;
}

/*
 * Reductions of 7 elements and past INT_MAX elements of the empty datatype
 * (count and datatype alike on every rank, as MPI requires of a
 * reduction): MPI_Iallreduce_c, MPI_Ireduce_c to the last rank,
 * MPI_Iscan_c and MPI_Iexscan_c, or their persistent inits started twice,
 * with a user-defined operation that counts the elements it is handed.
 * Every element of size ranks' vectors must have been combined size - 1
 * times at least (size - 2 for the exclusive scan; size times by the
 * allreduce's recursive doubling on a power of two of ranks): a graph that
 * left out a run of the vector falls short (not seen by the exclusive scan
 * on 2 ranks, which combines nothing). Under PIANO_COLL=graph only: MPICH
 * 4.0.2's own reductions past INT_MAX with an operation of int lengths
 * abort (an assertion, count <= INT_MAX, in its MPI_Reduce_local).
 */
static void reductions_past(bool pers)
{
	MPI_Datatype empty = empty_type();
	MPI_Op op;
	CHECK_MPI(MPI_Op_create(count_elements, 1, &op));
	MPI_Comm w = MPI_COMM_WORLD;
	MPI_Info i = MPI_INFO_NULL;
	MPI_Datatype t = empty;
	int in[1] = { 0 }, out[1] = { 0 };
	enum { N = 4 };
	const MPI_Count counts[] = { 7, past };
	for (int c = 0; c < 2; c++) {
		MPI_Count n = counts[c];
		MPI_Request q[N];
		if (pers) {
			CHECK_MPI(MPI_Allreduce_init_c(in, out, n, t, op, w, i, &q[0]));
			CHECK_MPI(MPI_Reduce_init_c(in, out, n, t, op, size - 1, w, i, &q[1]));
			CHECK_MPI(MPI_Scan_init_c(in, out, n, t, op, w, i, &q[2]));
			CHECK_MPI(MPI_Exscan_init_c(in, out, n, t, op, w, i, &q[3]));
		}
		counted_everywhere();
		for (int run = 0; run < (pers ? 2 : 1); run++)
			for (int k = 0; k < N; k++) {
				if (pers)
					CHECK_MPI(MPI_Start(&q[k]));
				else if (k == 0)
					CHECK_MPI(MPI_Iallreduce_c(in, out, n, t, op, w, &q[k]));
				else if (k == 1)
					CHECK_MPI(MPI_Ireduce_c(in, out, n, t, op, size - 1, w,
					                        &q[k]));
				else if (k == 2)
					CHECK_MPI(MPI_Iscan_c(in, out, n, t, op, w, &q[k]));
				else
					CHECK_MPI(MPI_Iexscan_c(in, out, n, t, op, w, &q[k]));
				wait1(&q[k]);
				/* An allreduce on a power of two of ranks doubles: every
				 * rank combines every element at each step. */
				bool doubles = k == 0 && (size & (size - 1)) == 0;
				long long all = counted_everywhere(),
				          want = doubles ? n * size : n * (size - 1 - (k == 3));
				if (all < want) {
					fprintf(stderr,
					        "reduction %d of %lld elements: %lld combined, "
					        "want %lld "
					        "at least\n",
					        k, (long long)n, all, want);
					CHECK(0);
				}
				CHECK(in[0] == 0 && out[0] == 0);
			}
		for (int k = 0; pers && k < N; k++)
			CHECK_MPI(MPI_Request_free(&q[k]));
	}
	MPI_Op_free(&op);
}

/* On a line of the ranks (not periodic: on a periodic ring of 2, where a
 * rank's two neighbours are one, MPICH 4.0.2's own alltoallv swaps the
 * blocks, docs/coll.md): block 0 goes to (and comes from) the -1
 * neighbour, block 1 the +1 one; what a rank sends towards +1 lands in its
 * +1 neighbour's block 0 (MPI-4.0 §8.6). Sent towards -1: 3 ints, towards
 * +1: 5, so a rank receives 5 into block 0 and 3 into block 1; blocks a
 * gap of one int apart; the ends' blocks from MPI_PROC_NULL stay as they
 * were. */
static int dir_count(int dir) { return dir ? 5 : 3; }

static void neighbor_forms(bool pers, int form)
{
	enum { ALLGATHERV, ALLTOALLV, ALLTOALLW };
	MPI_Comm ring;
	int dims[1] = { size }, periods[1] = { 0 };
	CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring));
	int left = rank - 1, right = rank + 1 < size ? rank + 1 : -1;
	int sc[2], sd[2], rc[2], rd[2];
	MPI_Count csc[2], crc[2];
	MPI_Aint csd[2], crd[2], csb[2], crb[2];
	MPI_Datatype types[2] = { MPI_INT, MPI_INT };
	for (int j = 0; j < 2; j++) {
		csc[j] = sc[j] = form == ALLGATHERV ? 4 : dir_count(j);
		crc[j] = rc[j] = form == ALLGATHERV ? 4 : dir_count(!j);
		csd[j] = sd[j] = 6 * j;
		crd[j] = rd[j] = 6 * j;
		/* Alltoallw's displacements are in bytes, MPI_Aint in both forms. */
		csb[j] = crb[j] = (MPI_Aint)sizeof(int) * 6 * j;
	}
	int s[12], r[12];
	MPI_Request q;
	MPI_Info i = MPI_INFO_NULL;
	bool wide = rank == 0;
	if (pers && form == ALLGATHERV && wide)
		CHECK_MPI(MPI_Neighbor_allgatherv_init_c(s, 4, MPI_INT, r, crc, crd, MPI_INT, ring,
		                                         i, &q));
	else if (pers && form == ALLGATHERV)
		CHECK_MPI(MPI_Neighbor_allgatherv_init(s, 4, MPI_INT, r, rc, rd, MPI_INT, ring, i,
		                                       &q));
	else if (pers && form == ALLTOALLV && wide)
		CHECK_MPI(MPI_Neighbor_alltoallv_init_c(s, csc, csd, MPI_INT, r, crc, crd, MPI_INT,
		                                        ring, i, &q));
	else if (pers && form == ALLTOALLV)
		CHECK_MPI(MPI_Neighbor_alltoallv_init(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT, ring,
		                                      i, &q));
	else if (pers && wide)
		CHECK_MPI(MPI_Neighbor_alltoallw_init_c(s, csc, csb, types, r, crc, crb, types,
		                                        ring, i, &q));
	else if (pers)
		CHECK_MPI(MPI_Neighbor_alltoallw_init(s, sc, csb, types, r, rc, crb, types, ring, i,
		                                      &q));
	for (int run = 0; run < (pers ? 2 : 1); run++) {
		for (int k = 0; k < 12; k++) {
			s[k] = form == ALLGATHERV ? val(rank, k + run)
			                          : val(rank, 1000 * (k / 6) + k % 6 + run);
			r[k] = -7;
		}
		if (pers)
			CHECK_MPI(MPI_Start(&q));
		else if (form == ALLGATHERV && wide)
			CHECK_MPI(MPI_Ineighbor_allgatherv_c(s, 4, MPI_INT, r, crc, crd, MPI_INT,
			                                     ring, &q));
		else if (form == ALLGATHERV)
			CHECK_MPI(MPI_Ineighbor_allgatherv(s, 4, MPI_INT, r, rc, rd, MPI_INT, ring,
			                                   &q));
		else if (form == ALLTOALLV && wide)
			CHECK_MPI(MPI_Ineighbor_alltoallv_c(s, csc, csd, MPI_INT, r, crc, crd,
			                                    MPI_INT, ring, &q));
		else if (form == ALLTOALLV)
			CHECK_MPI(MPI_Ineighbor_alltoallv(s, sc, sd, MPI_INT, r, rc, rd, MPI_INT,
			                                  ring, &q));
		else if (wide)
			CHECK_MPI(MPI_Ineighbor_alltoallw_c(s, csc, csb, types, r, crc, crb, types,
			                                    ring, &q));
		else
			CHECK_MPI(MPI_Ineighbor_alltoallw(s, sc, csb, types, r, rc, crb, types,
			                                  ring, &q));
		CHECK_MPI(MPI_Wait(&q, MPI_STATUS_IGNORE));
		for (int j = 0; j < 2; j++) {
			int from = j ? right : left;
			for (int k = 0; k < rc[j]; k++)
				CHECK(r[rd[j] + k] == (from < 0 ? -7
				                       : form == ALLGATHERV
				                               ? val(from, k + run)
				                               : val(from, 1000 * !j + k + run)));
			CHECK(r[rd[j] + rc[j]] == -7);
		}
	}
	done(pers, &q);
	MPI_Comm_free(&ring);
}

/* bytes of memory mapped without reserving it: only the pages touched are
 * used. */
static unsigned char *map(size_t bytes)
{
	void *p = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	CHECK(p != MAP_FAILED);
	return p;
}

/* 16 bytes from every rank at 2^31 + 64 j bytes into the receive buffer. */
static void far_displacement(void)
{
	const MPI_Aint far = (MPI_Aint)1 << 31;
	size_t bytes = (size_t)far + 64 * (size_t)size;
	unsigned char *r = map(bytes), s[16];
	MPI_Count *counts = malloc(sizeof(MPI_Count) * (size_t)size);
	MPI_Aint *displs = malloc(sizeof(MPI_Aint) * (size_t)size);
	CHECK(counts && displs);
	for (int j = 0; j < size; j++) {
		counts[j] = 16;
		displs[j] = far + 64 * j;
	}
	for (int k = 0; k < 16; k++)
		s[k] = (unsigned char)(7 * rank + k);
	MPI_Request q;
	CHECK_MPI(MPI_Iallgatherv_c(s, 16, MPI_BYTE, r, counts, displs, MPI_BYTE, MPI_COMM_WORLD,
	                            &q));
	wait1(&q);
	for (int j = 0; j < size; j++)
		for (int k = 0; k < 16; k++)
			CHECK(r[far + 64 * j + k] == (unsigned char)(7 * j + k));
	CHECK(r[0] == 0 && r[far - 1] == 0);
	munmap(r, bytes);
	free(counts);
	free(displs);
}

static unsigned char pattern(int who, size_t k) { return (unsigned char)(31 * who + k % 251); }

/* A broadcast of 2^31 + 8 bytes from the last rank: rank 0 calls
 * MPI_Ibcast_c with that many bytes, the others MPI_Ibcast with half as
 * many pairs of bytes (2 GiB and a little on each rank). From 3 ranks a
 * broadcast's graph forwards: the ranks' different elements must not cut
 * it differently. */
static void big_bcast(void)
{
	const MPI_Count big = ((MPI_Count)1 << 31) + 8;
	int root = size - 1;
	unsigned char *b = map((size_t)big);
	if (rank == root)
		for (size_t k = 0; k < (size_t)big; k++)
			b[k] = pattern(root, k);
	MPI_Request q;
	MPI_Datatype t;
	CHECK_MPI(MPI_Type_contiguous(2, MPI_BYTE, &t));
	CHECK_MPI(MPI_Type_commit(&t));
	if (rank == 0)
		CHECK_MPI(MPI_Ibcast_c(b, big, MPI_BYTE, root, MPI_COMM_WORLD, &q));
	else
		CHECK_MPI(MPI_Ibcast(b, (int)(big / 2), t, root, MPI_COMM_WORLD, &q));
	wait1(&q);
	for (size_t k = 0; k < (size_t)big; k += k < 64 ? 1 : 4093)
		CHECK(b[k] == pattern(root, k));
	CHECK(b[big - 1] == pattern(root, (size_t)big - 1));
	MPI_Type_free(&t);
	munmap(b, (size_t)big);
}

/* A gatherv whose last rank has 2^31 + 8 bytes, the others 8: to rank 0
 * (a message), and to the last rank (its own block: a local copy). */
static void big_block(int root)
{
	const MPI_Count big = ((MPI_Count)1 << 31) + 8;
	MPI_Count n = rank == size - 1 ? big : 8, total = 0;
	MPI_Count *counts = malloc(sizeof(MPI_Count) * (size_t)size);
	MPI_Aint *displs = malloc(sizeof(MPI_Aint) * (size_t)size);
	CHECK(counts && displs);
	for (int j = 0; j < size; j++) {
		counts[j] = j == size - 1 ? big : 8;
		displs[j] = total;
		total += counts[j];
	}
	unsigned char *s = map((size_t)n), *r = rank == root ? map((size_t)total) : NULL;
	for (size_t k = 0; k < (size_t)n; k++)
		s[k] = pattern(rank, k);
	MPI_Request q;
	CHECK_MPI(MPI_Igatherv_c(s, n, MPI_BYTE, r, counts, displs, MPI_BYTE, root, MPI_COMM_WORLD,
	                         &q));
	wait1(&q);
	if (rank == root)
		for (int j = 0; j < size; j++) {
			/* Both ends and a stride through the middle. */
			for (size_t k = 0; k < (size_t)counts[j]; k += k < 64 ? 1 : 4093)
				CHECK(r[displs[j] + (MPI_Aint)k] == pattern(j, k));
			size_t last = (size_t)counts[j] - 1;
			CHECK(r[displs[j] + (MPI_Aint)last] == pattern(j, last));
		}
	munmap(s, (size_t)n);
	if (r)
		munmap(r, (size_t)total);
	free(counts);
	free(displs);
}

/* Whether byte k of a reduction's result is right (the all-reduce: the
 * ranks' patterns XORed; the reduce of that result from every rank: size
 * times it, modulo 256). */
static unsigned char xor_of(size_t k)
{
	unsigned char x = 0;
	for (int j = 0; j < size; j++)
		x ^= pattern(j, k);
	return x;
}

static void check_reduced(const unsigned char *b, size_t k, int times)
{
	unsigned char want = (unsigned char)(times * xor_of(k));
	if (b[k] != want) {
		fprintf(stderr, "byte %zu of the reduction: %u, want %u\n", k, b[k], want);
		CHECK(0);
	}
}

/* Both ends, a stride through the middle, and every byte within 64 KiB of
 * the middle, where a graph of two runs cuts the vector. */
static void check_reduction(const unsigned char *b, MPI_Count n, int times)
{
	size_t mid = (size_t)n / 2;
	for (size_t k = 0; k < (size_t)n; k += k < 64 ? 1 : 4093)
		check_reduced(b, k, times);
	for (size_t k = mid - 65536; k < mid + 65536; k++)
		check_reduced(b, k, times);
	check_reduced(b, (size_t)n - 1, times);
}

/* An all-reduce in place (MPI_BXOR) of 2^31 + 8 bytes, a reduce (MPI_SUM)
 * of its result to the last rank, then an inclusive scan (MPI_SUM) of it in
 * place: past INT_MAX elements, graphs of two runs (about 4 GiB on each
 * rank at the most). */
static void big_reduce(void)
{
	const MPI_Count big = ((MPI_Count)1 << 31) + 8;
	unsigned char *a = map((size_t)big), *r = rank == size - 1 ? map((size_t)big) : NULL;
	for (size_t k = 0; k < (size_t)big; k++)
		a[k] = pattern(rank, k);
	MPI_Request q;
	CHECK_MPI(MPI_Iallreduce_c(MPI_IN_PLACE, a, big, MPI_UNSIGNED_CHAR, MPI_BXOR,
	                           MPI_COMM_WORLD, &q));
	wait1(&q);
	check_reduction(a, big, 1);
	CHECK_MPI(
	        MPI_Ireduce_c(a, r, big, MPI_UNSIGNED_CHAR, MPI_SUM, size - 1, MPI_COMM_WORLD, &q));
	wait1(&q);
	if (r)
		check_reduction(r, big, size);
	CHECK_MPI(
	        MPI_Iscan_c(MPI_IN_PLACE, a, big, MPI_UNSIGNED_CHAR, MPI_SUM, MPI_COMM_WORLD, &q));
	wait1(&q);
	check_reduction(a, big, rank + 1);
	munmap(a, (size_t)big);
	if (r)
		munmap(r, (size_t)big);
}

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	for (int pers = 0; pers < 2; pers++) {
		allgatherv(pers);
		alltoallv(pers, false);
		rooted(pers, true);
		rooted(pers, false);
	}
	alltoallv(false, true);
	alltoallv(true, true);
	alltoallv_in_place();
	far_displacement();
	const char *coll = getenv("PIANO_COLL");
	for (int pers = 0; pers < 2; pers++) {
		scalar_forms(pers);
		if (coll && !strcmp(coll, "graph"))
			reductions_past(pers);
		for (int form = 0; form < 3; form++)
			neighbor_forms(pers, form);
	}
	if (argc > 1 && !strcmp(argv[1], "big")) {
		big_block(0);
		big_block(size - 1);
		big_reduce();
	}
	if (argc > 1 && !strcmp(argv[1], "bigpairs"))
		big_bcast();
	CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0)
		printf("coll large: all checks passed\n");
	MPI_Finalize();
	return 0;
}

#else
int main(void) { return 77; }
#endif

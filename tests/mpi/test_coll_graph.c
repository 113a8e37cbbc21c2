/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Graph collectives (PIANO_COLL=graph, docs/coll.md): MPI_Ibarrier,
 * MPI_Ibcast, MPI_Ireduce, MPI_Iallreduce, MPI_Ialltoall, MPI_Iallgather,
 * MPI_Igather and MPI_Iscatter (and the `v` forms of the last four),
 * MPI_Ialltoallw,
 * MPI_Ireduce_scatter_block, MPI_Ireduce_scatter, MPI_Iscan and MPI_Iexscan through the MPI
 * calls, results compared with the MPI's blocking collective on the same data, for
 *   - counts 0, 1, 7, fewer than the ranks, and 40,000 (40 segments with
 *     PIANO_COLL_SEGMENT=4096, as the tests run it);
 *   - every root (Ibcast, Ireduce, Igather, Iscatter);
 *   - blocks of 0, 1, 7 and 5,000 elements (the exchanges);
 *   - MPI_INT, and a vector type with holes (stride 3: the holes must stay
 *     untouched);
 *   - MPI_SUM, a user-defined sum on the vector type, and a user-defined
 *     non-commutative operation (composition of affine maps), where the
 *     ranks' order matters;
 *   - in place (wherever MPI allows it);
 *   - completion by MPI_Wait, MPI_Waitall mixed with a point-to-point
 *     request, a loop of MPI_Test, and MPI_Waitany/Waitsome;
 *   - collectives in flight on MPI_COMM_WORLD, a duplicate and a split at
 *     once, then the duplicate freed while its shadow is in use;
 *   - an in-place all-to-all of more elements than an int counts;
 *   - a broadcast whose ranks pass different datatypes of one signature;
 *   - a broadcast of a named type with gaps (MPI_DOUBLE_INT), repeated and
 *     persistent;
 *   - under PIANO_COLL=graph, the reductions of a datatype of negative
 *     extent (both MPIs' own crash on it).
 * Any number of ranks; argument "light": the per-collective checks on
 * MPI_COMM_WORLD only. Prints "coll graph: all checks passed" on rank 0.
 */
#include "mpitest.h"

#include <limits.h>
#include <stdbool.h>
#include <string.h>

#define BIG 40000

/* x -> m*x + c, composed left to right: associative, not commutative. */
static void affine(void *in, void *inout, int *len, MPI_Datatype *type)
{
	(void)type;
	unsigned *a = in, *b = inout;
	for (int i = 0; i < *len; i++) {
		unsigned m = a[2 * i] * b[2 * i];
		unsigned c = a[2 * i + 1] * b[2 * i] + b[2 * i + 1];
		b[2 * i] = m;
		b[2 * i + 1] = c;
	}
}

/* Sum over the vector type with holes (a predefined operation is not
 * defined on a derived type for every MPI): one int every 3. */
static void vsum(void *in, void *inout, int *len, MPI_Datatype *type)
{
	(void)type;
	int *a = in, *b = inout;
	for (int i = 0; i < *len; i++)
		b[3 * i] += a[3 * i];
}

enum how { BY_WAIT, BY_WAITALL_MIXED, BY_TEST, BY_WAITANY, BY_WAITSOME, NHOW };

/* Completes req the way `how` says; a point-to-point exchange with the
 * next rank rides along in BY_WAITALL_MIXED. */
static void complete(MPI_Request *req, enum how how, MPI_Comm comm)
{
	int rank, size, flag = 0, idx, out, ids[3];
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	switch (how) {
	case BY_WAIT: CHECK_MPI(MPI_Wait(req, MPI_STATUS_IGNORE)); break;
	case BY_WAITALL_MIXED: {
		int sv = rank, rv = -1;
		MPI_Request r[3];
		r[0] = *req;
		CHECK_MPI(MPI_Irecv(&rv, 1, MPI_INT, (rank - 1 + size) % size, 99, comm, &r[1]));
		CHECK_MPI(MPI_Isend(&sv, 1, MPI_INT, (rank + 1) % size, 99, comm, &r[2]));
		MPI_Status st[3];
		CHECK_MPI(MPI_Waitall(3, r, st));
		CHECK(rv == (rank - 1 + size) % size);
		*req = r[0];
		break;
	}
	case BY_TEST:
		while (!flag)
			CHECK_MPI(MPI_Test(req, &flag, MPI_STATUS_IGNORE));
		break;
	case BY_WAITANY: {
		MPI_Request r[2] = { MPI_REQUEST_NULL, *req };
		CHECK_MPI(MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE));
		CHECK(idx == 1 && r[1] == MPI_REQUEST_NULL);
		*req = r[1];
		break;
	}
	case BY_WAITSOME: {
		MPI_Request r[1] = { *req };
		do
			CHECK_MPI(MPI_Waitsome(1, r, &out, ids, MPI_STATUSES_IGNORE));
		while (out == 0);
		CHECK(out == 1 && ids[0] == 0);
		*req = r[0];
		break;
	}
	default: CHECK(0);
	}
	CHECK(*req == MPI_REQUEST_NULL);
}

static int counts(int size, int *v)
{
	int n = 0;
	v[n++] = 0;
	v[n++] = 1;
	v[n++] = 7;
	if (size > 2)
		v[n++] = size - 1;
	v[n++] = BIG;
	return n;
}

static void check_bcast(MPI_Comm comm, MPI_Datatype vec, int *iter)
{
	int rank, size, cs[8];
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	int nc = counts(size, cs);
	int *a = malloc(sizeof(int) * 3 * BIG), *b = malloc(sizeof(int) * 3 * BIG);
	CHECK(a && b);
	for (int c = 0; c < nc; c++)
		for (int root = 0; root < size; root++)
			for (int v = 0; v < 2; v++) {
				int n = cs[c];
				int len = v ? 3 * n : n;
				for (int i = 0; i < len; i++)
					a[i] = b[i] = rank == root ? i * 7 + root : -1 - i;
				MPI_Datatype t = v ? vec : MPI_INT;
				MPI_Request req;
				CHECK_MPI(MPI_Ibcast(a, n, t, root, comm, &req));
				complete(&req, (enum how)((*iter)++ % NHOW), comm);
				CHECK_MPI(MPI_Bcast(b, n, t, root, comm));
				CHECK(memcmp(a, b, sizeof(int) * (size_t)len) == 0);
			}
	free(a);
	free(b);
}

/* A broadcast whose ranks pass different datatypes of one type signature
 * (MPI requires no more): 3 * BIG ints as MPI_INT, as BIG triples (a
 * contiguous type of 3 ints), as 3 * BIG elements of the vector type with
 * holes, or as pairs in reverse (a vector of stride -1: its second int
 * lies before its first, where its sizes alone look dense), each rank
 * taking each form in turn, from every root; each rank must find the
 * root's ints in its own layout and its holes untouched; 3 * BIG ints, 6
 * and none. Cut in segments of each rank's own elements, the messages do
 * not match; sent as bytes in memory order, the reversed pairs come out
 * swapped. */
static int mixed_at(int form, int k) /* where the k-th int of the signature lies */
{
	return form == 2 ? 3 * k : form == 3 ? (k ^ 1) : k;
}

static void check_bcast_mixed(MPI_Comm comm, MPI_Datatype vec, int *iter)
{
	int rank, size;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	MPI_Datatype triple, rev;
	CHECK_MPI(MPI_Type_contiguous(3, MPI_INT, &triple));
	CHECK_MPI(MPI_Type_commit(&triple));
	CHECK_MPI(MPI_Type_vector(2, 1, -1, MPI_INT, &rev));
	CHECK_MPI(MPI_Type_commit(&rev));
	int n = 3 * BIG + 1, *a = malloc(sizeof(int) * 3 * (size_t)n);
	CHECK(a);
	int full = n - n % 6; /* whole pairs and triples */
	for (int turn = 0; turn < 12; turn++)
		for (int root = 0; root < size; root++) {
			n = turn < 4 ? full : turn < 8 ? 6 : 0;
			int form = (rank + turn) % 4, span = form == 2 ? 3 * n : n;
			for (int i = 0; i < span; i++)
				a[i] = -1 - i;
			if (rank == root)
				for (int k = 0; k < n; k++)
					a[mixed_at(form, k)] = 7 * k + root;
			MPI_Request req;
			if (form == 0)
				CHECK_MPI(MPI_Ibcast(a, n, MPI_INT, root, comm, &req));
			else if (form == 1)
				CHECK_MPI(MPI_Ibcast(a, n / 3, triple, root, comm, &req));
			else if (form == 2)
				CHECK_MPI(MPI_Ibcast(a, n, vec, root, comm, &req));
			else /* the first pair's first int is a[1] */
				CHECK_MPI(MPI_Ibcast(a + 1, n / 2, rev, root, comm, &req));
			complete(&req, (enum how)((*iter)++ % NHOW), comm);
			for (int k = 0; k < n; k++)
				CHECK(a[mixed_at(form, k)] == 7 * k + root);
			for (int i = 0; form == 2 && i < span; i++)
				CHECK(i % 3 == 0 || a[i] == -1 - i);
		}
	free(a);
	MPI_Type_free(&triple);
	MPI_Type_free(&rev);
}

/* A broadcast of MPI_DOUBLE_INT (a named type with a gap: packed at the
 * root, unpacked on the others) made RUNS times with the same arguments,
 * so that the graph built for the first is reused, and as a persistent
 * broadcast started RUNS times: each run's values must arrive, the gaps
 * untouched. */
static void check_bcast_pairs(MPI_Comm comm)
{
	enum { PAIRS = 3000, RUNS = 3 };
	struct di {
		double d;
		int i;
	};
	int rank, size;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	struct di *a = malloc(sizeof(*a) * PAIRS);
	CHECK(a);
	int root = size - 1;
	for (int persistent = 0; persistent < 2; persistent++) {
		MPI_Request req = MPI_REQUEST_NULL;
#ifdef PCOLL
		if (persistent)
			CHECK_MPI(PCOLL(Bcast_init)(a, PAIRS, MPI_DOUBLE_INT, root, comm,
			                            MPI_INFO_NULL, &req));
#else
		if (persistent)
			break;
#endif
		for (int run = 0; run < RUNS; run++) {
			memset(a, 0x5A, sizeof(*a) * PAIRS); /* the gaps too */
			if (rank == root)
				for (int k = 0; k < PAIRS; k++)
					a[k].d = 0.5 * k + run, a[k].i = 3 * k - run;
			if (persistent)
				CHECK_MPI(MPI_Start(&req));
			else
				CHECK_MPI(MPI_Ibcast(a, PAIRS, MPI_DOUBLE_INT, root, comm, &req));
			CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
			for (int k = 0; k < PAIRS; k++) {
				CHECK(a[k].d == 0.5 * k + run && a[k].i == 3 * k - run);
				const unsigned char *gap = (const unsigned char *)&a[k].i +
				                           sizeof(int);
				for (size_t g = 0;
				     g < sizeof(struct di) - sizeof(double) - sizeof(int); g++)
					CHECK(gap[g] == 0x5A);
			}
		}
		if (persistent)
			CHECK_MPI(MPI_Request_free(&req));
	}
	free(a);
}

/* Iallreduce (root -1, in place or not) and Ireduce (every root, in place
 * at the root for half of the cases): MPI_SUM on MPI_INT, vsum on the
 * vector type, the affine composition on pairs. */
static void check_reductions(MPI_Comm comm, MPI_Datatype vec, MPI_Op vop, MPI_Datatype pair,
                             MPI_Op aff, int *iter)
{
	int rank, size, cs[8];
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	int nc = counts(size, cs);
	size_t cap = 3 * (size_t)BIG;
	int *s = malloc(sizeof(int) * cap), *a = malloc(sizeof(int) * cap),
	    *b = malloc(sizeof(int) * cap);
	CHECK(s && a && b);
	for (int c = 0; c < nc; c++)
		for (int kind = 0; kind < 3; kind++) /* sum, vsum on the vector, affine */
			for (int root = -1; root < size; root++)
				for (int inplace = 0; inplace < 2; inplace++) {
					if (root >= 0 && inplace != (c + kind) % 2)
						continue;
					int n = cs[c], ip = inplace && (root < 0 || rank == root);
					MPI_Datatype t = kind == 1   ? vec
					                 : kind == 2 ? pair
					                             : MPI_INT;
					MPI_Op op = kind == 2 ? aff : kind == 1 ? vop : MPI_SUM;
					int len = kind == 0 ? n : kind == 1 ? 3 * n : 2 * n;
					for (int i = 0; i < len; i++) {
						s[i] = kind == 2 ? (i % 2 ? rank + i : 2 * rank + 3)
						                 : rank * 1000 + i;
						a[i] = ip ? s[i] : -5; /* holes and in place */
						b[i] = -5;
					}
					const void *sb = ip ? MPI_IN_PLACE : s;
					MPI_Request req;
					if (root < 0)
						CHECK_MPI(MPI_Iallreduce(sb, a, n, t, op, comm,
						                         &req));
					else
						CHECK_MPI(MPI_Ireduce(sb, a, n, t, op, root, comm,
						                      &req));
					complete(&req, (enum how)((*iter)++ % NHOW), comm);
					if (root < 0)
						CHECK_MPI(MPI_Allreduce(s, b, n, t, op, comm));
					else
						CHECK_MPI(MPI_Reduce(s, b, n, t, op, root, comm));
					if (root >= 0 && rank != root)
						continue; /* the result means nothing there */
					if (kind == 1 && ip)
						for (int i = 0; i < len; i++)
							if (i % 3)
								b[i] = s[i]; /* holes keep the input */
					CHECK(memcmp(a, b, sizeof(int) * (size_t)len) == 0);
				}
	free(s);
	free(a);
	free(b);
}

/* Ialltoall, Iallgather, Igather, Iscatter: block counts 0, 1, 7, 5000;
 * MPI_INT and the vector type; in place where MPI allows it; every root. */
static void check_exchanges(MPI_Comm comm, MPI_Datatype vec, int *iter)
{
	int rank, size;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	static const int blocks[] = { 0, 1, 7, 5000 };
	size_t cap = 3 * 5000 * (size_t)size;
	int *s = malloc(sizeof(int) * cap), *a = malloc(sizeof(int) * cap),
	    *b = malloc(sizeof(int) * cap);
	CHECK(s && a && b);
	for (int k = 0; k < 4; k++)
		for (int v = 0; v < 2; v++)
			for (int which = 0; which < 4; which++)
				for (int root = 0; root < (which >= 2 ? size : 1); root++)
					for (int inplace = 0; inplace < 2; inplace++) {
						int n = blocks[k];
						MPI_Datatype t = v ? vec : MPI_INT;
						size_t len = (size_t)(v ? 3 : 1) * n * size;
						for (size_t i = 0; i < len; i++) {
							s[i] = rank * 100000 + (int)i;
							a[i] = b[i] = inplace ? s[i] : -5;
						}
						/* In place: alltoall, allgather everywhere; gather,
						 * scatter at the root only. */
						int ip = inplace && (which < 2 || rank == root);
						const void *sb = ip && which != 3 ? MPI_IN_PLACE
						                                  : s;
						void *rb = ip && which == 3 ? MPI_IN_PLACE : a;
						void *rref = ip && which == 3 ? MPI_IN_PLACE : b;
						const void *sref = ip && which != 3 ? MPI_IN_PLACE
						                                    : s;
						/* allgather in place: this rank's block is its input */
						if (ip && which == 1)
							for (size_t i = 0; i < len; i++)
								a[i] = b[i] = s[i];
						MPI_Request req;
						switch (which) {
						case 0:
							CHECK_MPI(MPI_Ialltoall(sb, n, t, a, n, t,
							                        comm, &req));
							break;
						case 1:
							CHECK_MPI(MPI_Iallgather(sb, n, t, a, n, t,
							                         comm, &req));
							break;
						case 2:
							CHECK_MPI(MPI_Igather(sb, n, t, a, n, t,
							                      root, comm, &req));
							break;
						default:
							CHECK_MPI(MPI_Iscatter(s, n, t, rb, n, t,
							                       root, comm, &req));
						}
						complete(&req, (enum how)((*iter)++ % NHOW), comm);
						switch (which) {
						case 0:
							CHECK_MPI(MPI_Alltoall(sref, n, t, b, n, t,
							                       comm));
							break;
						case 1:
							CHECK_MPI(MPI_Allgather(sref, n, t, b, n, t,
							                        comm));
							break;
						case 2:
							CHECK_MPI(MPI_Gather(sref, n, t, b, n, t,
							                     root, comm));
							break;
						default:
							CHECK_MPI(MPI_Scatter(s, n, t, rref, n, t,
							                      root, comm));
						}
						if (which == 2 && rank != root)
							continue;
						CHECK(memcmp(a, b, sizeof(int) * len) == 0);
					}
	free(s);
	free(a);
	free(b);
}

/* Iscan, Iexscan, Ireduce_scatter_block (blocks of the count each) and
 * Ireduce_scatter (blocks of varied sizes, 0 on every third rank), in place
 * or not, for the three operations of check_reductions(). */
static void check_scans(MPI_Comm comm, MPI_Datatype vec, MPI_Op vop, MPI_Datatype pair, MPI_Op aff,
                        int *iter)
{
	int rank, size, cs[8];
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	int nc = counts(size, cs);
	size_t cap = 3 * ((size_t)BIG + (size_t)size) * (size_t)size + 3;
	int *s = malloc(sizeof(int) * cap), *a = malloc(sizeof(int) * cap),
	    *b = malloc(sizeof(int) * cap), *rcounts = malloc(sizeof(int) * (size_t)size);
	CHECK(s && a && b && rcounts);
	for (int c = 0; c < nc; c++)
		for (int kind = 0; kind < 3; kind++)
			/* scan, exscan, reduce_scatter_block, reduce_scatter */
			for (int which = 0; which < 4; which++)
				for (int ip = 0; ip < 2; ip++) {
					int n = cs[c];
					if (which >= 2 && n > BIG / size)
						n = BIG / size;
					/* The blocks: n each, or n + i on rank i but
					 * none on every third rank (which one moves
					 * with the count). */
					int total = 0;
					for (int i = 0; i < size; i++) {
						rcounts[i] = which == 3 && (i + c) % 3 == 1 ? 0
						             : which == 3                   ? n + i
						                                            : n;
						total += rcounts[i];
					}
					MPI_Datatype t = kind == 1   ? vec
					                 : kind == 2 ? pair
					                             : MPI_INT;
					MPI_Op op = kind == 2 ? aff : kind == 1 ? vop : MPI_SUM;
					int per = kind == 0 ? 1 : kind == 1 ? 3 : 2;
					int len = per * (which >= 2 ? total : n);
					/* Past the data, one element the result must not
					 * reach. */
					for (int i = 0; i < len + per; i++) {
						s[i] = kind == 2 ? (i % 2 ? rank + i : 2 * rank + 3)
						                 : rank * 1000 + i;
						a[i] = ip ? s[i] : -5;
						b[i] = -5;
					}
					const void *sb = ip ? MPI_IN_PLACE : s;
					MPI_Request req;
					if (which == 0)
						CHECK_MPI(MPI_Iscan(sb, a, n, t, op, comm, &req));
					else if (which == 1)
						CHECK_MPI(MPI_Iexscan(sb, a, n, t, op, comm, &req));
					else if (which == 2)
						CHECK_MPI(MPI_Ireduce_scatter_block(sb, a, n, t, op,
						                                    comm, &req));
					else
						CHECK_MPI(MPI_Ireduce_scatter(sb, a, rcounts, t, op,
						                              comm, &req));
					complete(&req, (enum how)((*iter)++ % NHOW), comm);
					if (which == 0)
						CHECK_MPI(MPI_Scan(s, b, n, t, op, comm));
					else if (which == 1)
						CHECK_MPI(MPI_Exscan(s, b, n, t, op, comm));
					else if (which == 2)
						CHECK_MPI(MPI_Reduce_scatter_block(s, b, n, t, op,
						                                   comm));
					else
						CHECK_MPI(MPI_Reduce_scatter(s, b, rcounts, t, op,
						                             comm));
					if (which == 1 && rank == 0)
						continue; /* undefined there */
					int cmp = which >= 2 ? per * rcounts[rank] : len;
					if (kind == 1 && ip)
						for (int i = 0; i < cmp; i++)
							if (i % 3)
								b[i] = s[i]; /* holes keep the input */
					if (!ip)
						cmp += per; /* and nothing written past it */
					CHECK(memcmp(a, b, sizeof(int) * (size_t)cmp) == 0);
				}
	free(s);
	free(a);
	free(b);
	free(rcounts);
}

/* Per-rank block sizes and displacements with a gap of one element after
 * each block (the gaps must stay untouched): block i of `v` holds
 * cnt[i] elements at dsp[i]; returns the elements the buffer spans. */
static int layout_v(int size, const int *cnt, int *dsp)
{
	int at = 0;
	for (int i = 0; i < size; i++) {
		dsp[i] = at;
		at += cnt[i] + 1;
	}
	return at;
}

/*
 * Whether piano runs the all-to-alls as graphs (PIANO_COLL=graph, or a
 * graph: list naming ialltoall). Open MPI 4.1.4's own MPI_Ialltoallv in
 * place gives wrong blocks (4 ranks, blocks of 3,000 ints, checked against
 * its blocking MPI_Alltoallv out of place), so the in-place v and w forms
 * are checked only where piano's graphs run them.
 */
static bool alltoall_graphs(void)
{
	const char *v = getenv("PIANO_COLL");
	return v && (!strcmp(v, "graph") || (!strncmp(v, "graph:", 6) && strstr(v, "ialltoall")));
}

/* Whether piano runs the reductions as graphs (PIANO_COLL=graph). */
static bool reduction_graphs(void)
{
	const char *v = getenv("PIANO_COLL");
	return v && !strcmp(v, "graph");
}

/* A sum over elements of a datatype of negative extent (one int each,
 * element k an int below element k - 1). */
static void down_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
	MPI_Aint lb, ext;
	MPI_Type_get_extent(*type, &lb, &ext);
	for (int i = 0; i < *len; i++)
		*(int *)((char *)inout + i * ext) += *(const int *)((const char *)in + i * ext);
}

/*
 * Iallreduce, Ireduce, Iscan, Iexscan and Ireduce_scatter_block of 3,000
 * and 5,000 elements (several segments; below and above the 16 KiB from
 * which a commutative allreduce goes by reduce-scatter) of MPI_INT resized
 * to an extent of -4 bytes: element k lies k ints below the buffer's
 * address. The operation is a sum, declared commutative and not (the
 * allreduce's doubling, tree and reduce-scatter, the reduce-scatter's
 * halving and pairwise exchange). The graphs' scratch must hold the
 * elements below their first; results are computed here, since both MPIs'
 * own reductions crash on such a datatype (only where piano runs the
 * reductions as graphs).
 */
static void check_reductions_down(MPI_Comm comm, int *iter)
{
	enum { NMAX = 5000, PAD = 8 };
	int rank, size;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	MPI_Datatype down;
	CHECK_MPI(MPI_Type_create_resized(MPI_INT, 0, -(MPI_Aint)sizeof(int), &down));
	CHECK_MPI(MPI_Type_commit(&down));
	int *s = malloc(sizeof(int) * (NMAX + 2 * PAD)),
	    *r = malloc(sizeof(int) * (NMAX + 2 * PAD));
	CHECK(s && r);
	static const int counts[] = { 3000, 5000 };
	for (int commute = 0; commute < 2; commute++) {
		MPI_Op op;
		CHECK_MPI(MPI_Op_create(down_sum, commute, &op));
		for (int c = 0; c < 2; c++)
			for (int kind = 0; kind < 5; kind++) {
				/* The reduce-scatter: a block of n / size elements each. */
				int n = kind == 4 ? counts[c] / size * size : counts[c];
				int rn = kind == 4 ? n / size : n;
				/* Element k at index top - k: indices PAD .. top. */
				const int top = n + PAD - 1, rtop = rn + PAD - 1;
				for (int i = 0; i < NMAX + 2 * PAD; i++) {
					s[i] = 1000 * rank + i;
					r[i] = -7;
				}
				int root = size - 1;
				MPI_Request req;
				if (kind == 0)
					CHECK_MPI(MPI_Iallreduce(&s[top], &r[top], n, down, op,
					                         comm, &req));
				else if (kind == 1)
					CHECK_MPI(MPI_Ireduce(&s[top], &r[top], n, down, op, root,
					                      comm, &req));
				else if (kind == 2)
					CHECK_MPI(MPI_Iscan(&s[top], &r[top], n, down, op, comm,
					                    &req));
				else if (kind == 3)
					CHECK_MPI(MPI_Iexscan(&s[top], &r[top], n, down, op, comm,
					                      &req));
				else
					CHECK_MPI(MPI_Ireduce_scatter_block(&s[top], &r[rtop], rn,
					                                    down, op, comm, &req));
				complete(&req, (enum how)((*iter)++ % NHOW), comm);
				/* Ranks whose result is defined, and how many ranks it sums. */
				int from = kind == 3 ? rank : kind == 2 ? rank + 1 : size;
				bool defined = (kind != 1 || rank == root) &&
				               (kind != 3 || rank > 0);
				for (int i = 0; i < NMAX + 2 * PAD; i++) {
					bool inside = i >= PAD && i <= rtop;
					/* The send index of the element received at i: the
					 * reduce-scatter's block of this rank. */
					int k = rtop - i + (kind == 4 ? rank * rn : 0),
					    si = top - k;
					int want = -7;
					if (inside && defined)
						want = from * si + 1000 * from * (from - 1) / 2;
					if (r[i] != want && (defined || kind == 1)) {
						fprintf(stderr,
						        "reduction %d (%d elements, %scommutative) "
						        "of a "
						        "negative extent, rank %d: [%d] %d, want "
						        "%d\n",
						        kind, n, commute ? "" : "non-", rank, i,
						        r[i], want);
						exit(1);
					}
				}
			}
		MPI_Op_free(&op);
	}
	free(s);
	free(r);
	MPI_Type_free(&down);
}

/* Ialltoallv, Iallgatherv, Igatherv, Iscatterv with blocks of varied sizes
 * (zero included) and gaps, in place where MPI allows it, every root. */
static void check_vexchanges(MPI_Comm comm, int *iter)
{
	int rank, size;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	static const int units[] = { 1, 7, 3000 };
	int *sc = malloc(sizeof(int) * 4 * (size_t)size), *sd = sc + size, *rc = sd + size,
	    *rd = rc + size;
	size_t cap = (3 * 3000 + 1) * (size_t)size + 1;
	int *s = malloc(sizeof(int) * cap), *a = malloc(sizeof(int) * cap),
	    *b = malloc(sizeof(int) * cap);
	CHECK(sc && s && a && b);
	for (int u = 0; u < 3; u++)
		for (int which = 0; which < 4; which++)
			for (int root = 0; root < (which >= 2 ? size : 1); root++)
				for (int inplace = 0; inplace < 2; inplace++) {
					if (which == 0 && inplace && !alltoall_graphs())
						continue;
					int n = units[u];
					for (int i = 0; i < size; i++) {
						/* alltoallv: rank r sends ((r + 2i) % 3) n to i;
						 * in place, (r + i) % 3 n both ways */
						sc[i] = which == 0
						                ? (rank + (2 - inplace) * i) % 3 * n
						                : i % 3 * n;
						rc[i] = which == 0
						                ? (i + (2 - inplace) * rank) % 3 * n
						                : i % 3 * n;
					}
					int slen = layout_v(size, sc, sd),
					    rlen = layout_v(size, rc, rd);
					for (int i = 0; i < slen; i++)
						s[i] = rank * 100000 + i;
					int ip = inplace &&
					         (which <= 1 || (which >= 2 && rank == root));
					int mine = rank % 3 * n; /* allgatherv, gatherv, scatterv */
					for (int i = 0; i < rlen; i++)
						a[i] = b[i] = -5;
					if (ip && which == 0) /* every block to send is in place */
						for (int i = 0; i < rlen; i++)
							a[i] = b[i] = rank * 100000 + i;
					if (ip && (which == 1 ||
					           which == 2)) /* this rank's block is in place */
						for (int i = 0; i < mine; i++)
							a[rd[rank] + i] = b[rd[rank] + i] = s[i];
					if (ip && which == 3) /* the root keeps its own block */
						for (int i = 0; i < mine; i++)
							a[i] = b[i] = s[sd[rank] + i];
					const void *sb = ip && which != 3 ? MPI_IN_PLACE : s;
					void *ra = ip && which == 3 ? MPI_IN_PLACE : a;
					void *rb = ip && which == 3 ? MPI_IN_PLACE : b;
					MPI_Request req;
					switch (which) {
					case 0:
						CHECK_MPI(MPI_Ialltoallv(sb, sc, sd, MPI_INT, a, rc,
						                         rd, MPI_INT, comm, &req));
						break;
					case 1:
						CHECK_MPI(MPI_Iallgatherv(sb, mine, MPI_INT, a, rc,
						                          rd, MPI_INT, comm, &req));
						break;
					case 2:
						CHECK_MPI(MPI_Igatherv(sb, mine, MPI_INT, a, rc, rd,
						                       MPI_INT, root, comm, &req));
						break;
					default:
						CHECK_MPI(MPI_Iscatterv(s, sc, sd, MPI_INT, ra,
						                        mine, MPI_INT, root, comm,
						                        &req));
					}
					complete(&req, (enum how)((*iter)++ % NHOW), comm);
					switch (which) {
					case 0:
						CHECK_MPI(MPI_Alltoallv(sb, sc, sd, MPI_INT, b, rc,
						                        rd, MPI_INT, comm));
						break;
					case 1:
						CHECK_MPI(MPI_Allgatherv(sb, mine, MPI_INT, b, rc,
						                         rd, MPI_INT, comm));
						break;
					case 2:
						CHECK_MPI(MPI_Gatherv(sb, mine, MPI_INT, b, rc, rd,
						                      MPI_INT, root, comm));
						break;
					default:
						CHECK_MPI(MPI_Scatterv(s, sc, sd, MPI_INT, rb, mine,
						                       MPI_INT, root, comm));
					}
					if (which == 2 && rank != root)
						continue;
					CHECK(memcmp(a, b,
					             sizeof(int) *
					                     (size_t)(which == 3 ? mine : rlen)) ==
					      0);
				}
	free(sc);
	free(s);
	free(a);
	free(b);
}

/* Byte displacements for alltoallw: block i, cnt[i] elements of type[i]
 * (int: one int; vec: three), laid out from the last block to the first
 * with a gap of one int after each; returns the ints the buffer spans. */
static int layout_w(int size, const int *cnt, const MPI_Datatype *type, MPI_Datatype vec, int *dsp)
{
	int at = 0;
	for (int i = size - 1; i >= 0; i--) {
		dsp[i] = at * (int)sizeof(int);
		at += cnt[i] * (type[i] == vec ? 3 : 1) + 1;
	}
	return at;
}

/* Ialltoallw: the counts of check_vexchanges()'s alltoallv (0 between some
 * pairs) in blocks of 0, 1, 7 and 10,000 elements, a datatype per block
 * (MPI_INT or the vector type, each side choosing its own, so a rank's own
 * block is copied between the two) and byte displacements; then in place
 * (each pair's count and type the same both ways). */
static void check_wexchange(MPI_Comm comm, MPI_Datatype vec, int *iter)
{
	int rank, size;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	static const int units[] = { 0, 1, 7, BIG / 4 };
	int *sc = malloc(sizeof(int) * 4 * (size_t)size), *sd = sc + size, *rc = sd + size,
	    *rd = rc + size;
	MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * 2 * (size_t)size), *rt = st + size;
	size_t cap = (3 * 2 * (size_t)(BIG / 4) + 1) * (size_t)size;
	int *s = malloc(sizeof(int) * cap), *a = malloc(sizeof(int) * cap),
	    *b = malloc(sizeof(int) * cap);
	CHECK(sc && st && s && a && b);
	for (int k = 0; k < (alltoall_graphs() ? 8 : 4); k++) {
		int n = units[k % 4], ip = k >= 4;
		for (int i = 0; i < size; i++) {
			/* in place: the same count and type both ways */
			sc[i] = (rank + (2 - ip) * i) % 3 * n;
			rc[i] = (i + (2 - ip) * rank) % 3 * n;
			st[i] = (rank + i) % 2 ? vec : MPI_INT;
			rt[i] = (i + ip * rank) % 2 ? vec : MPI_INT;
		}
		int slen = layout_w(size, sc, st, vec, sd), rlen = layout_w(size, rc, rt, vec, rd);
		for (int i = 0; i < slen; i++)
			s[i] = rank * 100000 + i;
		for (int i = 0; i < rlen; i++)
			a[i] = b[i] = ip ? rank * 100000 + i : -5;
		const void *sb = ip ? MPI_IN_PLACE : s;
		MPI_Request req;
		CHECK_MPI(MPI_Ialltoallw(sb, sc, sd, st, a, rc, rd, rt, comm, &req));
		complete(&req, (enum how)((*iter)++ % NHOW), comm);
		CHECK_MPI(MPI_Alltoallw(sb, sc, sd, st, b, rc, rd, rt, comm));
		CHECK(memcmp(a, b, sizeof(int) * (size_t)rlen) == 0);
	}
	free(sc);
	free(st);
	free(s);
	free(a);
	free(b);
}

static void check_barrier(MPI_Comm comm, int *iter)
{
	for (int i = 0; i < 20; i++) {
		MPI_Request req;
		CHECK_MPI(MPI_Ibarrier(comm, &req));
		complete(&req, (enum how)((*iter)++ % NHOW), comm);
	}
}

/* An in-place all-to-all of more elements in all than an int counts
 * (INT_MAX / size + 1 per block): its blocks are staged one by one. The
 * elements are of an empty datatype, so that the test needs no memory;
 * counting the staging copy's elements in an int makes the call fail. */
static void check_alltoall_many(MPI_Comm comm)
{
	int size, buf[1] = { 0 };
	MPI_Comm_size(comm, &size);
	if (size < 2)
		return;
	MPI_Datatype empty;
	CHECK_MPI(MPI_Type_contiguous(0, MPI_INT, &empty));
	CHECK_MPI(MPI_Type_commit(&empty));
	MPI_Request req;
	CHECK_MPI(MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, buf, INT_MAX / size + 1, empty,
	                        comm, &req));
	CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
	CHECK(buf[0] == 0);
	MPI_Type_free(&empty);
}

/* Three collectives on three communicators in flight at once. */
static void check_overlapping(MPI_Comm a, MPI_Comm b)
{
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int x = rank, y = 0, z[2] = { rank, 0 };
	MPI_Request r[3];
	CHECK_MPI(MPI_Ibcast(&y, 1, MPI_INT, 0, a, &r[0]));
	CHECK_MPI(MPI_Iallreduce(&x, &z[1], 1, MPI_INT, MPI_MAX, b, &r[1]));
	CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &r[2]));
	CHECK_MPI(MPI_Waitall(3, r, MPI_STATUSES_IGNORE));
	int brank, bsize;
	MPI_Comm_rank(b, &brank);
	MPI_Comm_size(b, &bsize);
	int want;
	CHECK_MPI(MPI_Allreduce(&x, &want, 1, MPI_INT, MPI_MAX, b));
	CHECK(z[1] == want);
}

int main(int argc, char **argv)
{
	int provided, rank, size;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Datatype vec, pair;
	CHECK_MPI(MPI_Type_vector(1, 1, 3, MPI_INT, &vec)); /* one int, extent 3 ints below */
	MPI_Datatype vec3;
	CHECK_MPI(MPI_Type_create_resized(vec, 0, 3 * sizeof(int), &vec3));
	CHECK_MPI(MPI_Type_commit(&vec3));
	CHECK_MPI(MPI_Type_contiguous(2, MPI_UNSIGNED, &pair));
	CHECK_MPI(MPI_Type_commit(&pair));
	MPI_Op aff, vop;
	CHECK_MPI(MPI_Op_create(affine, 0, &aff));
	CHECK_MPI(MPI_Op_create(vsum, 1, &vop));

	int iter = 0;
	MPI_Comm dup, split;
	CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, size - rank, &split));
	MPI_Comm comms[3] = { MPI_COMM_WORLD, dup, split };
	/* "light": MPI_COMM_WORLD only, for the oversubscribed runs (MPICH's
	 * ranks spin for every blocking collective of the reference). */
	int ncomms = argc > 1 && !strcmp(argv[1], "light") ? 1 : 3;
	for (int c = 0; c < ncomms; c++) {
		check_barrier(comms[c], &iter);
		check_bcast(comms[c], vec3, &iter);
		check_bcast_mixed(comms[c], vec3, &iter);
		check_bcast_pairs(comms[c]);
		check_reductions(comms[c], vec3, vop, pair, aff, &iter);
		check_scans(comms[c], vec3, vop, pair, aff, &iter);
		if (reduction_graphs())
			check_reductions_down(comms[c], &iter);
		check_exchanges(comms[c], vec3, &iter);
		check_vexchanges(comms[c], &iter);
		check_wexchange(comms[c], vec3, &iter);
	}
	check_alltoall_many(MPI_COMM_WORLD);
	check_overlapping(dup, split);
	CHECK_MPI(MPI_Comm_free(&dup));
	/* A fresh communicator's first collective waits for its shadow. */
	CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &dup));
	check_overlapping(dup, split);
	CHECK_MPI(MPI_Comm_free(&dup));
	CHECK_MPI(MPI_Comm_free(&split));
	MPI_Op_free(&aff);
	MPI_Op_free(&vop);
	MPI_Type_free(&vec);
	MPI_Type_free(&vec3);
	MPI_Type_free(&pair);
	if (rank == 0)
		printf("coll graph: all checks passed\n");
	MPI_Finalize();
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Graph engine: large reductions and copies shared with idle threads
 * (docs/coll.md, "Shared reductions"), on one rank (MPI_COMM_SELF).
 *
 * 1. Helpers: a reduction of 8 pieces whose user-defined operation, on the
 *    thread that started the graph, spins until another thread has run a
 *    piece of it. Only a helper can: the starting thread holds the graph's
 *    lock, and the other pieces are still unclaimed while it spins. Fails
 *    after `limit` seconds (argument, default 20) with "no idle thread took
 *    a piece": with PIANO_COLL_SHARE=0 (test graph_share_off_fails).
 * Both run with PIANO_COLL_SHARE=4096, so that graphs of less than a
 * megabyte are shared (pieces of 64 KiB).
 * 2. Results, each against MPI_Reduce_local or memcpy of the whole:
 *    - three independent MPI_SUM reductions of doubles, ready at once, of
 *      an odd count (the last piece short), then a fourth that depends on
 *      them, and a dense copy of their sum;
 *    - a non-commutative user-defined operation on a vector type (two ints
 *      8 bytes apart, extent 12): each piece starts at its element's
 *      extent, and the gaps stay untouched;
 *    - an overlapping copy (as in place), which is never cut in pieces;
 *    each graph run twice (restart with the same buffers reset).
 * 3. A failing CALC beside a shared reduction: the wait reports the CALC's
 *    failure, then the graph runs again with the CALC succeeding and the
 *    reduction's result is right.
 */
#include "mpitest.h"

#include <piano/graph.h>
#include <pthread.h>
#include <string.h>

static pthread_t starter;
static _Atomic int helper_ran;
static _Atomic int spin_failed;
static double limit_s = 20.0;

static double now_s(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Sum of doubles; on the starting thread, waits first for a helper. */
static void rendezvous_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
	(void)type;
	if (pthread_equal(pthread_self(), starter)) {
		double t0 = now_s();
		while (!atomic_load(&helper_ran) && !atomic_load(&spin_failed))
			if (now_s() - t0 > limit_s)
				atomic_store(&spin_failed, 1);
	} else {
		atomic_store(&helper_ran, 1);
	}
	for (int i = 0; i < *len; i++)
		((double *)inout)[i] += ((const double *)in)[i];
}

static void check_helpers(void)
{
	enum { N = 8 * 8192 }; /* 8 pieces of 64 KiB */
	double *a = malloc(N * sizeof(double)), *b = malloc(N * sizeof(double));
	CHECK(a && b);
	for (int i = 0; i < N; i++) {
		a[i] = i;
		b[i] = 2.0 * i;
	}
	MPI_Op op;
	CHECK_MPI(MPI_Op_create(rendezvous_sum, 1, &op));
	piano_graph_t *g;
	int node;
	CHECK(piano_graph_create(MPI_COMM_SELF, &g) == 0);
	CHECK(piano_graph_add_reduce(g, a, b, N, MPI_DOUBLE, op, &node) == 0);
	CHECK(piano_graph_commit(g) == 0);
	starter = pthread_self();
	CHECK(piano_graph_start(g) == 0);
	CHECK(piano_graph_wait(g) == 0);
	CHECK(piano_graph_free(g) == 0);
	if (atomic_load(&spin_failed)) {
		printf("graph share: no idle thread took a piece in %.0f s\n", limit_s);
		exit(1);
	}
	for (int i = 0; i < N; i++)
		if (b[i] != 3.0 * i) {
			fprintf(stderr, "helpers: element %d is %g, want %g\n", i, b[i], 3.0 * i);
			exit(1);
		}
	MPI_Op_free(&op);
	free(a);
	free(b);
}

/* Non-commutative: inout = 3 * in + inout, on pairs of ints 8 bytes apart
 * (the type below: elements every 12 bytes). */
static void affine(void *in, void *inout, int *len, MPI_Datatype *type)
{
	(void)type;
	for (int i = 0; i < *len; i++)
		for (int k = 0; k < 3; k += 2) {
			const int *x = (const int *)in + 3 * i + k;
			int *y = (int *)inout + 3 * i + k;
			*y = 3 * *x + *y;
		}
}

#define ND 100003 /* doubles: 12 pieces of 8192 and a short one */
#define NV 10001  /* vector elements (8 bytes each): a piece of 8192 and a short one */

static void fail_at(const char *what, long i)
{
	fprintf(stderr, "%s: element %ld wrong\n", what, i);
	exit(1);
}

static void check_results(void)
{
	double *x[4], *want = malloc(ND * sizeof(double)), *copy = malloc(ND * sizeof(double));
	CHECK(want && copy);
	for (int k = 0; k < 4; k++)
		CHECK((x[k] = malloc(ND * sizeof(double))));
	double *in = malloc(ND * sizeof(double));
	CHECK(in);
	MPI_Datatype pair;
	CHECK_MPI(MPI_Type_vector(2, 1, 2, MPI_INT, &pair));
	CHECK_MPI(MPI_Type_commit(&pair));
	MPI_Op aff;
	CHECK_MPI(MPI_Op_create(affine, 0, &aff));
	int *vin = malloc(3 * NV * sizeof(int)), *vio = malloc(3 * NV * sizeof(int)),
	    *vwant = malloc(3 * NV * sizeof(int));
	CHECK(vin && vio && vwant);
	enum { NO = 3000 }; /* overlapping copy: ints [0, NO) to [16, NO + 16) */
	int *ov = malloc((NO + 16) * sizeof(int));
	CHECK(ov);

	piano_graph_t *g;
	int r[4], c, v, o;
	CHECK(piano_graph_create(MPI_COMM_SELF, &g) == 0);
	for (int k = 0; k < 3; k++)
		CHECK(piano_graph_add_reduce(g, in, x[k], ND, MPI_DOUBLE, MPI_SUM, &r[k]) == 0);
	/* x3 += x0, after the three: then x3 += x1 and x2 would need more
	 * nodes; one dependent reduction is what the test needs. */
	CHECK(piano_graph_add_reduce(g, x[0], x[3], ND, MPI_DOUBLE, MPI_SUM, &r[3]) == 0);
	for (int k = 0; k < 3; k++)
		CHECK(piano_graph_add_edge(g, r[k], r[3]) == 0);
	CHECK(piano_graph_add_copy(g, x[3], ND, MPI_DOUBLE, copy, ND, MPI_DOUBLE, &c) == 0);
	CHECK(piano_graph_add_edge(g, r[3], c) == 0);
	CHECK(piano_graph_add_reduce(g, vin, vio, NV, pair, aff, &v) == 0);
	CHECK(piano_graph_add_copy(g, ov, NO, MPI_INT, ov + 16, NO, MPI_INT, &o) == 0);
	CHECK(piano_graph_commit(g) == 0);

	for (int run = 0; run < 2; run++) {
		for (long i = 0; i < ND; i++) {
			in[i] = (double)(i % 1000) + run;
			for (int k = 0; k < 4; k++)
				x[k][i] = (double)(k * 7 + i % 13);
		}
		for (long i = 0; i < 3L * NV; i++) {
			vin[i] = (int)(i % 101) - 50 + run;
			vio[i] = (int)(i % 37) - 18;
			vwant[i] = vio[i];
		}
		for (int i = 0; i < NO + 16; i++)
			ov[i] = i * 5 + run;
		CHECK(piano_graph_start(g) == 0);
		CHECK(piano_graph_wait(g) == 0);
		/* The same by the MPI, whole. */
		for (int k = 0; k < 3; k++) {
			for (long i = 0; i < ND; i++)
				want[i] = (double)(k * 7 + i % 13);
			CHECK_MPI(MPI_Reduce_local(in, want, ND, MPI_DOUBLE, MPI_SUM));
			for (long i = 0; i < ND; i++)
				if (x[k][i] != want[i])
					fail_at("independent sums", i);
		}
		for (long i = 0; i < ND; i++)
			want[i] = (double)(3 * 7 + i % 13);
		CHECK_MPI(MPI_Reduce_local(x[0], want, ND, MPI_DOUBLE, MPI_SUM));
		for (long i = 0; i < ND; i++)
			if (x[3][i] != want[i] || copy[i] != want[i])
				fail_at("dependent sum and its copy", i);
		CHECK_MPI(MPI_Reduce_local(vin, vwant, NV, pair, aff));
		for (long i = 0; i < 3L * NV; i++)
			if (vio[i] != vwant[i])
				fail_at("vector type, non-commutative", i);
		for (int i = 0; i < 16; i++)
			if (ov[i] != i * 5 + run)
				fail_at("overlapping copy, head", i);
		for (int i = 0; i < NO; i++)
			if (ov[i + 16] != i * 5 + run)
				fail_at("overlapping copy", i);
	}
	CHECK(piano_graph_free(g) == 0);
	MPI_Op_free(&aff);
	MPI_Type_free(&pair);
	for (int k = 0; k < 4; k++)
		free(x[k]);
	free(in);
	free(want);
	free(copy);
	free(vin);
	free(vio);
	free(vwant);
	free(ov);
}

static _Atomic int calc_fails;
static int calc(void *arg)
{
	(void)arg;
	return atomic_load(&calc_fails);
}

static void check_failure(void)
{
	double *in = malloc(ND * sizeof(double)), *io = malloc(ND * sizeof(double));
	CHECK(in && io);
	piano_graph_t *g;
	int r, k;
	CHECK(piano_graph_create(MPI_COMM_SELF, &g) == 0);
	CHECK(piano_graph_add_reduce(g, in, io, ND, MPI_DOUBLE, MPI_SUM, &r) == 0);
	CHECK(piano_graph_add_calc(g, calc, NULL, &k) == 0);
	CHECK(piano_graph_commit(g) == 0);
	for (long i = 0; i < ND; i++)
		in[i] = io[i] = (double)i;
	atomic_store(&calc_fails, 1);
	CHECK(piano_graph_start(g) == 0);
	CHECK(piano_graph_wait(g) == PIANO_ECANCELED);
	atomic_store(&calc_fails, 0);
	for (long i = 0; i < ND; i++)
		in[i] = io[i] = (double)i;
	CHECK(piano_graph_start(g) == 0);
	CHECK(piano_graph_wait(g) == 0);
	for (long i = 0; i < ND; i++)
		if (io[i] != 2.0 * (double)i)
			fail_at("after a failed run", i);
	CHECK(piano_graph_free(g) == 0);
	free(in);
	free(io);
}

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	if (provided < MPI_THREAD_MULTIPLE) {
		MPI_Finalize();
		return 77;
	}
	const char *mode = argc > 1 ? argv[1] : "helpers";
	if (argc > 2)
		limit_s = atof(argv[2]);
	if (!strcmp(mode, "helpers")) {
		check_helpers();
		printf("graph share: an idle thread took a piece\n");
	} else {
		check_results();
		check_failure();
		printf("graph share: results as MPI_Reduce_local and memcpy, failure and "
		       "restart\n");
	}
	MPI_Finalize();
	return 0;
}

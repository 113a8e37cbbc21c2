/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Graph engine: errors and reuse, on one rank (MPI_COMM_SELF). A cycle
 * fails the commit; bad node indices, bad peers, calls in the wrong state
 * (add after commit, start before commit or while running, free while
 * running) are refused; a failing MPI call inside a node (a reduction with
 * an unsupported op; a truncated receive on MPICH) and a failing callback
 * fail the run, reported by wait, and the graph can be started again; a
 * graph restarted 100 times; a chain of 300000 local nodes (a recursive
 * release would overflow the stack).
 */
#include "mpitest.h"

#include <piano/graph.h>
#include <string.h>

static int count_calc(void *arg)
{
	++*(int *)arg;
	return 0;
}

static int fail_calc(void *arg) { return *(int *)arg; }

static void check_structure(void)
{
	piano_graph_t *g;
	int a, b, c, n;
	CHECK(piano_graph_create(MPI_COMM_NULL, &g) == PIANO_EINVAL);
	CHECK(piano_graph_create(MPI_COMM_SELF, &g) == 0);
	CHECK(piano_graph_add_calc(g, count_calc, &n, &a) == 0 && a == 0);
	CHECK(piano_graph_add_calc(g, count_calc, &n, &b) == 0 && b == 1);
	CHECK(piano_graph_add_calc(g, count_calc, &n, &c) == 0 && c == 2);
	CHECK(piano_graph_add_edge(g, a, 3) == PIANO_ERANGE);
	CHECK(piano_graph_add_edge(g, -1, a) == PIANO_ERANGE);
	CHECK(piano_graph_add_edge(g, a, a) == PIANO_EINVAL);
	CHECK(piano_graph_add_send(g, &n, 1, MPI_INT, 1, 0, NULL) == PIANO_ERANGE);
	CHECK(piano_graph_add_send(g, &n, 1, MPI_INT, 0, -5, NULL) == PIANO_EINVAL);
	CHECK(piano_graph_add_calc(g, NULL, NULL, NULL) == PIANO_EINVAL);
	CHECK(piano_graph_start(g) == PIANO_ESTATE); /* not committed */
	CHECK(piano_graph_add_edge(g, a, b) == 0);
	CHECK(piano_graph_add_edge(g, b, c) == 0);
	CHECK(piano_graph_add_edge(g, c, a) == 0);
	CHECK(piano_graph_commit(g) == PIANO_EINVAL); /* a -> b -> c -> a */
	CHECK(piano_graph_start(g) == PIANO_ESTATE);
	CHECK(piano_graph_free(g) == 0);

	/* Without the cycle: runs; nothing may be added any more. */
	CHECK(piano_graph_create(MPI_COMM_SELF, &g) == 0);
	n = 0;
	for (int i = 0; i < 3; i++)
		CHECK(piano_graph_add_calc(g, count_calc, &n, NULL) == 0);
	CHECK(piano_graph_add_edge(g, 0, 1) == 0 && piano_graph_add_edge(g, 1, 2) == 0);
	int flag = 0;
	CHECK(piano_graph_test(g, &flag) == PIANO_ESTATE);
	CHECK(piano_graph_commit(g) == 0);
	CHECK(piano_graph_commit(g) == PIANO_ESTATE);
	CHECK(piano_graph_add_calc(g, count_calc, &n, NULL) == PIANO_ESTATE);
	CHECK(piano_graph_add_edge(g, 0, 2) == PIANO_ESTATE);
	CHECK(piano_graph_wait(g) == PIANO_ESTATE); /* never started */
	CHECK(piano_graph_start(g) == 0);
	CHECK(piano_graph_wait(g) == 0 && n == 3);
	CHECK(piano_graph_free(g) == 0);
}

/* A graph that waits for a message to itself: running until it is sent. */
static void check_running(void)
{
	piano_graph_t *g;
	int in = 0, out = 42, n = 0, flag = 1, recv, calc;
	CHECK(piano_graph_create(MPI_COMM_SELF, &g) == 0);
	CHECK(piano_graph_add_recv(g, &in, 1, MPI_INT, 0, 3, &recv) == 0);
	CHECK(piano_graph_add_calc(g, count_calc, &n, &calc) == 0);
	CHECK(piano_graph_add_edge(g, recv, calc) == 0);
	CHECK(piano_graph_commit(g) == 0);
	for (int run = 0; run < 100; run++) {
		in = 0;
		out = run + 1;
		CHECK(piano_graph_start(g) == 0);
		if (run == 0) {
			CHECK(piano_graph_start(g) == PIANO_ESTATE); /* running */
			CHECK(piano_graph_free(g) == PIANO_EBUSY);
			CHECK(piano_graph_error(g, NULL, NULL) == PIANO_EBUSY);
			CHECK(piano_graph_test(g, &flag) == 0 && flag == 0);
			CHECK(n == 0);
		}
		MPI_Request req;
		CHECK_MPI(MPI_Isend(&out, 1, MPI_INT, 0, 3, MPI_COMM_SELF, &req));
		CHECK(piano_graph_wait(g) == 0);
		CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
		CHECK(in == run + 1 && n == run + 1);
	}
	CHECK(piano_graph_test(g, &flag) == 0 && flag == 1);
	CHECK(piano_graph_free(g) == 0);
}

/* A node's MPI call fails: a reduction with an operation the datatype does
 * not support, and (MPICH) a truncated receive, reported by PMPI_Testsome
 * in its status (Open MPI 4.1.4 completes that receive without an error,
 * natively too). */
static void check_failures(void)
{
	MPI_Comm self;
	CHECK_MPI(MPI_Comm_dup(MPI_COMM_SELF, &self));
	/* The MPI raises the errors of a node's calls on the handler it
	 * chooses (the request's communicator, MPI_COMM_SELF for
	 * MPI_Reduce_local, MPI_COMM_WORLD for MPICH's Testsome): the
	 * application's choice decides whether they abort (docs/coll.md). */
	CHECK_MPI(MPI_Comm_set_errhandler(self, MPI_ERRORS_RETURN));
	CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN));
	CHECK_MPI(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
	int n = 0, red, calc, code, node, cls;
	double x[2] = { 1, 2 }, y[2] = { 3, 4 };
	piano_graph_t *g;
	CHECK(piano_graph_create(self, &g) == 0);
	CHECK(piano_graph_add_reduce(g, x, y, 2, MPI_DOUBLE, MPI_BAND, &red) == 0);
	CHECK(piano_graph_add_calc(g, count_calc, &n, &calc) == 0);
	CHECK(piano_graph_add_edge(g, red, calc) == 0);
	CHECK(piano_graph_commit(g) == 0);
	CHECK(piano_graph_start(g) == 0);
	CHECK(piano_graph_wait(g) == PIANO_ESYS);
	CHECK(piano_graph_error(g, &code, &node) == 0 && node == red);
	CHECK_MPI(MPI_Error_class(code, &cls));
	CHECK(cls == MPI_ERR_OP);
	CHECK(n == 0); /* the dependent node did not run */
	CHECK(piano_graph_free(g) == 0);

#if defined(MPICH_VERSION)
	int out[4] = { 1, 2, 3, 4 }, in[4] = { 0 }, recv;
	CHECK(piano_graph_create(self, &g) == 0);
	CHECK(piano_graph_add_recv(g, in, 2, MPI_INT, 0, 9, &recv) == 0);
	CHECK(piano_graph_add_calc(g, count_calc, &n, &calc) == 0);
	CHECK(piano_graph_add_edge(g, recv, calc) == 0);
	CHECK(piano_graph_commit(g) == 0);
	CHECK(piano_graph_start(g) == 0);
	CHECK_MPI(MPI_Send(out, 4, MPI_INT, 0, 9, self));
	CHECK(piano_graph_wait(g) == PIANO_ESYS);
	CHECK(piano_graph_error(g, &code, &node) == 0 && node == recv);
	CHECK_MPI(MPI_Error_class(code, &cls));
	CHECK(cls == MPI_ERR_TRUNCATE);
	CHECK(n == 0);
	/* Failed is not running: it starts again, and completes. */
	CHECK(piano_graph_start(g) == 0);
	CHECK_MPI(MPI_Send(out, 2, MPI_INT, 0, 9, self));
	CHECK(piano_graph_wait(g) == 0 && n == 1 && in[1] == 2);
	CHECK(piano_graph_error(g, &code, &node) == 0 && code == 0 && node == -1);
	CHECK(piano_graph_free(g) == 0);
	n = 0;
#endif

	/* A callback fails. */
	int why = 17;
	CHECK(piano_graph_create(self, &g) == 0);
	CHECK(piano_graph_add_calc(g, fail_calc, &why, &calc) == 0);
	CHECK(piano_graph_add_calc(g, count_calc, &n, NULL) == 0);
	CHECK(piano_graph_add_edge(g, calc, 1) == 0);
	CHECK(piano_graph_commit(g) == 0);
	CHECK(piano_graph_start(g) == 0);
	CHECK(piano_graph_wait(g) == PIANO_ECANCELED);
	CHECK(piano_graph_error(g, &code, &node) == 0 && code == 17 && node == calc && n == 0);
	/* Failed is not running: it starts again, and completes. */
	why = 0;
	CHECK(piano_graph_start(g) == 0);
	CHECK(piano_graph_wait(g) == 0 && n == 1);
	CHECK(piano_graph_error(g, &code, &node) == 0 && code == 0 && node == -1);
	CHECK(piano_graph_free(g) == 0);
	MPI_Comm_free(&self);
}

/* A long chain of local nodes, released without recursion. */
static void check_chain(void)
{
	enum { N = 300000 };
	int n = 0;
	piano_graph_t *g;
	CHECK(piano_graph_create(MPI_COMM_SELF, &g) == 0);
	for (int i = 0; i < N; i++) {
		CHECK(piano_graph_add_calc(g, count_calc, &n, NULL) == 0);
		if (i)
			CHECK(piano_graph_add_edge(g, i - 1, i) == 0);
	}
	CHECK(piano_graph_commit(g) == 0);
	for (int run = 1; run <= 2; run++) {
		CHECK(piano_graph_start(g) == 0);
		CHECK(piano_graph_wait(g) == 0 && n == run * N);
	}
	CHECK(piano_graph_free(g) == 0);
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	check_structure();
	check_running();
	check_failures();
	check_chain();
	CHECK(piano_graph_free(NULL) == PIANO_EINVAL);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (rank == 0)
		printf("graph errors: all checks passed\n");
	MPI_Finalize();
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Graph engine: deterministic proof of background progress. Rank 1 starts
 * a graph (receive 16 MiB from rank 0, then send it back, a node that
 * depends on the receive) and spins WITHOUT calling MPI until rank 0
 * reports, through MPI shared memory, that it got the message back. Both
 * rendezvous need rank 1's MPI, and the send must be posted by whoever
 * advances the graph once the receive has completed: this finishes only if
 * piano advances the graph in the background. Rank 0 sends only once rank
 * 1's start has returned (flag 1), so the receive cannot complete inside
 * the start's own step; it reports the message back with flag 2. A
 * generous timeout turns "no progress" into a failure.
 *
 * usage: test_graph_progress [timeout_s (default 20)]
 */
#include "mpitest.h"

#include <piano/graph.h>
#include <stdatomic.h>
#include <string.h>

#define LEN (16 << 20)

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv)
{
	int provided, rank, size;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	CHECK(size == 2);
	double timeout_s = argc > 1 ? atof(argv[1]) : 20.0;

	MPI_Comm node;
	MPI_Win win;
	_Atomic int *flag = shared_flag(&node, &win);
	MPI_Barrier(MPI_COMM_WORLD);

	char *buf = malloc(LEN), *back = malloc(LEN);
	CHECK(buf && back);
	memset(buf, rank == 0 ? 'x' : 0, LEN);
	memset(back, 0, LEN);
	int ok = 1;
	if (rank == 0) {
		while (atomic_load(flag) != 1) /* rank 1's graph has started */
			;
		MPI_Request reqs[2];
		CHECK_MPI(MPI_Irecv(back, LEN, MPI_CHAR, 1, 8, MPI_COMM_WORLD, &reqs[0]));
		CHECK_MPI(MPI_Isend(buf, LEN, MPI_CHAR, 1, 7, MPI_COMM_WORLD, &reqs[1]));
		CHECK_MPI(MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE));
		CHECK(back[0] == 'x' && back[LEN - 1] == 'x');
		atomic_store(flag, 2);
	} else {
		piano_graph_t *g;
		int recv, send;
		CHECK(piano_graph_create(MPI_COMM_WORLD, &g) == 0);
		CHECK(piano_graph_add_recv(g, buf, LEN, MPI_CHAR, 0, 7, &recv) == 0);
		CHECK(piano_graph_add_send(g, buf, LEN, MPI_CHAR, 0, 8, &send) == 0);
		CHECK(piano_graph_add_edge(g, recv, send) == 0);
		CHECK(piano_graph_commit(g) == 0);
		CHECK(piano_graph_start(g) == 0);
		atomic_store(flag, 1);
		double t0 = now();
		while (atomic_load(flag) != 2) /* no MPI call in this loop */
			if (now() - t0 > timeout_s) {
				fprintf(stderr,
				        "rank 1: no background progress: rank 0 did not get "
				        "the message back within %.0f s\n",
				        timeout_s);
				ok = 0;
				break;
			}
		if (ok)
			printf("rank 1: rank 0 got 16 MiB back through the graph after %.3f s "
			       "without any MPI call on rank 1\n",
			       now() - t0);
		CHECK(piano_graph_wait(g) == 0);
		CHECK(buf[0] == 'x' && buf[LEN - 1] == 'x');
		CHECK(piano_graph_free(g) == 0);
	}
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	MPI_Win_free(&win);
	MPI_Comm_free(&node);
	free(buf);
	free(back);
	MPI_Finalize();
	return ok ? 0 : 1;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Several threads waiting on graphs cost one poller: on rank 0, NT threads
 * each wait on a graph of their own whose data rank 1 sends only after
 * HOLD_MS, and all but the first to wait must sleep meanwhile (thread CPU
 * time under a tenth of the wait's wall time). Spinning waits share the
 * rank's CPUs: a third of one each when Open MPI binds the rank to a core,
 * and they fail.
 *
 * usage: test_graph_wait_sleep api|mpi
 *   api: piano_graph_wait() on a graph holding one receive;
 *   mpi: MPI_Wait() on an MPI_Ibcast rooted at rank 1 (run it with
 *        PIANO_COLL=graph: the request is a graph collective's).
 */
#include "mpitest.h"

#include <piano/graph.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#define NT 3
#define HOLD_MS 600
#define LEN 1024

static int use_api;
static pthread_barrier_t ready;

struct waiter {
	MPI_Comm comm;
	int buf[LEN];
	double wall, cpu;
};

static double clock_s(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void *wait_thread(void *arg)
{
	struct waiter *w = arg;
	piano_graph_t *g = NULL;
	MPI_Request req = MPI_REQUEST_NULL;
	if (use_api) {
		CHECK(piano_graph_create(w->comm, &g) == 0);
		CHECK(piano_graph_add_recv(g, w->buf, LEN, MPI_INT, 1, 5, NULL) == 0);
		CHECK(piano_graph_commit(g) == 0);
		CHECK(piano_graph_start(g) == 0);
	} else {
		CHECK_MPI(MPI_Ibcast(w->buf, LEN, MPI_INT, 1, w->comm, &req));
	}
	pthread_barrier_wait(&ready);
	double t0 = clock_s(CLOCK_MONOTONIC), c0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
	if (use_api)
		CHECK(piano_graph_wait(g) == 0);
	else
		CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
	w->cpu = clock_s(CLOCK_THREAD_CPUTIME_ID) - c0;
	w->wall = clock_s(CLOCK_MONOTONIC) - t0;
	if (g)
		CHECK(piano_graph_free(g) == 0);
	return NULL;
}

int main(int argc, char **argv)
{
	int rank = init_pair_multiple(&argc, &argv);
	if (rank < 0)
		return 77;
	CHECK(argc > 1 && (!strcmp(argv[1], "api") || !strcmp(argv[1], "mpi")));
	use_api = !strcmp(argv[1], "api");

	static struct waiter w[NT];
	for (int t = 0; t < NT; t++) {
		CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &w[t].comm));
		for (int i = 0; i < LEN; i++)
			w[t].buf[i] = rank == 1 ? t * LEN + i : -1;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	int ok = 1;
	if (rank == 1) {
		/* Rank 0's threads are all waiting by then. */
		usleep(HOLD_MS * 1000);
		MPI_Request reqs[NT];
		for (int t = 0; t < NT; t++)
			if (use_api)
				CHECK_MPI(MPI_Isend(w[t].buf, LEN, MPI_INT, 0, 5, w[t].comm,
				                    &reqs[t]));
			else
				CHECK_MPI(
				        MPI_Ibcast(w[t].buf, LEN, MPI_INT, 1, w[t].comm, &reqs[t]));
		CHECK_MPI(MPI_Waitall(NT, reqs, MPI_STATUSES_IGNORE));
	} else {
		pthread_t th[NT];
		CHECK(pthread_barrier_init(&ready, NULL, NT) == 0);
		for (int t = 0; t < NT; t++)
			CHECK(pthread_create(&th[t], NULL, wait_thread, &w[t]) == 0);
		int asleep = 0;
		for (int t = 0; t < NT; t++) {
			CHECK(pthread_join(th[t], NULL) == 0);
			for (int i = 0; i < LEN; i++)
				CHECK(w[t].buf[i] == t * LEN + i);
			int slept = w[t].cpu < w[t].wall / 10;
			asleep += slept;
			printf("rank 0: waiter %d: %.3f s CPU in a %.3f s wait (%s)\n", t, w[t].cpu,
			       w[t].wall, slept ? "slept" : "polled");
		}
		if (asleep < NT - 1) {
			printf("rank 0: %d of %d waiters slept, %d expected\n", asleep, NT, NT - 1);
			ok = 0;
		}
		CHECK(pthread_barrier_destroy(&ready) == 0);
	}
	for (int t = 0; t < NT; t++)
		MPI_Comm_free(&w[t].comm);
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (rank == 0 && ok)
		printf("graph wait sleep: %s waits passed\n", use_api ? "graph" : "MPI");
	MPI_Finalize();
	return ok ? 0 : 1;
}

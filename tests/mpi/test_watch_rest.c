/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The socket watcher rests when its wake-ups move no data (docs/mpi.md,
 * "Every core busy: the socket watcher"): rank 1 posts a receive large
 * enough to be tracked (so the watcher listens) and enters a blocking MPI
 * call at once, then waits, N times, as LAMMPS does (Irecv, Send, Wait);
 * here the blocking call is a barrier that rank 0 enters GAP_US later,
 * after its message. Every arrival finds rank 1 inside the MPI, which
 * reads the socket itself: a wake-up of the watcher there runs no round
 * (a few do run, in the moment between two of rank 1's calls, and read a
 * small message: no help either). Once at most 8 of 64 wake-ups in a row
 * were needed the watcher must rest (10 ms,
 * doubling), so rank 1's watcher wakes at most MAX_WAKES times (70-80
 * here, up to 147 with both cores loaded). With PIANO_MPI_WATCH_REST_MS=0
 * it keeps waking (for every arrival that finds a socket listening:
 * 390-1,100 times here) and the
 * test fails. TCP only (the watcher's transport); the wake-ups are the block
 * point's rounds (piano_stats_get, libpiano-mpi).
 *
 * With the argument "graph", a graph collective then starts on rank 1
 * while its watcher rests: a receive of 1 MiB from rank 0 (a rendezvous
 * that needs rank 1's MPI), then a node that notes the time. Rank 1 spins
 * with no MPI call; with no idle thread and no timer tick (the test's
 * environment) only the watcher can advance it, so the start must end the
 * rest: the node must run within GRAPH_DEADLINE_S. Run with a long
 * PIANO_MPI_WATCH_REST_MS, where a watcher that slept through the start
 * would stay deaf for hundreds of ms.
 *
 * With the argument "answers", rank 1 posts the receive, enters a barrier
 * with rank 0, computes (no MPI call for GAP_US) and then waits; rank 0
 * sends MEDIUM bytes GAP_US / 4 after the barrier: each arrival finds
 * rank 1 outside the MPI, and a round makes its MPI answer (a rendezvous,
 * an acknowledgement) and read the message early. Neither helps: the receive buffer keeps a message this size, and
 * what the MPI answers in a round it answers in the wait that follows
 * anyway (collectives of 64 KiB across two hosts overlapped 40-60 points
 * less than natively with such rounds, docs/performance.md). So these
 * wake-ups are fruitless and the watcher must rest: at most MAX_WAKES.
 * Counted fruitful (any write, or any read of 32 KiB or more), they were
 * 4,875-5,250 here.
 *
 * With the argument "graphs", the same with each receive a graph's (one
 * RECV node, restarted each time, waited with piano_graph_wait): a round
 * that only completes a graph's receive, posting nothing, is as fruitless,
 * and where the timer ticks for graphs (the default) a running graph does
 * not keep the watcher from resting: at most MAX_WAKES. Run with a timer
 * period above WATCH_GRAPH_TICK_US (watch_rest_graphs_unticked_fails),
 * running graphs keep it awake and it fails. Before graphs were judged so,
 * every arrival woke the watcher (1,600 and more here), and 64 KiB
 * collectives across two hosts overlapped 20-40 points less than with no
 * watcher at all (docs/performance.md).
 */
#include "mpitest.h"

#include <piano/piano.h>

#include <piano/graph.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define N 1600
#define GAP_US 1000
#define SMALL 1024
#define BIG (256 * 1024) /* above every eager limit: the receive is tracked */
/* "answers": above the eager limit (UCX's 8 KiB; the test sets Open MPI's),
 * under a quarter of a fresh connection's receive buffer (128 KiB). */
#define MEDIUM (24 * 1024)
#define MAX_WAKES 250
#define GRAPH_LEN (1 << 20)
#define GRAPH_DEADLINE_S 0.2

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static _Atomic double graph_done_at;

static int note_time(void *arg)
{
	(void)arg;
	atomic_store(&graph_done_at, now());
	return 0;
}

/* Rank 1's part of the "graph" case (see the top): 0 or 1 failure. */
static int graph_during_rest(char *big)
{
	piano_graph_t *g;
	int recv, calc, ok = 1;
	CHECK(piano_graph_create(MPI_COMM_WORLD, &g) == 0);
	CHECK(piano_graph_add_recv(g, big, GRAPH_LEN, MPI_CHAR, 0, 3, &recv) == 0);
	CHECK(piano_graph_add_calc(g, note_time, NULL, &calc) == 0);
	CHECK(piano_graph_add_edge(g, recv, calc) == 0);
	CHECK(piano_graph_commit(g) == 0);
	double t0 = now();
	CHECK(piano_graph_start(g) == 0);
	while (atomic_load(&graph_done_at) == 0.0 && now() - t0 < GRAPH_DEADLINE_S)
		; /* no MPI call */
	double done = atomic_load(&graph_done_at);
	if (done == 0.0) {
		fprintf(stderr,
		        "rank 1: a graph started while the watcher rested did not advance "
		        "within %.1f s without MPI calls\n",
		        GRAPH_DEADLINE_S);
		ok = 0;
	} else {
		printf("rank 1: the graph's receive of 1 MiB completed %.1f ms after its "
		       "start, with no MPI call\n",
		       (done - t0) * 1e3);
	}
	CHECK(piano_graph_wait(g) == 0);
	if (big[0] != 5 || big[GRAPH_LEN - 1] != 5) {
		fprintf(stderr, "rank 1: the graph received %d ... %d\n", big[0],
		        big[GRAPH_LEN - 1]);
		ok = 0;
	}
	CHECK(piano_graph_free(g) == 0);
	return ok;
}

static uint64_t watcher_wakes(void)
{
	struct piano_stats st;
	CHECK(piano_stats_get(PIANO_POINT_BLOCK, &st) == 0);
	return st.rounds;
}

int main(int argc, char **argv)
{
	int rank, size, helpers = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	CHECK(size == 2);
	CHECK(piano_thread_count(PIANO_POINT_BLOCK, &helpers) == 0);
	if (!mpitest_all(helpers >= 1)) {
		printf("rank %d: no blocking helper (no socket watcher) on some rank: skipped\n",
		       rank);
		MPI_Finalize();
		return 77;
	}
	int peer = 1 - rank, ok = 1;
	int graph = argc > 1 && strcmp(argv[1], "graph") == 0;
	int graphs = argc > 1 && strcmp(argv[1], "graphs") == 0;
	int answers = graphs || (argc > 1 && strcmp(argv[1], "answers") == 0);
	/* "twice": 2N messages, for the run with the rest off, whose wake-ups
	 * grow with the messages (224 for N on a loaded CI machine, under
	 * MAX_WAKES) while a resting watcher's hardly do. */
	int n = argc > 1 && strcmp(argv[1], "twice") == 0 ? 2 * N : N;
	int len = answers ? MEDIUM : SMALL;
	static char buf[BIG], big[GRAPH_LEN];
	/* Opens the connection (and lets the watcher find its socket). */
	int token = 0;
	MPI_Sendrecv_replace(&token, 1, MPI_INT, peer, 1, peer, 1, MPI_COMM_WORLD,
	                     MPI_STATUS_IGNORE);
	/* Past the watcher's next look at the fd table: without a connection
	 * of the MPI's it looks at most PIANO_BLOCK_TIMEOUT_MS (100 ms) apart. */
	struct timespec wait_rescan = { 0, 150000000 };
	nanosleep(&wait_rescan, NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		for (int i = 0; i < n; i++) {
			/* "answers": the message comes while rank 1 computes. */
			if (answers)
				MPI_Barrier(MPI_COMM_WORLD);
			double end = now() + (answers ? GAP_US / 4 : GAP_US) * 1e-6;
			while (now() < end)
				;
			buf[0] = (char)i;
			MPI_Send(buf, len, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
			if (!answers)
				MPI_Barrier(MPI_COMM_WORLD);
		}
		if (graph) {
			memset(big, 5, GRAPH_LEN);
			MPI_Send(big, GRAPH_LEN, MPI_CHAR, peer, 3, MPI_COMM_WORLD);
		}
	} else {
		piano_graph_t *g = NULL;
		if (graphs) {
			CHECK(piano_graph_create(MPI_COMM_WORLD, &g) == 0);
			CHECK(piano_graph_add_recv(g, buf, MEDIUM, MPI_CHAR, peer, 0, NULL) == 0);
			CHECK(piano_graph_commit(g) == 0);
		}
		uint64_t w0 = watcher_wakes();
		for (int i = 0; i < n && ok; i++) {
			MPI_Request req;
			MPI_Status st;
			int count = MEDIUM;
			if (graphs)
				CHECK(piano_graph_start(g) == 0);
			else
				MPI_Irecv(buf, BIG, MPI_CHAR, peer, 0, MPI_COMM_WORLD, &req);
			MPI_Barrier(MPI_COMM_WORLD);
			double end = now() + (answers ? GAP_US : 0) * 1e-6;
			while (now() < end)
				; /* "answers": computes, no MPI call */
			if (graphs) {
				CHECK(piano_graph_wait(g) == 0);
			} else {
				MPI_Wait(&req, &st);
				MPI_Get_count(&st, MPI_CHAR, &count);
			}
			if (count != len || buf[0] != (char)i) {
				fprintf(stderr, "rank 1: message %d: %d bytes holding %d\n", i,
				        count, buf[0]);
				ok = 0;
			}
		}
		uint64_t wakes = watcher_wakes() - w0;
		if (g)
			CHECK(piano_graph_free(g) == 0);
		printf("rank 1: %d messages received %s the MPI%s, %llu watcher wake-ups\n", n,
		       answers ? "outside" : "inside", graphs ? " by graphs" : "",
		       (unsigned long long)wakes);
		if (wakes > MAX_WAKES) {
			fprintf(stderr,
			        "rank 1: the watcher woke %llu times for %d messages its own calls "
			        "could read (at most %d expected)\n",
			        (unsigned long long)wakes, n, MAX_WAKES);
			ok = 0;
		}
		if (graph && !graph_during_rest(big))
			ok = 0;
	}
	int all = 0;
	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	MPI_Finalize();
	return all ? 0 : 1;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The socket watcher does not wake for arrivals nobody needs (docs/mpi.md,
 * "Every core busy: the socket watcher"): rank 0 sends small eager messages
 * one by one, GAP_US apart, while rank 1 has posted their receives and
 * sleeps with no MPI call and no thread waiting. Reading them now gains
 * nothing (the kernel keeps them; the final wait reads them at the same
 * cost), so rank 1's watcher must run far fewer rounds than there are
 * messages. Two cases (argument):
 * - "tracked": rank 1 also has a large receive pending (1 MiB, sent after
 *   the stream), so the watcher listens; its pauses after rounds nobody
 *   needed keep the rounds under N/8. With PIANO_MPI_WATCH_HOLD_US=0 it
 *   wakes for each message and the test fails.
 * - "quiet": nothing rank 1 has pending is tracked (eager receives only),
 *   so the watcher does not listen for arrivals at all: at most QUIET_MAX
 *   rounds, even with PIANO_MPI_WATCH_HOLD_US=0.
 * TCP only (the watcher's transport); the round counts come from
 * piano_stats_get (libpiano-mpi).
 */
#include "mpitest.h"

#include <piano/piano.h>

#include <stdint.h>
#include <string.h>
#include <time.h>

#define N 400
#define GAP_US 50
#define BIG (1 << 20)
#define QUIET_MAX 5

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static uint64_t watcher_rounds(void)
{
	struct piano_stats st;
	CHECK(piano_stats_get(PIANO_POINT_BLOCK, &st) == 0);
	return st.rounds;
}

int main(int argc, char **argv)
{
	int rank, size, helpers = 0;
	MPI_Init(&argc, &argv);
	int tracked = !(argc > 1 && strcmp(argv[1], "quiet") == 0);
	int limit = tracked ? N / 8 : QUIET_MAX;
	static char big[BIG];
	MPI_Request big_req = MPI_REQUEST_NULL;
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
	static int buf[N];
	MPI_Request reqs[N];
	/* Opens the connection (and lets the watcher find its socket). */
	int token = 0;
	MPI_Sendrecv_replace(&token, 1, MPI_INT, peer, 1, peer, 1, MPI_COMM_WORLD,
	                     MPI_STATUS_IGNORE);
	if (rank == 1) {
		for (int i = 0; i < N; i++)
			MPI_Irecv(&buf[i], 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &reqs[i]);
		if (tracked)
			MPI_Irecv(big, BIG, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &big_req);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	/* Past the watcher's next look at the fd table: without a connection
	 * of the MPI's it looks at most PIANO_BLOCK_TIMEOUT_MS (100 ms) apart. */
	struct timespec wait_rescan = { 0, 150000000 };
	nanosleep(&wait_rescan, NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		for (int i = 0; i < N; i++) {
			int v = i + 1;
			MPI_Send(&v, 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
			double end = now() + GAP_US * 1e-6;
			while (now() < end)
				;
		}
		if (tracked) {
			memset(big, 7, BIG);
			MPI_Send(big, BIG, MPI_CHAR, peer, 2, MPI_COMM_WORLD);
		}
	} else {
		uint64_t r0 = watcher_rounds();
		/* Asleep, no MPI call, for the whole stream and a margin. */
		double end = now() + N * GAP_US * 1e-6 + 0.05;
		struct timespec nap = { 0, 1000000 };
		while (now() < end)
			nanosleep(&nap, NULL);
		uint64_t rounds = watcher_rounds() - r0;
		MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE);
		MPI_Wait(&big_req, MPI_STATUS_IGNORE);
		if (tracked && (big[0] != 7 || big[BIG - 1] != 7)) {
			fprintf(stderr, "rank 1: the large message holds %d ... %d\n", big[0],
			        big[BIG - 1]);
			ok = 0;
		}
		for (int i = 0; i < N; i++)
			if (buf[i] != i + 1) {
				fprintf(stderr, "rank 1: message %d holds %d\n", i, buf[i]);
				ok = 0;
				break;
			}
		printf("rank 1 (%s): %d messages, %llu watcher rounds while asleep\n",
		       tracked ? "tracked" : "quiet", N, (unsigned long long)rounds);
		if (rounds > (uint64_t)limit) {
			fprintf(stderr,
			        "rank 1: the watcher ran %llu rounds for %d messages nobody "
			        "waited for (at most %d expected)\n",
			        (unsigned long long)rounds, N, limit);
			ok = 0;
		}
	}
	int all = 0;
	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	MPI_Finalize();
	return all ? 0 : 1;
}

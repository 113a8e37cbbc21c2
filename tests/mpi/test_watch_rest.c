/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The socket watcher rests when its wake-ups move no data (docs/mpi.md,
 * "Every core busy: the socket watcher"): rank 1 posts a receive large
 * enough to be tracked (so the watcher listens) and enters a blocking MPI
 * call at once, then waits, N times, as LAMMPS does (Irecv, Send, Wait);
 * here the blocking call is a barrier that rank 0 enters GAP_US later,
 * after its message. Every arrival finds rank 1 inside the MPI, which
 * reads the socket itself: a wake-up of the watcher there runs no round. After 16 such wake-ups in a row the watcher must
 * rest (10 ms, doubling), so rank 1's watcher wakes at most MAX_WAKES
 * times. With PIANO_MPI_WATCH_REST_MS=0 it keeps waking (for every
 * arrival that finds a socket listening: 110-160 times here) and the test
 * fails. TCP only (the watcher's transport); the wake-ups are the block
 * point's rounds (piano_stats_get, libpiano-mpi).
 */
#include "mpitest.h"

#include <piano/piano.h>

#include <stdint.h>
#include <time.h>

#define N 800
#define GAP_US 1000
#define SMALL 1024
#define BIG (256 * 1024) /* above every eager limit: the receive is tracked */
#define MAX_WAKES 50

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
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
	if (helpers < 1) {
		printf("rank %d: no blocking helper (no socket watcher): skipped\n", rank);
		MPI_Finalize();
		return 77;
	}
	int peer = 1 - rank, ok = 1;
	static char buf[BIG];
	/* Opens the connection (and lets the watcher find its socket). */
	int token = 0;
	MPI_Sendrecv_replace(&token, 1, MPI_INT, peer, 1, peer, 1, MPI_COMM_WORLD,
	                     MPI_STATUS_IGNORE);
	struct timespec wait_rescan = { 0, 20000000 }; /* past the watcher's 10 ms rescan */
	nanosleep(&wait_rescan, NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		for (int i = 0; i < N; i++) {
			double end = now() + GAP_US * 1e-6;
			while (now() < end)
				;
			buf[0] = (char)i;
			MPI_Send(buf, SMALL, MPI_CHAR, peer, 0, MPI_COMM_WORLD);
			MPI_Barrier(MPI_COMM_WORLD);
		}
	} else {
		uint64_t w0 = watcher_wakes();
		for (int i = 0; i < N && ok; i++) {
			MPI_Request req;
			MPI_Status st;
			int count = 0;
			MPI_Irecv(buf, BIG, MPI_CHAR, peer, 0, MPI_COMM_WORLD, &req);
			MPI_Barrier(MPI_COMM_WORLD);
			MPI_Wait(&req, &st);
			MPI_Get_count(&st, MPI_CHAR, &count);
			if (count != SMALL || buf[0] != (char)i) {
				fprintf(stderr, "rank 1: message %d: %d bytes holding %d\n", i,
				        count, buf[0]);
				ok = 0;
			}
		}
		uint64_t wakes = watcher_wakes() - w0;
		printf("rank 1: %d messages received inside the MPI, %llu watcher wake-ups\n", N,
		       (unsigned long long)wakes);
		if (wakes > MAX_WAKES) {
			fprintf(stderr,
			        "rank 1: the watcher woke %llu times for %d messages its own calls "
			        "read (at most %d expected)\n",
			        (unsigned long long)wakes, N, MAX_WAKES);
			ok = 0;
		}
	}
	int all = 0;
	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	MPI_Finalize();
	return all ? 0 : 1;
}

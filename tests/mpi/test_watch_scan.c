/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The socket watcher finds the MPI's connections by reading the process's
 * fd table (src/mpi/watch.c), which costs 2-3 us per fd; it must read it
 * again only when the table changed, not at every look for new sockets
 * (every 10 ms while the watcher works: 150 us of a computing core per
 * look with Open MPI over TCP).
 *
 * Rank 0 sends N small messages, GAP_US apart, to rank 1, which has posted
 * their receives and sleeps with no MPI call, so that its watcher blocks
 * and wakes for arrivals for N * GAP_US (1 s); a large receive, sent after
 * them, is pending meanwhile, so that the watcher listens (with eager
 * receives only it would not: test_watch_hold.c). The test's pass expression
 * wants rank 1's statistics (PIANO_STATS) to show the watcher woken at
 * least 10 times and at most 29 scans of the fd table; reading it at every
 * look made about 100.
 */
#include "mpitest.h"

#include <string.h>
#include <time.h>

#define N 1000
#define GAP_US 1000
#define BIG (1 << 20)

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	CHECK(size == 2);
	int peer = 1 - rank;
	static int buf[N];
	static MPI_Request reqs[N];
	static char big[BIG];
	MPI_Request big_req = MPI_REQUEST_NULL;
	/* Opens the connection. */
	int token = 0;
	MPI_Sendrecv_replace(&token, 1, MPI_INT, peer, 1, peer, 1, MPI_COMM_WORLD,
	                     MPI_STATUS_IGNORE);
	if (rank == 1) {
		for (int i = 0; i < N; i++)
			MPI_Irecv(&buf[i], 1, MPI_INT, peer, 0, MPI_COMM_WORLD, &reqs[i]);
		MPI_Irecv(big, BIG, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &big_req);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		const struct timespec gap = { 0, GAP_US * 1000L };
		for (int i = 0; i < N; i++) {
			buf[i] = i;
			MPI_Send(&buf[i], 1, MPI_INT, peer, 0, MPI_COMM_WORLD);
			nanosleep(&gap, NULL);
		}
		memset(big, 7, BIG);
		MPI_Send(big, BIG, MPI_CHAR, peer, 2, MPI_COMM_WORLD);
	} else {
		const struct timespec all = { 1, 200000000L };
		nanosleep(&all, NULL);
		MPI_Waitall(N, reqs, MPI_STATUSES_IGNORE);
		MPI_Wait(&big_req, MPI_STATUS_IGNORE);
		for (int i = 0; i < N; i++)
			CHECK(buf[i] == i);
		CHECK(big[0] == 7 && big[BIG - 1] == 7);
		printf("rank 1: %d messages received\n", N);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}

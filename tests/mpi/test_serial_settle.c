/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Serialized mode (docs/mpi.md): once piano's threads have made a
 * background call, the application's MPI calls close the gate on the fenced
 * path; when nothing is in flight any more they must go back to the fence-
 * free path, also when that background call was the socket watcher's round
 * for a socket the MPI does not read (no progress task ever ran to say it
 * is done).
 *
 * The program first has piano's threads complete a non-blocking barrier
 * (tracked) while it sleeps: a background call, which turns the fenced path
 * on. Then it puts a byte in a socket pair it never reads: the watcher,
 * quiet while nothing is pending, must not wake for it, and a round for it
 * would find the socket undrained with no progress task to follow. After a
 * pause (several watcher timeouts, PIANO_BLOCK_TIMEOUT_MS is set short) it
 * makes CALLS MPI calls. CTest reads PIANO_STATS's serialized-mode line:
 * the fenced path was turned on at least once, and the calls after the
 * pause did not take it (fewer fenced calls than CALLS).
 */
#include "mpitest.h"

#include <sys/socket.h>
#include <unistd.h>

enum { CALLS = 20000 };

int main(int argc, char **argv)
{
	int provided, rank, real = -1;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	CHECK_MPI(PMPI_Query_thread(&real));
	if (real == MPI_THREAD_MULTIPLE) {
		fprintf(stderr, "rank %d: not serialized: the MPI runs at level %d\n", rank, real);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Request barrier;
	CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &barrier));
	usleep(50000);
	CHECK_MPI(MPI_Wait(&barrier, MPI_STATUS_IGNORE));
	int sv[2];
	CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
	CHECK(write(sv[0], "x", 1) == 1);
	/* Several watcher timeouts with nothing to do. */
	usleep(500000);
	for (int i = 0; i < CALLS; i++) {
		int flag;
		CHECK_MPI(MPI_Iprobe(MPI_ANY_SOURCE, 12345, MPI_COMM_WORLD, &flag,
		                     MPI_STATUS_IGNORE));
		CHECK(!flag);
	}
	close(sv[0]);
	close(sv[1]);
	MPI_Finalize();
	return 0;
}

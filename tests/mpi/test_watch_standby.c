/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The socket watcher where it has nothing to listen to, and while the
 * application waits in the MPI's own call (watch.c, watch_block), since
 * each look takes a CPU from a rank. The observable: the wake-ups of the
 * blocking helper thread ("piano-block").
 *   shm (no connection of the MPI's, the run-time's sockets only): the
 *        helper sleeps on its pipe and looks at the fd table once per
 *        blocking timeout (PIANO_BLOCK_TIMEOUT_MS, 100 ms) once it found
 *        none for a while: during a native wait of WAIT_MS with a tracked
 *        receive pending, 1 to WAIT_MS / 30 wake-ups (every 10 ms would be
 *        ~30, none a watcher that never looks); during EXCHANGE_MS of
 *        quick tracked exchanges, at most one per 30 ms and 2 more (a
 *        tracked post that nudged the watcher would be one per exchange);
 *   tcp: at least WAIT_MS / 3 during the wait (Open MPI's TCP BTL: the
 *        MPI's connection keeps the 1 ms standby).
 * Two ranks under piano, the watcher on (PIANO_MPI_BLOCKING=block).
 */
#include "mpitest.h"
#include "../threads.h"

#include <piano/piano.h>

#include <stdlib.h>
#include <string.h>

#define BIG (1 << 20) /* above every eager limit: tracked */
#define COMPUTE_MS 150
#define WAIT_MS 300
#define EXCHANGE_MS 300

struct wakeups {
	long sum;
	int threads;
};

/* test_each_thread() callback: adds the thread's wake-ups to the sum. */
static int add_wakeups(pid_t tid, void *arg)
{
	struct wakeups *w = arg;
	long n = 0;
	test_thread_wakeups(tid, &n);
	w->sum += n;
	w->threads++;
	return 0;
}

/* The wake-ups (voluntary context switches) of the process's blocking
 * helpers so far (the socket watcher's, and a file helper that sleeps),
 * -1 when there is none or /proc cannot tell. */
static long helper_wakeups(void)
{
	struct wakeups w = { 0, 0 };
	return test_each_thread("piano-block", add_wakeups, &w) < 0 || !w.threads ? -1 : w.sum;
}

int main(int argc, char **argv)
{
	int rank, size, helpers = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	CHECK(size == 2);
	CHECK(argc > 1 && (strcmp(argv[1], "shm") == 0 || strcmp(argv[1], "tcp") == 0));
	int tcp = strcmp(argv[1], "tcp") == 0;
	CHECK(piano_thread_count(PIANO_POINT_BLOCK, &helpers) == 0);
	if (!mpitest_all(helpers >= 1 && helper_wakeups() >= 0)) {
		printf("rank %d: no blocking helper (no socket watcher) on some rank: skipped\n",
		       rank);
		MPI_Finalize();
		return 77;
	}
	char *buf = calloc(BIG, 1);
	CHECK(buf);
	int ok = 1;
	/* Opens the connection over TCP; the watcher finds it while rank 0
	 * computes below (without a connection of the MPI's it looks at the
	 * fd table at most PIANO_BLOCK_TIMEOUT_MS, 100 ms, apart). */
	MPI_Sendrecv_replace(buf, 1, MPI_CHAR, 1 - rank, 1, 1 - rank, 1, MPI_COMM_WORLD,
	                     MPI_STATUS_IGNORE);
	if (rank == 0) {
		MPI_Request req;
		CHECK_MPI(MPI_Irecv(buf, BIG, MPI_CHAR, 1, 0, MPI_COMM_WORLD, &req));
		mpitest_spin_ms(COMPUTE_MS);
		long s0 = helper_wakeups();
		CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE)); /* rank 1 sends WAIT_MS later */
		long waiting = helper_wakeups() - s0;
		printf("rank 0 (%s): the blocking helper woke %ld times in a native wait of "
		       "%d ms\n",
		       argv[1], waiting, WAIT_MS);
		if (tcp ? waiting < WAIT_MS / 3 : waiting > WAIT_MS / 30) {
			printf("rank 0: %s\n", tcp ? "too few: the watcher did not stand by at 1 ms"
			                           : "too many: the watcher stood by without a "
			                             "connection to listen to");
			ok = 0;
		}
		if (!tcp && waiting < 1) {
			printf("rank 0: too few: the watcher never looked at the fd table\n");
			ok = 0;
		}
	} else {
		mpitest_spin_ms(COMPUTE_MS + WAIT_MS);
		CHECK_MPI(MPI_Send(buf, BIG, MPI_CHAR, 0, 0, MPI_COMM_WORLD));
	}
	if (!tcp) {
		/* Quick tracked exchanges: each post makes a receive pending,
		 * which must not wake a watcher with nothing to listen to. */
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		long s0 = helper_wakeups();
		int n = 0, more = 1;
		while (more) {
			MPI_Request r[2];
			CHECK_MPI(MPI_Irecv(buf, BIG / 2, MPI_CHAR, 1 - rank, 2, MPI_COMM_WORLD,
			                    &r[0]));
			CHECK_MPI(MPI_Isend(buf + BIG / 2, BIG / 2, MPI_CHAR, 1 - rank, 2,
			                    MPI_COMM_WORLD, &r[1]));
			CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
			n++;
			/* Rank 0's clock decides, for both. */
			more = rank == 0 && (MPI_Wtime() - t0) * 1e3 < EXCHANGE_MS;
			CHECK_MPI(MPI_Bcast(&more, 1, MPI_INT, 0, MPI_COMM_WORLD));
		}
		long woke = helper_wakeups() - s0;
		double ms = (MPI_Wtime() - t0) * 1e3;
		printf("rank %d (shm): the blocking helper woke %ld times during %d tracked "
		       "exchanges in %.0f ms\n",
		       rank, woke, n, ms);
		if (woke > (long)(ms / 30) + 2) {
			printf("rank %d: too many: tracked posts woke the watcher\n", rank);
			ok = 0;
		}
	}
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	free(buf);
	MPI_Finalize();
	return ok ? 0 : 1;
}

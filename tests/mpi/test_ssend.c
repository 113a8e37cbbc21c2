/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A small synchronous send completes while its receiver computes. Rank 1
 * posts a receive (larger than the eager limit, so that piano tracks it:
 * the receiver cannot know the send is synchronous) and then computes
 * without MPI calls until rank 0 says, through MPI shared memory, that its
 * send completed. Rank 0 sends 8 bytes with MPI_Issend, then with
 * MPI_Ssend_init/MPI_Start, and tests each until it completes: a
 * synchronous send completes only once the receiver has matched it, which
 * needs rank 1's MPI to run. Without background progress (natively) the
 * send stays pending until the timeout.
 *
 * usage: test_ssend [timeout_s (default 20)]
 */
#include "mpitest.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>

#define RECV_CAP (1 << 20) /* above any eager limit piano detects */

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Rank 0: one synchronous send of 8 bytes, tested until it completes. */
static int send_one(int persistent, _Atomic int *flag, double timeout_s)
{
	char msg[8] = "ssend!!";
	MPI_Request req;
	while (atomic_load(flag) != 1) /* rank 1's receive is posted */
		;
	if (persistent) {
		CHECK_MPI(MPI_Ssend_init(msg, 8, MPI_CHAR, 1, 5, MPI_COMM_WORLD, &req));
		CHECK_MPI(MPI_Start(&req));
	} else {
		CHECK_MPI(MPI_Issend(msg, 8, MPI_CHAR, 1, 5, MPI_COMM_WORLD, &req));
	}
	double t0 = now();
	int done = 0;
	while (!done && now() - t0 < timeout_s)
		CHECK_MPI(MPI_Test(&req, &done, MPI_STATUS_IGNORE));
	const char *what = persistent ? "MPI_Ssend_init/MPI_Start" : "MPI_Issend";
	if (done)
		printf("rank 0: %s of 8 bytes completed after %.3f s while rank 1 computed\n", what,
		       now() - t0);
	else
		fprintf(stderr,
		        "rank 0: no background progress: %s of 8 bytes still pending "
		        "after %.0f s while rank 1 computed\n",
		        what, timeout_s);
	atomic_store(flag, 2); /* rank 1 may call MPI again */
	if (!done)
		CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
	if (persistent)
		CHECK_MPI(MPI_Request_free(&req));
	return done;
}

/* Rank 1: posts the receive, computes without MPI until rank 0 is done. */
static void recv_one(_Atomic int *flag, char *buf, double timeout_s)
{
	MPI_Request req;
	CHECK_MPI(MPI_Irecv(buf, RECV_CAP, MPI_CHAR, 0, 5, MPI_COMM_WORLD, &req));
	atomic_store(flag, 1);
	double t0 = now();
	while (atomic_load(flag) != 2 && now() - t0 < timeout_s + 5) /* no MPI call */
		;
	MPI_Status st;
	int count = -1;
	CHECK_MPI(MPI_Wait(&req, &st));
	CHECK_MPI(MPI_Get_count(&st, MPI_CHAR, &count));
	CHECK(count == 8 && strcmp(buf, "ssend!!") == 0);
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
	char *buf = calloc(RECV_CAP, 1);
	CHECK(buf);

	int ok = 1;
	for (int persistent = 0; persistent < 2; persistent++) {
		if (rank == 0)
			atomic_store(flag, 0);
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0)
			ok &= send_one(persistent, flag, timeout_s);
		else
			recv_one(flag, buf, timeout_s);
		MPI_Barrier(MPI_COMM_WORLD);
	}
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	MPI_Win_free(&win);
	MPI_Comm_free(&node);
	free(buf);
	MPI_Finalize();
	return ok ? 0 : 1;
}

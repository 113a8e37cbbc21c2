/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Ends of a job that piano must not change (run natively and under piano by
 * tests/mpi/faults.sh, which bounds the time):
 *   kill      rank 1 dies (SIGKILL) while rank 0 waits for a 64 MiB message
 *             from it: the launcher ends the job, non-zero;
 *   abort     a second thread calls MPI_Abort(code 3) while the main thread
 *             waits in MPI_Recv: the job ends, non-zero;
 *   finalize  both ranks finalize with a matched 1 MiB transfer posted and
 *             never waited for: the job ends, zero;
 *   finalize_eager  the same with 16 matched 64-byte transfers (sends that
 *             submission offload defers).
 */
#include "mpitest.h"

#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#define BIG (64 << 20)

static void *abort_later(void *arg)
{
	(void)arg;
	usleep(200000);
	MPI_Abort(MPI_COMM_WORLD, 3);
	return NULL;
}

int main(int argc, char **argv)
{
	int rank;
	const char *mode = argc > 1 ? argv[1] : "";
	if ((rank = init_pair_multiple(&argc, &argv)) < 0)
		return 77;
	char *buf = calloc(BIG, 1);
	CHECK(buf);
	if (!strcmp(mode, "kill")) {
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 1) {
			usleep(200000);
			raise(SIGKILL);
		}
		MPI_Recv(buf, BIG, MPI_CHAR, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		return 0; /* not reached: the job is gone */
	} else if (!strcmp(mode, "abort")) {
		pthread_t t;
		if (rank == 0)
			CHECK(pthread_create(&t, NULL, abort_later, NULL) == 0);
		MPI_Recv(buf, BIG, MPI_CHAR, 1 - rank, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		return 0;
	} else if (!strcmp(mode, "finalize")) {
		MPI_Request r;
		if (rank == 0)
			MPI_Isend(buf, 1 << 20, MPI_CHAR, 1, 0, MPI_COMM_WORLD, &r);
		else
			MPI_Irecv(buf, 1 << 20, MPI_CHAR, 0, 0, MPI_COMM_WORLD, &r);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Finalize();
		free(buf);
		return 0;
	} else if (!strcmp(mode, "finalize_eager")) {
		MPI_Request r[16];
		for (int i = 0; i < 16; i++)
			if (rank == 0)
				MPI_Isend(buf + 64 * i, 64, MPI_CHAR, 1, i, MPI_COMM_WORLD, &r[i]);
			else
				MPI_Irecv(buf + 64 * i, 64, MPI_CHAR, 0, i, MPI_COMM_WORLD, &r[i]);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Finalize();
		free(buf);
		return 0;
	}
	fprintf(stderr, "usage: test_faults kill|abort|finalize|finalize_eager\n");
	MPI_Abort(MPI_COMM_WORLD, 2);
	return 2;
}

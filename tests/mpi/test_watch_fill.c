/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A round that fills a send buffer keeps the socket watcher awake
 * (docs/mpi.md, "Every core busy: the socket watcher"): rank 0 sends
 * MSGS messages of LEN bytes over TCP, each with MPI_Isend, then computes
 * for SPIN_MS with no MPI call, then asks MPI_Test whether the send is
 * done; rank 1 receives them in MPI_Recv. With no idle thread and no timer
 * tick (the test's environment) only rank 0's watcher can move a message
 * during the computation: a round on the rendezvous answer's arrival
 * writes until the send buffer is full, and rounds on POLLOUT write the
 * rest. Those rounds write in answer to arrivals and read nothing, and a
 * watcher that judged them fruitless rested, deaf to the answers of the
 * next messages for up to 160 ms: then a send is still pending after the
 * computation. Every send but a few must be done by then: at most MAX_LATE
 * late. Measured: 0-2 of 80 (also with both cores loaded); 12-25 when
 * these rounds did not count as needed.
 */
#include "mpitest.h"

#include <piano/piano.h>

#include <stdlib.h>

#define MSGS 80
#define LEN (16 << 20) /* far above every send and receive buffer on loopback */
#define SPIN_MS 50     /* 16 MiB cross loopback TCP in 5-15 ms when driven */
#define MAX_LATE 5

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
	char *buf = malloc(LEN);
	CHECK(buf != NULL);
	int ok = 1;
	/* Opens the connection (and lets the watcher find its socket). */
	int token = 0;
	MPI_Sendrecv_replace(&token, 1, MPI_INT, 1 - rank, 1, 1 - rank, 1, MPI_COMM_WORLD,
	                     MPI_STATUS_IGNORE);
	/* Past the watcher's next look at the fd table: without a connection
	 * of the MPI's it looks at most PIANO_BLOCK_TIMEOUT_MS (100 ms) apart. */
	mpitest_spin_ms(150);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		int late = 0;
		for (int i = 0; i < MSGS; i++) {
			MPI_Request req;
			int done = 0;
			buf[0] = buf[LEN - 1] = (char)i;
			MPI_Isend(buf, LEN, MPI_CHAR, 1, 0, MPI_COMM_WORLD, &req);
			mpitest_spin_ms(SPIN_MS); /* no MPI call */
			MPI_Test(&req, &done, MPI_STATUS_IGNORE);
			if (!done)
				late++;
			MPI_Wait(&req, MPI_STATUS_IGNORE);
		}
		printf("rank 0: %d of %d sends of %d MiB still pending after %d ms of "
		       "computation\n",
		       late, MSGS, LEN >> 20, SPIN_MS);
		if (late > MAX_LATE) {
			fprintf(stderr,
			        "rank 0: %d sends not done after %d ms without MPI calls (at most "
			        "%d expected): the watcher rested through a transfer under way\n",
			        late, SPIN_MS, MAX_LATE);
			ok = 0;
		}
	} else {
		for (int i = 0; i < MSGS; i++) {
			MPI_Recv(buf, LEN, MPI_CHAR, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			if (buf[0] != (char)i || buf[LEN - 1] != (char)i) {
				fprintf(stderr, "rank 1: message %d holds %d ... %d\n", i, buf[0],
				        buf[LEN - 1]);
				ok = 0;
			}
		}
	}
	free(buf);
	int all = 0;
	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	MPI_Finalize();
	return all ? 0 : 1;
}

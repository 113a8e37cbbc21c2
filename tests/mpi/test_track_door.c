/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * At MPI_THREAD_MULTIPLE the progress task asks the MPI whether tracked
 * requests have finished while application threads complete and free them;
 * the door (track.c) keeps the two apart. 3 threads per rank exchange
 * messages above every eager limit with the same thread of the other rank,
 * compute for 0-400 us with both requests in flight, then complete them in
 * each way a call can free a request: MPI_Waitall, MPI_Test loops,
 * MPI_Waitany, MPI_Testsome and MPI_Testall loops, and MPI_Wait on the
 * receive with MPI_Request_free on the send. Every message must arrive
 * intact and every call succeed; CTest also requires PIANO_STATS to show
 * requests found finished before their completion call (the check ran
 * beside the completions). Arguments: iterations per thread (default 300),
 * the computation's unit in us (default 100: 0-4 units per exchange).
 */
#include "mpitest.h"

#include <pthread.h>
#include <stdlib.h>

#define NT 3
#define BIG (256 << 10) /* above every eager limit: tracked */

static int rank, iters = 300, unit_us = 100;
/* Per thread: two send buffers and a receive buffer. Freed after the final
 * barrier: a send freed with MPI_Request_free may still be read by the peer
 * until it has received it. */
static unsigned char *bufs[NT][3];

static unsigned char pattern(int from, int t, int it, int i)
{
	return (unsigned char)(from * 101 + t * 31 + it * 7 + i);
}

static void complete(int mode, MPI_Request r[2])
{
	int flag = 0, idx, out, ind[2], left = 2;
	switch (mode) {
	case 0:
		CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
		break;
	case 1:
		for (int k = 0; k < 2; k++)
			for (flag = 0; !flag;)
				CHECK_MPI(MPI_Test(&r[k], &flag, MPI_STATUS_IGNORE));
		break;
	case 2:
		for (int k = 0; k < 2; k++) {
			CHECK_MPI(MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE));
			CHECK(idx != MPI_UNDEFINED);
		}
		break;
	case 3:
		while (left > 0) {
			CHECK_MPI(MPI_Testsome(2, r, &out, ind, MPI_STATUSES_IGNORE));
			CHECK(out != MPI_UNDEFINED);
			left -= out;
		}
		break;
	case 4:
		while (!flag)
			CHECK_MPI(MPI_Testall(2, r, &flag, MPI_STATUSES_IGNORE));
		break;
	default:
		/* The send's buffer is written again two iterations later, once
		 * the peer's next message (sent after it received this one) has
		 * arrived. */
		CHECK_MPI(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
		CHECK_MPI(MPI_Request_free(&r[1]));
		CHECK(r[1] == MPI_REQUEST_NULL);
		return;
	}
	CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL);
}

static void *run(void *arg)
{
	int t = (int)(long)arg, peer = 1 - rank;
	unsigned char **sbuf = bufs[t], *rbuf = bufs[t][2];
	for (int it = 0; it < iters; it++) {
		unsigned char *s = sbuf[it % 2];
		for (int i = 0; i < BIG; i += 4096)
			s[i] = pattern(rank, t, it, i);
		s[BIG - 1] = pattern(rank, t, it, BIG - 1);
		MPI_Request r[2];
		CHECK_MPI(MPI_Irecv(rbuf, BIG, MPI_BYTE, peer, t, MPI_COMM_WORLD, &r[0]));
		CHECK_MPI(MPI_Isend(s, BIG, MPI_BYTE, peer, t, MPI_COMM_WORLD, &r[1]));
		/* The window in which the check finds them finished. */
		double end = mpitest_now() + ((it * 37 + t * 11) % 5) * unit_us * 1e-6;
		while (mpitest_now() < end)
			;
		complete((it + t) % 6, r);
		for (int i = 0; i < BIG; i += 4096)
			CHECK(rbuf[i] == pattern(peer, t, it, i));
		CHECK(rbuf[BIG - 1] == pattern(peer, t, it, BIG - 1));
	}
	return NULL;
}

int main(int argc, char **argv)
{
	rank = init_pair_multiple(&argc, &argv);
	if (rank < 0)
		return 77;
	if (argc > 1)
		iters = atoi(argv[1]);
	if (argc > 2)
		unit_us = atoi(argv[2]);
	for (int t = 0; t < NT; t++)
		for (int k = 0; k < 3; k++)
			CHECK((bufs[t][k] = malloc(BIG)) != NULL);
	pthread_t th[NT];
	for (long t = 0; t < NT; t++)
		CHECK(pthread_create(&th[t], NULL, run, (void *)t) == 0);
	for (int t = 0; t < NT; t++)
		pthread_join(th[t], NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	for (int t = 0; t < NT; t++)
		for (int k = 0; k < 3; k++)
			free(bufs[t][k]);
	printf("rank %d: %d threads x %d exchanges of %d bytes intact\n", rank, NT, iters, BIG);
	MPI_Finalize();
	return 0;
}

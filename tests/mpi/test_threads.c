/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * 8 threads of rank 0 wait at once, with MPI_Irecv + MPI_Wait and with
 * blocking MPI_Recv, on messages that rank 1's 8 threads send in a
 * scrambled order. Every message must arrive intact at the right thread.
 */
#include "mpitest.h"

#include <pthread.h>
#include <string.h>

#define NT 8
#define ITERS 20
#define BIG (256 << 10)

static int rank;

static int len_of(int t, int it) { return ((t + it) % 3 == 0) ? BIG : 16 + t; }

static void *receiver(void *arg)
{
	int t = (int)(long)arg;
	char *buf = malloc(BIG);
	CHECK(buf);
	for (int it = 0; it < ITERS; it++) {
		MPI_Status st;
		int count, len = len_of(t, it);
		if (it % 2) {
			MPI_Request r;
			CHECK_MPI(MPI_Irecv(buf, BIG, MPI_CHAR, 1, t, MPI_COMM_WORLD, &r));
			CHECK_MPI(MPI_Wait(&r, &st));
		} else {
			CHECK_MPI(MPI_Recv(buf, BIG, MPI_CHAR, 1, t, MPI_COMM_WORLD, &st));
		}
		MPI_Get_count(&st, MPI_CHAR, &count);
		CHECK(count == len && st.MPI_TAG == t && st.MPI_SOURCE == 1);
		CHECK(buf[0] == (char)(t * 31 + it) && buf[len - 1] == (char)(t * 31 + it));
	}
	free(buf);
	return NULL;
}

static void *sender(void *arg)
{
	int t = (int)(long)arg;
	char *buf = malloc(BIG);
	CHECK(buf);
	for (int it = 0; it < ITERS; it++) {
		int dest_t = (t * 5 + 3) % NT; /* each thread serves another tag */
		memset(buf, (char)(dest_t * 31 + it), BIG);
		CHECK_MPI(MPI_Send(buf, len_of(dest_t, it), MPI_CHAR, 0, dest_t, MPI_COMM_WORLD));
	}
	free(buf);
	return NULL;
}

int main(int argc, char **argv)
{
	int provided, size;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	CHECK(size == 2);
	if (provided < MPI_THREAD_MULTIPLE) {
		if (rank == 0)
			fprintf(stderr, "MPI_THREAD_MULTIPLE not provided: skipped\n");
		MPI_Finalize();
		return 77;
	}
	pthread_t th[NT];
	for (long t = 0; t < NT; t++)
		CHECK(pthread_create(&th[t], NULL, rank == 0 ? receiver : sender, (void *)t) == 0);
	for (int t = 0; t < NT; t++)
		pthread_join(th[t], NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		printf("threads: %d threads x %d messages received correctly\n", NT, ITERS);
	MPI_Finalize();
	return 0;
}

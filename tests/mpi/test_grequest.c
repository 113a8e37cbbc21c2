/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A generalized request's query function runs in the thread that completes
 * the request (MPI_Wait), also when another thread is waiting at the same
 * time (a wait piano would otherwise hand to its engine). Two ranks; rank 0
 * satisfies rank 1's other waiter late.
 */
#include "mpitest.h"

#include <pthread.h>
#include <time.h>

static pthread_t waiter;
static _Atomic int queries, wrong_thread;

static int query(void *state, MPI_Status *st)
{
	(void)state;
	queries++;
	if (!pthread_equal(pthread_self(), waiter))
		wrong_thread++;
	MPI_Status_set_elements(st, MPI_BYTE, 0);
	MPI_Status_set_cancelled(st, 0);
	st->MPI_SOURCE = MPI_UNDEFINED;
	st->MPI_TAG = MPI_UNDEFINED;
	return MPI_SUCCESS;
}

static int free_fn(void *state) { (void)state; return MPI_SUCCESS; }
static int cancel_fn(void *state, int done) { (void)state; (void)done; return MPI_SUCCESS; }

static void *complete_later(void *arg)
{
	sleep_ms(100);
	CHECK_MPI(MPI_Grequest_complete(*(MPI_Request *)arg));
	return NULL;
}

int main(int argc, char **argv)
{
	int rank, token = 0;
	if ((rank = init_pair_multiple(&argc, &argv)) < 0)
		return 77;
	if (rank == 0) {
		sleep_ms(400);
		CHECK_MPI(MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
	} else {
		MPI_Request other, greq;
		pthread_t tw, tc;
		waiter = pthread_self();
		CHECK_MPI(MPI_Irecv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &other));
		CHECK(pthread_create(&tw, NULL, wait_other, &other) == 0);
		sleep_ms(20); /* the other thread waits first */
		CHECK_MPI(MPI_Grequest_start(query, free_fn, cancel_fn, NULL, &greq));
		CHECK(pthread_create(&tc, NULL, complete_later, &greq) == 0);
		MPI_Status st;
		CHECK_MPI(MPI_Wait(&greq, &st));
		CHECK(greq == MPI_REQUEST_NULL);
		pthread_join(tc, NULL);
		pthread_join(tw, NULL);
		if (wrong_thread)
			fprintf(stderr, "query function ran %d time(s) outside the waiting thread\n",
			        (int)wrong_thread);
		CHECK(queries >= 1 && wrong_thread == 0);
		printf("grequest: query ran %d time(s), in the waiting thread\n", (int)queries);
	}
	MPI_Finalize();
	return 0;
}

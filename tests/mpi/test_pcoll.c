/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI-4 persistent collectives started in different orders on the ranks
 * (MPICH's coll/p_order) complete in MPI_Waitall, alone and while another
 * thread waits (the Waitall is then delegated to the engine, which must not
 * complete the requests itself: MPICH 4.0.2's MPI_Testall aborts on them).
 * Skipped (77) on an MPI without MPI_Bcast_init.
 */
#include "mpitest.h"

#include <pthread.h>
#include <time.h>

#if MPI_VERSION >= 4

/* One round of p_order; with `other`, a second thread waits meanwhile on a
 * receive that rank 0 satisfies after the collectives. */
static void round_trip(int rank, int with_other)
{
	int a = -1, token = 0;
	MPI_Request r[2], late = MPI_REQUEST_NULL;
	pthread_t t;
	CHECK_MPI(MPI_Bcast_init(&a, 1, MPI_INT, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]));
	CHECK_MPI(MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]));
	if (with_other && rank == 1) {
		CHECK_MPI(MPI_Irecv(&token, 1, MPI_INT, 0, 77, MPI_COMM_WORLD, &late));
		CHECK(pthread_create(&t, NULL, wait_other, &late) == 0);
		sleep_ms(20); /* it waits first: the Waitall below is delegated */
	}
	if (rank == 0) {
		a = 42;
		CHECK_MPI(MPI_Start(&r[0]));
		CHECK_MPI(MPI_Start(&r[1]));
	} else {
		sleep_ms(20); /* the barrier's partner is late */
		CHECK_MPI(MPI_Start(&r[1]));
		CHECK_MPI(MPI_Start(&r[0]));
	}
	CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
	CHECK(a == 42);
	if (with_other) {
		if (rank == 0)
			CHECK_MPI(MPI_Send(&a, 1, MPI_INT, 1, 77, MPI_COMM_WORLD));
		else
			pthread_join(t, NULL);
	}
	CHECK_MPI(MPI_Request_free(&r[0]));
	CHECK_MPI(MPI_Request_free(&r[1]));
}

int main(int argc, char **argv)
{
	int rank;
	if ((rank = init_pair_multiple(&argc, &argv)) < 0)
		return 77;
	for (int i = 0; i < 5; i++) {
		round_trip(rank, 0);
		round_trip(rank, 1);
	}
	MPI_Finalize();
	if (rank == 0)
		printf("pcoll: all checks passed\n");
	return 0;
}

#else

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Finalize();
	printf("MPI %d.%d has no persistent collectives: skipped\n", MPI_VERSION, MPI_SUBVERSION);
	return 77;
}

#endif

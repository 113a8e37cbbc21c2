/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Request-based one-sided operations (MPI_Rput, MPI_Rget and, where the MPI
 * has them, their large-count forms) are requests piano leaves to the MPI
 * (foreign.c): a wait that includes one is the MPI's own, in the caller's
 * thread, never handed to piano's engine, even while another thread of the
 * process waits (the case in which piano hands a wait over). Two ranks;
 * rank 1 locks rank 0's window (passive target), a second thread of rank 1
 * waits for a message rank 0 sends late, and meanwhile rank 1's main thread
 * waits for an Rput then an Rget of the same bytes, whose data must come
 * back exactly, ROUNDS times. Run with PIANO_STATS=1: the test's pass
 * expression wants rank 1's statistics line to say "delegated waits 0".
 * Without the foreign record, MPICH's rank 1 said "delegated waits 1" in 3
 * of 3 runs; Open MPI's one-sided requests are complete by the time the
 * wait looks at them, so there only the data is tested.
 */
#include "mpitest.h"

#include <pthread.h>
#include <string.h>

#define BYTES (64 << 10)
#define ROUNDS 100

/* Rput of out into rank 0's window, then Rget of it back into in, each
 * waited for alone. */
static void put_get(MPI_Win win, const char *out, char *in, int large)
{
	MPI_Request r;
	(void)large;
#if MPI_VERSION >= 4
	if (large) {
		CHECK_MPI(MPI_Rput_c(out, BYTES, MPI_CHAR, 0, 0, BYTES, MPI_CHAR, win, &r));
		CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
		CHECK_MPI(MPI_Win_flush(0, win));
		CHECK_MPI(MPI_Rget_c(in, BYTES, MPI_CHAR, 0, 0, BYTES, MPI_CHAR, win, &r));
		CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
		return;
	}
#endif
	CHECK_MPI(MPI_Rput(out, BYTES, MPI_CHAR, 0, 0, BYTES, MPI_CHAR, win, &r));
	CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
	CHECK_MPI(MPI_Win_flush(0, win));
	CHECK_MPI(MPI_Rget(in, BYTES, MPI_CHAR, 0, 0, BYTES, MPI_CHAR, win, &r));
	CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
}

int main(int argc, char **argv)
{
	int rank, token = 0;
	if ((rank = init_pair_multiple(&argc, &argv)) < 0)
		return 77;
	char *base;
	MPI_Win win;
	CHECK_MPI(MPI_Win_allocate(BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win));
	if (rank == 0) {
		memset(base, 0, BYTES);
		MPI_Barrier(MPI_COMM_WORLD);
		sleep_ms(400);
		CHECK_MPI(MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
	} else {
		char *out = malloc(BYTES), *in = malloc(BYTES);
		CHECK(out && in);
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Request other;
		pthread_t tw;
		CHECK_MPI(MPI_Irecv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &other));
		CHECK(pthread_create(&tw, NULL, wait_other, &other) == 0);
		sleep_ms(20); /* the other thread waits first */
		CHECK_MPI(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win));
		/* Many waits, each short: a delegation, if one happened, is
		 * in the statistics. */
		for (int k = 0; k < ROUNDS; k++) {
			int large = k % 2;
			for (int i = 0; i < BYTES; i++)
				out[i] = (char)(i * 7 + k);
			memset(in, 0, BYTES);
			put_get(win, out, in, large);
			CHECK(memcmp(in, out, BYTES) == 0);
		}
		CHECK_MPI(MPI_Win_unlock(0, win));
		pthread_join(tw, NULL);
		printf("rma foreign: Rput and Rget (%s) waited for beside another waiting thread, "
		       "data back exactly\n",
		       MPI_VERSION >= 4 ? "int and _c forms" : "int forms");
		free(out);
		free(in);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Win_free(&win);
	MPI_Finalize();
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the MPI tests: checks that name the rank and line. */
#ifndef PIANO_MPITEST_H
#define PIANO_MPITEST_H

#include <mpi.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

/* A persistent collective's name: MPI-4's MPI_<coll>_init, or Open MPI's
 * MPIX_<coll>_init (undefined where the MPI has neither). */
#if MPI_VERSION >= 4
#define PCOLL(name) MPI_##name
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define PCOLL(name) MPIX_##name
#endif

/* Gives the launcher time to forward the failing rank's message: MPICH's
 * mpiexec sometimes tore the job down first and the message was lost (1 run
 * in 15 of pcoll_graph_mpi_native, whose pass depends on that message). */
static inline void mpitest_before_abort(void)
{
	const struct timespec t = { 0, 200000000 };
	nanosleep(&t, NULL);
}

#define CHECK(cond)                                                                         \
	do {                                                                                \
		if (!(cond)) {                                                              \
			int r_ = -1;                                                        \
			MPI_Comm_rank(MPI_COMM_WORLD, &r_);                                 \
			fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", r_, __FILE__, \
			        __LINE__, #cond);                                           \
			mpitest_before_abort();                                             \
			MPI_Abort(MPI_COMM_WORLD, 1);                                       \
		}                                                                           \
	} while (0)

#define CHECK_MPI(call) CHECK((call) == MPI_SUCCESS)

/* Whether cond holds on every rank of MPI_COMM_WORLD. A test that skips on
 * what its own process found (its threads, /proc, a loaded library) skips
 * on every rank or none: a rank that went on alone would wait for the
 * others in its first exchange. */
static inline int mpitest_all(int cond)
{
	CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &cond, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
	return cond;
}

/* MPI_Init_thread(MPI_THREAD_MULTIPLE) for a two-rank test; returns this
 * rank, or -1 after MPI_Finalize when the job does not fit (exit 77). */
static inline int init_pair_multiple(int *argc, char ***argv)
{
	int rank, size, provided;
	MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2 || provided < MPI_THREAD_MULTIPLE) {
		MPI_Finalize();
		return -1;
	}
	return rank;
}

/* A flag in node-local shared memory (held by rank 0, set to 0 there), for
 * the two ranks of a one-node pair to signal each other without MPI calls.
 * The caller frees *win and *node. */
static inline _Atomic int *shared_flag(MPI_Comm *node, MPI_Win *win)
{
	int rank, nsize;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	CHECK_MPI(
	        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, node));
	MPI_Comm_size(*node, &nsize);
	CHECK(nsize == 2); /* the flag lives in node-local shared memory */
	_Atomic int *flag;
	CHECK_MPI(MPI_Win_allocate_shared(rank == 0 ? (MPI_Aint)sizeof(*flag) : 0, 1, MPI_INFO_NULL,
	                                  *node, &flag, win));
	MPI_Aint sz;
	int disp;
	CHECK_MPI(MPI_Win_shared_query(*win, 0, &sz, &disp, &flag));
	if (rank == 0)
		atomic_store(flag, 0);
	return flag;
}

static inline void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&ts, &ts))
		;
}

/* A thread that waits on the request `arg` points to: the other waiter
 * that makes a second wait of the process a delegated one under piano. */
static inline void *wait_other(void *arg)
{
	CHECK_MPI(MPI_Wait((MPI_Request *)arg, MPI_STATUS_IGNORE));
	return NULL;
}

/* Monotonic seconds. */
static inline double mpitest_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Computes for ms milliseconds with no MPI call. */
static inline void mpitest_spin_ms(int ms)
{
	double end = mpitest_now() + ms * 1e-3;
	while (mpitest_now() < end)
		;
}

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Deterministic proof of background progress. Rank 1 starts a large
 * receive (or a non-blocking broadcast) and then spins WITHOUT calling MPI
 * until rank 0 reports, through MPI shared memory, that its MPI_Wait on the
 * matching operation returned. The rendezvous needs rank 1's MPI to answer,
 * so this only finishes if something progresses rank 1's MPI in the
 * background. A generous timeout turns "no progress" into a failure.
 *
 * usage: test_progress p2p|coll|allreduce|alltoall|sendrecv|busy[_c|_p]
 *                      [timeout_s (default 20)] [late|streak|eager]
 * "coll" is an MPI_Ibcast from rank 0, "allreduce" an in-place
 * MPI_Iallreduce (MPI_BOR of rank 0's bytes and rank 1's zeros),
 * "alltoall" an MPI_Ialltoall of 8 MiB blocks (rank 0 needs rank 1's block:
 * rank 1's MPI must send it while rank 1 computes), "sendrecv" an
 * MPI_Isendrecv on both ranks (MPI-4: exit 77 elsewhere): rank 0 sends
 * the large message and receives a byte, rank 1 the other way. With
 * "_c", the MPI-4 large-count calls (MPI_Isend_c, MPI_Ibcast_c, ...): the
 * same operations, the same progress (exit 77 where the MPI has none).
 * With "_p" (coll, allreduce, alltoall), the persistent collectives
 * (MPI_Bcast_init ..., Open MPI's MPIX_ forms) started by MPI_Start: the
 * same progress (exit 77 where the MPI has none).
 * "streak" (third argument) makes 16 quick 64 KiB exchanges first: each
 * holds the engine's timer for less than a period, so the long transfer's
 * hold is predicted short (timer.c); it must still get background progress.
 * "eager" makes 16 exchanges of 64 bytes of MPI_CHAR first: the type the
 * long transfer uses is then the thread's last eager one (p2p.c, post_memo),
 * and the long transfer must still be tracked.
 * "late" initialises MPI through PMPI_Init_thread, behind the layer's back,
 * as when piano is loaded after MPI_Init: the layer must set itself up on
 * the first call it intercepts.
 * "serial" checks first that the MPI runs below MPI_THREAD_MULTIPLE
 * (PMPI_Query_thread, past piano's wrapper), as piano's serialized mode
 * (PIANO_MPI_THREAD_LEVEL=auto) makes it, while the application still gets
 * MPI_THREAD_SINGLE: the background progress that follows is piano's
 * serialized calls. "mt" checks that the MPI runs at MPI_THREAD_MULTIPLE
 * (PMPI_Query_thread), as piano asks for it by default.
 *
 * "busy": BOTH ranks spin without calling MPI after posting a point-to-point
 * transfer: rank 1 until the whole message is in its buffer (it reads the
 * buffer of its pending receive, which only a test may do), rank 0 until
 * rank 1 says so. Every core computes, so with idle threads and the timer
 * off only event-driven progress (the socket watcher, over TCP) can move
 * the data, on both sides: the receiver must read it and the sender must
 * write the rest of the message whenever the kernel has room for it.
 */
#include "mpitest.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#define LEN (16 << 20)

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#if MPI_VERSION >= 4
#define LARGE(call) call##_c
#else /* never called: main() skips first */
#define LARGE(call) call
#endif

/* Ialltoall's send buffer: each rank sends 'x' blocks, so the receive
 * buffer ends as the broadcast's does. */
static char *alltoall_source(void)
{
	char *s = malloc(LEN);
	CHECK(s);
	memset(s, 'x', LEN);
	return s;
}

/* The collective as a persistent one: initialized, then started. */
static void start_persistent(int coll, char *buf, MPI_Request *req)
{
#ifdef PCOLL
	if (coll == 3)
		CHECK_MPI(PCOLL(Alltoall_init)(alltoall_source(), LEN / 2, MPI_CHAR, buf, LEN / 2,
		                               MPI_CHAR, MPI_COMM_WORLD, MPI_INFO_NULL, req));
	else if (coll == 2)
		CHECK_MPI(PCOLL(Allreduce_init)(MPI_IN_PLACE, buf, LEN, MPI_BYTE, MPI_BOR,
		                                MPI_COMM_WORLD, MPI_INFO_NULL, req));
	else
		CHECK_MPI(PCOLL(Bcast_init)(buf, LEN, MPI_CHAR, 0, MPI_COMM_WORLD, MPI_INFO_NULL,
		                            req));
	CHECK_MPI(MPI_Start(req));
#else
	(void)coll;
	(void)buf;
	(void)req;
	CHECK(0); /* main() skips first */
#endif
}

static void start(int coll, bool large, int rank, char *buf, MPI_Request *req)
{
	if (coll == 3) {
		static char *src;
		if (!src)
			src = alltoall_source();
		if (large)
			CHECK_MPI(LARGE(MPI_Ialltoall)(src, LEN / 2, MPI_CHAR, buf, LEN / 2, MPI_CHAR,
			                               MPI_COMM_WORLD, req));
		else
			CHECK_MPI(MPI_Ialltoall(src, LEN / 2, MPI_CHAR, buf, LEN / 2, MPI_CHAR,
			                        MPI_COMM_WORLD, req));
	} else if (large && coll == 2)
		CHECK_MPI(LARGE(MPI_Iallreduce)(MPI_IN_PLACE, buf, LEN, MPI_BYTE, MPI_BOR,
		                                MPI_COMM_WORLD, req));
	else if (large && coll)
		CHECK_MPI(LARGE(MPI_Ibcast)(buf, LEN, MPI_CHAR, 0, MPI_COMM_WORLD, req));
	else if (large && rank == 0)
		CHECK_MPI(LARGE(MPI_Isend)(buf, LEN, MPI_CHAR, 1, 7, MPI_COMM_WORLD, req));
	else if (large)
		CHECK_MPI(LARGE(MPI_Irecv)(buf, LEN, MPI_CHAR, 0, 7, MPI_COMM_WORLD, req));
	else if (coll == 2) /* 'x' | 0 = 'x': the same check as the broadcast's */
		CHECK_MPI(MPI_Iallreduce(MPI_IN_PLACE, buf, LEN, MPI_BYTE, MPI_BOR, MPI_COMM_WORLD,
		                         req));
	else if (coll)
		CHECK_MPI(MPI_Ibcast(buf, LEN, MPI_CHAR, 0, MPI_COMM_WORLD, req));
	else if (rank == 0)
		CHECK_MPI(MPI_Isend(buf, LEN, MPI_CHAR, 1, 7, MPI_COMM_WORLD, req));
	else
		CHECK_MPI(MPI_Irecv(buf, LEN, MPI_CHAR, 0, 7, MPI_COMM_WORLD, req));
}

/* MPI_Isendrecv (MPI-4): rank 0 sends the buffer to rank 1 and receives
 * one byte from it, rank 1 the other way round. */
static void start_sendrecv(bool large, int rank, char *buf, MPI_Request *req)
{
#if MPI_VERSION >= 4
	static char one = 'y', got;
	int peer = 1 - rank;
	MPI_Count sn = rank == 0 ? LEN : 1, rn = rank == 0 ? 1 : LEN;
	void *s = rank == 0 ? buf : &one, *r = rank == 0 ? &got : buf;
	if (large)
		CHECK_MPI(MPI_Isendrecv_c(s, sn, MPI_CHAR, peer, 7, r, rn, MPI_CHAR, peer, 7,
		                          MPI_COMM_WORLD, req));
	else
		CHECK_MPI(MPI_Isendrecv(s, (int)sn, MPI_CHAR, peer, 7, r, (int)rn, MPI_CHAR, peer,
		                        7, MPI_COMM_WORLD, req));
#else
	(void)large;
	(void)rank;
	(void)buf;
	(void)req;
	CHECK(0); /* main() skips first */
#endif
}

static int all_arrived(const volatile char *buf)
{
	if (buf[LEN - 1] != 'x') /* one stream, in order: the last byte comes last */
		return 0;
	for (long i = 0; i < LEN; i++)
		if (buf[i] != 'x')
			return 0;
	return 1;
}

/* "busy" mode: no MPI call on either rank until the data is delivered. */
static int spin_until_delivered(int rank, char *buf, _Atomic int *flag, double timeout_s)
{
	double t0 = now();
	while (rank == 1 ? !all_arrived(buf) : !atomic_load(flag)) {
		if (now() - t0 > timeout_s) {
			fprintf(stderr,
			        "rank %d: no background progress: the message was not "
			        "delivered within %.0f s while both ranks computed\n",
			        rank, timeout_s);
			return 0;
		}
	}
	if (rank == 1) {
		atomic_store(flag, 1);
		printf("rank 1: 16 MiB delivered after %.3f s, no MPI call on either rank\n",
		       now() - t0);
	}
	return 1;
}

/* 16 exchanges of `size` bytes of MPI_CHAR with the other rank. */
static void exchanges(int rank, int size)
{
	static char small[2][64 << 10];
	for (int i = 0; i < 16; i++) {
		MPI_Request r[2];
		CHECK_MPI(MPI_Irecv(small[0], size, MPI_CHAR, 1 - rank, 3, MPI_COMM_WORLD, &r[0]));
		CHECK_MPI(MPI_Isend(small[1], size, MPI_CHAR, 1 - rank, 3, MPI_COMM_WORLD, &r[1]));
		CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
	}
}

int main(int argc, char **argv)
{
	int provided, rank, size;
	if (argc > 3 && strcmp(argv[3], "late") == 0)
		PMPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	else
		MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	CHECK(size == 2);
	if (argc > 3 && strcmp(argv[3], "serial") == 0) {
		int real = -1, app = -1;
		CHECK_MPI(PMPI_Query_thread(&real));
		CHECK_MPI(MPI_Query_thread(&app));
		if (real == MPI_THREAD_MULTIPLE || app != MPI_THREAD_SINGLE) {
			fprintf(stderr,
			        "rank %d: not serialized: the MPI runs at level %d, the "
			        "application got %d\n",
			        rank, real, app);
			/* exit, not MPI_Abort: MPICH's launcher, killing the job
			 * on an abort, sometimes dropped this line, which the
			 * _fails case matches (as set-up errors, docs/mpi.md). */
			exit(1);
		}
	}
	if (argc > 3 && strcmp(argv[3], "mt") == 0) {
		int real = -1;
		CHECK_MPI(PMPI_Query_thread(&real));
		if (real != MPI_THREAD_MULTIPLE) {
			fprintf(stderr,
			        "rank %d: the MPI runs at level %d, not MPI_THREAD_MULTIPLE\n",
			        rank, real);
			exit(1); /* as above */
		}
	}
	char kind[16] = "p2p";
	if (argc > 1)
		snprintf(kind, sizeof(kind), "%s", argv[1]);
	size_t klen = strlen(kind);
	bool large = klen > 2 && strcmp(kind + klen - 2, "_c") == 0;
	bool persistent = klen > 2 && strcmp(kind + klen - 2, "_p") == 0;
	if (large || persistent)
		kind[klen - 2] = 0;
#ifndef PCOLL
	if (persistent) {
		if (rank == 0)
			printf("no persistent collectives in this MPI\n");
		MPI_Finalize();
		return 77;
	}
#endif
	if (large && MPI_VERSION < 4) {
		if (rank == 0)
			printf("no MPI-4 large-count calls in this MPI\n");
		MPI_Finalize();
		return 77;
	}
	int coll = strcmp(kind, "coll") == 0;
	if (strcmp(kind, "allreduce") == 0)
		coll = 2;
	if (strcmp(kind, "alltoall") == 0)
		coll = 3;
	int busy = strcmp(kind, "busy") == 0;
	bool sendrecv = strcmp(kind, "sendrecv") == 0;
	if (sendrecv && MPI_VERSION < 4) {
		if (rank == 0)
			printf("no MPI_Isendrecv in this MPI\n");
		MPI_Finalize();
		return 77;
	}
	CHECK(!persistent || coll);
	double timeout_s = argc > 2 ? atof(argv[2]) : 20.0;

	MPI_Comm node;
	MPI_Win win;
	_Atomic int *flag = shared_flag(&node, &win);
	if (busy) {
		/* Open the connection first: the watcher wakes on data and on
		 * room to write more of it, not on a connect() completing. */
		char out = 'w', in = 0;
		CHECK_MPI(MPI_Sendrecv(&out, 1, MPI_CHAR, 1 - rank, 1, &in, 1, MPI_CHAR, 1 - rank,
		                       1, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	}
	MPI_Barrier(MPI_COMM_WORLD);

	char *buf = malloc(LEN);
	CHECK(buf);
	memset(buf, rank == 0 && coll != 3 ? 'x' : 0, LEN);
	MPI_Request req;
	/* A streak of quick tracked exchanges first (64 KiB, above the eager
	 * limit): each holds the engine's timer for far less than a period,
	 * which must not cost the long transfer below its background progress.
	 * Or eager ones, of the long transfer's type. */
	if (argc > 3 && strcmp(argv[3], "streak") == 0)
		exchanges(rank, 64 << 10);
	if (argc > 3 && strcmp(argv[3], "eager") == 0)
		exchanges(rank, 64);
	if (persistent)
		start_persistent(coll, buf, &req);
	else if (sendrecv)
		start_sendrecv(large, rank, buf, &req);
	else
		start(coll, large, rank, buf, &req);
	int ok = 1;
	if (busy) {
		ok = spin_until_delivered(rank, buf, flag, timeout_s);
		CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
		CHECK(buf[0] == 'x' && buf[LEN - 1] == 'x');
	} else if (rank == 0) {
		CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
		atomic_store(flag, 1);
	} else {
		double t0 = now();
		while (!atomic_load(flag)) /* no MPI call in this loop */
			if (now() - t0 > timeout_s) {
				fprintf(stderr,
				        "rank 1: no background progress: rank 0's wait did "
				        "not return within %.0f s\n",
				        timeout_s);
				ok = 0;
				break;
			}
		if (ok)
			printf("rank 1: rank 0's wait returned after %.3f s without any MPI "
			       "call on rank 1\n",
			       now() - t0);
		CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
		CHECK(buf[0] == 'x' && buf[LEN - 1] == 'x');
	}
	if (persistent)
		CHECK_MPI(MPI_Request_free(&req));
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	MPI_Win_free(&win);
	MPI_Comm_free(&node);
	free(buf);
	MPI_Finalize();
	return ok ? 0 : 1;
}

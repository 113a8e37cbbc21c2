/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mpi.<mpi>.report* — the overlap report's rows (tests/mpi/report.sh runs
 * this under piano-run with PIANO_REPORT and checks the JSON with
 * report_check.py): call sites with known kinds, counts, bytes and
 * diagnoses, each in its own function so that the report must name it.
 * Ranks pair as r and r^1 (an even count). Rank 0 writes what each site
 * must show to the file named by argv[1], one line per site:
 *   FUNCTION LINE KIND PROTOCOL OPS BYTES FREED PENDING DIAGNOSIS|-
 * per rank (the checker multiplies by the ranks), DIAGNOSIS a word the
 * site's diagnoses must contain.
 */
#include "mpitest.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define ITERS 10
#define BIG (1 << 20) /* bytes: rendezvous on both MPIs */
#if defined(__clang__) /* clang makes no clones and knows no noclone */
#define NOINLINE __attribute__((noinline))
#else
#define NOINLINE __attribute__((noinline, noclone))
#endif
#define FILE_BYTES (64 << 10)
/* The wait_at_once loop's count, and the time its first operation computes
 * between post and wait: as a thread preempted there would (a scheduler
 * slice), which must not change the diagnosis of the forty. */
#define WAIT_ITERS 40
#define WAIT_LATE_US 3000

static int rank, peer;
static bool demangler; /* the C++ runtime is loaded (main) */
static char *sbuf, *rbuf;
static FILE *expect;

static void want(const char *fn, int line, const char *kind, const char *proto, long ops,
                 long bytes, long freed, long pending, const char *diag)
{
	if (expect)
		fprintf(expect, "%s %d %s %s %ld %ld %ld %ld %s\n", fn, line, kind, proto, ops,
		        bytes, freed, pending, diag);
}

static void compute(double us)
{
	double t0 = MPI_Wtime();
	while ((MPI_Wtime() - t0) * 1e6 < us)
		;
}

/* An exchange with computation between post and wait. */
NOINLINE void overlapped(void)
{
	MPI_Request r[2];
	int lr = 0, ls = 0;
	for (int i = 0; i < ITERS; i++) {
		lr = __LINE__ + 1;
		CHECK_MPI(MPI_Irecv(rbuf, BIG, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &r[0]));
		ls = __LINE__ + 1;
		CHECK_MPI(MPI_Isend(sbuf, BIG, MPI_BYTE, peer, 1, MPI_COMM_WORLD, &r[1]));
		compute(2000);
		CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
	}
	want("overlapped", lr, "irecv", "rndv", ITERS, (long)ITERS * BIG, 0, 0, "-");
	want("overlapped", ls, "isend", "rndv", ITERS, (long)ITERS * BIG, 0, 0, "-");
}

/* A send waited for right after its post, but once: nothing to overlap. */
NOINLINE void wait_at_once(void)
{
	MPI_Request r, s;
	int ls = 0;
	for (int i = 0; i < WAIT_ITERS; i++) {
		CHECK_MPI(MPI_Irecv(rbuf, BIG, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &r));
		CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD)); /* the peer's receive is posted */
		ls = __LINE__ + 1;
		CHECK_MPI(MPI_Isend(sbuf, BIG, MPI_BYTE, peer, 2, MPI_COMM_WORLD, &s));
		if (i == 0)
			compute(WAIT_LATE_US);
		CHECK_MPI(MPI_Wait(&s, MPI_STATUS_IGNORE));
		CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
	}
	/* Not "still in flight": that mean window is the late wait's. */
	want("wait_at_once", ls, "isend", "rndv", WAIT_ITERS, (long)WAIT_ITERS * BIG, 0, 0,
	     "follows!flight");
}

/* Eager-size messages. Its symbol is the C++ one of `eager()`: the report
 * must demangle it when the process has the C++ runtime (main() loads it)
 * and keep it as it is when it has not. */
NOINLINE void eager(void) __asm__("_Z5eagerv");
NOINLINE void eager(void)
{
	MPI_Request r[2];
	int ls = 0;
	for (int i = 0; i < ITERS; i++) {
		CHECK_MPI(MPI_Irecv(rbuf, 8, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &r[0]));
		ls = __LINE__ + 1;
		CHECK_MPI(MPI_Isend(sbuf, 8, MPI_BYTE, peer, 3, MPI_COMM_WORLD, &r[1]));
		CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
	}
	want(demangler ? "eager()" : "_Z5eagerv", ls, "isend", "eager", ITERS, ITERS * 8L, 0, 0,
	     "eager-size");
}

/* A collective, 1 MiB of ints, waited for after some computation. */
NOINLINE void allreduce(void)
{
	MPI_Request r;
	int l = 0, n = BIG / (int)sizeof(int);
	for (int i = 0; i < ITERS; i++) {
		l = __LINE__ + 1;
		CHECK_MPI(MPI_Iallreduce(sbuf, rbuf, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r));
		compute(1000);
		CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
	}
	want("allreduce", l, "iallreduce", "-", ITERS, (long)ITERS * BIG, 0, 0, "-");
}

/* Non-blocking file writes, each rank to its own file beside the EXPECT
 * file (a directory the test made). piano's file helper makes them where
 * it can (docs/mpi.md, "Non-blocking file I/O"): on Open MPI with
 * background progress; the MPI's own call on MPICH (contiguous and
 * independent: ROMIO's AIO) and without background progress. */
NOINLINE void file_io(const char *expect_path)
{
	char name[4096];
	const char *slash = strrchr(expect_path, '/');
	int dlen = slash ? (int)(slash - expect_path) : 1;
	snprintf(name, sizeof(name), "%.*s/report-file.%d", dlen, slash ? expect_path : ".", rank);
	MPI_File fh;
	CHECK_MPI(MPI_File_open(MPI_COMM_SELF, name,
	                        MPI_MODE_CREATE | MPI_MODE_WRONLY | MPI_MODE_DELETE_ON_CLOSE,
	                        MPI_INFO_NULL, &fh));
	MPI_Request r;
	int l = 0;
	for (int i = 0; i < ITERS; i++) {
		l = __LINE__ + 1;
		CHECK_MPI(MPI_File_iwrite_at(fh, (MPI_Offset)i * FILE_BYTES, sbuf, FILE_BYTES,
		                             MPI_BYTE, &r));
		compute(500);
		CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
	}
	CHECK_MPI(MPI_File_close(&fh));
	const char *progress = getenv("PIANO_PROGRESSION");
	bool ours = !(progress && strcmp(progress, "0") == 0);
#if defined(MPICH_VERSION)
	ours = false;
#endif
	want("file_io", l, "file_iwrite_at", ours ? "piano" : "mpi", ITERS,
	     (long)ITERS * FILE_BYTES, 0, 0, "-");
}

/* A send freed before it completed, and a receive never completed. */
NOINLINE void lost(void)
{
	MPI_Request s, r;
	int lf = __LINE__ + 1;
	CHECK_MPI(MPI_Isend(sbuf, 8, MPI_BYTE, peer, 4, MPI_COMM_WORLD, &s));
	CHECK_MPI(MPI_Request_free(&s));
	CHECK_MPI(MPI_Recv(rbuf, 8, MPI_BYTE, peer, 4, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
	int lp = __LINE__ + 1;
	CHECK_MPI(MPI_Irecv(rbuf + 8, 8, MPI_BYTE, peer, 5, MPI_COMM_WORLD, &r));
	CHECK_MPI(MPI_Send(sbuf, 8, MPI_BYTE, peer, 5, MPI_COMM_WORLD));
	CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	want("lost", lf, "isend", "eager", 0, 0, 1, 0, "MPI_Request_free");
	want("lost", lp, "irecv", "eager", 0, 0, 0, 1, "pending");
	/* r stays pending through MPI_Finalize, on purpose. */
}

int main(int argc, char **argv)
{
	int size;
	/* The C++ runtime, whose __cxa_demangle the report uses, as a C++
	 * application would have it; a machine without it checks the
	 * mangled name instead. */
	demangler = dlopen("libstdc++.so.6", RTLD_NOW | RTLD_GLOBAL) != NULL;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size % 2 || argc < 2) {
		if (rank == 0)
			fprintf(stderr, "usage: an even number of ranks, EXPECT-FILE\n");
		MPI_Finalize();
		return 1;
	}
	peer = rank ^ 1;
	sbuf = calloc(1, BIG);
	rbuf = calloc(1, BIG + 16);
	CHECK(sbuf && rbuf);
	if (rank == 0) {
		expect = fopen(argv[1], "w");
		CHECK(expect);
	}
	overlapped();
	wait_at_once();
	eager();
	allreduce();
	file_io(argv[1]);
	lost();
	if (expect)
		CHECK(fclose(expect) == 0);
	MPI_Finalize();
	free(sbuf);
	free(rbuf);
	if (rank == 0)
		printf("report: rank 0 wrote %s\n", argv[1]);
	return 0;
}

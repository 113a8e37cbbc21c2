/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI-IO under piano.
 *
 * usage: test_file io [iterations (default 60)]
 *        test_file gate
 *
 * "io" (1 or 2 ranks, both MPIs): non-blocking, blocking and collective
 * file reads and writes in a loop, the data checked, while a large receive
 * (tracked) stays pending so that piano's progress task runs throughout.
 * On Open MPI a background progress call beside the file calls corrupts
 * the heap (ompio, docs/mpi.md "The gate"): without the gate this test
 * crashes.
 *
 * "gate" (2 ranks, Open MPI): the gate's contract. In each exchange rank 1
 * posts a 16 MiB receive (the rendezvous needs rank 1's MPI to answer) and
 * computes without MPI calls, and rank 0 times its wait. 1. While rank 1
 * holds a file open with no request of the MPI's own, piano progresses its
 * MPI: the exchange completes in the background. 2. While a second file
 * (opened MPI_MODE_SEQUENTIAL, whose MPI_File_iwrite_shared piano leaves to
 * the MPI) has such a request, piano must not: rank 0's wait is still
 * pending after HOLD_S, and rank 1 printed the notice exactly once. 3. Once
 * that file is closed (the first one still open), background progress is
 * back. Closing a file opened with PMPI_File_open (which the layer cannot
 * see) must be reported on stderr, once.
 *
 * Files live in a directory made with mkdtemp and are removed.
 */
#include "mpitest.h"

#include <stdatomic.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N 8192           /* ints per rank and operation */
#define BIG (16 << 20)   /* above every eager limit: tracked */
#define HOLD_S 1.6       /* > the gate's 1 s notice delay */
#define TIMEOUT_S 20.0

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Rank 0 makes a private directory and tells the others its name. */
static void make_dir(int rank, char *dir, size_t len)
{
	if (rank == 0) {
		snprintf(dir, len, "%s/piano-file-XXXXXX",
		         getenv("TMPDIR") && *getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		CHECK(mkdtemp(dir) != NULL);
	}
	CHECK_MPI(MPI_Bcast(dir, (int)len, MPI_CHAR, 0, MPI_COMM_WORLD));
}

static void fill(int *v, int it, int k, int rank)
{
	for (int i = 0; i < N; i++)
		v[i] = it * 1000003 + k * 7919 + i * 31 + rank;
}

static void check_same(const int *a, const int *b, const char *what, int it)
{
	if (memcmp(a, b, N * sizeof(int)) != 0) {
		int rank;
		MPI_Comm_rank(MPI_COMM_WORLD, &rank);
		fprintf(stderr, "rank %d: iteration %d: %s read back different data\n", rank, it, what);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
}

static int run_io(int iters)
{
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	char dir[512], path[600];
	make_dir(rank, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/data", dir);

	/* The pending receive that keeps the progress task polling; matched
	 * at the end (from ourselves with one rank). */
	int peer = (rank + 1) % size, from = (rank + size - 1) % size;
	char *big = malloc(BIG), *bigout = malloc(BIG);
	int *w = malloc(2 * N * sizeof(int)), *r = malloc(2 * N * sizeof(int));
	CHECK(big && bigout && w && r);
	memset(bigout, 'b', BIG);
	MPI_Request pending[2];
	CHECK_MPI(MPI_Irecv(big, BIG, MPI_CHAR, from, 42, MPI_COMM_WORLD, &pending[0]));

	/* Each rank owns two blocks of N ints: [2 rank, 2 rank + 1]. */
	MPI_Offset mine = (MPI_Offset)rank * 2 * N * sizeof(int);
	for (int it = 0; it < iters; it++) {
		MPI_File fh;
		CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
		                        MPI_INFO_NULL, &fh));
		for (int k = 0; k < 8; k++) {
			MPI_Request q[2];
			/* Two requests in flight at once. */
			fill(w, it, k, rank);
			fill(w + N, it, k + 100, rank);
			CHECK_MPI(MPI_File_iwrite_at(fh, mine, w, N, MPI_INT, &q[0]));
			CHECK_MPI(MPI_File_iwrite_at(fh, mine + N * sizeof(int), w + N, N, MPI_INT, &q[1]));
			/* Not MPI_Waitall: docs/mpi.md, "Known limits" (MPICH). */
			for (int done = 0, idx; done < 2; done++)
				CHECK_MPI(MPI_Waitany(2, q, &idx, MPI_STATUS_IGNORE));
			memset(r, 0, 2 * N * sizeof(int));
			CHECK_MPI(MPI_File_iread_at(fh, mine, r, N, MPI_INT, &q[0]));
			CHECK_MPI(MPI_File_iread_at(fh, mine + N * sizeof(int), r + N, N, MPI_INT, &q[1]));
			for (int done = 0, outcount, idx[2]; done < 2; done += outcount)
				CHECK_MPI(MPI_Waitsome(2, q, &outcount, idx, MPI_STATUSES_IGNORE));
			check_same(r, w, "iread_at", it);
			check_same(r + N, w + N, "iread_at", it);
			/* Blocking calls between non-blocking ones. */
			fill(w, it, k + 200, rank);
			CHECK_MPI(MPI_File_write_at(fh, mine, w, N, MPI_INT, MPI_STATUS_IGNORE));
			memset(r, 0, N * sizeof(int));
			CHECK_MPI(MPI_File_read_at(fh, mine, r, N, MPI_INT, MPI_STATUS_IGNORE));
			check_same(r, w, "read_at", it);
		}
		/* Collective, then every rank reads its neighbour's block. */
		fill(w, it, 300, rank);
		CHECK_MPI(MPI_File_write_at_all(fh, mine, w, N, MPI_INT, MPI_STATUS_IGNORE));
		CHECK_MPI(MPI_File_sync(fh));
		MPI_Offset theirs = (MPI_Offset)peer * 2 * N * sizeof(int);
		memset(r, 0, N * sizeof(int));
		CHECK_MPI(MPI_File_read_at_all(fh, theirs, r, N, MPI_INT, MPI_STATUS_IGNORE));
		fill(w, it, 300, peer);
		check_same(r, w, "read_at_all (the neighbour's block)", it);
		CHECK_MPI(MPI_File_close(&fh));
	}

	CHECK_MPI(MPI_Isend(bigout, BIG, MPI_CHAR, peer, 42, MPI_COMM_WORLD, &pending[1]));
	CHECK_MPI(MPI_Waitall(2, pending, MPI_STATUSES_IGNORE));
	CHECK(big[0] == 'b' && big[BIG - 1] == 'b');
	CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0) {
		unlink(path);
		CHECK(rmdir(dir) == 0);
		printf("file io: %d iterations on %d rank(s), data correct\n", iters, size);
	}
	free(big);
	free(bigout);
	free(w);
	free(r);
	return 0;
}

/* Rank 0 sends BIG bytes to rank 1 and raises *flag when its wait returns.
 * Rank 1 computes for up to `spin_s` without calling MPI, or until the flag
 * is up; returns whether the flag came up (rank 0's wait returned while
 * rank 1 made no MPI call). */
static int exchange(int rank, char *buf, _Atomic int *flag, double spin_s)
{
	MPI_Request req;
	int up = 0;
	CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 0) {
		memset(buf, 'x', BIG);
		CHECK_MPI(MPI_Isend(buf, BIG, MPI_CHAR, 1, 7, MPI_COMM_WORLD, &req));
		CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
		atomic_store(flag, 1);
	} else {
		memset(buf, 0, BIG);
		CHECK_MPI(MPI_Irecv(buf, BIG, MPI_CHAR, 0, 7, MPI_COMM_WORLD, &req));
		double t0 = now();
		while (!(up = atomic_load(flag)) && now() - t0 < spin_s)
			; /* no MPI call in this loop */
		CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
		CHECK(buf[0] == 'x' && buf[BIG - 1] == 'x');
	}
	CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	if (rank == 1)
		atomic_store(flag, 0);
	CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	return up;
}

static int count(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = hay; (p = strstr(p, needle)); p++)
		n++;
	return n;
}

static int run_gate(void)
{
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	CHECK(size == 2);
	MPI_Comm node;
	MPI_Win win;
	_Atomic int *flag = shared_flag(&node, &win);
	char dir[512], path[600], logpath[600];
	make_dir(rank, dir, sizeof(dir));
	snprintf(path, sizeof(path), "%s/held", dir);
	snprintf(logpath, sizeof(logpath), "%s/stderr-XXXXXX", dir);
	char *buf = malloc(BIG);
	CHECK(buf);
	int ok = 1;

	/* Warm-up: the connection and its buffers exist before we measure. */
	exchange(rank, buf, flag, TIMEOUT_S);

	/* 1. Rank 1 holds a file open, no request: background progress. */
	MPI_File fh, seq;
	if (rank == 1)
		CHECK_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_RDWR | MPI_MODE_CREATE,
		                        MPI_INFO_NULL, &fh));
	int moved = exchange(rank, buf, flag, TIMEOUT_S);
	if (rank == 1 && !moved) {
		fprintf(stderr, "rank 1: no background progress while a file without requests was "
		                "open: rank 0's wait did not return within %.0f s\n", TIMEOUT_S);
		ok = 0;
	}

	/* 2. A file request of the MPI's own: no background progress, one
	 * notice. */
	int logfd = -1, saved = -1;
	MPI_Request fr = MPI_REQUEST_NULL;
	char seqpath[620];
	snprintf(seqpath, sizeof(seqpath), "%s.seq", path);
	if (rank == 1) {
		logfd = mkstemp(logpath);
		saved = dup(2);
		CHECK(logfd >= 0 && saved >= 0);
		fflush(stderr);
		CHECK(dup2(logfd, 2) >= 0);
		CHECK_MPI(MPI_File_open(MPI_COMM_SELF, seqpath,
		                        MPI_MODE_WRONLY | MPI_MODE_CREATE | MPI_MODE_SEQUENTIAL,
		                        MPI_INFO_NULL, &seq));
		static char small[4096];
		CHECK_MPI(MPI_File_iwrite_shared(seq, small, sizeof(small), MPI_CHAR, &fr));
	}
	moved = exchange(rank, buf, flag, HOLD_S);
	if (rank == 1) {
		CHECK_MPI(MPI_Wait(&fr, MPI_STATUS_IGNORE));
		CHECK_MPI(MPI_File_close(&seq));
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
		char log[8192] = "";
		ssize_t n = pread(logfd, log, sizeof(log) - 1, 0);
		log[n > 0 ? n : 0] = '\0';
		close(logfd);
		unlink(logpath);
		fputs(log, stderr); /* keep what was said visible in the test log */
		if (moved) {
			fprintf(stderr, "rank 1: background progress while a file request of the "
			                "MPI's own existed: rank 0's wait returned while rank 1 made no "
			                "MPI call\n");
			ok = 0;
		}
		int notices = count(log, "no background progress for over");
		if (notices != 1) {
			fprintf(stderr, "rank 1: %d notices on stderr while the gate was closed for "
			                "%.1f s with work pending, expected exactly 1\n", notices, HOLD_S);
			ok = 0;
		}
		unlink(seqpath);
	}

	/* 3. That file is closed, the first one still open: background
	 * progress is back. */
	moved = exchange(rank, buf, flag, TIMEOUT_S);
	if (rank == 1 && !moved) {
		fprintf(stderr, "rank 1: no background progress after the MPI_File_close of the "
		                "file with a request: rank 0's wait did not return within %.0f s\n",
		        TIMEOUT_S);
		ok = 0;
	}
	if (rank == 1) {
		CHECK_MPI(MPI_File_close(&fh));
		unlink(path);
	}

	/* 3. A file opened behind the layer's back (PMPI_File_open) cannot
	 * have closed the gate: its MPI_File_close says so, once. */
	if (rank == 0) {
		char unseen[600];
		snprintf(unseen, sizeof(unseen), "%s/unseen", dir);
		snprintf(logpath, sizeof(logpath), "%s/stderr-XXXXXX", dir);
		logfd = mkstemp(logpath);
		saved = dup(2);
		CHECK(logfd >= 0 && saved >= 0);
		fflush(stderr);
		CHECK(dup2(logfd, 2) >= 0);
		for (int i = 0; i < 2; i++) {
			CHECK_MPI(PMPI_File_open(MPI_COMM_SELF, unseen, MPI_MODE_RDWR | MPI_MODE_CREATE,
			                         MPI_INFO_NULL, &fh));
			CHECK_MPI(MPI_File_close(&fh));
		}
		fflush(stderr);
		dup2(saved, 2);
		close(saved);
		char log[8192] = "";
		ssize_t n = pread(logfd, log, sizeof(log) - 1, 0);
		log[n > 0 ? n : 0] = '\0';
		close(logfd);
		unlink(logpath);
		unlink(unseen);
		fputs(log, stderr);
		int said = count(log, "did not see opened");
		if (said != 1) {
			fprintf(stderr, "rank 0: closing a file opened with PMPI_File_open twice was "
			                "reported %d times, expected once\n", said);
			ok = 0;
		}
	}

	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (rank == 0) {
		CHECK(rmdir(dir) == 0);
		if (ok)
			printf("file gate: background progress while a file without requests was "
			       "open, none while a file request of the MPI's own existed (one "
			       "notice), back after that file's close, an unseen open reported\n");
	}
	MPI_Win_free(&win);
	MPI_Comm_free(&node);
	free(buf);
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
	const char *mode = argc > 1 ? argv[1] : "io";
	int rc;
	if (strcmp(mode, "gate") == 0) {
		rc = run_gate();
	} else {
		CHECK(strcmp(mode, "io") == 0);
		rc = run_io(argc > 2 ? atoi(argv[2]) : 60);
	}
	MPI_Finalize();
	return rc;
}

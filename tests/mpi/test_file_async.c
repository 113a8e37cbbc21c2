/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Non-blocking file calls (docs/mpi.md, "Non-blocking file I/O").
 *
 *   test_file_async data|native-openmpi|native-mpich
 *     Every rank, on a file of its own: each of MPI_File_iwrite_at, iwrite,
 *     iwrite_shared writes, iread_at, iread, iread_shared read back, with a
 *     contiguous buffer, a strided one (a vector type) and under a file view
 *     (a strided filetype); the bytes are compared, the individual file
 *     pointer checked after each call, the status's count checked (a read
 *     past the end of the file reads what is there), a write to a read-only
 *     file fails at the call, requests complete mixed with a point-to-point
 *     request in one MPI_Waitall, and two threads write two files at once.
 *     The same assertions hold natively, but for two defects of the MPIs
 *     that the native runs leave out ("native-openmpi": Open MPI 4.1's
 *     MPI_Wait never returns for an iread that meets the end of the file;
 *     "native-mpich": MPICH's status of a strided iwrite has count
 *     MPI_UNDEFINED).
 *
 *   test_file_async sleepwait
 *     Rank 0 waits (MPI_Wait) for an MPI_File_iwrite_at of 128 MiB (from
 *     every other 1 KiB block of a buffer) right
 *     after starting it: the waiting thread must sleep while piano's helper
 *     makes the transfer (its CPU time, RUSAGE_THREAD, under a third of
 *     the wait's length), not spin in the MPI on a core the helper needs.
 *     Waits shorter than 20 ms prove nothing and are made again (3 tries).
 *
 *   test_file_async proof SECONDS [contig|strided] (2 ranks)
 *     Rank 0 starts an MPI_File_iwrite_at of 64 MiB (from a contiguous
 *     buffer, or from every other 1 KiB block of one), checks that the call did not
 *     make the whole transfer itself, then computes without
 *     any MPI call until rank 1, which watches the file with plain POSIX
 *     reads, has seen every byte (it then creates a marker file). Passes
 *     only if the transfer happened while rank 0 computed; after SECONDS it
 *     prints "no background progress" and fails. The file lives in a
 *     directory made with mkdtemp.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RUSAGE_THREAD */
#endif
#include "filetest.h"

#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define N 100000 /* ints per transfer: several chunks of PIANO_MPI_FILE_CHUNK=65536 */

static char dir[] = "/tmp/piano-file-async-XXXXXX";
static bool skip_eof, skip_strided_count;

static MPI_File open_file(const char *name, int amode)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	MPI_File fh;
	if (MPI_File_open(MPI_COMM_SELF, path, amode, MPI_INFO_NULL, &fh) != MPI_SUCCESS) {
		fprintf(stderr, "cannot open %s\n", path);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	return fh;
}

/* Contiguous: explicit offsets, the individual pointer, the shared one. */
static void contiguous(int rank)
{
	char name[32];
	snprintf(name, sizeof(name), "contig.%d", rank);
	MPI_File fh = open_file(name, MPI_MODE_CREATE | MPI_MODE_RDWR);
	int *out = malloc(3 * N * sizeof(int)), *in = malloc(3 * N * sizeof(int));
	CHECK(out && in);
	fill(out, 3 * N, rank);
	MPI_Request r[3];
	MPI_Status st[3];
	/* Offsets in bytes (the default view): [0,N) by iwrite_at at the end,
	 * [N,2N) by iwrite after a seek, then iwrite_shared... the shared
	 * pointer starts at 0, so it goes first. */
	CHECK_MPI(MPI_File_iwrite_shared(fh, out, N, MPI_INT, &r[0]));
	CHECK_MPI(MPI_Wait(&r[0], &st[0]));
	check_count(&st[0], MPI_INT, N, "iwrite_shared");
	CHECK_MPI(MPI_File_seek(fh, (MPI_Offset)N * sizeof(int), MPI_SEEK_SET));
	CHECK_MPI(MPI_File_iwrite(fh, out + N, N, MPI_INT, &r[1]));
	check_pos(fh, (MPI_Offset)2 * N * sizeof(int), "after iwrite");
	CHECK_MPI(MPI_File_iwrite_at(fh, (MPI_Offset)2 * N * sizeof(int), out + 2 * N, N, MPI_INT,
	                             &r[2]));
	check_pos(fh, (MPI_Offset)2 * N * sizeof(int), "after iwrite_at");
	CHECK_MPI(MPI_Waitall(2, &r[1], &st[1]));
	check_count(&st[1], MPI_INT, N, "iwrite");
	check_count(&st[2], MPI_INT, N, "iwrite_at");

	/* Read back: all of it at an explicit offset, then through the
	 * individual pointer and past the end of the file. */
	memset(in, 0, 3 * N * sizeof(int));
	CHECK_MPI(MPI_File_iread_at(fh, 0, in, 3 * N, MPI_INT, &r[0]));
	CHECK_MPI(MPI_Wait(&r[0], &st[0]));
	check_count(&st[0], MPI_INT, 3 * N, "iread_at");
	check_same(in, out, 3 * N, "iread_at");
	CHECK_MPI(MPI_File_seek(fh, (MPI_Offset)2 * N * sizeof(int), MPI_SEEK_SET));
	memset(in, 0, 3 * N * sizeof(int));
	int ask = skip_eof ? N : 2 * N;
	CHECK_MPI(MPI_File_iread(fh, in, ask, MPI_INT, &r[0]));
	check_pos(fh, (MPI_Offset)(2 * N + ask) * sizeof(int), "after iread");
	CHECK_MPI(MPI_Wait(&r[0], &st[0]));
	check_count(&st[0], MPI_INT, N, "iread past the end");
	check_same(in, out + 2 * N, N, "iread");
	/* The shared pointer went to N ints with the first write. */
	memset(in, 0, 3 * N * sizeof(int));
	CHECK_MPI(MPI_File_iread_shared(fh, in, N, MPI_INT, &r[0]));
	CHECK_MPI(MPI_Wait(&r[0], &st[0]));
	check_count(&st[0], MPI_INT, N, "iread_shared");
	check_same(in, out + N, N, "iread_shared");
	MPI_Offset shared = -1;
	CHECK_MPI(MPI_File_get_position_shared(fh, &shared));
	CHECK(shared == (MPI_Offset)2 * N * sizeof(int));
	CHECK_MPI(MPI_File_close(&fh));
	free(out);
	free(in);
}

/* A strided buffer (every other int) and a strided view (etype int,
 * filetype: 1 int of every 3), with pointers counted in etypes. */
static void strided(int rank)
{
	char name[32];
	snprintf(name, sizeof(name), "strided.%d", rank);
	MPI_File fh = open_file(name, MPI_MODE_CREATE | MPI_MODE_RDWR);
	int *out = malloc(2 * N * sizeof(int)), *in = malloc(2 * N * sizeof(int));
	CHECK(out && in);
	fill(out, 2 * N, rank + 7);
	MPI_Datatype every_other, filetype, resized;
	CHECK_MPI(MPI_Type_vector(N, 1, 2, MPI_INT, &every_other));
	CHECK_MPI(MPI_Type_commit(&every_other));
	CHECK_MPI(MPI_Type_vector(1, 1, 3, MPI_INT, &filetype));
	CHECK_MPI(MPI_Type_create_resized(filetype, 0, 3 * sizeof(int), &resized));
	CHECK_MPI(MPI_Type_commit(&resized));
	CHECK_MPI(MPI_File_set_view(fh, 0, MPI_INT, resized, "native", MPI_INFO_NULL));
	MPI_Request r;
	MPI_Status st;
	/* N ints of the view (file ints 0, 3, 6...) from every other int of
	 * out; the application frees its type handle at once. */
	CHECK_MPI(MPI_File_iwrite(fh, out, 1, every_other, &r));
	MPI_Datatype gone = every_other;
	CHECK_MPI(MPI_Type_free(&gone));
	check_pos(fh, N, "after a strided iwrite (etypes)");
	CHECK_MPI(MPI_Wait(&r, &st));
	if (!skip_strided_count)
		check_count(&st, every_other, 1, "strided iwrite");
	/* Read the view back contiguously, at an explicit offset in etypes. */
	CHECK_MPI(MPI_File_iread_at(fh, 0, in, N, MPI_INT, &r));
	CHECK_MPI(MPI_Wait(&r, &st));
	check_count(&st, MPI_INT, N, "iread_at through the view");
	for (int i = 0; i < N; i++)
		if (in[i] != out[2 * i]) {
			fprintf(stderr, "strided: view int %d is %d, expected %d\n", i, in[i],
			        out[2 * i]);
			exit(1);
		}
	CHECK_MPI(MPI_File_close(&fh));
	CHECK_MPI(MPI_Type_free(&resized));
	CHECK_MPI(MPI_Type_free(&filetype));
	free(out);
	free(in);
}

/* A write to a file opened read-only fails at the call, and the file's
 * error handler (MPI_ERRORS_RETURN by default) returns the error. */
static void read_only(int rank)
{
	char name[32];
	snprintf(name, sizeof(name), "ro.%d", rank);
	MPI_File fh = open_file(name, MPI_MODE_CREATE | MPI_MODE_WRONLY);
	CHECK_MPI(MPI_File_close(&fh));
	fh = open_file(name, MPI_MODE_RDONLY);
	int v = 1, cls = 0;
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_File_iwrite_at(fh, 0, &v, 1, MPI_INT, &r);
	MPI_Error_class(rc, &cls);
	if (rc == MPI_SUCCESS || cls != MPI_ERR_READ_ONLY) {
		/* Open MPI and MPICH both name it MPI_ERR_READ_ONLY or
		 * MPI_ERR_ACCESS. */
		if (rc == MPI_SUCCESS || cls != MPI_ERR_ACCESS) {
			fprintf(stderr, "write to a read-only file: rc %d class %d\n", rc, cls);
			exit(1);
		}
	}
	CHECK_MPI(MPI_File_close(&fh));
}

/* File requests and a point-to-point request in one MPI_Waitall. */
static void mixed(int rank, int size)
{
	char name[32];
	snprintf(name, sizeof(name), "mixed.%d", rank);
	MPI_File fh = open_file(name, MPI_MODE_CREATE | MPI_MODE_RDWR);
	int *out = malloc(N * sizeof(int)), *in = malloc(N * sizeof(int));
	CHECK(out && in);
	fill(out, N, rank + 3);
	int peer = rank ^ 1, token = rank, got = -1;
	MPI_Request r[4];
	MPI_Status st[4];
	int np = peer < size ? 2 : 0;
	if (np) {
		CHECK_MPI(MPI_Irecv(&got, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &r[2]));
		CHECK_MPI(MPI_Isend(&token, 1, MPI_INT, peer, 5, MPI_COMM_WORLD, &r[3]));
	}
	CHECK_MPI(MPI_File_iwrite_at(fh, 0, out, N / 2, MPI_INT, &r[0]));
	CHECK_MPI(MPI_File_iwrite_at(fh, (MPI_Offset)(N / 2) * sizeof(int), out + N / 2, N / 2,
	                             MPI_INT, &r[1]));
	CHECK_MPI(MPI_Waitall(2 + np, r, st));
	CHECK(!np || got == peer);
	int done = 0;
	CHECK_MPI(MPI_File_iread_at(fh, 0, in, N, MPI_INT, &r[0]));
	while (!done)
		CHECK_MPI(MPI_Test(&r[0], &done, &st[0]));
	check_same(in, out, N, "mixed");
	CHECK_MPI(MPI_File_close(&fh));
	free(out);
	free(in);
}

struct job {
	int rank, id, ok;
};

static void *writer(void *arg)
{
	struct job *j = arg;
	char name[32];
	snprintf(name, sizeof(name), "thread%d.%d", j->id, j->rank);
	MPI_File fh = open_file(name, MPI_MODE_CREATE | MPI_MODE_RDWR);
	int *out = malloc(N * sizeof(int)), *in = malloc(N * sizeof(int));
	fill(out, N, j->id * 31 + j->rank);
	MPI_Request r;
	j->ok = out && in && MPI_File_iwrite_at(fh, 0, out, N, MPI_INT, &r) == MPI_SUCCESS &&
	        MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS &&
	        MPI_File_iread_at(fh, 0, in, N, MPI_INT, &r) == MPI_SUCCESS &&
	        MPI_Wait(&r, MPI_STATUS_IGNORE) == MPI_SUCCESS && !memcmp(in, out, N * sizeof(int));
	MPI_File_close(&fh);
	free(out);
	free(in);
	return NULL;
}

static void threads(int rank)
{
	pthread_t t[2];
	struct job j[2] = { { rank, 0, 0 }, { rank, 1, 0 } };
	for (int i = 0; i < 2; i++)
		CHECK(pthread_create(&t[i], NULL, writer, &j[i]) == 0);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	CHECK(j[0].ok && j[1].ok);
}

#define PROOF_INTS (16 << 20) /* 64 MiB */
#define PROOF_BLOCK 256       /* ints: 1 KiB */

static int proof(int rank, double limit, bool strided_mem)
{
	char path[128], marker[128];
	snprintf(path, sizeof(path), "%s/proof", dir);
	snprintf(marker, sizeof(marker), "%s/seen", dir);
	if (rank == 0) {
		int *out = malloc((size_t)PROOF_INTS * sizeof(int));
		CHECK(out);
		fill(out, PROOF_INTS, 9);
		MPI_File fh;
		CHECK_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_WRONLY,
		                        MPI_INFO_NULL, &fh));
		MPI_Barrier(MPI_COMM_WORLD);
		MPI_Request r;
		double t0 = now();
		if (strided_mem) {
			/* The same ints from every other block of 1 KiB of a
			 * buffer twice as large. */
			int *wide = malloc((size_t)2 * PROOF_INTS * sizeof(int));
			CHECK(wide);
			for (int i = 0; i < PROOF_INTS; i++)
				wide[i / PROOF_BLOCK * 2 * PROOF_BLOCK + i % PROOF_BLOCK] = out[i];
			free(out);
			out = wide;
			MPI_Datatype every_other;
			CHECK_MPI(MPI_Type_vector(PROOF_INTS / PROOF_BLOCK, PROOF_BLOCK,
			                          2 * PROOF_BLOCK, MPI_INT, &every_other));
			CHECK_MPI(MPI_Type_commit(&every_other));
			t0 = now();
			CHECK_MPI(MPI_File_iwrite_at(fh, 0, out, 1, every_other, &r));
			CHECK_MPI(MPI_Type_free(&every_other));
		} else {
			CHECK_MPI(MPI_File_iwrite_at(fh, 0, out, PROOF_INTS, MPI_INT, &r));
		}
		double t_call = now() - t0;
		/* Made inside the call, the transfer overlapped nothing. A check
		 * that came late (this rank lost its CPU) proves nothing either
		 * way and is not counted. */
		double t_ret = now();
		int fd = open(path, O_RDONLY), last = 0;
		bool inside = fd >= 0 &&
		              pread(fd, &last, sizeof(last),
		                    (off_t)(PROOF_INTS - 1) * sizeof(int)) == sizeof(last) &&
		              last == 9 * 1000003 + PROOF_INTS - 1 && now() - t_ret < 0.005;
		if (fd >= 0)
			close(fd);
		/* Computation without MPI calls until rank 1 saw every byte. */
		t0 = now();
		volatile double x = 1;
		bool seen = false;
		while (!(seen = access(marker, F_OK) == 0) && now() - t0 < limit)
			for (int i = 0; i < 100000; i++)
				x = x * 1.0000001 + 1e-9;
		if (inside)
			printf("rank 0: no background progress: the call (%.3f s) made the whole "
			       "transfer itself\n",
			       t_call);
		else
			printf("rank 0: %s after %.2f s of computation (the call took %.3f s)\n",
			       seen ? "rank 1 saw the whole file" : "no background progress",
			       now() - t0, t_call);
		CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
		CHECK_MPI(MPI_File_close(&fh));
		free(out);
		MPI_Barrier(MPI_COMM_WORLD);
		return seen && !inside ? 0 : 1;
	}
	MPI_Barrier(MPI_COMM_WORLD);
	/* Watch the file: its size, then its last int (the data of the end of
	 * the transfer). Written in order by one call or chunk by chunk, the
	 * last int is the last to arrive. */
	double t0 = now();
	bool seen = false;
	int fd = -1;
	while (!seen && now() - t0 < limit + 5) {
		if (fd < 0)
			fd = open(path, O_RDONLY);
		int last = 0;
		off_t end = (off_t)(PROOF_INTS - 1) * sizeof(int);
		seen = fd >= 0 && pread(fd, &last, sizeof(last), end) == sizeof(last) &&
		       last == 9 * 1000003 + PROOF_INTS - 1;
		if (!seen)
			sleep_ms(5);
	}
	if (seen) {
		int m = open(marker, O_CREAT | O_WRONLY, 0600);
		CHECK(m >= 0);
		close(m);
	}
	if (fd >= 0)
		close(fd);
	MPI_Barrier(MPI_COMM_WORLD);
	return 0;
}

static double thread_cpu(void)
{
	struct rusage ru;
	getrusage(RUSAGE_THREAD, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

#define SLEEP_INTS (32 << 20) /* 128 MiB */

static int sleep_wait(int rank)
{
	int rc = 0;
	if (rank == 0) {
		/* From every other 1 KiB block of a buffer twice as large:
		 * MPICH makes a contiguous transfer with POSIX AIO, and piano
		 * leaves it to it. */
		int *out = malloc((size_t)2 * SLEEP_INTS * sizeof(int));
		CHECK(out);
		fill(out, 2 * SLEEP_INTS, 4);
		MPI_Datatype every_other;
		CHECK_MPI(MPI_Type_vector(SLEEP_INTS / 256, 256, 512, MPI_INT, &every_other));
		CHECK_MPI(MPI_Type_commit(&every_other));
		MPI_File fh = open_file("sleep.0", MPI_MODE_CREATE | MPI_MODE_WRONLY);
		double wall = 0, cpu = 0;
		for (int i = 0; i < 3 && wall < 0.02; i++) {
			MPI_Request r;
			CHECK_MPI(MPI_File_iwrite_at(fh, 0, out, 1, every_other, &r));
			double t0 = now(), c0 = thread_cpu();
			CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
			wall = now() - t0;
			cpu = thread_cpu() - c0;
		}
		printf("rank 0: MPI_Wait lasted %.1f ms, the thread ran %.1f ms of it\n",
		       wall * 1e3, cpu * 1e3);
		if (wall < 0.02)
			rc = 77;
		else if (cpu > wall / 3)
			rc = 1;
		CHECK_MPI(MPI_File_close(&fh));
		CHECK_MPI(MPI_Type_free(&every_other));
		free(out);
	}
	MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
	return rc;
}

/* Each rank removes its files, then rank 0 the directory. */
static void remove_files(int rank)
{
	static const char *const names[] = { "contig",  "strided", "ro",   "mixed",
		                             "thread0", "thread1", "sleep" };
	char path[128];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s.%d", dir, names[i], rank);
		unlink(path);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank != 0)
		return;
	snprintf(path, sizeof(path), "%s/proof", dir);
	unlink(path);
	snprintf(path, sizeof(path), "%s/seen", dir);
	unlink(path);
	if (rmdir(dir) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

int main(int argc, char **argv)
{
	int provided, rank, size;
	/* "single" last: the application asks for MPI_THREAD_SINGLE, which
	 * piano's serialized mode would take if the program's imports did not
	 * show its non-blocking file calls (docs/mpi.md, "Serialized mode"). */
	bool single = argc > 2 && strcmp(argv[argc - 1], "single") == 0;
	MPI_Init_thread(&argc, &argv, single ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	const char *mode = argc > 1 ? argv[1] : "data";
	skip_eof = strcmp(mode, "native-openmpi") == 0;
	skip_strided_count = strcmp(mode, "native-mpich") == 0;
	if (rank == 0)
		CHECK(mkdtemp(dir) != NULL);
	MPI_Bcast(dir, sizeof(dir), MPI_CHAR, 0, MPI_COMM_WORLD);
	int rc = 0;
	if (strcmp(mode, "sleepwait") == 0) {
		rc = sleep_wait(rank);
	} else if (strcmp(mode, "proof") == 0) {
		if (size != 2) {
			if (rank == 0)
				fprintf(stderr, "proof needs 2 ranks\n");
			rc = 77;
		} else {
			rc = proof(rank, argc > 2 ? atof(argv[2]) : 20,
			           argc > 3 && strcmp(argv[3], "strided") == 0);
		}
	} else {
		contiguous(rank);
		strided(rank);
		read_only(rank);
		mixed(rank, size);
		if (provided == MPI_THREAD_MULTIPLE)
			threads(rank);
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0)
			printf("file async: every check passed\n");
	}
	remove_files(rank);
	MPI_Finalize();
	return rc;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Non-blocking and split collective file calls (docs/mpi.md, "Non-blocking
 * file I/O").
 *
 *   test_file_coll data (any number of ranks)
 *     All ranks open one file; each sees its own blocks of B ints of it (a
 *     view: etype int, filetype B ints of every size*B, displaced by rank*B).
 *     Each writes four parts of N ints: MPI_File_iwrite_all,
 *     write_all_begin/end, iwrite_at_all, write_at_all_begin/end; the file
 *     pointer is checked after each call, the status's count after each
 *     completion. The parts are read back the four matching ways and
 *     compared, and after the close rank 0 reads the file with plain POSIX
 *     reads and checks that every int lies where the views put it. A second
 *     file is written with write_ordered_begin/end (rank order) and read back
 *     with read_ordered_begin/end, also checked by POSIX. Last, a collective
 *     transfer is still queued while the ranks open another file, write it
 *     with a blocking write_at_all and close it (piano's helper holds the
 *     file lock through a collective: the application's collective calls
 *     must wait for the queued ones rather than hold the lock the helper
 *     needs, or the ranks can wait for each other forever).
 *
 *   test_file_coll proof SECONDS (2 ranks)
 *     Both ranks start an MPI_File_iwrite_at_all of 32 MiB each to one file
 *     (from every other 1 KiB block of a buffer),
 *     check that the call did not make their part itself, then compute
 *     without any MPI call, reading the file with pread between rounds, until
 *     they see both parts whole. Passes only if the collective transfer
 *     happened while both computed; after SECONDS it prints "no background
 *     progress" and fails.
 */
#include "filetest.h"

#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define B 1000     /* ints per block of a rank's view */
#define N (20 * B) /* ints per part */

static char dir[] = "/tmp/piano-file-coll-XXXXXX";

static MPI_File open_shared(const char *name)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	MPI_File fh;
	CHECK_MPI(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
	                        MPI_INFO_NULL, &fh));
	return fh;
}

/* Rank 0: the file's ints [0, n) are want(i) for every i, read with POSIX. */
static void check_file(const char *name, long n, int (*want)(long, int), int size)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	int fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	int *all = malloc(n * sizeof(int));
	CHECK(all && pread(fd, all, n * sizeof(int), 0) == (ssize_t)(n * sizeof(int)));
	close(fd);
	for (long i = 0; i < n; i++)
		if (all[i] != want(i, size)) {
			fprintf(stderr, "%s: file int %ld is %d, expected %d\n", name, i, all[i],
			        want(i, size));
			exit(1);
		}
	free(all);
}

/* File int i of the viewed file: rank r's etype k is file int
 * (k / B) * size * B + r * B + k % B; its part p (k / N) holds
 * file_int(10 * r + p, k % N). */
static int viewed_int(long i, int size)
{
	long block = i / B, r = block % size, k = block / size * B + i % B;
	return file_int(10 * (int)r + (int)(k / N), k % N);
}

static void viewed(int rank, int size)
{
	MPI_File fh = open_shared("viewed");
	MPI_Datatype blocks, filetype;
	CHECK_MPI(MPI_Type_vector(1, B, size * B, MPI_INT, &blocks));
	CHECK_MPI(MPI_Type_create_resized(blocks, 0, (MPI_Aint)size * B * sizeof(int), &filetype));
	CHECK_MPI(MPI_Type_commit(&filetype));
	CHECK_MPI(MPI_File_set_view(fh, (MPI_Offset)rank * B * sizeof(int), MPI_INT, filetype,
	                            "native", MPI_INFO_NULL));
	int *out = malloc(4 * N * sizeof(int)), *in = malloc(4 * N * sizeof(int));
	CHECK(out && in);
	for (int p = 0; p < 4; p++)
		fill(out + p * N, N, 10 * rank + p);
	MPI_Request r;
	MPI_Status st;
	CHECK_MPI(MPI_File_iwrite_all(fh, out, N, MPI_INT, &r));
	check_pos(fh, N, "after iwrite_all");
	CHECK_MPI(MPI_Wait(&r, &st));
	check_count(&st, MPI_INT, N, "iwrite_all");
	CHECK_MPI(MPI_File_write_all_begin(fh, out + N, N, MPI_INT));
	check_pos(fh, 2 * N, "after write_all_begin");
	CHECK_MPI(MPI_File_write_all_end(fh, out + N, &st));
	check_count(&st, MPI_INT, N, "write_all_end");
	CHECK_MPI(MPI_File_iwrite_at_all(fh, 2 * N, out + 2 * N, N, MPI_INT, &r));
	check_pos(fh, 2 * N, "after iwrite_at_all");
	CHECK_MPI(MPI_Wait(&r, &st));
	check_count(&st, MPI_INT, N, "iwrite_at_all");
	CHECK_MPI(MPI_File_write_at_all_begin(fh, 3 * N, out + 3 * N, N, MPI_INT));
	CHECK_MPI(MPI_File_write_at_all_end(fh, out + 3 * N, &st));
	check_count(&st, MPI_INT, N, "write_at_all_end");

	memset(in, 0, 4 * N * sizeof(int));
	CHECK_MPI(MPI_File_seek(fh, 0, MPI_SEEK_SET));
	CHECK_MPI(MPI_File_iread_all(fh, in, N, MPI_INT, &r));
	check_pos(fh, N, "after iread_all");
	CHECK_MPI(MPI_Wait(&r, &st));
	check_count(&st, MPI_INT, N, "iread_all");
	CHECK_MPI(MPI_File_read_all_begin(fh, in + N, N, MPI_INT));
	check_pos(fh, 2 * N, "after read_all_begin");
	CHECK_MPI(MPI_File_read_all_end(fh, in + N, &st));
	check_count(&st, MPI_INT, N, "read_all_end");
	CHECK_MPI(MPI_File_iread_at_all(fh, 2 * N, in + 2 * N, N, MPI_INT, &r));
	CHECK_MPI(MPI_Wait(&r, &st));
	check_count(&st, MPI_INT, N, "iread_at_all");
	CHECK_MPI(MPI_File_read_at_all_begin(fh, 3 * N, in + 3 * N, N, MPI_INT));
	CHECK_MPI(MPI_File_read_at_all_end(fh, in + 3 * N, &st));
	check_count(&st, MPI_INT, N, "read_at_all_end");
	check_same(in, out, 4 * N, "read back through the view");
	CHECK_MPI(MPI_File_close(&fh));
	CHECK_MPI(MPI_Type_free(&filetype));
	CHECK_MPI(MPI_Type_free(&blocks));
	if (rank == 0)
		check_file("viewed", 4L * N * size, viewed_int, size);
	free(out);
	free(in);
}

/* The ordered file: rank r's N ints follow those of ranks 0..r-1. */
static int ordered_int(long i, int size)
{
	(void)size;
	return file_int(50 + (int)(i / N), i % N);
}

static void ordered(int rank, int size)
{
	MPI_File fh = open_shared("ordered");
	int *out = malloc(N * sizeof(int)), *in = malloc(N * sizeof(int));
	CHECK(out && in);
	fill(out, N, 50 + rank);
	MPI_Status st;
	CHECK_MPI(MPI_File_write_ordered_begin(fh, out, N, MPI_INT));
	CHECK_MPI(MPI_File_write_ordered_end(fh, out, &st));
	check_count(&st, MPI_INT, N, "write_ordered_end");
	/* The barrier keeps rank 0's seek_shared (whose broadcast it may
	 * leave early) from moving the pointer before every rank read it. */
	MPI_Offset shared = -1;
	CHECK_MPI(MPI_File_get_position_shared(fh, &shared));
	CHECK(shared == (MPI_Offset)(size * N * sizeof(int)));
	MPI_Barrier(MPI_COMM_WORLD);
	CHECK_MPI(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET));
	memset(in, 0, N * sizeof(int));
	CHECK_MPI(MPI_File_read_ordered_begin(fh, in, N, MPI_INT));
	CHECK_MPI(MPI_File_read_ordered_end(fh, in, &st));
	check_count(&st, MPI_INT, N, "read_ordered_end");
	check_same(in, out, N, "read_ordered");
	CHECK_MPI(MPI_File_close(&fh));
	if (rank == 0)
		check_file("ordered", (long)N * size, ordered_int, size);
	free(out);
	free(in);
}

/* A queued collective transfer while the application makes collective file
 * calls of its own (open, blocking write_at_all, close) on another file. */
static void queued(int rank)
{
	MPI_File a = open_shared("queued-a");
	int *out = malloc(N * sizeof(int)), *in = malloc(N * sizeof(int));
	CHECK(out && in);
	fill(out, N, 70 + rank);
	MPI_Request r;
	MPI_Offset at = (MPI_Offset)rank * N * sizeof(int);
	CHECK_MPI(MPI_File_iwrite_at_all(a, at, out, N, MPI_INT, &r));
	/* Rank 0 lets its helper start the collective (and take the lock);
	 * the others go straight to the open, likely before theirs did. */
	if (rank == 0)
		sleep_ms(200);
	MPI_File b = open_shared("queued-b");
	CHECK_MPI(MPI_File_write_at_all(b, at, out, N, MPI_INT, MPI_STATUS_IGNORE));
	CHECK_MPI(MPI_File_close(&b));
	CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
	CHECK_MPI(MPI_File_read_at_all(a, at, in, N, MPI_INT, MPI_STATUS_IGNORE));
	check_same(in, out, N, "queued");
	CHECK_MPI(MPI_File_close(&a));
	free(out);
	free(in);
}

#define PROOF_INTS (8 << 20) /* 32 MiB per rank */
#define PROOF_BLOCK 256      /* ints: 1 KiB */

/* Whether the file at fd holds the last int of every rank's part. */
static bool whole(int fd, int size)
{
	for (int r = 0; r < size; r++) {
		int last = 0;
		off_t end = ((off_t)(r + 1) * PROOF_INTS - 1) * sizeof(int);
		if (pread(fd, &last, sizeof(last), end) != sizeof(last) ||
		    last != file_int(90 + r, PROOF_INTS - 1))
			return false;
	}
	return true;
}

static int proof(int rank, int size, double limit)
{
	char path[128];
	snprintf(path, sizeof(path), "%s/proof", dir);
	/* From every other block of 1 KiB of a buffer twice as large: from a
	 * contiguous one, Open MPI's POSIX AIO makes the transfer by itself. */
	int *out = malloc((size_t)2 * PROOF_INTS * sizeof(int));
	CHECK(out);
	for (int i = 0; i < PROOF_INTS; i++)
		out[i / PROOF_BLOCK * 2 * PROOF_BLOCK + i % PROOF_BLOCK] = file_int(90 + rank, i);
	MPI_Datatype every_other;
	CHECK_MPI(MPI_Type_vector(PROOF_INTS / PROOF_BLOCK, PROOF_BLOCK, 2 * PROOF_BLOCK, MPI_INT,
	                          &every_other));
	CHECK_MPI(MPI_Type_commit(&every_other));
	MPI_File fh = open_shared("proof");
	int fd = open(path, O_RDONLY);
	CHECK(fd >= 0);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Request r;
	double t0 = now();
	CHECK_MPI(MPI_File_iwrite_at_all(fh, (MPI_Offset)rank * PROOF_INTS * sizeof(int), out, 1,
	                                 every_other, &r));
	double t_call = now() - t0;
	/* Made inside the call, the transfer overlapped nothing. A check that
	 * came late (this rank lost its CPU) proves nothing and is not
	 * counted. */
	double t_ret = now();
	int last = 0;
	bool inside = pread(fd, &last, sizeof(last),
	                    ((off_t)(rank + 1) * PROOF_INTS - 1) * sizeof(int)) == sizeof(last) &&
	              last == file_int(90 + rank, PROOF_INTS - 1) && now() - t_ret < 0.005;
	t0 = now();
	volatile double x = 1;
	bool seen = false;
	while (!(seen = whole(fd, size)) && now() - t0 < limit)
		for (int i = 0; i < 100000; i++)
			x = x * 1.0000001 + 1e-9;
	if (inside)
		printf("rank %d: no background progress: the call (%.3f s) made this rank's part "
		       "itself\n",
		       rank, t_call);
	else
		printf("rank %d: %s after %.2f s of computation (the call took %.3f s)\n", rank,
		       seen ? "the whole file was there" : "no background progress", now() - t0,
		       t_call);
	close(fd);
	CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
	CHECK_MPI(MPI_File_close(&fh));
	CHECK_MPI(MPI_Type_free(&every_other));
	free(out);
	int ok = seen && !inside, all = 0;
	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	return all ? 0 : 1;
}

static void remove_files(int rank)
{
	static const char *const names[] = { "viewed", "ordered", "queued-a", "queued-b", "proof" };
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank != 0)
		return;
	char path[128];
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		unlink(path);
	}
	if (rmdir(dir) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
}

int main(int argc, char **argv)
{
	int provided, rank, size;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	const char *mode = argc > 1 ? argv[1] : "data";
	if (rank == 0)
		CHECK(mkdtemp(dir) != NULL);
	MPI_Bcast(dir, sizeof(dir), MPI_CHAR, 0, MPI_COMM_WORLD);
	int rc = 0;
	if (strcmp(mode, "proof") == 0) {
		if (size != 2) {
			if (rank == 0)
				fprintf(stderr, "proof needs 2 ranks\n");
			rc = 77;
		} else {
			rc = proof(rank, size, argc > 2 ? atof(argv[2]) : 20);
		}
	} else {
		viewed(rank, size);
		ordered(rank, size);
		queued(rank);
		MPI_Barrier(MPI_COMM_WORLD);
		if (rank == 0)
			printf("file coll: every check passed\n");
	}
	remove_files(rank);
	MPI_Finalize();
	return rc;
}

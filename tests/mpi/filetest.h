/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the file tests: fill a buffer, check a file pointer, a
 * status's count, two buffers' ints; a monotonic clock. */
#ifndef PIANO_FILETEST_H
#define PIANO_FILETEST_H

#include "mpitest.h"

#include <time.h>

static inline int file_int(int seed, long i) { return seed * 1000003 + (int)i; }

static inline void fill(int *a, int n, int seed)
{
	for (int i = 0; i < n; i++)
		a[i] = file_int(seed, i);
}

static inline void check_pos(MPI_File fh, MPI_Offset want, const char *what)
{
	MPI_Offset pos = -1;
	CHECK_MPI(MPI_File_get_position(fh, &pos));
	if (pos != want) {
		fprintf(stderr, "%s: file pointer at %lld, expected %lld\n", what, (long long)pos,
		        (long long)want);
		exit(1);
	}
}

static inline void check_count(MPI_Status *st, MPI_Datatype dt, int want, const char *what)
{
	int got = -1;
	CHECK_MPI(MPI_Get_count(st, dt, &got));
	if (got != want) {
		fprintf(stderr, "%s: status count %d, expected %d\n", what, got, want);
		exit(1);
	}
}

static inline void check_same(const int *a, const int *b, int n, const char *what)
{
	for (int i = 0; i < n; i++)
		if (a[i] != b[i]) {
			fprintf(stderr, "%s: int %d is %d, expected %d\n", what, i, a[i], b[i]);
			exit(1);
		}
}

static inline double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_heap_offset: the application's blocks land where they land
 * natively. Right after MPI_Init_thread (at the level argv[1] names:
 * single or multiple) each rank allocates a block of 100 B and one of
 * 64 KiB and rank 0 prints every rank's offsets of the two from the start
 * of the heap ("heap: offsets A0 B0 A1 B1 ..."). heap_offset.sh compares
 * them with a native run: piano's set-up keeps its memory out of the main
 * arena (src/mpi/aside.c), so they differ by the little piano cannot
 * avoid (a thread's TLS vector; libraries the MPI would load itself are
 * loaded already), where a set-up in the application's thread moved them
 * by 20-290 KB. Exit status: 0 printed, 1 failed, 77 no [heap] mapping.
 */
#include "mpitest.h"

#include <stdint.h>
#include <string.h>

/* Start of the brk heap (glibc's main arena), 0 if there is none. */
static uintptr_t heap_start(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return 0;
	char line[512];
	uintptr_t start = 0;
	while (!start && fgets(line, sizeof(line), f))
		if (strstr(line, "[heap]"))
			start = (uintptr_t)strtoull(line, NULL, 16);
	fclose(f);
	return start;
}

int main(int argc, char **argv)
{
	int level = argc > 1 && !strcmp(argv[1], "single") ? MPI_THREAD_SINGLE
	                                                   : MPI_THREAD_MULTIPLE;
	int provided, rank, size;
	MPI_Init_thread(&argc, &argv, level, &provided);
	/* First: these are the blocks whose place is compared. */
	char *small = malloc(100), *large = malloc(65536);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	CHECK(small && large);
	uintptr_t start = heap_start();
	long mine[2] = { start ? (long)((uintptr_t)small - start) : -1,
		         start ? (long)((uintptr_t)large - start) : -1 };
	long *all = malloc(2 * (size_t)size * sizeof(*all));
	CHECK(all);
	CHECK_MPI(MPI_Gather(mine, 2, MPI_LONG, all, 2, MPI_LONG, 0, MPI_COMM_WORLD));
	int missing = 0;
	if (rank == 0) {
		printf("heap: offsets");
		for (int i = 0; i < 2 * size; i++) {
			printf(" %ld", all[i]);
			missing |= all[i] < 0;
		}
		printf("\n");
	}
	MPI_Bcast(&missing, 1, MPI_INT, 0, MPI_COMM_WORLD);
	free(all);
	free(large);
	free(small);
	MPI_Finalize();
	if (missing && rank == 0)
		fprintf(stderr, "heap_offset: SKIP: no [heap] mapping in /proc/self/maps\n");
	return missing ? 77 : 0;
}

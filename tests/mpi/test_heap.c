/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * test_heap: piano's set-up leaves the application's heap as the MPI alone
 * does. Right after MPI_Init_thread each rank allocates 250 blocks of 16 B
 * with MPI_Alloc_mem (the pattern of MPICH's rma/linked_list_bench_lock_shr)
 * and rank 0 prints the most pages any rank's blocks occupy and the most
 * runs of consecutive pages ("heap: runs R pages P"): from the top of a
 * compact heap 250 blocks fill 10-22 pages in 1-5 runs; from the holes a
 * fragmenting set-up leaves, 29-73 pages in 9-26 runs. heap_spread.sh
 * compares the numbers with a native run of the same program. The blocks are then
 * attached to a dynamic window, which must succeed as it does natively
 * (Open MPI's osc/rdma takes at most 64 regions; blocks sharing a page
 * share a region). Exit status: 0 passed, 1 failed.
 */
#include "mpitest.h"

#include <stdint.h>
#include <string.h>

#define NBLOCKS 250

static int cmp_page(const void *a, const void *b)
{
	uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int provided, rank;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	static void *block[NBLOCKS];
	static uintptr_t page[NBLOCKS];
	for (int i = 0; i < NBLOCKS; i++) {
		CHECK_MPI(MPI_Alloc_mem(16, MPI_INFO_NULL, &block[i]));
		memset(block[i], 0, 16);
		page[i] = (uintptr_t)block[i] / 4096;
	}
	qsort(page, NBLOCKS, sizeof(page[0]), cmp_page);
	int runs = 0, pages = 0;
	for (int i = 0; i < NBLOCKS; i++) {
		runs += i == 0 || page[i] > page[i - 1] + 1;
		pages += i == 0 || page[i] > page[i - 1];
	}
	int mine[2] = { runs, pages }, most[2] = { 0, 0 };
	MPI_Reduce(mine, most, 2, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);

	MPI_Win win;
	CHECK_MPI(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &win));
	MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
	int failed = 0;
	for (int i = 0; i < NBLOCKS && !failed; i++)
		failed = MPI_Win_attach(win, block[i], 16) != MPI_SUCCESS ? i + 1 : 0;
	if (failed)
		fprintf(stderr, "rank %d: FAIL: MPI_Win_attach of block %d of %d failed\n", rank,
		        failed, NBLOCKS);
	MPI_Win_free(&win);
	for (int i = 0; i < NBLOCKS; i++)
		MPI_Free_mem(block[i]);
	int any = 0;
	MPI_Allreduce(&failed, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (rank == 0)
		printf("heap: runs %d pages %d\n", most[0], most[1]);
	MPI_Finalize();
	return any ? 1 : 0;
}

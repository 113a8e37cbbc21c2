/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PIANO_MPI_CPU_LIST places each local rank's engine threads: with "1_0",
 * local rank 0's piano threads run on CPU 1 and local rank 1's on CPU 0.
 * The test sets the variable itself before MPI_Init and checks the
 * affinity of every thread named piano-* (idle, timer, blocking helper).
 */
#include "mpitest.h"
#include "../threads.h"

#include <sched.h>
#include <string.h>
#include <unistd.h>

struct bound {
	int cpu, n;
};

/* Counts a thread bound to exactly {cpu}; stops at one that is not. */
static int check_one(pid_t tid, void *arg)
{
	struct bound *b = arg;
	cpu_set_t set;
	CHECK(sched_getaffinity(tid, sizeof(set), &set) == 0);
	if (CPU_COUNT(&set) != 1 || !CPU_ISSET(b->cpu, &set))
		return 1;
	b->n++;
	return 0;
}

/* Number of piano threads whose affinity is exactly {cpu}; -1 if one is not. */
static int check_threads(int cpu)
{
	struct bound b = { cpu, 0 };
	int rc = test_each_thread("piano-", check_one, &b);
	CHECK(rc >= 0);
	return rc ? -1 : b.n;
}

int main(int argc, char **argv)
{
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2) {
		fprintf(stderr, "needs 2 CPUs: skipped\n");
		return 77;
	}
	setenv("PIANO_MPI_CPU_LIST", "1_0", 1);
	int provided, rank;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided);
	MPI_Comm node;
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	MPI_Comm_rank(node, &rank);
	int want = rank % 2 ? 0 : 1, n = -1;
	/* Threads bind themselves when they start: give them a moment. */
	for (int i = 0; i < 200 && n <= 0; i++) {
		n = check_threads(want);
		if (n <= 0)
			usleep(10000);
	}
	if (n <= 0)
		fprintf(stderr, "local rank %d: piano threads not all bound to CPU %d\n", rank, want);
	CHECK(n > 0);
	printf("local rank %d: %d piano threads bound to CPU %d\n", rank, n, want);
	MPI_Comm_free(&node);
	MPI_Finalize();
	return 0;
}

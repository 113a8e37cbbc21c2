/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PIANO_MPI_CPU_LIST places each local rank's engine threads: with "1_0",
 * local rank 0's piano threads run on CPU 1 and local rank 1's on CPU 0.
 * The test sets the variable itself before MPI_Init and checks the
 * affinity of every thread named piano-* (idle, timer, blocking helper).
 */
#include "mpitest.h"

#include <dirent.h>
#include <sched.h>
#include <string.h>
#include <unistd.h>

/* Number of piano threads whose affinity is exactly {cpu}; -1 if one is not. */
static int check_threads(int cpu)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;
	CHECK(d);
	while ((de = readdir(d))) {
		char path[300], name[32] = "";
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (!fgets(name, sizeof(name), f))
			name[0] = '\0';
		fclose(f);
		if (strncmp(name, "piano-", 6))
			continue;
		cpu_set_t set;
		CHECK(sched_getaffinity(atoi(de->d_name), sizeof(set), &set) == 0);
		if (CPU_COUNT(&set) != 1 || !CPU_ISSET(cpu, &set)) {
			closedir(d);
			return -1;
		}
		n++;
	}
	closedir(d);
	return n;
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

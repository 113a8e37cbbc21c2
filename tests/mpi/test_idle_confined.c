/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where idle threads cannot leave SCHED_IDLE for their MPI calls, piano's
 * threads stay on the rank's own CPUs (docs/mpi.md, "Idle threads in the
 * MPI"): preempted on another rank's CPU inside a call, an idle thread kept
 * the MPI's socket or lock while that rank spun, for hundreds of ms.
 *
 * argv[1] says what this run must show, from the threads' CPU masks read
 * in /proc/self/task after MPI_Init:
 * - "confined": every piano-* thread's mask is the rank's own. The run
 *   drops CAP_SYS_NICE (setpriv) or sets PIANO_MPI_RAISE_CALLS=0; skipped
 *   (77) if a thread may still leave SCHED_IDLE and raising is on;
 * - "free": the idle thread's mask has CPUs beyond the rank's (piano's
 *   default where its idle threads may leave SCHED_IDLE); skipped where
 *   they may not.
 * Either way skipped unless the launcher bound each rank to a share of the
 * machine and the ranks cover it (the case the rule is for).
 */
#include "mpitest.h"

#include <dirent.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Whether a thread of this process may put itself at SCHED_IDLE and back. */
static void *try_leave_idle(void *arg)
{
	struct sched_param sp = { .sched_priority = 0 };
	int *out = arg;
	*out = sched_setscheduler(0, SCHED_IDLE, &sp) == 0
	               ? 1 + (sched_setscheduler(0, SCHED_OTHER, &sp) == 0)
	               : 0;
	return NULL;
}

static int machine_cpus(void)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 0;
}

/* Checks every piano thread of this process; returns the number of
 * failures, and counts the threads seen. */
static int check_threads(const cpu_set_t *own, bool confined, int *seen)
{
	int bad = 0;
	DIR *d = opendir("/proc/self/task");
	CHECK(d != NULL);
	for (struct dirent *e; (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		char path[300], name[32] = "";
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", e->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue; /* the thread ended */
		if (!fgets(name, sizeof(name), f))
			name[0] = '\0';
		fclose(f);
		name[strcspn(name, "\n")] = '\0';
		if (strncmp(name, "piano-", 6) != 0)
			continue;
		cpu_set_t mask, extra;
		CPU_ZERO(&mask);
		if (sched_getaffinity(atoi(e->d_name), sizeof(mask), &mask) != 0)
			continue;
		(*seen)++;
		CPU_XOR(&extra, &mask, own);
		CPU_AND(&extra, &extra, &mask); /* CPUs of the thread's, not the rank's */
		bool beyond = CPU_COUNT(&extra) > 0;
		if (confined && beyond) {
			fprintf(stderr,
			        "thread %s (%s) may run on %d CPUs that are not its rank's\n",
			        e->d_name, name, CPU_COUNT(&extra));
			bad++;
		} else if (!confined && strcmp(name, "piano-idle") == 0 && !beyond) {
			fprintf(stderr, "thread %s (%s) is held on its rank's CPUs\n", e->d_name,
			        name);
			bad++;
		}
	}
	closedir(d);
	return bad;
}

int main(int argc, char **argv)
{
	int rank = init_pair_multiple(&argc, &argv);
	if (rank < 0)
		return 77;
	bool confined = argc > 1 && strcmp(argv[1], "confined") == 0;
	const char *raise = getenv("PIANO_MPI_RAISE_CALLS");
	bool raise_off = raise && strcmp(raise, "0") == 0;

	cpu_set_t own;
	CPU_ZERO(&own);
	CHECK(sched_getaffinity(0, sizeof(own), &own) == 0);
	int may = 0;
	pthread_t t;
	CHECK(pthread_create(&t, NULL, try_leave_idle, &may) == 0);
	pthread_join(t, NULL);
	int cpus = machine_cpus(), mine = CPU_COUNT(&own);
	/* The rule's premises on every rank: bound to a share, ranks cover the
	 * node; and the expected outcome's (a thread stays at SCHED_IDLE for
	 * its calls, or may leave it). */
	int stays = may == 1 || (may == 2 && raise_off);
	int fits = mine < cpus && 2 * mine >= cpus && may > 0 && stays == confined;
	MPI_Allreduce(MPI_IN_PLACE, &fits, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (!fits) {
		if (rank == 0)
			printf("skipped: rank bound to %d of %d CPUs, SCHED_IDLE %s, raising %s; "
			       "this run cannot show the %s case\n",
			       mine, cpus,
			       may == 0   ? "not available"
			       : may == 1 ? "without a way back"
			                  : "and back permitted",
			       raise_off ? "off" : "on", confined ? "confined" : "free");
		MPI_Finalize();
		return 77;
	}
	int seen = 0;
	int bad = check_threads(&own, confined, &seen);
	if (seen == 0) {
		fprintf(stderr, "rank %d: no piano thread found (not run under piano-run?)\n",
		        rank);
		bad++;
	}
	MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
	if (rank == 0)
		printf("idle confined (%s): %s\n", confined ? "confined" : "free",
		       bad ? "FAILED" : "passed");
	MPI_Finalize();
	return bad ? 1 : 0;
}

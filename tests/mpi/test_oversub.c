/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * With more ranks on the node than CPUs the ranks may use, piano starts no
 * idle thread (docs/mpi.md, "Oversubscription"); otherwise, or when
 * PIANO_IDLE_LEVEL is set explicitly, it starts its usual ones. The test
 * counts the threads named piano-idle and piano-timer in the process. Then
 * every pair of ranks exchanges a message larger than any eager limit from
 * two threads, through the engine.
 *
 * The socket watcher does not run on an oversubscribed node either (its
 * wake-ups there cost MPICH's threaded tests 3x, docs/mpi.md), unless
 * PIANO_MPI_BLOCKING is set, and runs otherwise: it is the blocking helper
 * (piano-block) that sleeps in poll(); without it the helpers sleep on a
 * futex. The test looks for a helper inside poll() over half a second.
 *
 * And the timer ticks every 5 ms there, not every 1 ms: with a receive
 * pending (the progress task queued), the timer thread's voluntary context
 * switches over 300 ms are counted; fewer than 150 means a period of 2 ms
 * or more (a loaded machine delays ticks, never adds any).
 *
 * Usage: mpi_oversub over|fit|explicit
 *   over      more local ranks than CPUs: no idle thread expected
 *   fit       at most one local rank per CPU: idle threads expected
 *   explicit  more local ranks than CPUs and PIANO_IDLE_LEVEL set in the
 *             environment: idle threads expected
 * When the job does not match the case (local ranks against the CPUs the
 * process may use), the test is skipped (77).
 */
#include "mpitest.h"
#include "../threads.h"

#include <hwloc.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define BIG (1 << 20)

/* The CPUs the process may use at all (the cgroup's cpuset). */
static int allowed_cpus(void)
{
	hwloc_topology_t topo;
	CHECK(hwloc_topology_init(&topo) == 0);
	CHECK(hwloc_topology_load(topo) == 0);
	int n = hwloc_bitmap_weight(hwloc_topology_get_allowed_cpuset(topo));
	hwloc_topology_destroy(topo);
	return n;
}

static int count_one(pid_t tid, void *arg)
{
	(void)tid;
	++*(int *)arg;
	return 0;
}

static int count_threads(const char *name)
{
	int n = 0;
	CHECK(test_each_thread(name, count_one, &n) == 0);
	return n;
}

/* Whether thread tid is inside poll()/ppoll() (first field of
 * /proc/self/task/TID/syscall: the system call number, or "running"). */
static int in_poll(pid_t tid, void *arg)
{
	char path[64];
	long nr = -1;
	snprintf(path, sizeof(path), "/proc/self/task/%d/syscall", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	if (fscanf(f, "%ld", &nr) != 1)
		nr = -1;
	fclose(f);
	if (nr == SYS_poll || nr == SYS_ppoll)
		++*(int *)arg;
	return 0;
}

static bool watcher_seen(void)
{
	for (int i = 0; i < 50; i++) {
		int n = 0;
		CHECK(test_each_thread("piano-block", in_poll, &n) == 0);
		if (n > 0)
			return true;
		usleep(10000);
	}
	return false;
}

/* The timer thread's wake-ups in 300 ms while a large receive is pending. */
static long timer_ticks(void)
{
	static char buf[BIG];
	MPI_Request r;
	CHECK_MPI(MPI_Irecv(buf, BIG, MPI_CHAR, MPI_ANY_SOURCE, 999, MPI_COMM_WORLD, &r));
	usleep(20000);
	long before = 0, after = 0;
	CHECK(test_each_thread("piano-timer", test_thread_wakeups, &before) == 1);
	usleep(300000);
	CHECK(test_each_thread("piano-timer", test_thread_wakeups, &after) == 1);
	CHECK_MPI(MPI_Cancel(&r));
	CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
	return after - before;
}

static int rank, size;

static void *exchange(void *arg)
{
	int tag = (int)(long)arg;
	char *s = malloc(BIG), *r = malloc(BIG);
	CHECK(s && r);
	memset(s, rank + tag, BIG);
	int peer = rank ^ 1;
	if (peer < size) {
		MPI_Request q[2];
		CHECK_MPI(MPI_Irecv(r, BIG, MPI_CHAR, peer, tag, MPI_COMM_WORLD, &q[0]));
		CHECK_MPI(MPI_Isend(s, BIG, MPI_CHAR, peer, tag, MPI_COMM_WORLD, &q[1]));
		CHECK_MPI(MPI_Waitall(2, q, MPI_STATUSES_IGNORE));
		CHECK(r[0] == (char)(peer + tag) && r[BIG - 1] == (char)(peer + tag));
	}
	free(s);
	free(r);
	return NULL;
}

int main(int argc, char **argv)
{
	int provided, local;
	const char *mode = argc > 1 ? argv[1] : "";
	if (strcmp(mode, "over") && strcmp(mode, "fit") && strcmp(mode, "explicit")) {
		fprintf(stderr, "usage: mpi_oversub over|fit|explicit\n");
		return 1;
	}
	int explicit_level = strcmp(mode, "explicit") == 0;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (provided < MPI_THREAD_MULTIPLE) {
		if (rank == 0)
			fprintf(stderr, "MPI_THREAD_MULTIPLE not provided: skipped\n");
		MPI_Finalize();
		return 77;
	}
	MPI_Comm node;
	MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
	MPI_Comm_size(node, &local);
	MPI_Comm_free(&node);
	int cpus = allowed_cpus();
	int over = local > cpus;
	if (over != (strcmp(mode, "fit") != 0)) {
		if (rank == 0)
			fprintf(stderr, "case '%s' needs %s local ranks than the %d CPUs, got %d: "
			        "skipped\n", mode, over ? "at most as many" : "more", cpus, local);
		MPI_Finalize();
		return 77;
	}
	int want_idle = explicit_level || !over;

	/* Threads name themselves when they start: give them a moment. */
	int nidle = 0, ntimer = 0;
	for (int i = 0; i < 200; i++) {
		nidle = count_threads("piano-idle");
		ntimer = count_threads("piano-timer");
		if (ntimer > 0 && (!want_idle || nidle > 0))
			break;
		usleep(10000);
	}
	if (rank == 0)
		printf("oversub: %d local ranks, %d CPUs (%s), PIANO_IDLE_LEVEL %s: "
		       "%d idle thread(s), %d timer thread(s)\n", local, cpus,
		       over ? "oversubscribed" : "not oversubscribed",
		       explicit_level ? "set" : "unset", nidle, ntimer);
	CHECK(ntimer == 1);
	CHECK(want_idle ? nidle > 0 : nidle == 0);
	const char *blocking = getenv("PIANO_MPI_BLOCKING");
	bool want_watch = !over || (blocking && strcmp(blocking, "block") == 0);
	bool watching = watcher_seen();
	if (rank == 0)
		printf("oversub: socket watcher %s\n", watching ? "running" : "not running");
	CHECK(watching == want_watch);
	if (over && !getenv("PIANO_TIMER_PERIOD_US")) {
		long ticks = timer_ticks();
		if (rank == 0)
			printf("oversub: %ld timer wake-ups in 300 ms\n", ticks);
		CHECK(ticks < 150);
	}

	pthread_t th[2];
	for (long t = 0; t < 2; t++)
		CHECK(pthread_create(&th[t], NULL, exchange, (void *)t) == 0);
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}

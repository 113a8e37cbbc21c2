/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Idle threads retired over TCP (PIANO_MPI_IDLE_RETIRE, docs/mpi.md "Idle
 * threads in the MPI"): where they must stay at SCHED_IDLE for their MPI
 * calls and the node has no spare CPU, idle threads stop for good once the
 * MPI's traffic goes over TCP; elsewhere they keep running.
 *
 * Whether idle threads run is seen in a window: both ranks post a 1 MiB
 * receive (tracked: the progress task stays queued), sleep WINDOW_MS,
 * leaving both cores idle, and count the rounds their idle threads made
 * meanwhile
 * (piano_stats_get); then the sends complete the receives. Between windows
 * the ranks exchange 1 MiB messages, the traffic the socket watcher sees.
 *
 *   retired: a window with no idle round on either rank must come within
 *            MAX_WINDOWS (with retirement off it never does: test
 *            idle_retire_off_fails);
 *   kept:    after KEPT_AFTER windows (over a second of traffic, when a
 *            retirement would have happened), every window must still have
 *            idle rounds on both ranks.
 *
 *   raised:  kept, where idle threads may raise themselves to SCHED_OTHER
 *            for their calls (skipped where a thread may not leave
 *            SCHED_IDLE).
 *
 * All need the 2 ranks to fill the node: skipped (77) on more than 2 CPUs.
 */
#include "mpitest.h"

#include <piano/piano.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MSG (1 << 20)
/* Longer than an idle thread's longest sleep after it found its core busy
 * (64 ms, IDLE_STARVED_NAP_MAX_US in idle.c), as it may during the
 * exchanges before a window: it wakes within the window, finds the cores
 * free and runs. */
#define WINDOW_MS 100
#define MAX_WINDOWS 40
#define KEPT_AFTER 15
#define KEPT_WINDOWS 20

static char *sendbuf, *recvbuf;

/* Whether a thread may go to SCHED_IDLE and back (as starve.c's raise). */
static void *try_raise(void *arg)
{
	struct sched_param sp = { .sched_priority = 0 };
	*(int *)arg = sched_setscheduler(0, SCHED_IDLE, &sp) == 0 &&
	              sched_setscheduler(0, SCHED_OTHER, &sp) == 0;
	return NULL;
}

static void nap_ms(long ms)
{
	struct timespec t = { ms / 1000, (ms % 1000) * 1000000L };
	while (nanosleep(&t, &t) != 0)
		;
}

static void exchange(int peer)
{
	MPI_Request r[2];
	CHECK_MPI(MPI_Irecv(recvbuf, MSG, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &r[0]));
	CHECK_MPI(MPI_Isend(sendbuf, MSG, MPI_CHAR, peer, 1, MPI_COMM_WORLD, &r[1]));
	CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
}

/* Idle rounds on the rank that made the fewest during one window. */
static unsigned long long window(int peer)
{
	MPI_Request r[2];
	struct piano_stats before, after;
	CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	CHECK_MPI(MPI_Irecv(recvbuf, MSG, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &r[0]));
	CHECK(piano_stats_get(PIANO_POINT_IDLE, &before) == 0);
	nap_ms(WINDOW_MS);
	CHECK(piano_stats_get(PIANO_POINT_IDLE, &after) == 0);
	CHECK_MPI(MPI_Isend(sendbuf, MSG, MPI_CHAR, peer, 2, MPI_COMM_WORLD, &r[1]));
	CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
	unsigned long long mine = after.rounds - before.rounds, fewest = 0;
	CHECK_MPI(
	        MPI_Allreduce(&mine, &fewest, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, MPI_COMM_WORLD));
	return fewest;
}

int main(int argc, char **argv)
{
	int rank = init_pair_multiple(&argc, &argv);
	if (rank < 0)
		return 77;
	if (argc != 2 ||
	    (strcmp(argv[1], "retired") && strcmp(argv[1], "kept") && strcmp(argv[1], "raised"))) {
		fprintf(stderr, "usage: %s retired|kept|raised\n", argv[0]);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	bool want_retired = strcmp(argv[1], "retired") == 0;
	if (strcmp(argv[1], "raised") == 0) {
		int may = 0;
		pthread_t t;
		CHECK(pthread_create(&t, NULL, try_raise, &may) == 0);
		pthread_join(t, NULL);
		CHECK_MPI(MPI_Allreduce(MPI_IN_PLACE, &may, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
		if (!may) {
			if (rank == 0)
				printf("skipped: a thread may not leave SCHED_IDLE here\n");
			MPI_Finalize();
			return 77;
		}
	}
	int nidle = 0;
	CHECK(piano_thread_count(PIANO_POINT_IDLE, &nidle) == 0);
	if (!mpitest_all(sysconf(_SC_NPROCESSORS_ONLN) <= 2 && nidle > 0)) {
		if (rank == 0)
			printf("skipped: %s\n", sysconf(_SC_NPROCESSORS_ONLN) > 2
			                                ? "2 ranks leave CPUs spare here"
			                                : "no idle thread on some rank");
		MPI_Finalize();
		return 77;
	}
	sendbuf = calloc(MSG, 1);
	recvbuf = calloc(MSG, 1);
	CHECK(sendbuf && recvbuf);
	int peer = 1 - rank;

	int windows = want_retired ? MAX_WINDOWS : KEPT_WINDOWS;
	for (int w = 0; w < windows; w++) {
		for (int i = 0; i < 5; i++)
			exchange(peer);
		unsigned long long rounds = window(peer);
		if (want_retired && rounds == 0) {
			if (rank == 0)
				printf("idle threads retired: no idle round after %d windows\n",
				       w + 1);
			goto done;
		}
		if (!want_retired && w >= KEPT_AFTER && rounds == 0) {
			if (rank == 0)
				printf("check failed: window %d: no idle round on one rank: idle "
				       "threads "
				       "retired\n",
				       w + 1);
			fflush(stdout);
			mpitest_before_abort();
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	if (want_retired) {
		if (rank == 0)
			printf("check failed: idle threads still ran rounds after %d windows\n",
			       windows);
		fflush(stdout);
		mpitest_before_abort();
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	if (rank == 0)
		printf("idle threads kept: idle rounds in every window after %d\n", KEPT_AFTER);
done:
	free(sendbuf);
	free(recvbuf);
	MPI_Finalize();
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * With PIANO_MPI_RAISE_CALLS=1 an idle thread makes its MPI calls at
 * SCHED_OTHER (docs/mpi.md "Idle threads in the MPI"): preempted at
 * SCHED_IDLE inside a call, it kept the MPI's socket or lock until its core
 * was idle again.
 *
 * Observed from inside a background round: rank 1 starts a graph whose
 * compute node depends on a receive, and sleeps without MPI calls while
 * rank 0 sends; the node's callback runs in whichever piano thread steps
 * the graph, and records that thread's name and scheduling policy. Rounds
 * repeat until idle threads have run the callback IDLE_ROUNDS times; every
 * one of those must have been at SCHED_OTHER. With the setting off they run
 * at SCHED_IDLE, and the test fails (raise_off_fails).
 *
 * Skipped (77) where a thread may not leave SCHED_IDLE (no CAP_SYS_NICE,
 * RLIMIT_NICE below 20).
 */
#include "mpitest.h"

#include <piano/graph.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <string.h>

#define IDLE_ROUNDS 5
#define MAX_ROUNDS 400

static _Atomic int ran, ran_idle, ran_policy;

static int calc(void *arg)
{
	(void)arg;
	char name[16] = "";
	pthread_getname_np(pthread_self(), name, sizeof(name));
	atomic_store(&ran_idle, strncmp(name, "piano-idle", 10) == 0);
	atomic_store(&ran_policy, sched_getscheduler(0));
	atomic_store(&ran, 1);
	return 0;
}

/* Whether this process may take a thread back from SCHED_IDLE. */
static void *try_raise(void *arg)
{
	struct sched_param sp = { .sched_priority = 0 };
	int ok = sched_setscheduler(0, SCHED_IDLE, &sp) == 0 &&
	         sched_setscheduler(0, SCHED_OTHER, &sp) == 0;
	*(int *)arg = ok;
	return NULL;
}

static void nap(long ns)
{
	struct timespec t = { 0, ns };
	nanosleep(&t, NULL);
}

int main(int argc, char **argv)
{
	int rank = init_pair_multiple(&argc, &argv);
	if (rank < 0)
		return 77;
	int may = 0;
	pthread_t t;
	CHECK(pthread_create(&t, NULL, try_raise, &may) == 0);
	pthread_join(t, NULL);
	MPI_Allreduce(MPI_IN_PLACE, &may, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (!may) {
		if (rank == 0)
			printf("skipped: a thread may not leave SCHED_IDLE here\n");
		MPI_Finalize();
		return 77;
	}

	MPI_Comm node;
	MPI_Win win;
	_Atomic int *flag = shared_flag(&node, &win);
	MPI_Barrier(MPI_COMM_WORLD);

	int idle_rounds = 0, idle_other = 0, rounds = 0, others = 0;
	for (int r = 1; r <= MAX_ROUNDS && idle_rounds < IDLE_ROUNDS; r++) {
		int msg = r;
		if (rank == 0) {
			int f;
			/* Rank 1's graph has started, or rank 1 has seen enough (-1). */
			while ((f = atomic_load(flag)) != 2 * r - 1 && f != -1)
				;
			if (f == -1)
				break;
			CHECK_MPI(MPI_Send(&msg, 1, MPI_INT, 1, r, MPI_COMM_WORLD));
			while (atomic_load(flag) == 2 * r - 1) /* rank 1 is done with round r */
				;
			continue;
		}
		piano_graph_t *g;
		int recv, node_calc, got = 0;
		CHECK(piano_graph_create(MPI_COMM_WORLD, &g) == 0);
		CHECK(piano_graph_add_recv(g, &got, 1, MPI_INT, 0, r, &recv) == 0);
		CHECK(piano_graph_add_calc(g, calc, NULL, &node_calc) == 0);
		CHECK(piano_graph_add_edge(g, recv, node_calc) == 0);
		CHECK(piano_graph_commit(g) == 0);
		atomic_store(&ran, 0);
		CHECK(piano_graph_start(g) == 0);
		atomic_store(flag, 2 * r - 1);
		/* No MPI call here: the graph advances in the background. */
		for (int i = 0; i < 2000 && !atomic_load(&ran); i++)
			nap(1000000);
		CHECK(piano_graph_wait(g) == 0);
		CHECK(got == r);
		CHECK(piano_graph_free(g) == 0);
		CHECK(atomic_load(&ran));
		rounds++;
		if (atomic_load(&ran_idle)) {
			idle_rounds++;
			idle_other += atomic_load(&ran_policy) == SCHED_OTHER;
		} else {
			others++;
		}
		atomic_store(flag, 2 * r);
	}
	int ok = 1;
	if (rank == 1) {
		atomic_store(flag, -1);
		printf("rank 1: %d rounds, %d stepped by idle threads (%d of them at "
		       "SCHED_OTHER), %d by other threads\n",
		       rounds, idle_rounds, idle_other, others);
		if (idle_rounds < IDLE_ROUNDS) {
			fprintf(stderr, "rank 1: idle threads stepped only %d of %d rounds\n",
			        idle_rounds, rounds);
			ok = 0;
		} else if (idle_other != idle_rounds) {
			fprintf(stderr,
			        "rank 1: an idle thread ran %d rounds of MPI calls at SCHED_IDLE\n",
			        idle_rounds - idle_other);
			ok = 0;
		}
	}
	MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	MPI_Win_free(&win);
	MPI_Comm_free(&node);
	MPI_Finalize();
	return ok ? 0 : 1;
}

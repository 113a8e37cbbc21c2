/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A rendezvous an idle thread took over is not left starved when the
 * application then waits for it. On Open MPI a background probe that finds
 * a large message receives it whole in that call (vader's single-copy get);
 * made from an idle thread at SCHED_IDLE, the call gets next to no CPU once
 * the application's wait and other work keep every core busy, and the wait
 * lasted until the scheduler ran it (MPICH's pt2pt/huge_dupcomm on Open MPI:
 * no result in 60 s in 2 of 10 runs on a loaded node, never natively).
 *
 * Two ranks. Each round rank 0 sends NMSG messages of MSG bytes; rank 1
 * posts the receives, lets the engine start on them for 5 ms, then waits
 * while one normal-priority thread per CPU computes (the load other jobs
 * put on a shared node). The receiver's rounds must stay within a bound a
 * native run meets many times over. Skipped (77) where a thread
 * may not leave SCHED_IDLE (piano then gives the idle thread its CPU
 * instead, which the computing threads defeat here), or with one CPU.
 */
#include "mpitest.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#define MSG (32 << 20)
#define NMSG 2
#define ROUNDS 10
#define LIMIT_S 40.0 /* all rounds: 1-15 s natively on a loaded 2-core node; starved: 79 s, > 100 s */

static atomic_int stop, busy;

static void *hog(void *arg)
{
	/* Anywhere on the node, not on the core the launcher bound the rank to. */
	cpu_set_t all;
	CPU_ZERO(&all);
	for (int c = 0; c < (int)(intptr_t)arg && c < CPU_SETSIZE; c++)
		CPU_SET(c, &all);
	sched_setaffinity(0, sizeof(all), &all);
	volatile unsigned long x = 0;
	while (!atomic_load_explicit(&stop, memory_order_relaxed)) {
		if (atomic_load_explicit(&busy, memory_order_relaxed))
			x++;
		else
			sleep_ms(1);
	}
	return NULL;
}

/* Whether a thread of this process may go from SCHED_IDLE back to
 * SCHED_OTHER (what piano needs to raise a starved idle thread). */
static void *probe_policy(void *arg)
{
	struct sched_param sp = { 0 };
	int *ok = arg;
	*ok = pthread_setschedparam(pthread_self(), SCHED_IDLE, &sp) == 0 &&
	      pthread_setschedparam(pthread_self(), SCHED_OTHER, &sp) == 0;
	return NULL;
}

int main(int argc, char **argv)
{
	int rank = init_pair_multiple(&argc, &argv);
	if (rank < 0)
		return 77;
	int ok = 0;
	pthread_t t;
	pthread_create(&t, NULL, probe_policy, &ok);
	pthread_join(t, NULL);
	int ncpu = (int)sysconf(_SC_NPROCESSORS_ONLN);
	int skip = !ok || ncpu < 2, any_skip = 0;
	MPI_Allreduce(&skip, &any_skip, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	if (any_skip) {
		if (rank == 0)
			printf("skipped: %s\n", ok ? "one CPU" : "threads may not leave SCHED_IDLE");
		MPI_Finalize();
		return 77;
	}

	char *buf = malloc((size_t)MSG * NMSG);
	CHECK(buf);
	memset(buf, rank, (size_t)MSG * NMSG);
	pthread_t hogs[64];
	int nhog = ncpu < 64 ? ncpu : 64;
	if (rank == 1)
		for (int i = 0; i < nhog; i++)
			CHECK(pthread_create(&hogs[i], NULL, hog, (void *)(intptr_t)ncpu) == 0);

	MPI_Request r[NMSG];
	double worst = 0, total = 0;
	for (int round = 0; round < ROUNDS; round++) {
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		for (int i = 0; i < NMSG; i++) {
			char *p = buf + (size_t)MSG * i;
			if (rank == 0)
				CHECK_MPI(MPI_Isend(p, MSG, MPI_CHAR, 1, i, MPI_COMM_WORLD, &r[i]));
			else
				CHECK_MPI(MPI_Irecv(p, MSG, MPI_CHAR, 0, i, MPI_COMM_WORLD, &r[i]));
		}
		if (rank == 1) {
			/* The engine starts receiving; then every core is busy. */
			sleep_ms(5);
			atomic_store(&busy, 1);
		}
		CHECK_MPI(MPI_Waitall(NMSG, r, MPI_STATUSES_IGNORE));
		atomic_store(&busy, 0);
		double dt = MPI_Wtime() - t0;
		total += dt;
		if (dt > worst)
			worst = dt;
	}
	if (rank == 1) {
		atomic_store(&stop, 1);
		for (int i = 0; i < nhog; i++)
			pthread_join(hogs[i], NULL);
		CHECK(buf[0] == 0 && buf[(size_t)MSG * NMSG - 1] == 0);
		printf("rank 1: %d rounds of %d x %d MiB with %d computing threads: %.2f s, "
		       "worst round %.2f s (limit %.0f s)\n",
		       ROUNDS, NMSG, MSG >> 20, nhog, total, worst, LIMIT_S);
		fflush(stdout);
	}
	int bad = rank == 1 && total > LIMIT_S;
	int any_bad = 0;
	MPI_Allreduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
	free(buf);
	MPI_Finalize();
	if (rank == 0)
		printf(any_bad ? "starve: FAILED (a wait waited for a starved idle thread)\n"
		               : "starve: passed\n");
	return any_bad;
}

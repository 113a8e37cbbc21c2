/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The timer does not tick for a graph while a thread runs its large local
 * work (src/coll/graph_hold.h): that thread holds the graph's lock, so a
 * tick could only take its core. One rank, no idle thread (every round
 * of the progress task is then a timer tick), no shared reductions.
 *
 * A graph of a 4 MiB reduction whose user-defined operation spins for
 * SPIN_MS on the starting thread, beside a receive from this rank that
 * stays pending:
 *  - during piano_graph_start (which runs the reduction): at most 2 timer
 *    rounds (one may be under way when the work begins); the timer held
 *    throughout ticks ~20 times (8 at 1 ms, then backed off to 4 ms);
 *  - afterwards, the receive pending while the rank computes: the graph
 *    holds the timer again, at least 5 rounds in 100 ms;
 *  - the result of the reduction and the received value are right.
 */
#include "mpitest.h"

#include <piano/graph.h>
#include <piano/piano.h>

#include <stdlib.h>

#define COUNT (1 << 19) /* doubles: 4 MiB, graph_hold.h's GRAPH_ASIDE_MIN */
#define SPIN_MS 60

static _Atomic int spun;

static void slow_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
	(void)type;
	if (!atomic_exchange(&spun, 1))
		mpitest_spin_ms(SPIN_MS);
	for (int i = 0; i < *len; i++)
		((double *)inout)[i] += ((const double *)in)[i];
}

static uint64_t timer_rounds(void)
{
	struct piano_stats st;
	CHECK(piano_stats_get(PIANO_POINT_TIMER, &st) == 0);
	return st.rounds;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int nthreads = 0;
	CHECK(piano_thread_count(PIANO_POINT_TIMER, &nthreads) == 0);
	if (nthreads != 1) {
		printf("no timer thread: skipped\n");
		MPI_Finalize();
		return 77;
	}
	double *in = malloc(COUNT * sizeof(double));
	double *inout = malloc(COUNT * sizeof(double));
	CHECK(in && inout);
	for (int i = 0; i < COUNT; i++) {
		in[i] = i;
		inout[i] = 0.5;
	}
	MPI_Op op;
	CHECK_MPI(MPI_Op_create(slow_sum, 1, &op));
	int got = 0, sent = 42;
	piano_graph_t *g;
	CHECK(piano_graph_create(MPI_COMM_SELF, &g) == 0);
	CHECK(piano_graph_add_reduce(g, in, inout, COUNT, MPI_DOUBLE, op, NULL) == 0);
	CHECK(piano_graph_add_recv(g, &got, 1, MPI_INT, 0, 7, NULL) == 0);
	CHECK(piano_graph_commit(g) == 0);

	uint64_t r0 = timer_rounds();
	CHECK(piano_graph_start(g) == 0);
	uint64_t during = timer_rounds() - r0;
	CHECK(atomic_load(&spun));
	r0 = timer_rounds();
	mpitest_spin_ms(100);
	uint64_t after = timer_rounds() - r0;
	CHECK_MPI(MPI_Send(&sent, 1, MPI_INT, 0, 7, MPI_COMM_SELF));
	CHECK(piano_graph_wait(g) == 0);

	int ok = 1;
	if (during > 2) {
		printf("%llu timer rounds while the starting thread reduced for %d ms\n",
		       (unsigned long long)during, SPIN_MS);
		ok = 0;
	}
	if (after < 5) {
		printf("%llu timer rounds in 100 ms with the graph's receive pending\n",
		       (unsigned long long)after);
		ok = 0;
	}
	for (int i = 0; i < COUNT; i++)
		if (inout[i] != i + 0.5) {
			printf("element %d: %g, expected %g\n", i, inout[i], i + 0.5);
			ok = 0;
			break;
		}
	if (got != sent) {
		printf("received %d, expected %d\n", got, sent);
		ok = 0;
	}
	printf("graph aside: %llu timer rounds during the local work, %llu after\n",
	       (unsigned long long)during, (unsigned long long)after);
	CHECK(piano_graph_free(g) == 0);
	MPI_Op_free(&op);
	free(in);
	free(inout);
	MPI_Finalize();
	return ok ? 0 : 1;
}

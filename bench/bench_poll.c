/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * [poll] Single-thread cost of the explicit polling point, PROGRESSION=0.
 *
 * (a) K repeat tasks that return 0 stay in the engine; piano_poll() is
 *     called M times: ns per ltask run = time / (M * K). K = 0 gives the
 *     cost of an empty poll. The runs/poll column (from the engine's
 *     explicit-point statistics) checks that every poll ran all K tasks.
 * (b) Cycle of B one-shot tasks: submit all, piano_poll() until every one
 *     has completed (piano_ltask_test), resubmit the same tasks. Tasks/s.
 */
#include "benches.h"
#include "common.h"

#include <stdlib.h>

#define GOAL_NS_PER_LTASK 50.0
#define GOAL_MTASKS 20.0

static unsigned noop(void *arg)
{
	(void)arg;
	return 0;
}

static int create_tasks(piano_ltask_t **t, int n, unsigned flags)
{
	for (int i = 0; i < n; i++)
		PCHECK(piano_ltask_create(noop, NULL, flags, &t[i]));
	return 0;
}

/* Completes (repeat) or waits for (one-shot) then frees n tasks. */
static int drop_tasks(piano_ltask_t **t, int n, bool repeat)
{
	for (int i = 0; i < n; i++) {
		if (repeat)
			PCHECK(piano_ltask_complete(t[i]));
		PCHECK(piano_ltask_wait(t[i]));
		PCHECK(piano_ltask_destroy(t[i]));
	}
	return 0;
}

static uint64_t explicit_runs(void)
{
	struct piano_stats st;
	if (piano_stats_get(PIANO_POINT_EXPLICIT, &st) != 0)
		return 0;
	return st.ltasks_run;
}

static volatile uint64_t clock_sink;

/* ns per clock_gettime(CLOCK_MONOTONIC): the engine's statistics read the
 * clock in polling rounds that run tasks. */
static double clock_cost(void)
{
	double v[5];
	for (int r = 0; r < 5; r++) {
		uint64_t t0 = now_ns();
		for (int i = 0; i < 200000; i++)
			clock_sink = now_ns();
		v[r] = (double)(now_ns() - t0) / 200000.0;
	}
	return median_of(v, 5);
}

static int poll_cost(int reps)
{
	static const int ks[] = { 0, 1, 16, 256 };
	static const struct col cols[] = {
		{ "Tasks(K)", 8 }, { "Polls(M)", 9 }, { "ns/ltask", 9 }, { "q1", 8 },
		{ "q3", 8 },       { "ns/poll", 9 },  { "runs/poll", 9 }, { "goal(ns)", 8 },
		{ "met", 3 },
	};
	struct table tb;
	char cfg[512];
	struct bcfg c = bcfg_default;
	c.progression = "0";
	bcfg_format(&c, cfg, sizeof(cfg));
	long target = QF(400000L, 2000000L); /* ltask runs per repetition */

	table_begin(&tb, "poll.a", "explicit poll cost per ltask (repeat tasks returning 0)");
	table_note(&tb, "settings: %s", cfg);
	table_note(&tb, "repetitions: %d, ~%ld ltask runs each; median and quartiles over repetitions",
	           reps, target);
	table_note(&tb, "K=0: empty engine, ns/poll only; runs/poll: engine statistics, must equal K");
	table_note(&tb, "reference: clock_gettime(CLOCK_MONOTONIC) costs %.2f ns here", clock_cost());
	table_columns(&tb, cols, (int)(sizeof(cols) / sizeof(cols[0])));

	if (bench_piano_init(&c))
		return -1;
	double *v = calloc((size_t)reps, sizeof(double));
	double *vp = calloc((size_t)reps, sizeof(double));
	piano_ltask_t **tasks = calloc(256, sizeof(*tasks));
	if (!v || !vp || !tasks)
		return -1;
	for (size_t ki = 0; ki < sizeof(ks) / sizeof(ks[0]); ki++) {
		int k = ks[ki];
		long m = target / (k ? k : 1);
		if (m < 1000)
			m = 1000;
		if (create_tasks(tasks, k, PIANO_LTASK_REPEAT))
			return -1;
		for (int i = 0; i < k; i++)
			PCHECK(piano_ltask_submit(tasks[i]));
		for (int i = 0; i < 1000; i++) /* warm-up: absorb the submissions */
			PCHECK(piano_poll());
		uint64_t runs0 = explicit_runs();
		for (int r = 0; r < reps; r++) {
			uint64_t t0 = now_ns();
			for (long i = 0; i < m; i++)
				piano_poll();
			double dt = (double)(now_ns() - t0);
			vp[r] = dt / (double)m;
			v[r] = k ? dt / ((double)m * k) : 0.0;
		}
		double runs_per_poll = (double)(explicit_runs() - runs0) / ((double)m * reps);
		if (drop_tasks(tasks, k, true))
			return -1;
		struct summary s, sp;
		summarize(v, (size_t)reps, &s);
		summarize(vp, (size_t)reps, &sp);
		if (k)
			table_row(&tb, (struct cell[]){ CI(k), CI(m), CF(s.med), CF(s.q1), CF(s.q3),
			                                CF(sp.med), CF(runs_per_poll),
			                                CF(GOAL_NS_PER_LTASK),
			                                CS(yesno(s.med <= GOAL_NS_PER_LTASK)) });
		else
			table_row(&tb, (struct cell[]){ CI(k), CI(m), CS("-"), CS("-"), CS("-"),
			                                CF(sp.med), CF(runs_per_poll), CS("-"),
			                                CS("-") });
	}
	table_end(&tb);
	free(tasks);
	free(vp);
	free(v);
	return bench_piano_finalize();
}

static int cycle_rate(int reps)
{
	static const int bs[] = { 1, 16, 256 };
	static const struct col cols[] = {
		{ "Batch(B)", 8 }, { "Tasks", 9 }, { "Mtasks/s", 9 }, { "q1", 8 }, { "q3", 8 },
		{ "ns/task", 9 },  { "polls/cycle", 11 }, { "goal(M/s)", 9 }, { "met", 3 },
	};
	struct table tb;
	char cfg[512];
	struct bcfg c = bcfg_default;
	c.progression = "0";
	bcfg_format(&c, cfg, sizeof(cfg));
	long target = QF(300000L, 1500000L); /* tasks per repetition */

	table_begin(&tb, "poll.b", "submit + poll + complete cycle of one-shot tasks, one thread");
	table_note(&tb, "settings: %s", cfg);
	table_note(&tb, "cycle: submit B tasks, piano_poll() until piano_ltask_test() says all "
	                "completed, resubmit the same tasks");
	table_note(&tb, "repetitions: %d, ~%ld tasks each; median and quartiles over repetitions",
	           reps, target);
	table_columns(&tb, cols, (int)(sizeof(cols) / sizeof(cols[0])));

	if (bench_piano_init(&c))
		return -1;
	double *v = calloc((size_t)reps, sizeof(double));
	piano_ltask_t **tasks = calloc(256, sizeof(*tasks));
	if (!v || !tasks)
		return -1;
	for (size_t bi = 0; bi < sizeof(bs) / sizeof(bs[0]); bi++) {
		int b = bs[bi];
		long cycles = target / b;
		uint64_t polls = 0;
		if (create_tasks(tasks, b, PIANO_LTASK_ONESHOT))
			return -1;
		for (int r = -1; r < reps; r++) { /* r = -1: warm-up */
			uint64_t t0 = now_ns();
			for (long cy = 0; cy < cycles; cy++) {
				for (int i = 0; i < b; i++)
					PCHECK(piano_ltask_submit(tasks[i]));
				for (int i = 0; i < b; i++) {
					while (piano_ltask_test(tasks[i]) != 0) {
						PCHECK(piano_poll());
						polls++;
					}
				}
			}
			double dt = (double)(now_ns() - t0);
			if (r >= 0)
				v[r] = (double)cycles * b / dt * 1e3; /* M tasks/s */
			else
				polls = 0;
		}
		if (drop_tasks(tasks, b, false))
			return -1;
		struct summary s;
		summarize(v, (size_t)reps, &s);
		table_row(&tb, (struct cell[]){ CI(b), CI(cycles * b), CF(s.med), CF(s.q1), CF(s.q3),
		                                CF(1e3 / s.med),
		                                CF((double)polls / ((double)cycles * reps)),
		                                CF(GOAL_MTASKS), CS(yesno(s.med >= GOAL_MTASKS)) });
	}
	table_end(&tb);
	free(tasks);
	free(v);
	return bench_piano_finalize();
}

int bench_poll(void)
{
	int reps = QF(5, 11);
	if (poll_cost(reps))
		return -1;
	return cycle_rate(reps);
}

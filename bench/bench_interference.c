/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * [interference] Slowdown of a compute phase caused by piano's progression
 * threads (idle threads, timer) while one repeat task is pending, so that
 * they keep polling instead of parking.
 *
 * Compute phase: one thread per CPU, pinned (pthread_setaffinity_np), each
 * running the same fixed floating-point loop; its time is from the start
 * signal to the end of the slowest thread (makespan). Baseline: piano not
 * initialised. Each repetition runs the baseline and piano back to back (the
 * order alternates) and yields one slowdown = piano/baseline - 1; the table
 * gives the median and quartiles of those slowdowns, plus the idle and
 * timer polling rounds per second seen during the piano runs. Repetitions
 * during which other processes used the CPUs (bg%, from /proc/stat) are
 * retried, since they measure the neighbours rather than piano.
 */
#include "benches.h"
#include "common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define GOAL_PCT 0.5
#define BG_NOISY 2.0 /* bg% above which the goal is not evaluated */
#define MAX_WORKERS 1024

struct config_row {
	const char *label;
	const char *idle_period_us; /* NULL: default */
	bool task;                  /* one repeat task pending */
	bool goal;
	const char *idle_level;     /* NULL: default */
	const char *timer_us;       /* NULL: default */
};

static const struct config_row rows[] = {
	{ "0", "0", true, false, NULL, NULL },
	{ "1", "1", true, false, NULL, NULL },
	{ "5 (default)", NULL, true, true, NULL, NULL },
	{ "10", "10", true, false, NULL, NULL },
	{ "100", "100", true, false, NULL, NULL },
	{ "1000", "1000", true, false, NULL, NULL },
	{ "default,parked", NULL, false, false, NULL, NULL },
	/* Which thread costs what: */
	{ "5,timer only", NULL, true, false, "none", NULL },
	{ "5,idle only", NULL, true, false, NULL, "0" },
};
#define NROWS ((int)(sizeof(rows) / sizeof(rows[0])))

/* ------------------------------------------------------------ compute */

static volatile double sink;
static volatile double fp_seed = 1.0;

/* Fixed work: 8 independent multiply-add chains, n iterations. */
static double fp_work(long n, double seed)
{
	double a0 = seed, a1 = seed + 1e-3, a2 = seed + 2e-3, a3 = seed + 3e-3;
	double a4 = seed + 4e-3, a5 = seed + 5e-3, a6 = seed + 6e-3, a7 = seed + 7e-3;
	const double m = 0.9999999, c = 1e-7;
	for (long i = 0; i < n; i++) {
		a0 = a0 * m + c;
		a1 = a1 * m + c;
		a2 = a2 * m + c;
		a3 = a3 * m + c;
		a4 = a4 * m + c;
		a5 = a5 * m + c;
		a6 = a6 * m + c;
		a7 = a7 * m + c;
	}
	return a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
}

static uint64_t rounds(int point)
{
	struct piano_stats st;
	if (piano_stats_get(point, &st) != 0)
		return 0;
	return st.rounds;
}

struct phase {
	long iters;
	int nthreads;
	bool stats;                      /* worker 0 samples the polling rounds */
	uint64_t rounds0[2], rounds1[2]; /* idle, timer: start and end of worker 0 */
	uint64_t stats_ns;               /* worker 0's computation time */
	atomic_int ready;
	atomic_int go;
	uint64_t t_go;
	uint64_t t_end[MAX_WORKERS];
};

struct worker_arg {
	struct phase *ph;
	int idx;
};

static void *worker(void *arg)
{
	struct worker_arg *w = arg;
	struct phase *ph = w->ph;
	pin_self(w->idx);
	atomic_fetch_add(&ph->ready, 1);
	while (!atomic_load_explicit(&ph->go, memory_order_acquire))
		cpu_relax();
	if (ph->stats && w->idx == 0) {
		ph->rounds0[0] = rounds(PIANO_POINT_IDLE);
		ph->rounds0[1] = rounds(PIANO_POINT_TIMER);
	}
	sink = fp_work(ph->iters, fp_seed + w->idx);
	ph->t_end[w->idx] = now_ns();
	if (ph->stats && w->idx == 0) {
		ph->rounds1[0] = rounds(PIANO_POINT_IDLE);
		ph->rounds1[1] = rounds(PIANO_POINT_TIMER);
		ph->stats_ns = ph->t_end[0] - ph->t_go;
	}
	return NULL;
}

/* One compute phase on every CPU; returns its makespan in ns (0 on error).
 * With rps: the idle and timer polling rounds per second seen by worker 0
 * during its computation. */
static uint64_t compute_phase(long iters, int nthreads, double rps[2])
{
	static struct phase ph;
	struct worker_arg args[MAX_WORKERS];
	pthread_t tid[MAX_WORKERS];
	memset(&ph, 0, sizeof(ph));
	ph.iters = iters;
	ph.nthreads = nthreads;
	ph.stats = rps != NULL;
	for (int i = 0; i < nthreads; i++) {
		args[i].ph = &ph;
		args[i].idx = i;
		if (pthread_create(&tid[i], NULL, worker, &args[i])) {
			for (int j = 0; j < i; j++)
				pthread_join(tid[j], NULL);
			return 0;
		}
	}
	while (atomic_load(&ph.ready) < nthreads)
		sleep_ns(100000);
	sleep_ns(1000000); /* spinning workers: let the main thread's wake-up settle */
	ph.t_go = now_ns();
	atomic_store_explicit(&ph.go, 1, memory_order_release);
	uint64_t end = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(tid[i], NULL);
		if (ph.t_end[i] > end)
			end = ph.t_end[i];
	}
	if (rps)
		for (int i = 0; i < 2; i++)
			rps[i] = (double)(ph.rounds1[i] - ph.rounds0[i]) / ((double)ph.stats_ns / 1e9);
	return end - ph.t_go;
}

/* Iterations for a ~target_ns compute phase on every CPU: scaled from the
 * fastest of three trial phases (the machine is shared: the slower trials
 * were disturbed). */
static long calibrate(uint64_t target_ns, int nthreads)
{
	long n = 100000;
	uint64_t best = 0;
	/* The seed is read from a volatile after the first clock read and the
	 * result stored to one before the second: the compiler can neither
	 * merge calls nor move the work out of the timed region. */
	while (n < (1L << 34)) {
		uint64_t t0 = now_ns();
		sink = fp_work(n, fp_seed);
		if (now_ns() - t0 > 10000000u)
			break;
		n *= 4;
	}
	for (int i = 0; i < 3; i++) {
		uint64_t dt = compute_phase(n, nthreads, NULL);
		if (dt && (!best || dt < best))
			best = dt;
	}
	if (!best)
		return n;
	return (long)((double)n * (double)target_ns / (double)best);
}

/* ----------------------------------------------------------- piano run */

static unsigned pending(void *arg)
{
	(void)arg;
	return 0;
}

/* One compute phase with piano initialised. */
static int piano_phase(const struct config_row *row, long iters, int nthreads, uint64_t *ns,
                       double *idle_rps, double *timer_rps)
{
	struct bcfg c = bcfg_default;
	if (row->idle_period_us)
		c.idle_period_us = row->idle_period_us;
	if (row->idle_level)
		c.idle_level = row->idle_level;
	if (row->timer_us)
		c.timer_period_us = row->timer_us;
	if (bench_piano_init(&c))
		return -1;
	piano_ltask_t *t = NULL;
	if (row->task) {
		PCHECK(piano_ltask_create(pending, NULL, PIANO_LTASK_REPEAT, &t));
		PCHECK(piano_ltask_submit(t));
	}
	sleep_ns(5000000); /* threads started and polling */
	double rps[2];
	*ns = compute_phase(iters, nthreads, rps);
	if (!*ns)
		return -1;
	*idle_rps = rps[0];
	*timer_rps = rps[1];
	if (t) {
		PCHECK(piano_ltask_complete(t));
		PCHECK(piano_ltask_wait(t));
		PCHECK(piano_ltask_destroy(t));
	}
	return bench_piano_finalize();
}

/* One repetition: baseline and piano back to back. */
enum { F_BASE, F_PIANO, F_SLOW, F_IDLE, F_TIMER, F_BG, NFIELDS };
struct pair {
	double f[NFIELDS];
};

static int measure_pair(const struct config_row *row, long iters, int nthreads, bool base_first,
                        struct pair *p)
{
	uint64_t base = 0, pn = 0;
	struct load_sample l0, l1;
	double steal, bg;
	load_sample(&l0);
	if (base_first && !(base = compute_phase(iters, nthreads, NULL)))
		return -1;
	if (piano_phase(row, iters, nthreads, &pn, &p->f[F_IDLE], &p->f[F_TIMER]))
		return -1;
	if (!base_first && !(base = compute_phase(iters, nthreads, NULL)))
		return -1;
	load_sample(&l1);
	if (!load_delta(&l0, &l1, &bg, &steal))
		bg = 100.0; /* unknown: never counted as clean */
	p->f[F_BASE] = (double)base / 1e6;
	p->f[F_PIANO] = (double)pn / 1e6;
	p->f[F_SLOW] = ((double)pn / (double)base - 1.0) * 100.0;
	p->f[F_BG] = bg;
	return 0;
}

int bench_interference(void)
{
	static const struct col cols[] = {
		{ "IDLE_PERIOD_US", 14 }, { "base(ms)", 9 }, { "piano(ms)", 9 },
		{ "slowdown%", 9 },       { "q1", 7 },       { "q3", 7 },
		{ "idle rnd/s", 11 },     { "timer rnd/s", 11 },
		{ "reps", 4 },            { "bg%", 5 },
		{ "goal%", 5 },           { "met", 3 },
	};
	int reps = QF(5, 11);
	uint64_t target = QF(60, 250) * 1000000ull;
	int nthreads = bench_ncpus() < MAX_WORKERS ? bench_ncpus() : MAX_WORKERS;
	struct table tb;
	char cfg[512];
	if (piano_initialized()) {
		fprintf(stderr, "piano-bench-core: interference: piano already initialised\n");
		return -1;
	}
	long iters = calibrate(target, nthreads);
	bcfg_format(&bcfg_default, cfg, sizeof(cfg));

	table_begin(&tb, "interference", "compute slowdown caused by idle and timer threads");
	table_note(&tb, "settings: %s, PIANO_IDLE_PERIOD_US as in the first column", cfg);
	table_note(&tb, "compute: %d pinned threads (one per CPU), %ld iterations of 8 "
	                "multiply-add chains each (calibrated to ~%.0f ms per phase); time = makespan",
	           nthreads, iters, (double)target / 1e6);
	table_note(&tb, "piano runs: 1 repeat task returning 0 pending (threads active), except "
	                "'default,parked' (no task)");
	table_note(&tb, "'timer only': PIANO_IDLE_LEVEL=none; 'idle only': PIANO_TIMER_PERIOD_US=0 "
	                "(default period otherwise)");
	table_note(&tb, "repetition: baseline (piano not initialised) and piano back to back, order "
	                "alternating; slowdown = median of per-repetition piano/base - 1");
	table_note(&tb, "bg%%: share of the machine's CPU time used by other processes during a "
	                "repetition; repetitions with bg%% > %.0f are retried (up to %d attempts "
	                "for %d clean ones, %d s per row after %d attempts)",
	           BG_NOISY, 2 * reps, reps, QF(2, 15), QF(2, 3));
	table_note(&tb, "idle/timer rnd/s: polling rounds per second of the idle threads and the "
	                "timer while worker 0 computes (piano runs)");
	table_note(&tb, "reps: repetitions used (the clean ones; every attempt when fewer than "
	                "half were clean: then met = 'noisy')");
	table_columns(&tb, cols, (int)(sizeof(cols) / sizeof(cols[0])));

	int maxatt = 2 * reps, min_att = QF(2, 3);
	uint64_t row_budget = QF(2, 15) * 1000000000ull;
	struct pair *all = calloc((size_t)maxatt, sizeof(*all));
	double *v[NFIELDS];
	for (int f = 0; f < NFIELDS; f++)
		if (!(v[f] = calloc((size_t)maxatt, sizeof(double))))
			return -1;
	if (!all)
		return -1;
	compute_phase(iters, nthreads, NULL); /* warm-up */
	for (int ri = 0; ri < NROWS; ri++) {
		const struct config_row *row = &rows[ri];
		/* Up to 2 * reps attempts; stop at reps clean ones, or when the
		 * row's time budget is spent (after a minimum of attempts). */
		int natt = 0, nclean = 0;
		uint64_t row_start = now_ns();
		while (natt < maxatt && nclean < reps &&
		       (natt < min_att || now_ns() - row_start < row_budget)) {
			if (measure_pair(row, iters, nthreads, natt % 2 == 0, &all[natt]))
				return -1;
			nclean += all[natt].f[F_BG] <= BG_NOISY;
			natt++;
		}
		/* The clean pairs when there are enough, else every attempt. */
		bool noisy = nclean < (reps + 1) / 2;
		int n = 0;
		for (int i = 0; i < natt; i++) {
			if (!noisy && all[i].f[F_BG] > BG_NOISY)
				continue;
			for (int f = 0; f < NFIELDS; f++)
				v[f][n] = all[i].f[f];
			n++;
		}
		struct summary ss;
		summarize(v[F_SLOW], (size_t)n, &ss);
		double m[NFIELDS];
		for (int f = 0; f < NFIELDS; f++)
			m[f] = f == F_SLOW ? ss.med : median_of(v[f], (size_t)n);
		const char *met = "-";
		if (row->goal)
			met = noisy ? "noisy" : yesno(ss.med <= GOAL_PCT);
		table_row(&tb, (struct cell[]){ CS(row->label), CF(m[F_BASE]), CF(m[F_PIANO]),
		                                CF(ss.med), CF(ss.q1), CF(ss.q3), CF(m[F_IDLE]),
		                                CF(m[F_TIMER]), CI(n), CF(m[F_BG]),
		                                row->goal ? CF(GOAL_PCT) : CS("-"), CS(met) });
	}
	table_end(&tb);
	for (int f = 0; f < NFIELDS; f++)
		free(v[f]);
	free(all);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_mthreads: multithreaded communication, the three benchmarks of
 * PIOMan-2015 (Figs. 10-12), for two MPI processes.
 *
 *  1toN   rank 0 has one thread, rank 1 has N receiver threads (as OSU's
 *         osu_latency_mt). Receiver thread t owns tag t; rank 0 serves the
 *         threads round-robin, one 1-byte ping-pong at a time, so exactly one
 *         message is in flight and the N-1 other threads sit in MPI_Recv.
 *         What is measured is how much N waiting threads slow down the one
 *         that communicates: with a library whose waiting threads all poll
 *         the network, latency grows with N; with piano's delegated waits
 *         it should stay flat. Rank 0 times each round trip and files it
 *         under the thread it served.
 *  NtoN   N thread pairs ping-pong 1 byte at the same time, pair i on tag i
 *         (Argonne's latency_th). Each rank-0 thread times its round trips.
 *  Nload  the main threads ping-pong 1 MiB (--size) while N compute threads
 *         per rank run calibrated fixed work. Reported: the ping-pong
 *         latency, and the compute throughput of both ranks (in cores: work
 *         done per second divided by one undisturbed core's speed) alone
 *         (main threads asleep) and during the ping-pong; their ratio is the
 *         slowdown the communication inflicts on the computation. The
 *         ping-pong lasts at least as long as the alone phase (a throughput
 *         needs a window of many scheduler slices), keeping a uniform sample
 *         of --load-iters round trips if it runs more; "iters" is then the
 *         number of round trips run. The
 *         ping-pong is back-to-back as in the paper; --gap-us spaces the
 *         pings randomly (see bench_reactivity for why).
 *
 * Latencies are half round trips in µs. For 1toN and NtoN, each thread's
 * median is computed; thr_min/thr_med/thr_max are the smallest, median and
 * largest of these per-thread medians, median/p25/p75 those of all round
 * trips together. 1toN and Nload points stop after their iteration count
 * or their time budget (--max-time), whichever comes first, with a minimum
 * of samples; NtoN pairs all run for the whole time budget (so that they
 * compete for its whole length), keeping a uniform sample of at most 20000
 * round trips each, and kmsg_s gives their aggregate message rate. The
 * "iters" column gives the timed round trips per thread (the smallest over
 * threads).
 *
 * CSV (--csv): one header row and the same columns for every mode
 * (bench,label,mpi,mode,threads,iters,median_us,p25_us,p75_us,min_us,max_us,
 * thr_min_us,thr_med_us,thr_max_us,kmsg_s,cmp_alone,cmp_pp,slowdown), the
 * columns a mode does not measure left empty.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench_mpi_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#define MAX_POINTS 32
#define MAX_THREADS 256
#define TAG_BASE 7800
/* Timed round trips even past the time budget: per thread (NtoN, Nload),
 * and over all threads together for 1toN (at least 3 rounds). --quick
 * halves them: on 2 oversubscribed cores a round trip may take a scheduler
 * slice or more. */
#define MIN_TIMED 10
#define MIN_TIMED_1TON 48
#define NTON_SAMPLES 20000 /* latency samples kept per NtoN pair */

enum { M_1TON = 1, M_NTON = 2, M_NLOAD = 4, M_ALL = 7 };

static const char usage_text[] =
	"usage: bench_mthreads [1toN|NtoN|Nload|all] [options]   (2 MPI processes)\n"
	"  1toN   1 sender thread, N receiver threads, 1-byte ping-pong (PIOMan-2015 Fig. 10)\n"
	"  NtoN   N thread pairs, 1-byte ping-pong each (Fig. 11)\n"
	"  Nload  1 MiB ping-pong between the main threads while N compute threads per\n"
	"         rank run (Fig. 12)\n"
	"  --mode M         same as the positional argument (default all)\n"
	"  --threads LIST   N values (default 1,2,4,8; Nload 0,1,2,4,8; --quick Nload\n"
	"                   0,1,2,4); 1toN and NtoN skip 0\n"
	"  --iters N        timed round trips per thread: 1toN (default 2000; --quick\n"
	"                   300); NtoN (default: as many as fit in --max-time)\n"
	"  --warmup N       untimed round trips per thread first (default 50; --quick 3;\n"
	"                   Nload at most 5)\n"
	"  --size S         Nload message size (default 1MiB)\n"
	"  --load-iters N   Nload timed round trips (default 200; --quick 30); with\n"
	"                   compute threads the ping-pong lasts at least --alone-time\n"
	"                   (for the throughput), more round trips being sampled\n"
	"  --alone-time S   Nload: seconds of compute alone per point (default 0.5;\n"
	"                   --quick 0.2)\n"
	"  --max-time S     time budget per point in seconds (default 3; --quick 0.6)\n"
	"  --gap-us G       Nload: rank 0 sleeps a random time, uniform in [0, 2G] us,\n"
	"                   before each ping (default 0: back-to-back, as in the paper)\n";

struct opts {
	struct bm_opts c;
	int modes;
	int threads[MAX_POINTS];
	int nthreads; /* 0: defaults */
	long iters, warmup, size, load_iters;
	int iters_given;
	double alone_time, max_time, gap_us;
	long min_timed, min_timed_1ton;
	/* given: --quick does not change them */
	int have_warmup, have_liters, have_alone, have_time;
	const char *bad_mode; /* the bare word that is no mode */
};

static int parse_mode(const char *s, int *modes)
{
	if (!strcasecmp(s, "1toN"))
		*modes = M_1TON;
	else if (!strcasecmp(s, "NtoN"))
		*modes = M_NTON;
	else if (!strcasecmp(s, "Nload"))
		*modes = M_NLOAD;
	else if (!strcasecmp(s, "all"))
		*modes = M_ALL;
	else
		return -1;
	return 0;
}

/* Options of mthreads that take a value (see bm_arg_fn). */
static enum bm_arg mthreads_value(struct opts *o, const char *a, const char *v)
{
	int bad;
	if (!strcmp(a, "--mode")) {
		bad = parse_mode(v, &o->modes) != 0;
	} else if (!strcmp(a, "--threads")) {
		o->nthreads = bm_parse_ints(v, o->threads, MAX_POINTS, 0, MAX_THREADS);
		bad = o->nthreads < 0;
	} else if (!strcmp(a, "--size")) {
		bad = bm_parse_size(v, 1, 1L << 30, &o->size) != 0;
	} else if (!strcmp(a, "--load-iters")) {
		bad = bm_parse_int(v, 1, 100000000, &o->load_iters) != 0;
		o->have_liters = 1;
	} else if (!strcmp(a, "--alone-time")) {
		bad = bm_parse_double(v, 0.01, 3600, &o->alone_time) != 0;
		o->have_alone = 1;
	} else if (!strcmp(a, "--gap-us")) {
		bad = bm_parse_double(v, 0, 1e7, &o->gap_us) != 0;
	} else {
		const struct bm_rt_opts rt = { &o->iters, &o->warmup, &o->max_time,
			                       &o->iters_given, &o->have_warmup, &o->have_time };
		return bm_rt_arg(&rt, a, v);
	}
	return bad ? BM_ARG_BAD : BM_ARG_VALUE;
}

/* A bare word is a mode ("mthreads 1toN"); anything else an option. */
static enum bm_arg mthreads_arg(void *prog, const char *a, const char *v)
{
	struct opts *o = prog;
	if (a[0] != '-') {
		if (!parse_mode(a, &o->modes))
			return BM_ARG_FLAG;
		o->bad_mode = a; /* for its own message, see parse_args */
		return BM_ARG_BAD;
	}
	return v ? mthreads_value(o, a, v) : BM_ARG_UNKNOWN;
}

static int parse_args(int argc, char **argv, struct opts *o, char *err, size_t errlen)
{
	memset(o, 0, sizeof *o);
	bm_opts_init(&o->c);
	o->modes = M_ALL;
	o->size = 1L << 20;
	if (bm_opts_parse(&o->c, argc, argv, mthreads_arg, o, err, errlen)) {
		if (o->bad_mode)
			snprintf(err, errlen, "unknown mode: %s", o->bad_mode);
		return -1;
	}
	const int q = o->c.quick;
	if (!o->iters_given)
		o->iters = q ? 300 : 2000;
	if (!o->have_warmup)
		o->warmup = q ? 3 : 50;
	o->min_timed = q ? MIN_TIMED / 2 : MIN_TIMED;
	o->min_timed_1ton = q ? MIN_TIMED_1TON / 2 : MIN_TIMED_1TON;
	if (!o->have_liters)
		o->load_iters = q ? 30 : 200;
	if (!o->have_alone)
		o->alone_time = q ? 0.2 : 0.5;
	if (!o->have_time)
		o->max_time = q ? 0.6 : 3;
	return 0;
}

/* The N values of one mode. */
static int thread_list(const struct opts *o, int mode, int *out)
{
	static const int def[] = { 1, 2, 4, 8 };
	static const int def_load[] = { 0, 1, 2, 4, 8 };
	static const int def_load_quick[] = { 0, 1, 2, 4 };
	const int *src;
	int n;
	if (o->nthreads) {
		src = o->threads;
		n = o->nthreads;
	} else if (mode != M_NLOAD) {
		src = def;
		n = 4;
	} else if (o->c.quick) {
		src = def_load_quick;
		n = 4;
	} else {
		src = def_load;
		n = 5;
	}
	int k = 0;
	for (int i = 0; i < n; i++)
		if (src[i] > 0 || mode == M_NLOAD)
			out[k++] = src[i];
	return k;
}

/* ------------------------------------------------------------- results */

struct result {
	int mode, threads;
	long iters;
	double median, p25, p75, min, max;
	double thr_min, thr_med, thr_max;
	double kmsg_s;
	double cmp_alone, cmp_pp, slowdown;
};

static void result_init(struct result *r, int mode, int threads)
{
	r->mode = mode;
	r->threads = threads;
	r->iters = 0;
	r->median = r->p25 = r->p75 = r->min = r->max = NAN;
	r->thr_min = r->thr_med = r->thr_max = NAN;
	r->kmsg_s = r->cmp_alone = r->cmp_pp = r->slowdown = NAN;
}

static const char *mode_name(int mode)
{
	return mode == M_1TON ? "1toN" : mode == M_NTON ? "NtoN" : "Nload";
}

static const struct bm_col csv_cols[] = {
	{ "mode", BM_COL_STR, 0, NULL },       { "threads", BM_COL_INT, 0, NULL },
	{ "iters", BM_COL_INT, 0, NULL },      { "median_us", BM_COL_F2, 0, NULL },
	{ "p25_us", BM_COL_F2, 0, NULL },      { "p75_us", BM_COL_F2, 0, NULL },
	{ "min_us", BM_COL_F2, 0, NULL },      { "max_us", BM_COL_F2, 0, NULL },
	{ "thr_min_us", BM_COL_F2, 0, NULL },  { "thr_med_us", BM_COL_F2, 0, NULL },
	{ "thr_max_us", BM_COL_F2, 0, NULL },  { "kmsg_s", BM_COL_F2, 0, NULL },
	{ "cmp_alone", BM_COL_F2, 0, NULL },   { "cmp_pp", BM_COL_F2, 0, NULL },
	{ "slowdown", BM_COL_F2, 0, NULL },
};
static const struct bm_col cols_1ton[] = {
	{ "threads", BM_COL_INT, 8, NULL },    { "iters", BM_COL_INT, 8, NULL },
	{ "median_us", BM_COL_F2, 0, NULL },   { "p25_us", BM_COL_F2, 0, NULL },
	{ "p75_us", BM_COL_F2, 0, NULL },      { "thr_min_us", BM_COL_F2, 0, NULL },
	{ "thr_med_us", BM_COL_F2, 0, NULL },  { "thr_max_us", BM_COL_F2, 0, NULL },
};
static const struct bm_col cols_nton[] = {
	{ "threads", BM_COL_INT, 8, NULL },    { "iters", BM_COL_INT, 8, NULL },
	{ "median_us", BM_COL_F2, 0, NULL },   { "p25_us", BM_COL_F2, 0, NULL },
	{ "p75_us", BM_COL_F2, 0, NULL },      { "thr_min_us", BM_COL_F2, 0, NULL },
	{ "thr_med_us", BM_COL_F2, 0, NULL },  { "thr_max_us", BM_COL_F2, 0, NULL },
	{ "kmsg_s", BM_COL_F2, 0, NULL },
};
static const struct bm_col cols_nload[] = {
	{ "threads", BM_COL_INT, 8, NULL },    { "iters", BM_COL_INT, 8, NULL },
	{ "median_us", BM_COL_F2, 0, NULL },   { "p25_us", BM_COL_F2, 0, NULL },
	{ "p75_us", BM_COL_F2, 0, NULL },      { "min_us", BM_COL_F2, 0, NULL },
	{ "max_us", BM_COL_F2, 0, NULL },      { "cmp_alone", BM_COL_F2, 0, NULL },
	{ "cmp_pp", BM_COL_F2, 0, NULL },      { "slowdown", BM_COL_F2, 0, NULL },
};
#define NCOLS(a) ((int)(sizeof(a) / sizeof((a)[0])))

static void emit(const struct bm_table *t, const struct bm_ctx *c, const struct result *r)
{
	const long th = r->threads;
	if (c->opts.csv)
		bm_table_row(t, mode_name(r->mode), th, r->iters, r->median, r->p25, r->p75,
		             r->min, r->max, r->thr_min, r->thr_med, r->thr_max, r->kmsg_s,
		             r->cmp_alone, r->cmp_pp, r->slowdown);
	else if (r->mode == M_1TON)
		bm_table_row(t, th, r->iters, r->median, r->p25, r->p75, r->thr_min, r->thr_med,
		             r->thr_max);
	else if (r->mode == M_NTON)
		bm_table_row(t, th, r->iters, r->median, r->p25, r->p75, r->thr_min, r->thr_med,
		             r->thr_max, r->kmsg_s);
	else
		bm_table_row(t, th, r->iters, r->median, r->p25, r->p75, r->min, r->max,
		             r->cmp_alone, r->cmp_pp, r->slowdown);
}

/* Per-thread samples lat[t * stride .. + n[t]]: per-thread medians
 * (thr_*), and quartiles of everything (sorts the samples in place). */
static void thread_stats(double *lat, long stride, const long *n, int nt, struct result *r)
{
	double med[MAX_THREADS];
	long total = 0, least = -1;
	for (int t = 0; t < nt; t++) {
		struct bm_stats s;
		bm_stats(lat + (size_t)t * (size_t)stride, n[t], &s);
		med[t] = s.median;
		total += n[t];
		if (least < 0 || n[t] < least)
			least = n[t];
	}
	struct bm_stats s;
	bm_stats(med, nt, &s);
	r->thr_min = s.min;
	r->thr_med = s.median;
	r->thr_max = s.max;
	double *all = malloc((size_t)(total > 0 ? total : 1) * sizeof *all);
	if (!all)
		return;
	long k = 0;
	for (int t = 0; t < nt; t++) {
		memcpy(all + k, lat + (size_t)t * (size_t)stride, (size_t)n[t] * sizeof *all);
		k += n[t];
	}
	bm_stats(all, total, &s);
	r->median = s.median;
	r->p25 = s.p25;
	r->p75 = s.p75;
	r->min = s.min;
	r->max = s.max;
	r->iters = least;
	free(all);
}

/* ------------------------------------------------------ thread plumbing */

/* One communicating thread: a bm_pingpong on its own tag, its own buffers
 * and its own cache lines. */
struct comm_thread {
	_Alignas(64) struct bm_pp pp;
	char sbuf[64], rbuf[64];
	long timed;
	double t_first, t_end;
	pthread_t tid;
};

static void mark_times(void *arg, int end)
{
	struct comm_thread *ct = arg;
	if (end)
		ct->t_end = bm_now_us();
	else
		ct->t_first = bm_now_us();
}

static void *comm_main(void *arg)
{
	struct comm_thread *ct = arg;
	ct->timed = bm_pingpong(&ct->pp);
	return NULL;
}

static struct comm_thread *comm_threads(const struct bm_ctx *c, int n)
{
	struct comm_thread *ct = aligned_alloc(64, (size_t)n * sizeof *ct);
	if (!ct)
		bm_die(c, "out of memory");
	memset(ct, 0, (size_t)n * sizeof *ct);
	return ct;
}

static void spawn(const struct bm_ctx *c, struct comm_thread *ct, int n)
{
	for (int t = 0; t < n; t++)
		if (pthread_create(&ct[t].tid, NULL, comm_main, &ct[t]))
			bm_die(c, "cannot create thread %d of %d", t + 1, n);
}

static void join(struct comm_thread *ct, int n)
{
	for (int t = 0; t < n; t++)
		pthread_join(ct[t].tid, NULL);
}

/* ----------------------------------------------------------------- 1toN */

static void run_1ton(const struct bm_ctx *c, const struct opts *o, int n, struct result *r)
{
	result_init(r, M_1TON, n);
	MPI_Barrier(MPI_COMM_WORLD);
	if (c->rank == 1) {
		struct comm_thread *ct = comm_threads(c, n);
		for (int t = 0; t < n; t++)
			ct[t].pp = (struct bm_pp){
				.comm = MPI_COMM_WORLD, .initiator = 0, .peer = 0, .tag = TAG_BASE + t,
				.sbuf = ct[t].sbuf, .rbuf = ct[t].rbuf, .count = 1,
				.warmup = o->warmup,
			};
		spawn(c, ct, n);
		join(ct, n);
		free(ct);
		return;
	}
	/* Rank 0: one thread serves the n receivers round-robin, one round trip
	 * at a time; the flag of round r's messages says whether it is the last
	 * round, so every receiver does the same number of rounds. */
	const long rounds = o->warmup + o->iters;
	long min_rounds = (o->min_timed_1ton + n - 1) / n;
	if (min_rounds < 3)
		min_rounds = 3;
	double *lat = malloc((size_t)n * (size_t)o->iters * sizeof *lat);
	long *cnt = calloc((size_t)n, sizeof *cnt);
	if (!lat || !cnt)
		bm_die(c, "out of memory");
	char sbuf[64], rbuf[64];
	memset(sbuf, 0, sizeof sbuf);
	memset(rbuf, 0, sizeof rbuf);
	const double deadline = bm_now_us() + o->max_time * 1e6;
	long timed = 0;
	int last = 0;
	for (long i = 0; !last; i++) {
		last = bm_is_last(i, rounds, o->warmup + min_rounds, bm_now_us(), deadline);
		sbuf[0] = last ? BM_MSG_LAST : BM_MSG_MORE;
		for (int t = 0; t < n; t++) {
			double t0 = bm_now_us();
			MPI_Send(sbuf, 1, MPI_CHAR, 1, TAG_BASE + t, MPI_COMM_WORLD);
			MPI_Recv(rbuf, 1, MPI_CHAR, 1, TAG_BASE + t, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			double t1 = bm_now_us();
			if (i >= o->warmup)
				lat[(size_t)t * (size_t)o->iters + (size_t)timed] = (t1 - t0) / 2;
		}
		if (i >= o->warmup)
			timed++;
	}
	for (int t = 0; t < n; t++)
		cnt[t] = timed;
	thread_stats(lat, o->iters, cnt, n, r);
	free(lat);
	free(cnt);
}

/* ----------------------------------------------------------------- NtoN */

static void run_nton(const struct bm_ctx *c, const struct opts *o, int n, struct result *r)
{
	result_init(r, M_NTON, n);
	struct comm_thread *ct = comm_threads(c, n);
	/* All pairs run for the whole time budget (unless --iters caps them), so
	 * that they really compete: with a count, a pair scheduled early could
	 * finish in one time slice before the others start. */
	const long iters = o->iters_given ? o->iters : 1L << 40;
	const long cap = iters < NTON_SAMPLES ? iters : NTON_SAMPLES;
	double *lat = NULL;
	if (c->rank == 0) {
		lat = malloc((size_t)n * (size_t)cap * sizeof *lat);
		if (!lat)
			bm_die(c, "out of memory");
	}
	for (int t = 0; t < n; t++)
		ct[t].pp = (struct bm_pp){
			.comm = MPI_COMM_WORLD, .initiator = c->rank == 0, .peer = 1 - c->rank,
			.tag = TAG_BASE + t, .sbuf = ct[t].sbuf, .rbuf = ct[t].rbuf, .count = 1,
			.warmup = o->warmup, .iters = iters, .min_timed = o->min_timed,
			.budget_s = o->max_time, .lat_cap = cap,
			.lat = lat ? lat + (size_t)t * (size_t)cap : NULL,
			.mark = mark_times, .mark_arg = &ct[t],
		};
	MPI_Barrier(MPI_COMM_WORLD);
	spawn(c, ct, n);
	join(ct, n);
	if (c->rank == 0) {
		long cnt[MAX_THREADS], total = 0, least = -1;
		double first = ct[0].t_first, end = ct[0].t_end;
		for (int t = 0; t < n; t++) {
			cnt[t] = ct[t].timed < cap ? ct[t].timed : cap; /* samples kept */
			total += ct[t].timed;
			if (least < 0 || ct[t].timed < least)
				least = ct[t].timed;
			first = fmin(first, ct[t].t_first);
			end = fmax(end, ct[t].t_end);
		}
		thread_stats(lat, cap, cnt, n, r);
		r->iters = least;
		/* Two messages per round trip, all pairs together. */
		if (end > first)
			r->kmsg_s = 2.0 * (double)total / (end - first) * 1e3;
	}
	free(lat);
	free(ct);
}

/* ---------------------------------------------------------------- Nload */

struct load_marks {
	const struct bm_team *team;
	double t[2];
	uint64_t it[2];
};

static void mark_load(void *arg, int end)
{
	struct load_marks *m = arg;
	m->t[end] = bm_now_us();
	m->it[end] = bm_team_iters(m->team);
}

static void sleep_s(double s)
{
	struct timespec ts = { (time_t)s, (long)((s - floor(s)) * 1e9) };
	while (nanosleep(&ts, &ts) != 0)
		;
}

static void run_nload(const struct bm_ctx *c, const struct opts *o, int n, char *sbuf,
                      char *rbuf, double *lat, struct result *r)
{
	result_init(r, M_NLOAD, n);
	struct bm_team team;
	if (bm_team_start(&team, n, c->rate, 20.0))
		bm_die(c, "cannot start %d compute threads", n);
	double cores[2] = { 0, 0 }; /* alone, during the ping-pong; this rank */
	MPI_Barrier(MPI_COMM_WORLD);
	if (n > 0) {
		/* Compute alone: the main thread sleeps, no communication. The
		 * first 20 ms let the scheduler spread the new threads. */
		sleep_s(0.02);
		double t0 = bm_now_us();
		uint64_t i0 = bm_team_iters(&team);
		sleep_s(o->alone_time);
		double t1 = bm_now_us();
		uint64_t i1 = bm_team_iters(&team);
		cores[0] = (double)(i1 - i0) / (t1 - t0) / c->rate;
		MPI_Barrier(MPI_COMM_WORLD);
	}
	struct load_marks m = { .team = &team };
	struct bm_pp pp = {
		.comm = MPI_COMM_WORLD, .initiator = c->rank == 0, .peer = 1 - c->rank,
		.tag = TAG_BASE, .sbuf = sbuf, .rbuf = rbuf, .count = (int)o->size,
		.warmup = o->warmup < 5 ? o->warmup : 5, .iters = o->load_iters,
		.min_timed = o->min_timed, .budget_s = o->max_time, .lat = lat,
		.lat_cap = o->load_iters, .min_time_s = n > 0 ? o->alone_time : 0,
		.gap_us = o->gap_us, .mark = mark_load, .mark_arg = &m,
	};
	long timed = bm_pingpong(&pp);
	bm_team_stop(&team);
	const long kept = timed < o->load_iters ? timed : o->load_iters;
	if (n > 0 && m.t[1] > m.t[0])
		cores[1] = (double)(m.it[1] - m.it[0]) / (m.t[1] - m.t[0]) / c->rate;
	double sum[2];
	MPI_Reduce(cores, sum, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
	if (c->rank != 0)
		return;
	struct bm_stats s;
	bm_stats(lat, kept, &s);
	r->iters = timed;
	r->median = s.median;
	r->p25 = s.p25;
	r->p75 = s.p75;
	r->min = s.min;
	r->max = s.max;
	if (n > 0) {
		r->cmp_alone = sum[0];
		r->cmp_pp = sum[1];
		r->slowdown = sum[1] > 0 ? sum[0] / sum[1] : INFINITY;
	}
}

/* ----------------------------------------------------------------- main */

int main(int argc, char **argv)
{
	struct opts o;
	char err[256] = "";
	int prc = parse_args(argc, argv, &o, err, sizeof err);
	/* Before MPI_Init: no MPI or piano thread exists yet. */
	double rate = prc == 0 && !o.c.help && (o.modes & M_NLOAD) ? bm_calibrate() : 0;
	struct bm_ctx c;
	bm_init(&c, "mthreads", &o.c, rate, &argc, &argv);
	if (prc || o.c.help)
		return bm_usage_exit(&c, usage_text, err);
	int rc = bm_require_ranks(&c, 2, 2);
	if (rc)
		return rc;
	if (c.provided != MPI_THREAD_MULTIPLE) {
		if (c.rank == 0)
			fprintf(stderr, "bench_mthreads: the MPI does not provide "
			                "MPI_THREAD_MULTIPLE\n");
		MPI_Finalize();
		return 1;
	}

	bm_header(&c, "piano multithreading benchmarks: 1toN, NtoN, Nload (PIOMan-2015 "
	              "Figs. 10-12)");
	bm_hline(&c, "latency = half round trip in us; time budget %.2f s per point; "
	             "warm-up %ld round trips per thread", o.max_time, o.warmup);

	struct bm_table t;
	if (o.c.csv)
		bm_table_begin(&t, &c, csv_cols, NCOLS(csv_cols));

	int list[MAX_POINTS];
	if (o.modes & M_1TON) {
		int k = thread_list(&o, M_1TON, list);
		bm_hline(&c, "%s", "");
		bm_hline(&c, "1toN: rank 0 = 1 thread, rank 1 = N threads, 1-byte ping-pong, "
		             "rank 0 serves the threads round-robin");
		bm_hline(&c, "thr_min/med/max: extremes and median of the per-thread medians");
		if (!o.c.csv)
			bm_table_begin(&t, &c, cols_1ton, NCOLS(cols_1ton));
		for (int i = 0; i < k; i++) {
			struct result r;
			run_1ton(&c, &o, list[i], &r);
			emit(&t, &c, &r);
		}
	}
	if (o.modes & M_NTON) {
		int k = thread_list(&o, M_NTON, list);
		bm_hline(&c, "%s", "");
		bm_hline(&c, "NtoN: N thread pairs, pair i ping-pongs 1 byte on its own tag");
		bm_hline(&c, "kmsg_s: thousands of messages per second, all pairs together");
		if (!o.c.csv)
			bm_table_begin(&t, &c, cols_nton, NCOLS(cols_nton));
		for (int i = 0; i < k; i++) {
			struct result r;
			run_nton(&c, &o, list[i], &r);
			emit(&t, &c, &r);
		}
	}
	if (o.modes & M_NLOAD) {
		int k = thread_list(&o, M_NLOAD, list);
		char sz[32];
		bm_fmt_size(o.size, sz, sizeof sz);
		char *sbuf = malloc((size_t)o.size), *rbuf = malloc((size_t)o.size);
		double *lat = malloc((size_t)o.load_iters * sizeof *lat);
		if (!sbuf || !rbuf || !lat)
			bm_die(&c, "out of memory");
		memset(sbuf, BM_MSG_MORE, (size_t)o.size);
		memset(rbuf, 0, (size_t)o.size);
		bm_hline(&c, "%s", "");
		bm_hline(&c, "Nload: %s ping-pong between the main threads, N compute threads "
		             "per rank (calibrated work, 20 us chunks)", sz);
		bm_hline(&c, "cmp_alone / cmp_pp: compute throughput of both ranks in cores, "
		             "alone (%.2f s, main threads asleep) / during the ping-pong; "
		             "slowdown = cmp_alone / cmp_pp", o.alone_time);
		if (o.gap_us > 0)
			bm_hline(&c, "pings spaced by a random sleep of rank 0, uniform in [0, %.0f] us",
			         2 * o.gap_us);
		else
			bm_hline(&c, "back-to-back ping-pong: round trips that happen while both main "
			             "threads hold a core dominate the median; see max_us and "
			             "--gap-us");
		if (!o.c.csv)
			bm_table_begin(&t, &c, cols_nload, NCOLS(cols_nload));
		for (int i = 0; i < k; i++) {
			struct result r;
			run_nload(&c, &o, list[i], sbuf, rbuf, lat, &r);
			emit(&t, &c, &r);
		}
		free(sbuf);
		free(rbuf);
		free(lat);
	}

	MPI_Barrier(MPI_COMM_WORLD);
	MPI_Finalize();
	return 0;
}

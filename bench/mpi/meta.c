/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_meta: the halo meta-application of PM2-2008 (§4, Figs. 7-8,
 * Table 1): every process runs --threads threads, each owning a strip of a
 * matrix; the strips form a ring over all threads of all processes, so a
 * thread's neighbours are threads of its own process (messages through the
 * MPI to itself) or, at a process's edges, of the next process. One
 * iteration, in every thread (the paper's Figure 7):
 *
 *     MPI_Irecv(left), MPI_Irecv(right)
 *     compute1()                the strip's frontiers (--frontier-us)
 *     MPI_Isend(left), MPI_Isend(right)    --halo bytes each
 *     compute2()                the rest of the strip (--interior-us)
 *     MPI_Waitall(the two sends), then MPI_Waitall(the two receives)
 *
 * The paper receives with a blocking call after the sends' wait, which
 * holds only below the rendezvous limit (with larger halos every thread
 * would wait for a send whose receive is not posted): the receives are
 * posted first here, so every size runs.
 * Computation is a fixed amount of work calibrated before MPI_Init
 * (bm_work), so a thread that steals a computing core makes it last
 * longer. --imbalance F gives the threads of rank 0 F times the interior
 * work of the others: the others then wait for their neighbours, and the
 * cores they leave idle are where an engine can post sends for the busy
 * ones (the gap "left by the thread scheduler when a thread waits for its
 * neighbours' data" that the paper's offload fills).
 *
 * One repetition is --iters iterations back to back; its time per
 * iteration is the slowest thread's (t1 - t0) / iters over every process.
 * For every (halo, threads) point two loops alternate repetition by
 * repetition: t_step, the iteration above, and t_comp, the same without
 * any communication (the computation alone); vis = t_step - t_comp is the
 * communication left visible. Medians over --reps repetitions (quartiles of
 * t_step). Run it natively, through piano-run, and through piano-run with
 * PIANO_OFFLOAD=1 (submission offload), on one host and across hosts.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench_mpi_common.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POINTS 16
#define MAX_THREADS 64

static const char *usage_text =
        "usage: bench_meta [options]   (any number of ranks >= 1)\n"
        "  --halo LIST        bytes sent to each neighbour (default 64,1K,4K)\n"
        "  --threads LIST     threads per process (default 1,2)\n"
        "  --frontier-us F    compute1, before the sends (default 5)\n"
        "  --interior-us I    compute2, between the sends and the waits\n"
        "                     (default 50)\n"
        "  --imbalance F      rank 0's threads do F x the interior work\n"
        "                     (default 1)\n"
        "  --iters N          iterations per repetition (default 200; quick 50)\n"
        "  --reps N           repetitions per point (default 11; quick 5)\n"
        "  --net NAME         the transport the launcher chose, for the table's\n"
        "                     net column (e.g. shm, tcp; default: default)\n";

struct opts {
	long halo[MAX_POINTS];
	int nhalo;
	int threads[MAX_POINTS];
	int nthreads;
	double frontier_us, interior_us, imbalance;
	long iters, reps;
	int have_iters, have_reps;
	const char *net;
};

static enum bm_arg meta_arg(void *prog, const char *a, const char *v)
{
	struct opts *o = prog;
	int bad;
	if (!v)
		return BM_ARG_UNKNOWN;
	if (!strcmp(a, "--halo")) {
		bad = (o->nhalo = bm_parse_sizes(v, o->halo, MAX_POINTS, 0, 1L << 24)) < 0;
	} else if (!strcmp(a, "--threads")) {
		bad = (o->nthreads = bm_parse_ints(v, o->threads, MAX_POINTS, 1, MAX_THREADS)) < 0;
	} else if (!strcmp(a, "--frontier-us")) {
		bad = bm_parse_double(v, 0, 1e6, &o->frontier_us);
	} else if (!strcmp(a, "--interior-us")) {
		bad = bm_parse_double(v, 0, 1e6, &o->interior_us);
	} else if (!strcmp(a, "--imbalance")) {
		bad = bm_parse_double(v, 0, 1000, &o->imbalance);
	} else if (!strcmp(a, "--iters")) {
		bad = bm_parse_int(v, 1, 10000000, &o->iters);
		o->have_iters = 1;
	} else if (!strcmp(a, "--reps")) {
		bad = bm_parse_int(v, 1, 100000, &o->reps);
		o->have_reps = 1;
	} else if (!strcmp(a, "--net")) {
		o->net = v;
		bad = !*v || strchr(v, ',') != NULL;
	} else {
		return BM_ARG_UNKNOWN;
	}
	return bad ? BM_ARG_BAD : BM_ARG_VALUE;
}

static int parse(int argc, char **argv, struct bm_opts *co, struct opts *o, char *err,
                 size_t errlen)
{
	*o = (struct opts){ .frontier_us = 5,
		            .interior_us = 50,
		            .imbalance = 1,
		            .iters = 200,
		            .reps = 11,
		            .net = "default" };
	if (bm_opts_parse(co, argc, argv, meta_arg, o, err, errlen))
		return -1;
	if (!o->nhalo) {
		static const long d[] = { 64, 1024, 4096 };
		o->nhalo = 3;
		memcpy(o->halo, d, sizeof d);
	}
	if (!o->nthreads) {
		o->nthreads = 2;
		o->threads[0] = 1;
		o->threads[1] = 2;
	}
	if (co->quick) {
		if (!o->have_iters)
			o->iters = 50;
		if (!o->have_reps)
			o->reps = 5;
	}
	return 0;
}

/* ----------------------------------------------------------- the ring */

struct team;

struct worker {
	struct team *tm;
	int t;           /* index in the process */
	int lrank, ltid; /* left neighbour: process and thread */
	int rrank, rtid; /* right neighbour */
	char *sl, *sr, *rl, *rr;
	double time_us; /* of the last repetition, per iteration */
};

struct team {
	int rank, size, nthreads;
	long halo, iters;
	int comm; /* this repetition exchanges halos */
	uint64_t frontier, interior;
	pthread_barrier_t start, done;
	int quit;
	struct worker w[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
};

/* A message to thread `tid` of a process from its left (0) or right (1)
 * neighbour. */
static int tag_of(int tid, int from_right) { return 2 * tid + from_right; }

static void iterate(struct worker *w)
{
	struct team *tm = w->tm;
	const int n = (int)tm->halo;
	double t0 = bm_now_us();
	for (long it = 0; it < tm->iters; it++) {
		MPI_Request req[4];
		if (tm->comm) {
			MPI_Irecv(w->rl, n, MPI_BYTE, w->lrank, tag_of(w->t, 0), MPI_COMM_WORLD,
			          &req[2]);
			MPI_Irecv(w->rr, n, MPI_BYTE, w->rrank, tag_of(w->t, 1), MPI_COMM_WORLD,
			          &req[3]);
		}
		bm_work(tm->frontier);
		if (tm->comm) {
			/* To the left neighbour I am its right one, and back. */
			MPI_Isend(w->sl, n, MPI_BYTE, w->lrank, tag_of(w->ltid, 1), MPI_COMM_WORLD,
			          &req[0]);
			MPI_Isend(w->sr, n, MPI_BYTE, w->rrank, tag_of(w->rtid, 0), MPI_COMM_WORLD,
			          &req[1]);
		}
		bm_work(tm->interior);
		if (tm->comm) {
			MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
			MPI_Waitall(2, req + 2, MPI_STATUSES_IGNORE);
		}
	}
	w->time_us = (bm_now_us() - t0) / (double)tm->iters;
}

/* Threads 1.. of the team; thread 0 is the main thread (it also calls the
 * barriers between processes). */
static void *worker_main(void *arg)
{
	struct worker *w = arg;
	for (;;) {
		pthread_barrier_wait(&w->tm->start);
		if (w->tm->quit)
			return NULL;
		iterate(w);
		pthread_barrier_wait(&w->tm->done);
	}
}

/* One repetition on every thread of every process; returns the slowest
 * thread's time per iteration. */
static double repetition(struct team *tm)
{
	bm_quiet_barrier(MPI_COMM_WORLD);
	pthread_barrier_wait(&tm->start);
	iterate(&tm->w[0]);
	pthread_barrier_wait(&tm->done);
	double mine = 0, all = 0;
	for (int t = 0; t < tm->nthreads; t++)
		mine = tm->w[t].time_us > mine ? tm->w[t].time_us : mine;
	bm_quiet_allreduce(&mine, &all, 1, MPI_MAX, MPI_COMM_WORLD);
	return all;
}

static int team_start(struct team *tm, int nthreads, long maxhalo)
{
	tm->nthreads = nthreads;
	tm->quit = 0;
	if (pthread_barrier_init(&tm->start, NULL, (unsigned)nthreads) ||
	    pthread_barrier_init(&tm->done, NULL, (unsigned)nthreads))
		return -1;
	int total = tm->size * nthreads;
	for (int t = 0; t < nthreads; t++) {
		struct worker *w = &tm->w[t];
		int g = tm->rank * nthreads + t;
		int l = (g - 1 + total) % total, r = (g + 1) % total;
		*w = (struct worker){ .tm = tm,
			              .t = t,
			              .lrank = l / nthreads,
			              .ltid = l % nthreads,
			              .rrank = r / nthreads,
			              .rtid = r % nthreads };
		size_t b = (size_t)(maxhalo ? maxhalo : 1);
		w->sl = malloc(b);
		w->sr = malloc(b);
		w->rl = malloc(b);
		w->rr = malloc(b);
		if (!w->sl || !w->sr || !w->rl || !w->rr)
			return -1;
		memset(w->sl, 1, b);
		memset(w->sr, 2, b);
	}
	for (int t = 1; t < nthreads; t++)
		if (pthread_create(&tm->tid[t], NULL, worker_main, &tm->w[t]))
			return -1;
	return 0;
}

static void team_stop(struct team *tm)
{
	tm->quit = 1;
	pthread_barrier_wait(&tm->start);
	for (int t = 1; t < tm->nthreads; t++)
		pthread_join(tm->tid[t], NULL);
	for (int t = 0; t < tm->nthreads; t++) {
		free(tm->w[t].sl);
		free(tm->w[t].sr);
		free(tm->w[t].rl);
		free(tm->w[t].rr);
	}
	pthread_barrier_destroy(&tm->start);
	pthread_barrier_destroy(&tm->done);
}

int main(int argc, char **argv)
{
	struct bm_opts co;
	struct opts o;
	char err[256] = "";
	bm_opts_init(&co);
	int prc = parse(argc, argv, &co, &o, err, sizeof err);
	double rate = prc == 0 ? bm_calibrate() : 0;

	struct bm_ctx ctx;
	bm_init(&ctx, "meta", &co, rate, &argc, &argv);
	if (prc || co.help)
		return bm_usage_exit(&ctx, usage_text, err);
	int rc = bm_require_ranks(&ctx, 1, 0);
	if (rc)
		return rc;
	if (ctx.provided < MPI_THREAD_MULTIPLE)
		bm_die(&ctx, "bench_meta needs MPI_THREAD_MULTIPLE\n");
	long maxhalo = 0;
	for (int k = 0; k < o.nhalo; k++)
		maxhalo = o.halo[k] > maxhalo ? o.halo[k] : maxhalo;
	double *ts = malloc(sizeof(double) * (size_t)o.reps);
	double *tc = malloc(sizeof(double) * (size_t)o.reps);
	struct team *tm = calloc(1, sizeof *tm);
	if (!ts || !tc || !tm)
		bm_die(&ctx, "out of memory\n");
	tm->rank = ctx.rank;
	tm->size = ctx.size;
	tm->iters = o.iters;
	double imb = ctx.rank == 0 ? o.imbalance : 1;
	tm->frontier = (uint64_t)(ctx.rate * o.frontier_us);
	tm->interior = (uint64_t)(ctx.rate * o.interior_us * imb);

	bm_header(&ctx, "piano meta benchmark: threads on a ring of strips, irecv, frontier, "
	                "isend, interior, waits (PM2-2008 Table 1)");
	bm_hline(&ctx,
	         "per thread and iteration: 2 MPI_Irecv, %.1f us frontier, 2 MPI_Isend, "
	         "%.1f us interior (x %.2f on rank 0), MPI_Waitall (sends, then "
	         "receives); %ld iterations per repetition, %ld repetitions",
	         o.frontier_us, o.interior_us, o.imbalance, o.iters, o.reps);
	bm_hline(&ctx, "step: slowest thread's time per iteration, median (q1/q3) over "
	               "repetitions; comp: the same loop without messages; vis = step - comp");

	static const struct bm_col cols[] = {
		{ "net", BM_COL_STR, 7, NULL },           { "imbalance", BM_COL_F2, 9, NULL },
		{ "halo", BM_COL_SIZE, 8, "halo_bytes" }, { "threads", BM_COL_INT, 7, NULL },
		{ "step(us)", BM_COL_F4, 10, "step_us" }, { "q1(us)", BM_COL_F4, 10, "q1_us" },
		{ "q3(us)", BM_COL_F4, 10, "q3_us" },     { "comp(us)", BM_COL_F4, 10, "comp_us" },
		{ "vis(us)", BM_COL_F4, 10, "vis_us" },
	};
	struct bm_table t;
	bm_table_begin(&t, &ctx, cols, (int)(sizeof cols / sizeof cols[0]));
	for (int ti = 0; ti < o.nthreads; ti++) {
		if (team_start(tm, o.threads[ti], maxhalo))
			bm_die(&ctx, "cannot start %d threads\n", o.threads[ti]);
		for (int hi = 0; hi < o.nhalo; hi++) {
			tm->halo = o.halo[hi];
			tm->comm = 1;
			(void)repetition(tm); /* warm-up: connections, caches */
			for (int r = 0; r < o.reps; r++) {
				tm->comm = 1;
				ts[r] = repetition(tm);
				tm->comm = 0;
				tc[r] = repetition(tm);
			}
			struct bm_stats s;
			bm_stats(ts, o.reps, &s);
			double comp = bm_median(tc, o.reps);
			bm_table_row(&t, o.net, o.imbalance, o.halo[hi], (long)o.threads[ti],
			             s.median, s.p25, s.p75, comp, s.median - comp);
		}
		team_stop(tm);
	}
	free(ts);
	free(tc);
	free(tm);
	MPI_Finalize();
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_nbc: overlap of non-blocking collectives with computation, measured
 * the way the OSU micro-benchmarks do (osu_ibcast, osu_iallreduce,
 * osu_ialltoall, osu_ibarrier), plus the CPU time they cost, which uKACC-2012 (Fig. 7)
 * compares between progression methods.
 *
 * For MPI_Ibcast (root 0, MPI_CHAR), MPI_Iallreduce (MPI_FLOAT, MPI_SUM,
 * size/4 elements), MPI_Ialltoall (size bytes of MPI_CHAR to each rank, as
 * OSU counts it), MPI_Ibarrier (no size) and MPI_Ireduce_scatter_block
 * (MPI_FLOAT, MPI_SUM, a vector of size/4 elements, size/4/ranks per rank
 * and at least one, as osu_ireduce_scatter counts it), on every rank:
 *   t_pure     start the collective, wait for it at once;
 *   t_comp     the computation alone: a fixed number of triad element
 *              updates (L2-resident arrays) calibrated before MPI_Init,
 *              then timed again in place and scaled, to last about
 *              t_pure (--compute-factor F: F x t_pure);
 *   t_ovl      start, compute, wait (no MPI call while computing);
 *   overlap %  = max(0, 100 - 100 * (t_ovl - t_comp) / t_pure)  (OSU);
 *   cpu_pure, cpu_comp, cpu_ovl  CPU time of the process (getrusage
 *              RUSAGE_SELF, user + system, every thread: piano's and the
 *              MPI's count) during the three loops, per operation;
 *   cpu_comm   = cpu_ovl - CPU of the compute-only loop, per operation:
 *              what the collective costs in CPU when overlapped.
 * One repetition is a loop of `iters` operations, timed as (t1 - t0) /
 * iters; times are the slowest rank's, CPU times the mean over ranks; each
 * value is the median over --reps repetitions. A probe of pure collectives
 * sizes the computation (as OSU does), a probe of overlapped ones sets
 * iters so that one repetition lasts about --target-ms (the same count on
 * every rank); then the pure, compute-only and overlapped loops alternate,
 * repetition by repetition, so that a change in the machine's load
 * affects them alike. Times in microseconds.
 *
 * --persistent: the same collectives as MPI-4 persistent ones
 * (MPI_Bcast_init ..., Open MPI's MPIX_ forms), initialized once per point
 * and started by MPI_Start each time.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench_mpi_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif

#if MPI_VERSION >= 4
#define PINIT(name) MPI_##name##_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define PINIT(name) MPIX_##name##_init
#endif

#define MAX_POINTS 32

static const char *usage_text =
        "usage: bench_nbc [options]   (any number of ranks >= 2)\n"
        "  --colls LIST     ibcast, iallreduce, ialltoall, ibarrier and/or\n"
        "                   ireduce_scatter (MPI_Ireduce_scatter_block) (default all)\n"
        "  --sizes LIST     message sizes, e.g. 4,1K,1M (default 4B..1MiB, x4;\n"
        "                   quick 4B,1KiB,64KiB,1MiB); Iallreduce rounds them\n"
        "                   down to whole floats (at least one); Ialltoall\n"
        "                   sends this much to each rank\n"
        "  --reps N         repetitions per point (default 11; quick 5)\n"
        "  --target-ms T    length of one repetition of pure collectives\n"
        "                   (default 20; quick 4): sets the iterations\n"
        "  --iters N        fixed iterations per repetition instead\n"
        "  --compute-factor F  compute F x t_pure instead of ~t_pure (default 1;\n"
        "                   e.g. 10 to exceed the period of piano's timer thread)\n"
        "  --compute-per-byte NS  compute NS ns per byte of the size instead, e.g.\n"
        "                   8 on a 1 Gbit/s link (the wire time of the size), so\n"
        "                   that a stalled probe does not size the computation\n"
        "  --persistent     the persistent collectives instead (MPI_Bcast_init ...,\n"
        "                   started by MPI_Start)\n";

enum { C_IBCAST, C_IALLREDUCE, C_IALLTOALL, C_IBARRIER, C_IREDUCE_SCATTER, NCOLLS };
static const char *coll_names[NCOLLS] = { "ibcast", "iallreduce", "ialltoall", "ibarrier",
	                                  "ireduce_scatter" };

struct opts {
	int colls[NCOLLS];
	long sizes[MAX_POINTS];
	int nsizes;
	long reps;
	double target_ms;
	long iters;
	double factor;
	double per_byte_ns;         /* > 0: compute per_byte_ns x size instead */
	int have_reps, have_target; /* given: --quick does not change them */
	int persistent;
};

/* One option of this program (see bm_arg_fn). */
static enum bm_arg nbc_arg(void *prog, const char *a, const char *v)
{
	struct opts *o = prog;
	int bad;
	char *end;
	if (!strcmp(a, "--persistent")) {
		o->persistent = 1;
		return BM_ARG_FLAG;
	}
	if (!v)
		return BM_ARG_UNKNOWN;
	if (!strcmp(a, "--colls")) {
		int any = 0;
		for (int c = 0; c < NCOLLS; c++)
			any |= o->colls[c] = strstr(v, coll_names[c]) != NULL;
		bad = !any;
	} else if (!strcmp(a, "--sizes")) {
		bad = (o->nsizes = bm_parse_sizes(v, o->sizes, MAX_POINTS, 1, 256L << 20)) < 0;
	} else if (!strcmp(a, "--reps")) {
		bad = bm_parse_int(v, 1, 100000, &o->reps);
		o->have_reps = 1;
	} else if (!strcmp(a, "--target-ms")) {
		o->target_ms = strtod(v, &end);
		bad = end == v || *end || !(o->target_ms > 0) || o->target_ms > 60000;
		o->have_target = 1;
	} else if (!strcmp(a, "--compute-factor")) {
		o->factor = strtod(v, &end);
		bad = end == v || *end || !(o->factor > 0) || o->factor > 1e6;
	} else if (!strcmp(a, "--compute-per-byte")) {
		o->per_byte_ns = strtod(v, &end);
		bad = end == v || *end || !(o->per_byte_ns > 0) || o->per_byte_ns > 1e6;
	} else if (!strcmp(a, "--iters")) {
		bad = bm_parse_int(v, 1, 10000000, &o->iters);
	} else {
		return BM_ARG_UNKNOWN;
	}
	return bad ? BM_ARG_BAD : BM_ARG_VALUE;
}

static int parse(int argc, char **argv, struct bm_opts *co, struct opts *o,
                 char *err, size_t errlen)
{
	*o = (struct opts){ .reps = 11, .target_ms = 20, .factor = 1 };
	for (int c = 0; c < NCOLLS; c++)
		o->colls[c] = 1;
	if (bm_opts_parse(co, argc, argv, nbc_arg, o, err, errlen))
		return -1;
	if (!o->nsizes) {
		if (co->quick) {
			static const long q[] = { 4, 1L << 10, 64L << 10, 1L << 20 };
			o->nsizes = 4;
			memcpy(o->sizes, q, sizeof q);
		} else {
			for (long s = 4; s <= 1L << 20; s *= 4)
				o->sizes[o->nsizes++] = s;
		}
	}
	if (co->quick) {
		if (!o->have_reps)
			o->reps = 5;
		if (!o->have_target)
			o->target_ms = 4;
	}
	return 0;
}

struct point {
	int coll;
	long size;
	int block; /* MPI_Ireduce_scatter_block's elements per rank */
	void *sbuf, *rbuf;
	struct bm_triad *triad;
	MPI_Request persistent; /* the initialized request, or MPI_REQUEST_NULL */
};

/* The collective's MPI call: non-blocking, or (init) its persistent form's
 * initialization. */
static void post(struct point *p, MPI_Request *req, int init)
{
#ifndef PINIT
	if (init) {
		fprintf(stderr, "bench_nbc: this MPI has no persistent collectives\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
#define PCALL(call, name, ...) call(__VA_ARGS__)
#else
#define PCALL(call, name, ...) \
	(init ? PINIT(name)(__VA_ARGS__, MPI_INFO_NULL, req) : call(__VA_ARGS__, req))
#endif
	switch (p->coll) {
	case C_IBCAST:
		PCALL(MPI_Ibcast, Bcast, p->sbuf, (int)p->size, MPI_CHAR, 0, MPI_COMM_WORLD);
		break;
	case C_IALLREDUCE:
		PCALL(MPI_Iallreduce, Allreduce, p->sbuf, p->rbuf, (int)(p->size / 4), MPI_FLOAT,
		      MPI_SUM, MPI_COMM_WORLD);
		break;
	case C_IALLTOALL:
		PCALL(MPI_Ialltoall, Alltoall, p->sbuf, (int)p->size, MPI_CHAR, p->rbuf,
		      (int)p->size, MPI_CHAR, MPI_COMM_WORLD);
		break;
	case C_IREDUCE_SCATTER:
		PCALL(MPI_Ireduce_scatter_block, Reduce_scatter_block, p->sbuf, p->rbuf, p->block,
		      MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		break;
	default: PCALL(MPI_Ibarrier, Barrier, MPI_COMM_WORLD); break;
	}
#undef PCALL
}

/* Starts the collective; returns the request to wait for. */
static MPI_Request *start(struct point *p, MPI_Request *req)
{
	if (p->persistent == MPI_REQUEST_NULL) {
		post(p, req, 0);
		return req;
	}
	MPI_Start(&p->persistent);
	return &p->persistent;
}

/* One loop of iters operations. mode 0: pure collective; 1: compute only;
 * 2: collective overlapped with the compute. Per-op time and CPU (µs). */
static void loop(struct point *p, int mode, int iters, uint64_t work, double *t,
                 double *cpu)
{
	bm_quiet_barrier(MPI_COMM_WORLD);
	double c0 = bm_cpu_us();
	double t0 = bm_now_us();
	for (int i = 0; i < iters; i++) {
		MPI_Request req, *w = NULL;
		if (mode != 1)
			w = start(p, &req);
		if (mode != 0)
			bm_triad_run(p->triad, work);
		if (w)
			MPI_Wait(w, MPI_STATUS_IGNORE);
	}
	double t1 = bm_now_us();
	double c1 = bm_cpu_us();
	*t = (t1 - t0) / iters;
	*cpu = (c1 - c0) / iters;
}

/* Slowest rank's time, mean CPU over ranks. */
static void reduce(double t, double cpu, int size, double *tmax, double *cpumean)
{
	double in[2] = { t, cpu }, out[2];
	bm_quiet_allreduce(&in[0], &out[0], 1, MPI_MAX, MPI_COMM_WORLD);
	bm_quiet_allreduce(&in[1], &out[1], 1, MPI_SUM, MPI_COMM_WORLD);
	*tmax = out[0];
	*cpumean = out[1] / size;
}

/* Doubles a loop of the given mode until it lasts at least target_us on
 * the slowest rank (every rank takes the same decisions), then times
 * `samples` loops of that length; returns the median of the slowest
 * rank's time per operation (one preempted operation in a short loop
 * would otherwise decide for the whole point). */
static double probe(struct point *p, int mode, uint64_t work, double target_us,
                    int samples, int size)
{
	double t, cpu, tmax, cmean, v[8];
	int n = 2;
	for (;; n *= 2) {
		loop(p, mode, n, work, &t, &cpu);
		reduce(t, cpu, size, &tmax, &cmean);
		if (tmax * n >= target_us || n >= 20000)
			break;
	}
	if (samples > 8)
		samples = 8;
	if (samples <= 1)
		return tmax;
	for (int i = 0; i < samples; i++) {
		loop(p, mode, n, work, &t, &cpu);
		reduce(t, cpu, size, &v[i], &cmean);
	}
	return bm_median(v, samples);
}

/* The rate measured before MPI_Init can be off by a third once the job
 * runs (the other ranks starting up beside the calibration; the MPI's and
 * piano's threads after it), and a computation shorter than t_pure caps
 * the OSU overlap at t_comp / t_pure whatever the progression does. So
 * the work is timed once more in place (median of 5 runs, this rank's own
 * time) and scaled to last target_us; one correction, no iteration: the
 * reported t_comp says how close it came. */
static uint64_t rescale(struct bm_triad *triad, uint64_t work, double target_us)
{
	double v[5];
	for (int i = 0; i < 5; i++) {
		double t0 = bm_now_us();
		bm_triad_run(triad, work);
		v[i] = bm_now_us() - t0;
	}
	double t = bm_median(v, 5);
	if (t <= 0)
		return work;
	double w = (double)work * target_us / t;
	return w < 1 ? 1 : (uint64_t)llround(w);
}

int main(int argc, char **argv)
{
	struct bm_opts co;
	struct opts o;
	char err[256] = "";
	bm_opts_init(&co);
	co.can_bind = 1;
	int prc = parse(argc, argv, &co, &o, err, sizeof err);

	/* Calibration before MPI_Init: no MPI or piano thread exists yet. */
	struct bm_triad triad;
	size_t l2 = bm_l2_bytes();
	if (bm_triad_init(&triad, l2 / 2)) {
		fprintf(stderr, "bench_nbc: out of memory\n");
		return 1;
	}
	double rate = prc == 0 ? bm_triad_rate(&triad) : 0;

	struct bm_ctx ctx;
	bm_init(&ctx, "nbc", &co, 0, &argc, &argv);
	if (prc || co.help)
		return bm_usage_exit(&ctx, usage_text, err);
	int rc = bm_require_ranks(&ctx, 2, 0);
	if (rc)
		return rc;

	long maxsize = 4;
	for (int k = 0; k < o.nsizes; k++)
		if (o.sizes[k] > maxsize)
			maxsize = o.sizes[k];
	/* Ialltoall sends and receives maxsize bytes per rank. */
	size_t bufsize = (size_t)maxsize * (size_t)ctx.size;
	float *sbuf = malloc(bufsize), *rbuf = malloc(bufsize);
	double *tp = malloc((size_t)o.reps * sizeof(double));
	double *tw = malloc((size_t)o.reps * sizeof(double));
	double *to = malloc((size_t)o.reps * sizeof(double));
	double *cp = malloc((size_t)o.reps * sizeof(double));
	double *cw = malloc((size_t)o.reps * sizeof(double));
	double *cov = malloc((size_t)o.reps * sizeof(double));
	if (!sbuf || !rbuf || !tp || !tw || !to || !cp || !cw || !cov) {
		fprintf(stderr, "bench_nbc: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	for (size_t i = 0; i < bufsize / 4; i++)
		sbuf[i] = rbuf[i] = (float)(i % 17);

	double rates[2], rmin = rate, rmax = rate;
	MPI_Allreduce(&rmin, &rates[0], 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
	MPI_Allreduce(&rmax, &rates[1], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

	bm_header(&ctx, "piano non-blocking collectives benchmark: overlap and "
	                "CPU time (OSU osu_ibcast/osu_iallreduce/osu_ialltoall/osu_ibarrier/"
	                "osu_ireduce_scatter, uKACC)");
	if (o.persistent)
		bm_hline(&ctx,
		         "persistent collectives: initialized once per point, MPI_Start each time");
	bm_hline(&ctx, "Overall = collective start + compute + MPI_Wait; compute = triad "
	        "element updates calibrated to ~%g x t_pure", o.factor);
	if (o.per_byte_ns > 0)
		bm_hline(&ctx, "compute sized to %g ns per byte of the size instead of t_pure",
		         o.per_byte_ns);
	bm_hline(&ctx, "calibration before MPI_Init: %.0f..%.0f triad element updates/us "
	        "(slowest..fastest rank)", rates[0], rates[1]);
	bm_hline(&ctx, "%ld repetitions per point, each a loop of iters operations (~%.1f ms "
	        "of pure collectives); times: slowest rank, us per op, median", o.reps,
	        o.target_ms);
	bm_hline(&ctx, "ovl_q1/ovl_q3: quartiles of t_ovl; overlap%% = max(0, 100 - 100 * "
	        "(t_ovl - t_comp) / t_pure)");
	bm_hline(&ctx, "cpu_*: process CPU time (all threads, getrusage) per op, mean over "
	        "ranks, us; cpu_comm = cpu_ovl - cpu_comp");
	static const struct bm_col cols[] = {
		{ "coll", BM_COL_STR, 15, NULL },
		{ "size", BM_COL_SIZE, 8, "size_bytes" },
		{ "iters", BM_COL_INT, 6, NULL },
		{ "pure(us)", BM_COL_F4, 10, "t_pure_us" },
		{ "comp(us)", BM_COL_F4, 10, "t_comp_us" },
		{ "ovl(us)", BM_COL_F4, 10, "t_ovl_us" },
		{ "ovl_q1", BM_COL_F4, 10, "t_ovl_q1_us" },
		{ "ovl_q3", BM_COL_F4, 10, "t_ovl_q3_us" },
		{ "overlap%", BM_COL_F4, 8, "overlap_pct" },
		{ "cpu_pure", BM_COL_F4, 10, "cpu_pure_us" },
		{ "cpu_comp", BM_COL_F4, 10, "cpu_comp_us" },
		{ "cpu_ovl", BM_COL_F4, 10, "cpu_ovl_us" },
		{ "cpu_comm", BM_COL_F4, 10, "cpu_comm_us" },
	};
	struct bm_table tab;
	bm_table_begin(&tab, &ctx, cols, (int)(sizeof cols / sizeof cols[0]));

	for (int c = 0; c < NCOLLS; c++) {
		if (!o.colls[c])
			continue;
		int npts = c == C_IBARRIER ? 1 : o.nsizes;
		for (int k = 0; k < npts; k++) {
			struct point p = { .coll = c,
				           .size = c == C_IBARRIER ? 0 : o.sizes[k],
				           .sbuf = sbuf,
				           .rbuf = rbuf,
				           .triad = &triad,
				           .persistent = MPI_REQUEST_NULL };
			if (c == C_IALLREDUCE)
				p.size = p.size < 4 ? 4 : p.size / 4 * 4;
			if (c == C_IREDUCE_SCATTER) {
				long per = p.size / 4 / ctx.size;
				p.block = per < 1 ? 1 : (int)per;
				p.size = 4L * p.block * ctx.size;
			}
			if (o.persistent)
				post(&p, &p.persistent, 1);
			double t, cpu;

			/* Warm-up; a probe of pure collectives sizes the
			 * computation (as OSU does), a probe of overlapped ones
			 * the iteration count, so that a repetition lasts about
			 * --target-ms even where overlapping is much slower than
			 * the pure collective. */
			double tmax;
			loop(&p, 0, 3, 0, &t, &cpu);
			double t_probe = probe(&p, 0, 0, o.target_ms * 50, 5, ctx.size);
			/* The slowest rank's time (the same on every rank), turned
			 * into work at each rank's own calibrated speed. */
			double t_want = o.per_byte_ns > 0 ? o.per_byte_ns * 1e-3 *
			                                            (double)(p.size ? p.size : 1)
			                                  : t_probe * o.factor;
			uint64_t work = (uint64_t)llround(rate * t_want);
			if (work == 0)
				work = 1;
			work = rescale(&triad, work, t_want);
			long iters = o.iters;
			if (!iters) {
				tmax = probe(&p, 2, work, o.target_ms * 50, 3, ctx.size);
				if (tmax < t_probe)
					tmax = t_probe;
				double want = o.target_ms * 1e3 / (tmax > 0.05 ? tmax : 0.05);
				iters = want < 3 ? 3 : want > 20000 ? 20000 : (int)want;
			}

			for (int r = 0; r < o.reps; r++) {
				loop(&p, 0, iters, 0, &t, &cpu);
				reduce(t, cpu, ctx.size, &tp[r], &cp[r]);
				loop(&p, 1, iters, work, &t, &cpu);
				reduce(t, cpu, ctx.size, &tw[r], &cw[r]);
				loop(&p, 2, iters, work, &t, &cpu);
				reduce(t, cpu, ctx.size, &to[r], &cov[r]);
			}
			double t_pure = bm_median(tp, o.reps);
			double t_comp = bm_median(tw, o.reps);
			struct bm_stats ovl_st;
			bm_stats(to, o.reps, &ovl_st);
			double t_ovl = ovl_st.median;
			double cpu_pure = bm_median(cp, o.reps);
			double cpu_comp = bm_median(cw, o.reps);
			double cpu_ovl = bm_median(cov, o.reps);
			double ovl = t_pure > 0 ? 100 - 100 * (t_ovl - t_comp) / t_pure : 0;
			if (ovl < 0)
				ovl = 0;

			bm_table_row(&tab, coll_names[c], p.size, iters, t_pure, t_comp, t_ovl,
			             ovl_st.p25, ovl_st.p75, ovl, cpu_pure, cpu_comp, cpu_ovl,
			             cpu_ovl - cpu_comp);
			if (p.persistent != MPI_REQUEST_NULL)
				MPI_Request_free(&p.persistent);
		}
	}

	free(sbuf);
	free(rbuf);
	free(tp);
	free(tw);
	free(to);
	free(cp);
	free(cw);
	free(cov);
	bm_triad_free(&triad);
	MPI_Finalize();
	return 0;
}

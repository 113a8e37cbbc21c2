/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_halo: 1-D ghost-cell exchange with overlapped computation, the
 * ghost-cell benchmark of APSM-2013 (§5.2) and the communication
 * scheme of the PM2 halo meta-application (PM2-2008, Table 1).
 *
 * The ranks form a ring (left and right neighbours; with 2 ranks both are
 * the same process, the two directions use different tags). One iteration,
 * on every rank:
 *
 *     MPI_Irecv(halo from left)   MPI_Irecv(halo from right)
 *     MPI_Isend(halo to left)     MPI_Isend(halo to right)
 *     triad workload: w element updates of a[i] = b[i] + s*c[i] on arrays
 *                     that fit in half the L2 cache (002: "adjusted to fit
 *                     into each core's own L2 cache")
 *     MPI_Waitall(4)
 *
 * Iterations run back to back, like an application's time steps; one
 * repetition is --iters of them, and its time per iteration is that of
 * the slowest rank (t1 - t0) / iters. For every (halo, work) point three
 * loops are timed, interleaved repetition by repetition so that a change
 * in the machine's load affects them alike:
 *   t_total  the iteration above;
 *   t_comm   the same with w = 0 (pure communication);
 *   t_comp   the workload alone, no communication;
 * each the median (with quartiles for t_total) over --reps repetitions.
 *   ratio  = t_total / max(t_comm, t_comp): 1.00 when communication is
 *            entirely hidden behind the computation (or the reverse);
 *   no-ovl = (t_comm + t_comp) / max(t_comm, t_comp): the ratio without
 *            any overlap, for reference;
 *   vis    = t_total - t_comp: the communication time left visible
 *            (002, Fig. 3b).
 * --work gives w per rank; with --scaling it is the global amount, split
 * evenly over the ranks (strong scaling: run with 2, then 4 ranks; more
 * ranks than cores oversubscribes the machine, which is expected).
 * Computation is a fixed number of element updates, never clock-based.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench_mpi_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG_RIGHTWARD 7721 /* travels to the right neighbour */
#define TAG_LEFTWARD 7722  /* travels to the left neighbour */
#define MAX_POINTS 32

static const char *usage_text =
	"usage: bench_halo [options]   (any number of ranks >= 2)\n"
	"  --halo LIST      halo size per neighbour, e.g. 64K,1M (default 1MiB;\n"
	"                   quick 256KiB)\n"
	"  --work LIST      triad element updates per iteration and rank, e.g.\n"
	"                   512K,2M (default 512K,2M,8M; quick 1M,4M); with\n"
	"                   --scaling the global amount, split over the ranks\n"
	"                   (default 1M,4M,16M; quick 2M,8M)\n"
	"  --scaling        strong scaling: --work is global\n"
	"  --iters N        iterations per repetition (default 20; quick 8)\n"
	"  --reps N         repetitions per point (default 11; quick 5)\n"
	"  --warmup N       untimed repetitions per point (default 1)\n";

struct opts {
	long halo[MAX_POINTS];
	int nhalo;
	long work[MAX_POINTS];
	int nwork;
	int scaling;
	long iters, reps, warmup;
	int have_iters, have_reps; /* given: --quick does not change them */
};

/* One option of this program (see bm_arg_fn). */
static enum bm_arg halo_arg(void *prog, const char *a, const char *v)
{
	struct opts *o = prog;
	int bad;
	if (!strcmp(a, "--scaling")) {
		o->scaling = 1;
		return BM_ARG_FLAG;
	}
	if (!v)
		return BM_ARG_UNKNOWN;
	if (!strcmp(a, "--halo")) {
		bad = (o->nhalo = bm_parse_sizes(v, o->halo, MAX_POINTS, 1, 1L << 30)) < 0;
	} else if (!strcmp(a, "--work")) {
		bad = (o->nwork = bm_parse_sizes(v, o->work, MAX_POINTS, 0, (long)1e15)) < 0;
	} else if (!strcmp(a, "--iters")) {
		bad = bm_parse_int(v, 1, 1000000, &o->iters);
		o->have_iters = 1;
	} else if (!strcmp(a, "--reps")) {
		bad = bm_parse_int(v, 1, 100000, &o->reps);
		o->have_reps = 1;
	} else if (!strcmp(a, "--warmup")) {
		bad = bm_parse_int(v, 0, 100000, &o->warmup);
	} else {
		return BM_ARG_UNKNOWN;
	}
	return bad ? BM_ARG_BAD : BM_ARG_VALUE;
}

static int parse(int argc, char **argv, struct bm_opts *co, struct opts *o,
                 char *err, size_t errlen)
{
	*o = (struct opts){ .iters = 20, .reps = 11, .warmup = 1 };
	if (bm_opts_parse(co, argc, argv, halo_arg, o, err, errlen))
		return -1;
	if (!o->nhalo) {
		o->nhalo = 1;
		o->halo[0] = co->quick ? 256L << 10 : 1L << 20;
	}
	if (!o->nwork) {
		static const long d[] = { 512L << 10, 2L << 20, 8L << 20 };
		static const long q[] = { 1L << 20, 4L << 20 };
		const long *src = co->quick ? q : d;
		o->nwork = co->quick ? 2 : 3;
		for (int k = 0; k < o->nwork; k++)
			o->work[k] = o->scaling ? 2 * src[k] : src[k];
	}
	if (co->quick) {
		if (!o->have_iters)
			o->iters = 8;
		if (!o->have_reps)
			o->reps = 5;
	}
	return 0;
}

struct state {
	struct bm_triad triad;
	char *sl, *sr, *rl, *rr; /* send/receive buffers, left/right */
	int left, right;
};

/* One repetition of one loop; returns the time per iteration (µs) of this
 * rank. comm: exchange halo bytes; w: triad element updates. */
static double loop(struct state *s, int iters, int comm, long halo, uint64_t w)
{
	MPI_Request req[4];
	const int n = (int)halo;
	bm_quiet_barrier(MPI_COMM_WORLD);
	double t0 = bm_now_us();
	for (int it = 0; it < iters; it++) {
		if (comm) {
			MPI_Irecv(s->rl, n, MPI_BYTE, s->left, TAG_RIGHTWARD, MPI_COMM_WORLD, &req[0]);
			MPI_Irecv(s->rr, n, MPI_BYTE, s->right, TAG_LEFTWARD, MPI_COMM_WORLD, &req[1]);
			MPI_Isend(s->sl, n, MPI_BYTE, s->left, TAG_LEFTWARD, MPI_COMM_WORLD, &req[2]);
			MPI_Isend(s->sr, n, MPI_BYTE, s->right, TAG_RIGHTWARD, MPI_COMM_WORLD, &req[3]);
		}
		if (w)
			bm_triad_run(&s->triad, w);
		if (comm)
			MPI_Waitall(4, req, MPI_STATUSES_IGNORE);
	}
	return (bm_now_us() - t0) / iters;
}

int main(int argc, char **argv)
{
	struct bm_opts co;
	struct opts o;
	char err[256] = "";
	bm_opts_init(&co);
	co.can_bind = 1;
	int prc = parse(argc, argv, &co, &o, err, sizeof err);

	/* Calibration before MPI_Init, when no MPI or piano thread exists:
	 * only for the header (the work itself is a fixed count). */
	struct state s;
	memset(&s, 0, sizeof s);
	size_t l2 = bm_l2_bytes();
	if (bm_triad_init(&s.triad, l2 / 2)) {
		fprintf(stderr, "bench_halo: out of memory\n");
		return 1;
	}
	double rate = prc == 0 ? bm_triad_rate(&s.triad) : 0;

	struct bm_ctx ctx;
	bm_init(&ctx, "halo", &co, 0, &argc, &argv);
	if (prc || co.help)
		return bm_usage_exit(&ctx, usage_text, err);
	int rc = bm_require_ranks(&ctx, 2, 0);
	if (rc)
		return rc;
	s.left = (ctx.rank + ctx.size - 1) % ctx.size;
	s.right = (ctx.rank + 1) % ctx.size;
	long maxhalo = 0;
	for (int k = 0; k < o.nhalo; k++)
		if (o.halo[k] > maxhalo)
			maxhalo = o.halo[k];
	s.sl = malloc((size_t)maxhalo);
	s.sr = malloc((size_t)maxhalo);
	s.rl = malloc((size_t)maxhalo);
	s.rr = malloc((size_t)maxhalo);
	double *tt = malloc((size_t)o.reps * sizeof *tt);
	double *tc = malloc((size_t)o.reps * sizeof *tc);
	double *tw = malloc((size_t)o.reps * sizeof *tw);
	if (!s.sl || !s.sr || !s.rl || !s.rr || !tt || !tc || !tw) {
		fprintf(stderr, "bench_halo: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	memset(s.sl, 1, (size_t)maxhalo);
	memset(s.sr, 2, (size_t)maxhalo);
	memset(s.rl, 0, (size_t)maxhalo);
	memset(s.rr, 0, (size_t)maxhalo);

	double rates[2], rmin = rate, rmax = rate;
	MPI_Allreduce(&rmin, &rates[0], 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
	MPI_Allreduce(&rmax, &rates[1], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

	bm_header(&ctx, "piano halo benchmark: 1-D ghost-cell exchange + triad "
	                      "workload (APSM 5.2, PM2 halo meta-application)");
	bm_hline(&ctx, "iteration: Irecv x2, Isend x2 (ring neighbours), triad work, "
	        "Waitall; %ld iterations per repetition, %ld repetitions (+%ld warm-up)",
	        o.iters, o.reps, o.warmup);
	bm_hline(&ctx, "triad: 3 x %zu doubles (%zu KiB, L2 %zu KiB); calibrated before "
	        "MPI_Init at %.0f..%.0f element updates/us (slowest..fastest rank)",
	        s.triad.n, 3 * s.triad.n * 8 / 1024, l2 / 1024, rates[0], rates[1]);
	bm_hline(&ctx, "work: %s", o.scaling
	        ? "strong scaling: --work is global, each rank does work/ranks"
	        : "--work per rank (weak)");
	bm_hline(&ctx, "times per iteration in us, slowest rank, median over repetitions "
	        "(q1/q3: quartiles of t_total)");
	bm_hline(&ctx, "ratio = t_total / max(t_comm, t_comp) (1.00 = full overlap); "
	        "no-ovl = (t_comm + t_comp) / max; vis = t_total - t_comp");

	static const struct bm_col cols[] = {
		{ "halo", BM_COL_SIZE, 8, "halo_bytes" },
		{ "ranks", BM_COL_INT, 5, NULL },
		{ "work", BM_COL_INT, 10, NULL },
		{ "work/rank", BM_COL_INT, 10, "work_per_rank" },
		{ "total(us)", BM_COL_F4, 10, "t_total_us" },
		{ "q1(us)", BM_COL_F4, 10, "q1_us" },
		{ "q3(us)", BM_COL_F4, 10, "q3_us" },
		{ "comm(us)", BM_COL_F4, 10, "t_comm_us" },
		{ "comp(us)", BM_COL_F4, 10, "t_comp_us" },
		{ "vis(us)", BM_COL_F4, 10, "vis_us" },
		{ "ratio", BM_COL_F4, 7, NULL },
		{ "no-ovl", BM_COL_F4, 7, "no_ovl" },
	};
	struct bm_table t;
	bm_table_begin(&t, &ctx, cols, (int)(sizeof cols / sizeof cols[0]));

	for (int hi = 0; hi < o.nhalo; hi++) {
		const long halo = o.halo[hi];
		for (int wi = 0; wi < o.nwork; wi++) {
			const long work = o.work[wi];
			const uint64_t w = (uint64_t)(o.scaling ? work / ctx.size : work);
			for (int r = -o.warmup; r < o.reps; r++) {
				double local[3], global[3];
				local[0] = loop(&s, o.iters, 1, halo, w);
				local[1] = loop(&s, o.iters, 1, halo, 0);
				local[2] = w ? loop(&s, o.iters, 0, halo, w) : 0;
				bm_quiet_allreduce(local, global, 3, MPI_MAX, MPI_COMM_WORLD);
				if (r >= 0) {
					tt[r] = global[0];
					tc[r] = global[1];
					tw[r] = global[2];
				}
			}
			struct bm_stats total;
			bm_stats(tt, o.reps, &total);
			double t_comm = bm_median(tc, o.reps);
			double t_comp = bm_median(tw, o.reps);
			double best = t_comm > t_comp ? t_comm : t_comp;
			bm_table_row(&t, halo, (long)ctx.size, work, (long)w, total.median, total.p25,
			             total.p75, t_comm, t_comp, total.median - t_comp,
			             best > 0 ? total.median / best : 0.0,
			             best > 0 ? (t_comm + t_comp) / best : 0.0);
		}
	}

	free(s.sl);
	free(s.sr);
	free(s.rl);
	free(s.rr);
	free(tt);
	free(tc);
	free(tw);
	bm_triad_free(&s.triad);
	MPI_Finalize();
	return 0;
}

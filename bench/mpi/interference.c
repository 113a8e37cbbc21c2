/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_interference: how much background progress slows computation down
 * while communication is pending (PIOMan-2015, Fig. 4: impact of idle
 * polling on compute performance; APSM-2013 §5.2: "the progress thread
 * requires additional resources, reducing the worker thread's performance").
 *
 * Every rank runs two compute kernels, each a fixed amount of work:
 *   triad  STREAM triad a[i] = b[i] + s * c[i] on three arrays sized to
 *          half the L2 cache (sysconf(_SC_LEVEL2_CACHE_SIZE), 1 MiB when
 *          unknown), or to --triad-bytes (far above the last-level cache:
 *          a memory-bound kernel), repeated for --triad-elems element
 *          updates;
 *   dgemm  C += A * B, a triple loop on --dgemm-n square matrices,
 *          --dgemm-calls times.
 * One sample is the time of one such repetition on one rank. Samples are
 * taken in two phases that alternate --rounds times (so that a change in
 * the machine's load affects both alike):
 *   idle     nothing pending: MPI is initialised and silent;
 *   pending  every rank has posted an MPI_Irecv of --msg bytes (above the
 *            eager limit: piano tracks it and its progress task runs) from
 *            its left neighbour in a ring; the neighbour sends only after
 *            its own samples, at the end of the phase.
 * slowdown % = (median pending / median idle - 1) x 100, on the samples of
 * every computing rank pooled; "worst%" is the largest per-rank slowdown
 * (per-rank medians). cpu% is the process's CPU time (all its threads:
 * piano's, the MPI's) over the wall time of the samples, averaged over
 * computing ranks: 100 means only the computing thread ran.
 *
 * --half makes only even ranks compute; odd ranks block in MPI_Wait on
 * their pending receive (pending phase) or sleep (idle phase), so a core is
 * left to background progress next to each computing rank (the case of
 * PIOMan-2015's Fig. 4, where idle threads poll on free cores).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench_mpi_common.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TAG 7711

static const char *usage_text =
        "usage: bench_interference [options]   (any number of ranks >= 2)\n"
        "  --kernels LIST    triad and/or dgemm (default triad,dgemm)\n"
        "  --triad-elems N   triad element updates per sample (default 8M; quick 4M)\n"
        "  --triad-bytes S   the triad's three arrays together (default half the L2\n"
        "                    cache; far above the last-level cache, e.g. 256M, the\n"
        "                    kernel is bound by memory bandwidth)\n"
        "  --dgemm-n N       matrix order of the dgemm kernel (default 64)\n"
        "  --dgemm-calls N   products per sample (default 16; quick 8)\n"
        "  --msg SIZE        size of the pending receive (default 8MiB)\n"
        "  --reps N          samples per phase and round (default 10; quick 6)\n"
        "  --rounds N        idle/pending alternations (default 10; quick 3)\n"
        "  --half            only even ranks compute; odd ranks block in MPI_Wait\n";

struct opts {
	int triad, dgemm;
	long triad_elems, triad_bytes; /* triad_bytes 0: half the L2 */
	long dgemm_n, dgemm_calls;
	long msg;
	long reps, rounds;
	int half;
	/* given: --quick does not change them */
	int have_te, have_dc, have_reps, have_rounds;
};

/* One option of this program (see bm_arg_fn). */
static enum bm_arg interference_arg(void *prog, const char *a, const char *v)
{
	struct opts *o = prog;
	int bad;
	if (!strcmp(a, "--half")) {
		o->half = 1;
		return BM_ARG_FLAG;
	}
	if (!v)
		return BM_ARG_UNKNOWN;
	if (!strcmp(a, "--kernels")) {
		o->triad = strstr(v, "triad") != NULL;
		o->dgemm = strstr(v, "dgemm") != NULL;
		bad = !o->triad && !o->dgemm;
	} else if (!strcmp(a, "--triad-elems")) {
		bad = bm_parse_size(v, 1, (long)1e15, &o->triad_elems);
		o->have_te = 1;
	} else if (!strcmp(a, "--triad-bytes")) {
		bad = bm_parse_size(v, 24 * 1024, 1L << 40, &o->triad_bytes);
	} else if (!strcmp(a, "--dgemm-n")) {
		bad = bm_parse_int(v, 4, 1024, &o->dgemm_n);
	} else if (!strcmp(a, "--dgemm-calls")) {
		bad = bm_parse_int(v, 1, 1000000, &o->dgemm_calls);
		o->have_dc = 1;
	} else if (!strcmp(a, "--msg")) {
		bad = bm_parse_size(v, 1, 1L << 30, &o->msg);
	} else if (!strcmp(a, "--reps")) {
		bad = bm_parse_int(v, 1, 100000, &o->reps);
		o->have_reps = 1;
	} else if (!strcmp(a, "--rounds")) {
		bad = bm_parse_int(v, 1, 10000, &o->rounds);
		o->have_rounds = 1;
	} else {
		return BM_ARG_UNKNOWN;
	}
	return bad ? BM_ARG_BAD : BM_ARG_VALUE;
}

static int parse(int argc, char **argv, struct bm_opts *co, struct opts *o,
                 char *err, size_t errlen)
{
	*o = (struct opts){
		.triad = 1, .dgemm = 1, .triad_elems = 8L << 20, .dgemm_n = 64,
		.dgemm_calls = 16, .msg = 8L << 20, .reps = 10, .rounds = 10,
	};
	if (bm_opts_parse(co, argc, argv, interference_arg, o, err, errlen))
		return -1;
	if (co->quick) {
		if (!o->have_te)
			o->triad_elems = 4L << 20;
		if (!o->have_dc)
			o->dgemm_calls = 8;
		if (!o->have_reps)
			o->reps = 6;
		if (!o->have_rounds)
			o->rounds = 3;
	}
	return 0;
}

enum { K_TRIAD, K_DGEMM, NKERNELS };
enum { PH_IDLE, PH_PENDING, NPHASES };
static const char *kernel_names[NKERNELS] = { "triad", "dgemm" };
static const char *phase_names[NPHASES] = { "idle", "pending" };

struct state {
	struct opts *o;
	struct bm_triad triad;
	struct bm_dgemm dgemm;
	char *sbuf, *rbuf;
	int rank, size, left, right, computes;
};

static void run_kernel(struct state *s, int k)
{
	if (k == K_TRIAD)
		bm_triad_run(&s->triad, (uint64_t)s->o->triad_elems);
	else
		bm_dgemm_run(&s->dgemm, s->o->dgemm_calls);
}

/* One phase of one round: reps samples into out[], CPU and wall time of
 * the sampled part added to *cpu and *wall. */
static void phase(struct state *s, int k, int ph, double *out, double *cpu, double *wall)
{
	const struct opts *o = s->o;
	MPI_Request reqs[2];
	if (ph == PH_PENDING)
		MPI_Irecv(s->rbuf, (int)o->msg, MPI_BYTE, s->left, TAG, MPI_COMM_WORLD, &reqs[0]);
	bm_quiet_barrier(MPI_COMM_WORLD);
	if (s->computes) {
		double c0 = bm_cpu_us(), w0 = bm_now_us();
		for (int r = 0; r < o->reps; r++) {
			double t0 = bm_now_us();
			run_kernel(s, k);
			out[r] = (bm_now_us() - t0) * 1e-3;
		}
		*wall += bm_now_us() - w0;
		*cpu += bm_cpu_us() - c0;
	}
	if (ph == PH_PENDING) {
		if (!s->computes) /* --half: block until the left neighbour sends */
			MPI_Wait(&reqs[0], MPI_STATUS_IGNORE);
		MPI_Isend(s->sbuf, (int)o->msg, MPI_BYTE, s->right, TAG, MPI_COMM_WORLD, &reqs[1]);
		MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE);
	}
}

int main(int argc, char **argv)
{
	struct bm_opts co;
	struct opts o;
	char err[256] = "";
	bm_opts_init(&co);
	co.can_bind = 1;
	int prc = parse(argc, argv, &co, &o, err, sizeof err);

	struct bm_ctx ctx;
	bm_init(&ctx, "interference", &co, 0, &argc, &argv);
	if (prc || co.help)
		return bm_usage_exit(&ctx, usage_text, err);
	int rc = bm_require_ranks(&ctx, 2, 0);
	if (rc)
		return rc;

	struct state s = { .o = &o, .rank = ctx.rank, .size = ctx.size };
	s.left = (s.rank + s.size - 1) % s.size;
	s.right = (s.rank + 1) % s.size;
	s.computes = !o.half || s.rank % 2 == 0;
	size_t l2 = bm_l2_bytes();
	int nsamp = (int)(o.rounds * o.reps);
	double *samples = malloc((size_t)NKERNELS * NPHASES * (size_t)nsamp * sizeof(double));
	s.sbuf = malloc((size_t)o.msg);
	s.rbuf = malloc((size_t)o.msg);
	size_t tbytes = o.triad_bytes ? (size_t)o.triad_bytes : l2 / 2;
	if (!samples || !s.sbuf || !s.rbuf || bm_triad_init(&s.triad, tbytes) ||
	    bm_dgemm_init(&s.dgemm, (int)o.dgemm_n)) {
		fprintf(stderr, "bench_interference: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	memset(s.sbuf, 1, (size_t)o.msg);
	memset(s.rbuf, 0, (size_t)o.msg);
	double cpu[NKERNELS][NPHASES] = { { 0 } }, wall[NKERNELS][NPHASES] = { { 0 } };

	bm_header(&ctx, "piano interference benchmark: compute kernel slowdown "
	                      "while communication is pending (PIOMan Fig. 4, APSM 5.2)");
	bm_hline(&ctx, "triad: a[i] = b[i] + s*c[i], 3 x %zu doubles (%zu KiB, L2 %zu KiB), "
	        "%ld element updates per sample", s.triad.n, 3 * s.triad.n * 8 / 1024,
	        l2 / 1024, o.triad_elems);
	bm_hline(&ctx, "dgemm: C += A*B, %ld x %ld, %ld products per sample", o.dgemm_n,
	        o.dgemm_n, o.dgemm_calls);
	char msz[32];
	bm_fmt_size(o.msg, msz, sizeof msz);
	bm_hline(&ctx, "pending: each rank has an MPI_Irecv of %s from its left neighbour, "
	        "sent at the end of the phase", msz);
	bm_hline(&ctx, "samples: %ld rounds x %ld per phase; phases alternate idle/pending",
	        o.rounds, o.reps);
	bm_hline(&ctx, "computing ranks: %s", o.half
	        ? "even only (odd ranks block in MPI_Wait / sleep)" : "all");
	bm_hline(&ctx, "t = one sample (ms): median and quartiles over the samples of every "
	        "computing rank");
	bm_hline(&ctx, "slow%% = (t / t_idle - 1) x 100; worst%% = largest per-rank slowdown; "
	        "cpu%% = process CPU / wall while sampling (100 = compute thread only)");

	static const struct bm_col cols[] = {
		{ "kernel", BM_COL_STR, 8, NULL },      { "phase", BM_COL_STR, 8, NULL },
		{ "t(ms)", BM_COL_F4, 9, "t_ms" },      { "q1(ms)", BM_COL_F4, 9, "q1_ms" },
		{ "q3(ms)", BM_COL_F4, 9, "q3_ms" },    { "slow%", BM_COL_F4, 8, "slowdown_pct" },
		{ "worst%", BM_COL_F4, 8, "worst_pct" }, { "cpu%", BM_COL_F4, 8, "cpu_pct" },
	};

	/* Warm-up: one sample of each kernel, and one pending exchange (first
	 * contact between ranks opens connections, registers memory). */
	for (int k = 0; k < NKERNELS; k++) {
		if ((k == K_TRIAD && !o.triad) || (k == K_DGEMM && !o.dgemm))
			continue;
		double tmp[1], c = 0, w = 0;
		long reps = o.reps;
		o.reps = 1;
		phase(&s, k, PH_PENDING, tmp, &c, &w);
		o.reps = reps;
	}

	for (int round = 0; round < o.rounds; round++)
		for (int k = 0; k < NKERNELS; k++) {
			if ((k == K_TRIAD && !o.triad) || (k == K_DGEMM && !o.dgemm))
				continue;
			for (int ph = 0; ph < NPHASES; ph++) {
				double *out = samples + ((size_t)(k * NPHASES + ph) * nsamp) +
				              (size_t)round * o.reps;
				phase(&s, k, ph, out, &cpu[k][ph], &wall[k][ph]);
			}
		}

	/* Gather every rank's samples and CPU ratios on rank 0. */
	size_t per_rank = (size_t)NKERNELS * NPHASES * nsamp;
	double *all = NULL, *ratios = NULL;
	double myratio[NKERNELS * NPHASES];
	for (int k = 0; k < NKERNELS; k++)
		for (int ph = 0; ph < NPHASES; ph++)
			myratio[k * NPHASES + ph] =
				wall[k][ph] > 0 ? 100.0 * cpu[k][ph] / wall[k][ph] : 0;
	if (ctx.rank == 0) {
		all = malloc(per_rank * (size_t)ctx.size * sizeof *all);
		ratios = malloc((size_t)NKERNELS * NPHASES * (size_t)ctx.size * sizeof *ratios);
		if (!all || !ratios) {
			fprintf(stderr, "bench_interference: out of memory\n");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	MPI_Gather(samples, (int)per_rank, MPI_DOUBLE, all, (int)per_rank, MPI_DOUBLE, 0,
	           MPI_COMM_WORLD);
	MPI_Gather(myratio, NKERNELS * NPHASES, MPI_DOUBLE, ratios, NKERNELS * NPHASES,
	           MPI_DOUBLE, 0, MPI_COMM_WORLD);

	struct bm_table t;
	bm_table_begin(&t, &ctx, cols, (int)(sizeof cols / sizeof cols[0]));
	if (ctx.rank == 0) {
		int ncomp = 0;
		for (int r = 0; r < ctx.size; r++)
			ncomp += !o.half || r % 2 == 0;
		double *pool = malloc((size_t)ncomp * (size_t)nsamp * sizeof *pool);
		double *tmp = malloc((size_t)nsamp * sizeof *tmp);
		double *rank_idle = malloc((size_t)ctx.size * sizeof *rank_idle);
		if (!pool || !tmp || !rank_idle) {
			fprintf(stderr, "bench_interference: out of memory\n");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		for (int k = 0; k < NKERNELS; k++) {
			if ((k == K_TRIAD && !o.triad) || (k == K_DGEMM && !o.dgemm))
				continue;
			double idle_med = 0;
			for (int ph = 0; ph < NPHASES; ph++) {
				int np = 0;
				double worst = -1e300, cpu_sum = 0;
				for (int r = 0; r < ctx.size; r++) {
					if (o.half && r % 2)
						continue;
					const double *src = all + per_rank * (size_t)r +
					                    (size_t)(k * NPHASES + ph) * nsamp;
					memcpy(pool + (size_t)np * nsamp, src, (size_t)nsamp * sizeof *src);
					memcpy(tmp, src, (size_t)nsamp * sizeof *src);
					double m = bm_median(tmp, nsamp);
					if (ph == PH_IDLE)
						rank_idle[r] = m;
					double sl = rank_idle[r] > 0 ? (m / rank_idle[r] - 1) * 100 : 0;
					if (sl > worst)
						worst = sl;
					cpu_sum += ratios[(size_t)r * NKERNELS * NPHASES + k * NPHASES + ph];
					np++;
				}
				struct bm_stats st;
				bm_stats(pool, (long)np * nsamp, &st);
				if (ph == PH_IDLE)
					idle_med = st.median;
				bm_table_row(&t, kernel_names[k], phase_names[ph], st.median, st.p25,
				             st.p75,
				             idle_med > 0 ? (st.median / idle_med - 1) * 100 : 0.0,
				             worst, np ? cpu_sum / np : 0.0);
			}
		}
		free(pool);
		free(tmp);
		free(rank_idle);
	}

	free(all);
	free(ratios);
	free(samples);
	free(s.sbuf);
	free(s.rbuf);
	bm_triad_free(&s.triad);
	bm_dgemm_free(&s.dgemm);
	MPI_Finalize();
	return 0;
}

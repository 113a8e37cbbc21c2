/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_overlap: the simple overlap benchmark of APSM (§5.1) and PIOMan
 * (section V-B, Figs 7-9), for two MPI processes.
 *
 * Rank 0 sends, rank 1 receives. One iteration, timed on each rank from
 * just before MPI_Isend / MPI_Irecv to just after MPI_Wait:
 *
 *     MPI_Barrier
 *     t0                         t0
 *     MPI_Isend(size)            MPI_Irecv(size)
 *     compute(t_w) if sender     compute(t_w) if receiver
 *       computes (--side)          computes (--side)
 *     MPI_Wait                   MPI_Wait
 *     t1                         t1
 *
 * t_t of an iteration is the larger of the two ranks' t1 - t0 (the slower
 * rank); the reported t_t is the median over the repetitions. t_c is t_t
 * with t_w = 0 for the same size, measured in the same run; the overlap ratio
 * is t_t / max(t_c, t_w): 1 when communication is entirely hidden behind
 * computation (or the reverse), (t_c + t_w) / max(t_c, t_w) when the MPI
 * only progresses inside MPI_Wait (printed as "no-ovl" for reference).
 *
 * The computation is a fixed amount of work, not a clock: a dependent
 * floating-point chain (bm_work) whose speed each rank calibrates before
 * MPI_Init,
 * when neither the MPI's nor piano's threads exist yet. Anything that
 * steals the computing core (a progress thread spinning on it, say) makes
 * the work last longer and shows in t_t; the "work" column reports how long
 * the computation itself took (slowest computing rank, median), and the
 * header how long a t_w of 10 ms takes once MPI is initialised and idle.
 * No MPI call is made while computing; times come from CLOCK_MONOTONIC.
 *
 * MPI_Init_thread asks for MPI_THREAD_MULTIPLE, natively too: piano asks
 * the MPI for it anyway, and MPICH's own progress thread
 * (MPIR_CVAR_ASYNC_PROGRESS=1) needs it.
 */
#include "bench_mpi_common.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POINTS 64
#define TAG 7701
/* This program's CSV predates the bench,label,mpi convention of the others;
 * tools/piano-bench and run-overlap.sh read its columns by position. */
#define CSV_HEADER "label,mpi,side,size,t_w_ms,t_t_ms,t_c_ms,ratio"

static const char usage_text[] =
	"usage: bench_overlap [options]   (2 MPI processes: rank 0 sends, rank 1 receives)\n"
	"  --sizes LIST     message sizes, e.g. 4K,64KiB,1M,16MiB (default 4KiB..16MiB, x4;\n"
	"                   --quick: 64KiB,1MiB,16MiB)\n"
	"  --compute LIST   compute times t_w in ms, e.g. 0,1,2.5 (default 0,1,2,5,10,20;\n"
	"                   --quick: 0,5,20); 0 is always measured (it gives t_c)\n"
	"  --side S         who computes: sender, receiver or both (default both)\n"
	"  --reps N         timed repetitions per point (default 11, --quick 5; median\n"
	"                   reported)\n"
	"  --warmup N       untimed repetitions per point (default 2)\n"
	"  --calib local|rank0  compute speed of each rank, or rank 0's for both\n"
	"                   (default local)\n"
	"  --sync quiet|spin  synchronisation between iterations: sleep-polling\n"
	"                   non-blocking collectives (default), or MPI_Barrier and\n"
	"                   MPI_Allreduce, which busy-poll the core of the rank that\n"
	"                   finished first\n"
	"  --csv-append F   also append the CSV rows to file F (header line if empty)\n"
	"  CSV columns: " CSV_HEADER "\n";

enum side { SIDE_SENDER, SIDE_RECEIVER, SIDE_BOTH };
static const char *side_names[] = { "sender", "receiver", "both" };

struct opts {
	struct bm_opts c;
	long sizes[MAX_POINTS];
	int nsizes;
	double tw[MAX_POINTS];
	int ntw;
	enum side side;
	long reps, warmup;
	int calib_rank0;
	int spin_sync;
	const char *csv_append;
	int have_reps; /* given: --quick does not change it */
};

/* ----------------------------------------------------------- options */

/* --side NAME; returns 0 or -1. */
static int parse_side(struct opts *o, const char *v)
{
	for (int s = SIDE_SENDER; s <= SIDE_BOTH; s++)
		if (!strcmp(v, side_names[s])) {
			o->side = (enum side)s;
			return 0;
		}
	return -1;
}

/* A two-word choice: *out = 0 for off, 1 for on; returns 0, or -1 for neither. */
static int parse_choice(const char *v, const char *off, const char *on, int *out)
{
	if (strcmp(v, off) && strcmp(v, on))
		return -1;
	*out = !strcmp(v, on);
	return 0;
}

/* One option of this program, all take a value (see bm_arg_fn). */
static enum bm_arg overlap_arg(void *prog, const char *a, const char *v)
{
	struct opts *o = prog;
	int bad = 0;
	if (!v)
		return BM_ARG_UNKNOWN;
	if (!strcmp(a, "--sizes"))
		bad = (o->nsizes = bm_parse_sizes(v, o->sizes, MAX_POINTS, 1, 1L << 30)) < 0;
	else if (!strcmp(a, "--compute"))
		bad = (o->ntw = bm_parse_doubles(v, o->tw, MAX_POINTS, 0, 60000)) < 0;
	else if (!strcmp(a, "--reps")) {
		bad = bm_parse_int(v, 1, 100000, &o->reps);
		o->have_reps = 1;
	} else if (!strcmp(a, "--warmup"))
		bad = bm_parse_int(v, 0, 100000, &o->warmup);
	else if (!strcmp(a, "--csv-append"))
		o->csv_append = v;
	else if (!strcmp(a, "--side"))
		bad = parse_side(o, v);
	else if (!strcmp(a, "--calib"))
		bad = parse_choice(v, "local", "rank0", &o->calib_rank0);
	else if (!strcmp(a, "--sync"))
		bad = parse_choice(v, "quiet", "spin", &o->spin_sync);
	else
		return BM_ARG_UNKNOWN;
	return bad ? BM_ARG_BAD : BM_ARG_VALUE;
}

/* Defaults of the lists and counts not given; t_w = 0 first (it gives t_c).
 * Returns 0 or -1. */
static int complete(struct opts *o, char *err, size_t errlen)
{
	const int quick = o->c.quick;
	if (!o->nsizes) {
		for (long s = quick ? 64L << 10 : 4L << 10; s <= 16L << 20; s *= quick ? 16 : 4)
			o->sizes[o->nsizes++] = s;
	}
	if (!o->ntw) {
		static const double q[] = { 0, 5, 20 }, d[] = { 0, 1, 2, 5, 10, 20 };
		o->ntw = quick ? 3 : 6;
		memcpy(o->tw, quick ? q : d, (size_t)o->ntw * sizeof o->tw[0]);
	}
	if (!o->have_reps && quick)
		o->reps = 5;
	int zero = -1;
	for (int i = 0; i < o->ntw; i++)
		if (o->tw[i] == 0)
			zero = i;
	if (zero < 0) {
		if (o->ntw == MAX_POINTS) {
			snprintf(err, errlen, "too many compute times");
			return -1;
		}
		memmove(&o->tw[1], &o->tw[0], (size_t)o->ntw * sizeof o->tw[0]);
		o->ntw++;
	} else {
		memmove(&o->tw[1], &o->tw[0], (size_t)zero * sizeof o->tw[0]);
	}
	o->tw[0] = 0;
	return 0;
}

/* Returns 0, or -1 (message in err) on a bad argument. */
static int parse_args(int argc, char **argv, struct opts *o, char *err, size_t errlen)
{
	memset(o, 0, sizeof *o);
	bm_opts_init(&o->c);
	o->c.can_bind = 1;
	o->side = SIDE_BOTH;
	o->reps = 11;
	o->warmup = 2;
	if (bm_opts_parse(&o->c, argc, argv, overlap_arg, o, err, errlen))
		return -1;
	return complete(o, err, errlen);
}

/* ------------------------------------------------------ synchronisation */

/* Between iterations the rank that finished first waits for the other.
 * MPI_Barrier and MPI_Allreduce busy-poll while they wait: with both ranks
 * on one host that rank would keep a core busy while its peer computes,
 * a core that background progress could have used. --sync quiet uses the
 * sleep-polling variants instead (outside the timed part). */
static void sync_barrier(int spin)
{
	if (spin)
		MPI_Barrier(MPI_COMM_WORLD);
	else
		bm_quiet_barrier(MPI_COMM_WORLD);
}

static void sync_max(double *in, double *out, int n, int spin)
{
	if (spin)
		MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	else
		bm_quiet_allreduce(in, out, n, MPI_MAX, MPI_COMM_WORLD);
}

/* ---------------------------------------------------------- measurement */

static volatile double work_sink;

struct run {
	const struct opts *o;
	int rank, computes;
	double rate; /* bm_work iterations per µs used for t_w */
	char *buf;
	double *tt, *tw_real;
};

/* One point: median t_t and median time of the work itself, in ms. */
static void measure(const struct run *r, long bytes, double tw, double *t_t, double *t_work)
{
	const struct opts *o = r->o;
	const int sender = r->rank == 0;
	const uint64_t iters = r->computes ? (uint64_t)llround(r->rate * tw * 1e3) : 0;
	for (long i = -o->warmup; i < o->reps; i++) {
		MPI_Request req;
		double local[2], global[2];
		sync_barrier(o->spin_sync);
		double start = bm_now_us();
		if (sender)
			MPI_Isend(r->buf, (int)bytes, MPI_BYTE, 1, TAG, MPI_COMM_WORLD, &req);
		else
			MPI_Irecv(r->buf, (int)bytes, MPI_BYTE, 0, TAG, MPI_COMM_WORLD, &req);
		double ws = bm_now_us();
		if (iters)
			work_sink = bm_work(iters);
		double we = bm_now_us();
		MPI_Wait(&req, MPI_STATUS_IGNORE);
		local[0] = (bm_now_us() - start) * 1e-3;
		local[1] = iters ? (we - ws) * 1e-3 : 0;
		sync_max(local, global, 2, o->spin_sync);
		if (i >= 0) {
			r->tt[i] = global[0];
			r->tw_real[i] = global[1];
		}
	}
	*t_t = bm_median(r->tt, o->reps);
	*t_work = bm_median(r->tw_real, o->reps);
}

/* --------------------------------------------------------------- output */

/* Opens --csv-append on rank 0 (header line if the file is empty); every
 * rank learns whether that worked. */
static int open_append(const struct bm_ctx *c, const struct opts *o, FILE **csv)
{
	int ok = 1;
	*csv = NULL;
	if (c->rank == 0 && o->csv_append) {
		*csv = fopen(o->csv_append, "a");
		if (!*csv) {
			fprintf(stderr, "bench_overlap: cannot open %s: %s\n", o->csv_append,
			        strerror(errno));
			ok = 0;
		} else if (ftell(*csv) == 0) {
			fputs(CSV_HEADER "\n", *csv);
		}
	}
	MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	return ok;
}

static void print_header(const struct bm_ctx *c, const struct opts *o,
                         const double idle[2])
{
	bm_header(c, "piano overlap benchmark: MPI_Isend/MPI_Irecv + compute t_w + "
	             "MPI_Wait (APSM 5.1, PIOMan V-B)");
	bm_hline(c, "side: %s (%s)", side_names[o->side],
	         o->side == SIDE_BOTH     ? "sender and receiver compute"
	         : o->side == SIDE_SENDER ? "only the sender computes"
	                                  : "only the receiver computes");
	bm_hline(c, "reps: %ld (+%ld warm-up) per point; t_t = median of the slower "
	         "rank's time; %s synchronisation between iterations", o->reps, o->warmup,
	         o->spin_sync ? "busy-polling" : "sleep-polling");
	bm_hline(c, "compute speed used: %s",
	         o->calib_rank0 ? "rank 0's for both ranks" : "each rank its own");
	bm_hline(c, "idle check: 10 ms of work after MPI_Init took %.2f / %.2f ms "
	         "(rank 0 / 1)", idle[0], idle[1]);
	bm_hline(c, "ratio = t_t / max(t_c, t_w): 1.00 = full overlap; "
	         "no-ovl = (t_c + t_w) / max(t_c, t_w)");
	bm_hline(c, "work = time the computation itself took (slower computing "
	         "rank, median)");
	if (c->rank == 0 && o->c.csv) {
		puts(CSV_HEADER);
		fflush(stdout);
	}
}

static void print_row(const struct bm_ctx *c, const struct opts *o,
                      const struct bm_table *t, FILE *append, long bytes, double tw,
                      double work, double t_t, double tc)
{
	double best = tc > tw ? tc : tw;
	double ratio = best > 0 ? t_t / best : 0;
	double noovl = best > 0 ? (tc + tw) / best : 0;
	if (c->rank != 0)
		return;
	const char *fmt = "%s,%s,%s,%ld,%.3f,%.3f,%.3f,%.3f\n";
	if (append)
		fprintf(append, fmt, o->c.label, c->mpi_name, side_names[o->side], bytes, tw,
		        t_t, tc, ratio);
	if (o->c.csv) {
		printf(fmt, o->c.label, c->mpi_name, side_names[o->side], bytes, tw, t_t, tc,
		       ratio);
		fflush(stdout);
	} else {
		bm_table_row(t, bytes, tw, work, t_t, tc, ratio, noovl);
	}
}

/* ---------------------------------------------------------------- main */

static const struct bm_col cols[] = {
	{ "size", BM_COL_SIZE, 10, NULL },   { "t_w(ms)", BM_COL_F2, 10, NULL },
	{ "work(ms)", BM_COL_F2, 10, NULL }, { "t_t(ms)", BM_COL_F2, 10, NULL },
	{ "t_c(ms)", BM_COL_F2, 10, NULL },  { "ratio", BM_COL_F2, 8, NULL },
	{ "no-ovl", BM_COL_F2, 8, NULL },
};

/* Buffers, and 10 ms of work with MPI initialised and nothing in flight
 * (for the header). Returns 0 or -1. */
static int prepare(struct run *r, const struct bm_ctx *c, double idle[2])
{
	const struct opts *o = r->o;
	long maxsize = 0;
	for (int i = 0; i < o->nsizes; i++)
		if (o->sizes[i] > maxsize)
			maxsize = o->sizes[i];
	r->buf = malloc((size_t)maxsize);
	r->tt = malloc((size_t)o->reps * sizeof *r->tt);
	r->tw_real = malloc((size_t)o->reps * sizeof *r->tw_real);
	if (!r->buf || !r->tt || !r->tw_real)
		return -1;
	memset(r->buf, c->rank + 1, (size_t)maxsize); /* no page faults while timed */
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = bm_now_us();
	work_sink = bm_work((uint64_t)(r->rate * 10e3));
	double mine = (bm_now_us() - t0) * 1e-3;
	MPI_Gather(&mine, 1, MPI_DOUBLE, idle, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	char err[256] = "";
	int prc = parse_args(argc, argv, &o, err, sizeof err);
	/* Before MPI_Init: no MPI or piano thread exists yet. */
	double rate = prc == 0 && !o.c.help ? bm_calibrate() : 0;
	struct bm_ctx c;
	bm_init(&c, "overlap", &o.c, rate, &argc, &argv);
	if (prc || o.c.help)
		return bm_usage_exit(&c, usage_text, err);
	int rc = bm_require_ranks(&c, 2, 2);
	if (rc)
		return rc;

	struct run r = { .o = &o, .rank = c.rank, .rate = o.calib_rank0 ? c.rate0 : rate };
	r.computes = o.side == SIDE_BOTH || (o.side == SIDE_SENDER) == (c.rank == 0);
	double idle[2];
	if (prepare(&r, &c, idle))
		bm_die(&c, "out of memory");
	FILE *append;
	if (!open_append(&c, &o, &append)) {
		MPI_Finalize();
		return 1;
	}
	print_header(&c, &o, idle);
	struct bm_table t = { 0 };
	if (!o.c.csv) /* the CSV rows are this program's own (see CSV_HEADER) */
		bm_table_begin(&t, &c, cols, (int)(sizeof cols / sizeof cols[0]));

	for (int si = 0; si < o.nsizes; si++) {
		double tc = 0;
		for (int wi = 0; wi < o.ntw; wi++) {
			double t_t, work;
			measure(&r, o.sizes[si], o.tw[wi], &t_t, &work);
			if (wi == 0)
				tc = t_t;
			print_row(&c, &o, &t, append, o.sizes[si], o.tw[wi], work, t_t, tc);
		}
	}

	if (append && fclose(append) != 0)
		fprintf(stderr, "bench_overlap: error writing %s\n", o.csv_append);
	free(r.buf);
	free(r.tt);
	free(r.tw_real);
	MPI_Finalize();
	return 0;
}

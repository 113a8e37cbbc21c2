/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_reactivity: ping-pong latency while compute threads occupy the
 * cores, the reactivity test of PIOMan's reactive event detector
 * (PIOMan-2008, section 4.1, Fig. 2), for two MPI processes.
 *
 * Rank 0 pings rank 1 with a 4-byte message (--size) and times each round
 * trip; meanwhile k compute threads per CPU run calibrated fixed work on the
 * computing rank(s) (rank 1 by default, as in the paper where one of the
 * machines computes; --compute-ranks both loads both). A computing rank
 * runs k x (number of CPUs in its affinity mask) threads, i.e. k threads per
 * core it may use. To answer, the thread waiting for the message must get a
 * core: with an MPI that only progresses inside its own waits, the reaction
 * time grows with the number of threads sharing the core (one scheduler
 * slice each); piano's waiter sleeps and is woken by the engine (timer
 * thread, socket watcher), which bounds the reaction time.
 *
 * Rank 0 sleeps a random time before each ping (uniform in [0, 2 x
 * --gap-us], 5 ms on average by default). A back-to-back ping-pong would
 * mostly measure round trips that happen while rank 1's waiting thread
 * holds the core (thousands of them fit in one scheduler slice), so its
 * median would hide the stalls; random spacing makes each ping sample a
 * random moment of rank 1's scheduling, which is what the reaction time to
 * an unexpected message is about. --gap-us 0 gives the back-to-back variant.
 *
 * Reported per k: median, quartiles, min and max of the half round trips in
 * µs, and the compute throughput of the computing ranks during the timed
 * round trips (in cores: work done per second over one undisturbed core's
 * speed), to show what the reactivity costs the computation. Each point
 * stops after its iteration count or its time budget (--max-time),
 * whichever comes first, with at least 10 timed round trips; with compute
 * threads it lasts at least --min-time (a throughput needs a window of many
 * scheduler slices), a uniform sample of --iters round trips being kept if
 * more run. The "iters" column gives the round trips run.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench_mpi_common.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POINTS 32
#define TAG 7703
#define MIN_TIMED 10

static const char usage_text[] =
	"usage: bench_reactivity [options]   (2 MPI processes)\n"
	"  ping-pong latency (half round trip) while k compute threads per core run\n"
	"  --compute-threads LIST  k values, compute threads per core (default\n"
	"                   0,1,2,4,8; --quick 0,1,2,4)\n"
	"  --compute-ranks one|both  ranks running compute threads: rank 1 only\n"
	"                   (default, as in the paper) or both\n"
	"  --size S         message size (default 4 bytes)\n"
	"  --iters N        timed round trips per point (default 1000; --quick 200)\n"
	"  --warmup N       untimed round trips per point first (default 20; --quick 5)\n"
	"  --max-time S     time budget per point in seconds (default 3; --quick 1)\n"
	"  --min-time S     with compute threads, the timed part lasts at least this\n"
	"                   long (default 0.5; --quick 0.2), more round trips than\n"
	"                   --iters being sampled\n"
	"  --gap-us G       rank 0 sleeps a random time, uniform in [0, 2G] us, before\n"
	"                   each ping (default 5000; 0: back-to-back ping-pong)\n"
	"  --nonblocking    MPI_Isend/MPI_Irecv + MPI_Wait instead of MPI_Send/MPI_Recv\n";

struct opts {
	struct bm_opts c;
	int k[MAX_POINTS];
	int nk;
	int both;
	long size, iters, warmup;
	double max_time, gap_us, min_time;
	int nonblocking;
	/* given: --quick does not change them */
	int have_iters, have_warmup, have_time, have_min;
};

/* One option of this program (see bm_arg_fn). */
static enum bm_arg reactivity_arg(void *prog, const char *a, const char *v)
{
	struct opts *o = prog;
	int bad = 0;
	if (!strcmp(a, "--nonblocking")) {
		o->nonblocking = 1;
		return BM_ARG_FLAG;
	}
	if (!v)
		return BM_ARG_UNKNOWN;
	if (!strcmp(a, "--compute-threads")) {
		o->nk = bm_parse_ints(v, o->k, MAX_POINTS, 0, 64);
		bad = o->nk < 0;
	} else if (!strcmp(a, "--compute-ranks")) {
		if (!strcmp(v, "one"))
			o->both = 0;
		else if (!strcmp(v, "both"))
			o->both = 1;
		else
			bad = 1;
	} else if (!strcmp(a, "--size")) {
		bad = bm_parse_size(v, 1, 1L << 30, &o->size) != 0;
	} else if (!strcmp(a, "--gap-us")) {
		bad = bm_parse_double(v, 0, 1e7, &o->gap_us) != 0;
	} else if (!strcmp(a, "--min-time")) {
		bad = bm_parse_double(v, 0, 3600, &o->min_time) != 0;
		o->have_min = 1;
	} else {
		const struct bm_rt_opts rt = { &o->iters, &o->warmup, &o->max_time,
			                       &o->have_iters, &o->have_warmup, &o->have_time };
		return bm_rt_arg(&rt, a, v);
	}
	return bad ? BM_ARG_BAD : BM_ARG_VALUE;
}

static int parse_args(int argc, char **argv, struct opts *o, char *err, size_t errlen)
{
	memset(o, 0, sizeof *o);
	bm_opts_init(&o->c);
	o->size = 4;
	o->gap_us = 5000;
	if (bm_opts_parse(&o->c, argc, argv, reactivity_arg, o, err, errlen))
		return -1;
	const int q = o->c.quick;
	if (!o->nk) {
		static const int def[] = { 0, 1, 2, 4, 8 };
		o->nk = q ? 4 : 5;
		memcpy(o->k, def, (size_t)o->nk * sizeof o->k[0]);
	}
	if (!o->have_iters)
		o->iters = q ? 200 : 1000;
	if (!o->have_warmup)
		o->warmup = q ? 5 : 20;
	if (!o->have_time)
		o->max_time = q ? 1 : 3;
	if (!o->have_min)
		o->min_time = q ? 0.2 : 0.5;
	return 0;
}

struct marks {
	const struct bm_team *team;
	double t[2];
	uint64_t it[2];
};

static void mark(void *arg, int end)
{
	struct marks *m = arg;
	m->t[end] = bm_now_us();
	m->it[end] = bm_team_iters(m->team);
}

int main(int argc, char **argv)
{
	struct opts o;
	char err[256] = "";
	int prc = parse_args(argc, argv, &o, err, sizeof err);
	/* Before MPI_Init: no MPI or piano thread exists yet. */
	double rate = prc == 0 && !o.c.help ? bm_calibrate() : 0;
	struct bm_ctx c;
	bm_init(&c, "reactivity", &o.c, rate, &argc, &argv);
	if (prc || o.c.help)
		return bm_usage_exit(&c, usage_text, err);
	int rc = bm_require_ranks(&c, 2, 2);
	if (rc)
		return rc;
	const int computes = o.both || c.rank == 1;
	const int ncpu = bm_affinity_count();
	int ncpus[2];
	MPI_Gather(&ncpu, 1, MPI_INT, ncpus, 1, MPI_INT, 0, MPI_COMM_WORLD);

	char *sbuf = malloc((size_t)o.size), *rbuf = malloc((size_t)o.size);
	double *lat = malloc((size_t)o.iters * sizeof *lat);
	if (!sbuf || !rbuf || !lat)
		bm_die(&c, "out of memory");
	memset(sbuf, BM_MSG_MORE, (size_t)o.size);
	memset(rbuf, 0, (size_t)o.size);

	char sz[32];
	bm_fmt_size(o.size, sz, sizeof sz);
	bm_header(&c, "piano reactivity benchmark: ping-pong latency under compute threads "
	              "(PIOMan-2008 Fig. 2)");
	bm_hline(&c, "message: %s, %s; latency = half round trip in us", sz,
	         o.nonblocking ? "MPI_Isend/MPI_Irecv + MPI_Wait" : "MPI_Send/MPI_Recv");
	bm_hline(&c, "compute threads: k per CPU of the computing rank's affinity, on %s "
	         "(rank 0: %d CPUs, rank 1: %d CPUs); calibrated work in 20 us chunks",
	         o.both ? "both ranks" : "rank 1 only", ncpus[0], ncpus[1]);
	if (o.gap_us > 0)
		bm_hline(&c, "pings spaced by a random sleep of rank 0, uniform in [0, %.0f] us "
		             "(mean %.0f us), so that they arrive at random phases of rank 1's "
		             "scheduling", 2 * o.gap_us, o.gap_us);
	else
		bm_hline(&c, "back-to-back ping-pong (no gap between round trips)");
	bm_hline(&c, "cmp: compute throughput of the computing ranks during the timed round "
	             "trips, in cores; time budget %.2f s per point", o.max_time);

	static const struct bm_col cols[] = {
		{ "thr_core", BM_COL_INT, 8, NULL }, { "threads", BM_COL_INT, 8, NULL },
		{ "iters", BM_COL_INT, 8, NULL },    { "median_us", BM_COL_F2, 0, NULL },
		{ "p25_us", BM_COL_F2, 0, NULL },    { "p75_us", BM_COL_F2, 0, NULL },
		{ "min_us", BM_COL_F2, 0, NULL },    { "max_us", BM_COL_F2, 0, NULL },
		{ "cmp", BM_COL_F2, 0, NULL },
	};
	struct bm_table t;
	bm_table_begin(&t, &c, cols, (int)(sizeof cols / sizeof cols[0]));

	for (int ki = 0; ki < o.nk; ki++) {
		const int k = o.k[ki];
		const int nthreads = computes ? k * ncpu : 0;
		struct bm_team team;
		if (bm_team_start(&team, nthreads, c.rate, 20.0))
			bm_die(&c, "cannot start %d compute threads", nthreads);
		MPI_Barrier(MPI_COMM_WORLD);
		struct marks m = { .team = &team };
		struct bm_pp pp = {
			.comm = MPI_COMM_WORLD, .initiator = c.rank == 0, .peer = 1 - c.rank,
			.tag = TAG, .sbuf = sbuf, .rbuf = rbuf, .count = (int)o.size,
			.nonblocking = o.nonblocking, .warmup = o.warmup, .iters = o.iters,
			.min_timed = MIN_TIMED, .budget_s = o.max_time, .lat = lat,
			.lat_cap = o.iters, .min_time_s = k > 0 ? o.min_time : 0,
			.gap_us = o.gap_us, .mark = mark, .mark_arg = &m,
		};
		long n = bm_pingpong(&pp);
		bm_team_stop(&team);
		double cores = nthreads > 0 && m.t[1] > m.t[0]
		                   ? (double)(m.it[1] - m.it[0]) / (m.t[1] - m.t[0]) / c.rate
		                   : 0;
		double sums[2], mine[2] = { cores, (double)nthreads };
		MPI_Reduce(mine, sums, 2, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
		if (c.rank == 0) {
			struct bm_stats s;
			bm_stats(lat, n < o.iters ? n : o.iters, &s);
			bm_table_row(&t, (long)k, (long)sums[1], n, s.median, s.p25, s.p75, s.min,
			             s.max, k > 0 ? sums[0] : NAN);
		}
	}

	MPI_Barrier(MPI_COMM_WORLD);
	free(sbuf);
	free(rbuf);
	free(lat);
	MPI_Finalize();
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_latency: ping-pong latency between ranks 0 and 1, the "overhead"
 * benchmark of PIOMan (PIOMan-2015, Fig. 5; PIOMan-2008, Tab. 2).
 *
 * For each message size, rank 0 times every round trip individually:
 *
 *     rank 0                          rank 1
 *     t0
 *     MPI_Send(size) ---------------> MPI_Recv(size)
 *     MPI_Recv(size) <--------------- MPI_Send(size)
 *     t1, latency = (t1 - t0) / 2
 *
 * (--nonblocking: MPI_Irecv + MPI_Isend + MPI_Wait x2 on rank 0, MPI_Irecv
 * + MPI_Wait then MPI_Isend + MPI_Wait on rank 1.) The first round trips of
 * each size are a warm-up and not recorded; the table gives the median,
 * quartiles and minimum of the half round trips, in microseconds. Nothing
 * else runs: the difference between a native run and a run through
 * piano-run is piano's overhead on the latency path.
 *
 * Each size stops after its iteration count or its time budget
 * (--max-time), whichever comes first (at least 20 timed round trips), so
 * that a loaded machine cannot make the run last forever; the "iters"
 * column says how many round trips were timed.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench_mpi_common.h"

#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 64
#define TAG 7702
#define MIN_TIMED 20
#define LARGE 8192 /* above: fewer iterations (as OSU) */

static const char usage_text[] =
	"usage: bench_latency [options]   (2 MPI processes)\n"
	"  ping-pong latency (half round trip) between ranks 0 and 1\n"
	"  --sizes LIST     message sizes, e.g. 1,8,1K,64KiB (default 1 B..64 KiB, x2;\n"
	"                   --quick: x4)\n"
	"  --iters N        timed round trips per size (default 10000 up to 8 KiB,\n"
	"                   1000 above; --quick: 2000 / 200)\n"
	"  --warmup N       untimed round trips per size (default 100 up to 8 KiB,\n"
	"                   10 above)\n"
	"  --max-time S     time budget per size in seconds (default 3; --quick 1)\n"
	"  --nonblocking    MPI_Isend/MPI_Irecv + MPI_Wait instead of MPI_Send/MPI_Recv\n";

struct opts {
	struct bm_opts c;
	long sizes[MAX_SIZES];
	int nsizes;
	long iters; /* 0: default per size */
	long warmup; /* -1: default per size */
	double max_time;
	int nonblocking;
	int have_sizes, have_time; /* given: the defaults do not apply */
};

/* One option of this program (see bm_arg_fn). */
static enum bm_arg latency_arg(void *prog, const char *a, const char *v)
{
	struct opts *o = prog;
	if (!strcmp(a, "--nonblocking")) {
		o->nonblocking = 1;
		return BM_ARG_FLAG;
	}
	const struct bm_rt_opts rt = { &o->iters, &o->warmup, &o->max_time,
		                       NULL, NULL, &o->have_time };
	enum bm_arg r = bm_rt_arg(&rt, a, v);
	if (r != BM_ARG_UNKNOWN || !v || strcmp(a, "--sizes"))
		return r;
	o->nsizes = bm_parse_sizes(v, o->sizes, MAX_SIZES, 1, 1L << 30);
	o->have_sizes = 1;
	return o->nsizes < 0 ? BM_ARG_BAD : BM_ARG_VALUE;
}

static int parse_args(int argc, char **argv, struct opts *o, char *err, size_t errlen)
{
	memset(o, 0, sizeof *o);
	bm_opts_init(&o->c);
	o->c.can_level = 1;
	o->warmup = -1;
	o->max_time = 3;
	if (bm_opts_parse(&o->c, argc, argv, latency_arg, o, err, errlen))
		return -1;
	if (!o->have_sizes) {
		long step = o->c.quick ? 4 : 2;
		for (long s = 1; s <= 64L << 10; s *= step)
			o->sizes[o->nsizes++] = s;
	}
	if (!o->have_time && o->c.quick)
		o->max_time = 1;
	return 0;
}

int main(int argc, char **argv)
{
	struct opts o;
	char err[256] = "";
	int prc = parse_args(argc, argv, &o, err, sizeof err);
	struct bm_ctx c;
	bm_init(&c, "latency", &o.c, 0, &argc, &argv);
	if (prc || o.c.help)
		return bm_usage_exit(&c, usage_text, err);
	int rc = bm_require_ranks(&c, 2, 2);
	if (rc)
		return rc;

	long maxsize = 1, maxiters = 1;
	for (int i = 0; i < o.nsizes; i++) {
		long s = o.sizes[i];
		long it = o.iters ? o.iters : s <= LARGE ? (o.c.quick ? 2000 : 10000)
		                                         : (o.c.quick ? 200 : 1000);
		if (s > maxsize)
			maxsize = s;
		if (it > maxiters)
			maxiters = it;
	}
	char *sbuf = malloc((size_t)maxsize), *rbuf = malloc((size_t)maxsize);
	double *lat = malloc((size_t)maxiters * sizeof *lat);
	if (!sbuf || !rbuf || !lat)
		bm_die(&c, "out of memory");
	memset(sbuf, BM_MSG_MORE, (size_t)maxsize); /* no page faults while timed */
	memset(rbuf, 0, (size_t)maxsize);

	bm_header(&c, o.nonblocking
	                  ? "piano latency benchmark: ping-pong MPI_Isend/MPI_Irecv + MPI_Wait "
	                    "(PIOMan-2015 Fig. 5)"
	                  : "piano latency benchmark: ping-pong MPI_Send/MPI_Recv "
	                    "(PIOMan-2015 Fig. 5)");
	bm_hline(&c, "operations: %s", o.nonblocking ? "non-blocking (Isend/Irecv + Wait)"
	                                               : "blocking (Send/Recv)");
	bm_hline(&c, "latency = half round trip in us, over the timed round trips of each "
	             "size; time budget %.2f s per size", o.max_time);

	static const struct bm_col cols[] = {
		{ "size", BM_COL_INT, 8, NULL },     { "iters", BM_COL_INT, 8, NULL },
		{ "median_us", BM_COL_F2, 0, NULL }, { "p25_us", BM_COL_F2, 0, NULL },
		{ "p75_us", BM_COL_F2, 0, NULL },    { "min_us", BM_COL_F2, 0, NULL },
	};
	struct bm_table t;
	bm_table_begin(&t, &c, cols, (int)(sizeof cols / sizeof cols[0]));

	for (int si = 0; si < o.nsizes; si++) {
		const long s = o.sizes[si];
		const long it = o.iters ? o.iters : s <= LARGE ? (o.c.quick ? 2000 : 10000)
		                                               : (o.c.quick ? 200 : 1000);
		const long wu = o.warmup >= 0 ? o.warmup : s <= LARGE ? 100 : 10;
		MPI_Barrier(MPI_COMM_WORLD);
		struct bm_pp pp = {
			.comm = MPI_COMM_WORLD, .initiator = c.rank == 0, .peer = 1 - c.rank,
			.tag = TAG, .sbuf = sbuf, .rbuf = rbuf, .count = (int)s,
			.nonblocking = o.nonblocking, .warmup = wu, .iters = it,
			.min_timed = MIN_TIMED, .budget_s = o.max_time, .lat = lat,
		};
		long n = bm_pingpong(&pp);
		if (c.rank == 0) {
			struct bm_stats st;
			bm_stats(lat, n, &st);
			bm_table_row(&t, s, n, st.median, st.p25, st.p75, st.min);
		}
	}

	MPI_Barrier(MPI_COMM_WORLD);
	free(sbuf);
	free(rbuf);
	free(lat);
	MPI_Finalize();
	return 0;
}

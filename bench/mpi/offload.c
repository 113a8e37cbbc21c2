/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_offload: the small-message case of PM2-2008 (Figs. 4-6, section
 * 3.2), seen from the sender: what an MPI_Isend call costs
 * the application, and what the whole step costs, when it computes between
 * the post and the wait.
 *
 *     rank 0 (sender)                     rank 1 (receiver)
 *     t0
 *     MPI_Isend(size)                     MPI_Recv(size)
 *     t1
 *     compute(t_w) (fixed work)
 *     MPI_Wait
 *     t2
 *
 * Iterations run back to back (as a time step of an application would);
 * the receiver only receives, in batches of 64 iterations, each ended by a
 * zero-byte reply so that it never lags far behind. By default it posts
 * the batch's receives and tests them with 20 us sleeps (--sleep-us) in
 * between, so that a core is idle, as on a node where the application
 * leaves one (--receiver quiet); --receiver busy makes it receive with
 * MPI_Recv, which spins: every core is busy, and offload must not cost
 * anything there. The table gives, per size, the medians over the timed
 * iterations of the isend call (t1 - t0) and of the step (t2 - t0), their
 * quartiles, and the step with t_w = 0 measured in the same run (the cost
 * of sending alone). The computation is a fixed amount of work calibrated
 * before MPI_Init (bm_work), so a thread that steals the sender's core
 * makes it last longer; "work_us" is its median duration during the run.
 * Run it natively, through piano-run, and through piano-run with
 * PIANO_OFFLOAD=1, over shared memory and over TCP (Open MPI: --mca btl
 * tcp,self; MPICH: UCX_TLS=tcp,self).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench_mpi_common.h"

#include <stdlib.h>
#include <string.h>

#define MAX_SIZES 32
#define TAG 7711
#define SYNC_EVERY 64

static const char usage_text[] =
        "usage: bench_offload [options]   (2 MPI processes: rank 0 sends, rank 1 receives)\n"
        "  --sizes LIST     message sizes (default 8,64,512,4K,16K,32K)\n"
        "  --compute-us T   computation between MPI_Isend and MPI_Wait in us (default 20)\n"
        "  --iters N        timed iterations per size (default 5000; --quick 500)\n"
        "  --warmup N       untimed iterations per size (default 200)\n"
        "  --net NAME       the transport the launcher chose, for the table's net column\n"
        "                   (e.g. shm, tcp; default: default)\n";

struct opts {
	struct bm_opts c;
	long sizes[MAX_SIZES];
	int nsizes;
	double compute_us;
	long iters, warmup;
	const char *net;
	int quiet;     /* the receiver sleeps between its tests */
	long sleep_us; /* that long */
};

static enum bm_arg offload_arg(void *prog, const char *a, const char *v)
{
	struct opts *o = prog;
	if (!v)
		return BM_ARG_UNKNOWN;
	if (!strcmp(a, "--sizes")) {
		o->nsizes = bm_parse_sizes(v, o->sizes, MAX_SIZES, 1, 1L << 24);
		return o->nsizes < 0 ? BM_ARG_BAD : BM_ARG_VALUE;
	}
	if (!strcmp(a, "--compute-us"))
		return bm_parse_double(v, 0, 1e6, &o->compute_us) ? BM_ARG_BAD : BM_ARG_VALUE;
	if (!strcmp(a, "--iters"))
		return bm_parse_int(v, 1, 100000000, &o->iters) ? BM_ARG_BAD : BM_ARG_VALUE;
	if (!strcmp(a, "--net")) {
		o->net = v;
		return *v && !strchr(v, ',') ? BM_ARG_VALUE : BM_ARG_BAD;
	}
	if (!strcmp(a, "--receiver")) {
		o->quiet = !strcmp(v, "quiet");
		return o->quiet || !strcmp(v, "busy") ? BM_ARG_VALUE : BM_ARG_BAD;
	}
	if (!strcmp(a, "--sleep-us"))
		return bm_parse_int(v, 1, 1000000, &o->sleep_us) ? BM_ARG_BAD : BM_ARG_VALUE;
	if (!strcmp(a, "--warmup"))
		return bm_parse_int(v, 0, 100000000, &o->warmup) ? BM_ARG_BAD : BM_ARG_VALUE;
	return BM_ARG_UNKNOWN;
}

/* One loop of n iterations (the first `warmup` untimed) with `work`
 * bm_work iterations between post and wait; the sender fills isend[],
 * step[] and work_us[] with the timed ones. The receiver takes the
 * messages of each batch of SYNC_EVERY iterations, then answers with a
 * zero-byte message that ends the batch for the sender too. */
static void run(const struct bm_ctx *c, const struct opts *o, char *buf, char *rbufs, int size,
                uint64_t work, double *isend, double *step, double *work_us)
{
	const int peer = 1 - c->rank;
	const long warmup = o->warmup, total = o->warmup + o->iters;
	char ack = 0;
	double sink = 0;
	MPI_Request rr[SYNC_EVERY];
	for (long b = 0; b < total; b += SYNC_EVERY) {
		long nb = total - b < SYNC_EVERY ? total - b : SYNC_EVERY;
		if (c->rank == 1) {
			if (o->quiet) {
				for (long k = 0; k < nb; k++)
					MPI_Irecv(rbufs + k * size, size, MPI_BYTE, peer, TAG,
					          MPI_COMM_WORLD, &rr[k]);
				const struct timespec pause = { o->sleep_us / 1000000,
					                        (o->sleep_us % 1000000) * 1000 };
				for (int flag = 0; !flag; nanosleep(&pause, NULL))
					MPI_Testall((int)nb, rr, &flag, MPI_STATUSES_IGNORE);
			} else {
				for (long k = 0; k < nb; k++)
					MPI_Recv(buf, size, MPI_BYTE, peer, TAG, MPI_COMM_WORLD,
					         MPI_STATUS_IGNORE);
			}
			MPI_Send(&ack, 0, MPI_BYTE, peer, TAG + 1, MPI_COMM_WORLD);
			continue;
		}
		for (long i = b; i < b + nb; i++) {
			MPI_Request r;
			double t0 = bm_now_us();
			MPI_Isend(buf, size, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, &r);
			double t1 = bm_now_us();
			if (work)
				sink += bm_work(work);
			double t2 = bm_now_us();
			MPI_Wait(&r, MPI_STATUS_IGNORE);
			double t3 = bm_now_us();
			if (i >= warmup) {
				isend[i - warmup] = t1 - t0;
				step[i - warmup] = t3 - t0;
				work_us[i - warmup] = t2 - t1;
			}
		}
		MPI_Recv(&ack, 0, MPI_BYTE, peer, TAG + 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
	}
	if (sink == 42.4242)
		printf("#\n"); /* keeps the work */
}

int main(int argc, char **argv)
{
	struct opts o;
	memset(&o, 0, sizeof o);
	bm_opts_init(&o.c);
	o.compute_us = 20;
	o.warmup = 200;
	o.net = "default";
	o.quiet = 1;
	o.sleep_us = 20;
	char err[256] = "";
	int prc = bm_opts_parse(&o.c, argc, argv, offload_arg, &o, err, sizeof err);
	if (!o.nsizes) {
		static const long def[] = { 8, 64, 512, 4096, 16384, 32768 };
		for (unsigned i = 0; i < sizeof def / sizeof def[0]; i++)
			o.sizes[o.nsizes++] = def[i];
	}
	if (!o.iters)
		o.iters = o.c.quick ? 500 : 5000;
	double rate = bm_calibrate();
	struct bm_ctx c;
	bm_init(&c, "offload", &o.c, rate, &argc, &argv);
	if (prc || o.c.help)
		return bm_usage_exit(&c, usage_text, err);
	int rc = bm_require_ranks(&c, 2, 2);
	if (rc)
		return rc;
	long maxsize = 1;
	for (int i = 0; i < o.nsizes; i++)
		maxsize = o.sizes[i] > maxsize ? o.sizes[i] : maxsize;
	char *buf = malloc((size_t)maxsize);
	char *rbufs = malloc((size_t)maxsize * SYNC_EVERY);
	double *isend = malloc((size_t)o.iters * sizeof(double));
	double *step = malloc((size_t)o.iters * sizeof(double));
	double *work = malloc((size_t)o.iters * sizeof(double));
	if (!buf || !rbufs || !isend || !step || !work)
		bm_die(&c, "out of memory");
	memset(buf, 1, (size_t)maxsize);
	uint64_t work_iters = (uint64_t)(o.compute_us * c.rate0);

	bm_header(&c, "piano offload benchmark: MPI_Isend + compute + MPI_Wait, sender side "
	              "(PM2-2008 Figs. 4-6)");
	bm_hline(&c,
	         "compute %.1f us of fixed work between MPI_Isend and MPI_Wait; %ld timed "
	         "iterations per size, back to back",
	         o.compute_us, o.iters);
	static const struct bm_col cols[] = {
		{ "net", BM_COL_STR, 8, NULL },          { "receiver", BM_COL_STR, 8, NULL },
		{ "size", BM_COL_INT, 8, NULL },         { "isend_us", BM_COL_F2, 0, NULL },
		{ "isend_p75", BM_COL_F2, 0, NULL },     { "step_us", BM_COL_F2, 0, NULL },
		{ "step_p25", BM_COL_F2, 0, NULL },      { "step_p75", BM_COL_F2, 0, NULL },
		{ "work_us", BM_COL_F2, 0, NULL },       { "comm_step_us", BM_COL_F2, 0, NULL },
		{ "comm_isend_us", BM_COL_F2, 0, NULL },
	};
	struct bm_table t;
	bm_table_begin(&t, &c, cols, (int)(sizeof cols / sizeof cols[0]));
	for (int si = 0; si < o.nsizes; si++) {
		int s = (int)o.sizes[si];
		MPI_Barrier(MPI_COMM_WORLD);
		/* t_w = 0 first: the cost of sending alone. */
		run(&c, &o, buf, rbufs, s, 0, isend, step, work);
		struct bm_stats ci, cs;
		if (c.rank == 0) {
			bm_stats(isend, o.iters, &ci);
			bm_stats(step, o.iters, &cs);
		}
		MPI_Barrier(MPI_COMM_WORLD);
		run(&c, &o, buf, rbufs, s, work_iters, isend, step, work);
		if (c.rank == 0) {
			struct bm_stats si_, ss, sw;
			bm_stats(isend, o.iters, &si_);
			bm_stats(step, o.iters, &ss);
			bm_stats(work, o.iters, &sw);
			bm_table_row(&t, o.net, o.quiet ? "quiet" : "busy", (long)s, si_.median,
			             si_.p75, ss.median, ss.p25, ss.p75, sw.median, cs.median,
			             ci.median);
		}
	}
	MPI_Barrier(MPI_COMM_WORLD);
	free(buf);
	free(rbufs);
	free(isend);
	free(step);
	free(work);
	MPI_Finalize();
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_oversub: many threads per rank exchanging messages while there are
 * more ranks than cores (4 ranks x 4 threads on a 2-core machine, say).
 *
 * Every thread t of rank r exchanges messages with thread t of rank r ^ 1
 * on a communicator of its own (an MPI_Comm_dup of MPI_COMM_WORLD per
 * thread, made before the threads start): each iteration posts an
 * MPI_Irecv and an MPI_Isend of the same size and completes both with
 * MPI_Waitall; the size cycles through 1 B, 4 B, 16 B ... up to --max-size
 * (4 MiB by default), shifted by the thread index so that the threads of a
 * rank do not move the same size at once. Every --block iterations (8 by
 * default) the thread calls a blocking MPI_Allreduce over all the ranks on
 * its communicator, whose result also tells every rank whether the time
 * budget (--time) is used up: all the ranks' thread t stop after the same
 * block. Nothing computes; the ranks and their threads only communicate,
 * which keeps every core of an oversubscribed machine busy.
 *
 * Reported (rank 0): iterations done by all the threads of all the ranks,
 * the wall time, iterations per second, and the median and maximum time of
 * one block of iterations (Allreduce included) over every thread of every
 * rank: a stall of the MPI shows as a block that lasts seconds.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench_mpi_common.h"

#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 64
#define TAG 7705

static const char usage_text[] =
	"usage: bench_oversub [options]   (an even number of MPI processes, e.g. 4 on 2 cores)\n"
	"  threads of rank r exchange Isend/Irecv/Waitall with rank r^1 (1 B..--max-size),\n"
	"  plus a blocking MPI_Allreduce over all ranks every --block iterations\n"
	"  --threads N      communicating threads per rank (default 4)\n"
	"  --time S         time budget in seconds (default 30; --quick 5): every thread\n"
	"                   stops after the first block that ends past it\n"
	"  --iters N        at most N iterations per thread (default: no limit)\n"
	"  --max-size S     largest message (default 4 MiB); sizes are 1, 4, 16 ... bytes\n"
	"  --block N        iterations between two MPI_Allreduce (default 8)\n";

struct opts {
	struct bm_opts c;
	long threads, iters, max_size, block;
	double time;
	int have_time;
};

static enum bm_arg oversub_arg(void *prog, const char *a, const char *v)
{
	struct opts *o = prog;
	int bad;
	if (!v)
		return BM_ARG_UNKNOWN;
	if (!strcmp(a, "--threads"))
		bad = bm_parse_int(v, 1, MAX_THREADS, &o->threads) != 0;
	else if (!strcmp(a, "--time")) {
		bad = bm_parse_double(v, 0, 1e6, &o->time) != 0;
		o->have_time = 1;
	} else if (!strcmp(a, "--iters"))
		bad = bm_parse_int(v, 1, 1L << 40, &o->iters) != 0;
	else if (!strcmp(a, "--max-size"))
		bad = bm_parse_size(v, 1, 1L << 30, &o->max_size) != 0;
	else if (!strcmp(a, "--block"))
		bad = bm_parse_int(v, 1, 1L << 20, &o->block) != 0;
	else
		return BM_ARG_UNKNOWN;
	return bad ? BM_ARG_BAD : BM_ARG_VALUE;
}

static int parse_args(int argc, char **argv, struct opts *o, char *err, size_t errlen)
{
	memset(o, 0, sizeof *o);
	bm_opts_init(&o->c);
	o->threads = 4;
	o->max_size = 4L << 20;
	o->block = 8;
	if (bm_opts_parse(&o->c, argc, argv, oversub_arg, o, err, errlen))
		return -1;
	if (!o->have_time)
		o->time = o->c.quick ? 5 : 30;
	return 0;
}

struct worker {
	const struct opts *o;
	const struct bm_ctx *c;
	int t;
	MPI_Comm comm;
	double start_us;
	long iters;
	double *blocks; /* time of each block, µs */
	long nblocks, cap;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	const struct opts *o = w->o;
	long nsizes = 0;
	for (long s = 1; s <= o->max_size; s *= 4)
		nsizes++;
	char *sbuf = malloc((size_t)o->max_size), *rbuf = malloc((size_t)o->max_size);
	if (!sbuf || !rbuf)
		bm_die(w->c, "out of memory");
	memset(sbuf, 1, (size_t)o->max_size);
	memset(rbuf, 0, (size_t)o->max_size);
	const int peer = w->c->rank ^ 1;
	double t0 = bm_now_us();
	for (long i = 0;; i++) {
		long size = 1L << (2 * ((i + w->t) % nsizes));
		MPI_Request r[2];
		MPI_Irecv(rbuf, (int)size, MPI_CHAR, peer, TAG, w->comm, &r[0]);
		MPI_Isend(sbuf, (int)size, MPI_CHAR, peer, TAG, w->comm, &r[1]);
		MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
		w->iters = i + 1;
		if ((i + 1) % o->block)
			continue;
		int out = bm_now_us() - w->start_us >= o->time * 1e6 ||
		          (o->iters && i + 1 + o->block > o->iters);
		int stop = 0;
		MPI_Allreduce(&out, &stop, 1, MPI_INT, MPI_MAX, w->comm);
		double t1 = bm_now_us();
		if (w->nblocks == w->cap) {
			w->cap = w->cap ? 2 * w->cap : 256;
			w->blocks = realloc(w->blocks, (size_t)w->cap * sizeof *w->blocks);
			if (!w->blocks)
				bm_die(w->c, "out of memory");
		}
		w->blocks[w->nblocks++] = t1 - t0;
		t0 = t1;
		if (stop)
			break;
	}
	free(sbuf);
	free(rbuf);
	return NULL;
}

int main(int argc, char **argv)
{
	struct opts o;
	char err[256] = "";
	int prc = parse_args(argc, argv, &o, err, sizeof err);
	struct bm_ctx c;
	bm_init(&c, "oversub", &o.c, 0, &argc, &argv);
	if (prc || o.c.help)
		return bm_usage_exit(&c, usage_text, err);
	int rc = bm_require_ranks(&c, 2, 0);
	if (rc)
		return rc;
	if (c.size % 2)
		bm_die(&c, "needs an even number of MPI processes (rank r talks to r^1)");
	if (c.provided < MPI_THREAD_MULTIPLE)
		bm_die(&c, "needs MPI_THREAD_MULTIPLE");

	bm_header(&c, "piano oversubscription benchmark: threads exchanging messages, "
	              "more ranks than cores");
	char sz[32];
	bm_fmt_size(o.max_size, sz, sizeof sz);
	bm_hline(&c, "%ld threads per rank, rank r with r^1: Isend/Irecv/Waitall of 1 B..%s "
	             "(x4), MPI_Allreduce over all ranks every %ld iterations; budget %.1f s",
	         o.threads, sz, o.block, o.time);
	bm_hline(&c, "iters: all threads of all ranks; block_*: time of %ld iterations + "
	             "the Allreduce, over every thread of every rank", o.block);

	struct worker w[MAX_THREADS];
	pthread_t tid[MAX_THREADS];
	memset(w, 0, sizeof w);
	for (int t = 0; t < o.threads; t++) {
		w[t].o = &o;
		w[t].c = &c;
		w[t].t = t;
		MPI_Comm_dup(MPI_COMM_WORLD, &w[t].comm);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double start = bm_now_us();
	for (int t = 0; t < o.threads; t++) {
		w[t].start_us = start;
		if (pthread_create(&tid[t], NULL, worker_main, &w[t]))
			bm_die(&c, "cannot start thread %d", t);
	}
	long iters = 0, nblocks = 0;
	for (int t = 0; t < o.threads; t++) {
		pthread_join(tid[t], NULL);
		iters += w[t].iters;
		nblocks += w[t].nblocks;
	}
	double wall = (bm_now_us() - start) / 1e6;

	/* Every block time of every rank to rank 0. */
	int nb = (int)nblocks, *counts = NULL, *displs = NULL;
	double *mine = malloc((size_t)(nblocks ? nblocks : 1) * sizeof *mine), *all = NULL;
	if (!mine)
		bm_die(&c, "out of memory");
	for (int t = 0, k = 0; t < o.threads; t++)
		for (long b = 0; b < w[t].nblocks; b++)
			mine[k++] = w[t].blocks[b];
	if (c.rank == 0) {
		counts = malloc((size_t)c.size * sizeof *counts);
		displs = malloc((size_t)c.size * sizeof *displs);
		if (!counts || !displs)
			bm_die(&c, "out of memory");
	}
	MPI_Gather(&nb, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
	long total_blocks = 0;
	if (c.rank == 0) {
		for (int r = 0; r < c.size; r++) {
			displs[r] = (int)total_blocks;
			total_blocks += counts[r];
		}
		all = malloc((size_t)(total_blocks ? total_blocks : 1) * sizeof *all);
		if (!all)
			bm_die(&c, "out of memory");
	}
	MPI_Gatherv(mine, nb, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	long total_iters = 0;
	double max_wall = 0;
	MPI_Reduce(&iters, &total_iters, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(&wall, &max_wall, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

	static const struct bm_col cols[] = {
		{ "ranks", BM_COL_INT, 6, NULL },       { "threads", BM_COL_INT, 8, NULL },
		{ "iters", BM_COL_INT, 8, NULL },       { "wall_s", BM_COL_F2, 8, NULL },
		{ "iters_per_s", BM_COL_F2, 0, NULL },  { "block_med_ms", BM_COL_F2, 0, NULL },
		{ "block_p90_ms", BM_COL_F2, 0, NULL }, { "block_max_ms", BM_COL_F2, 0, NULL },
	};
	struct bm_table tab;
	bm_table_begin(&tab, &c, cols, (int)(sizeof cols / sizeof cols[0]));
	if (c.rank == 0) {
		struct bm_stats s;
		bm_stats(all, total_blocks, &s);
		bm_table_row(&tab, (long)c.size, o.threads, total_iters, max_wall,
		             max_wall > 0 ? (double)total_iters / max_wall : 0.0, s.median / 1e3,
		             bm_quantile_sorted(all, total_blocks, 0.9) / 1e3, s.max / 1e3);
	}

	for (int t = 0; t < o.threads; t++) {
		MPI_Comm_free(&w[t].comm);
		free(w[t].blocks);
	}
	free(mine);
	free(all);
	free(counts);
	free(displs);
	MPI_Finalize();
	return 0;
}

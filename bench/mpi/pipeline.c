/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_pipeline: the evaluation of uKACC-2012 (§V, Figs. 5-10): a
 * pipelined broadcast in a 1-D chain (rank 0 cuts the message in segments
 * and sends them to rank 1, each rank forwards a segment to the next as
 * soon as it arrived), started once, then a fixed computation kernel
 * (dgemm) repeated on every rank, the broadcast queried after each kernel,
 * until it is complete. Progression methods (--methods):
 *   manual  the MPI alone, progressed by the application (the paper's
 *           "manual MPI"): every receive posted at start (the root posts
 *           every send), and after each kernel the receives are tested in
 *           order and each one that completed is forwarded;
 *   thread  a schedule of rounds driven by a thread per broadcast (the
 *           paper's LibNBC): round k posts the receive of segment k and the
 *           send of segment k - 1 and waits for both (MPI_Waitall, which
 *           polls), the kernel loop reads a flag;
 *   graph   the chain as a graph of piano's engine (piano_graph_*, found
 *           in the process when it runs under piano-run; skipped
 *           otherwise): every receive posted at start, each send released
 *           by its receive, progressed by piano in the background;
 *           piano_graph_test after each kernel;
 *   ibcast  MPI_Ibcast of the whole message and MPI_Test after each
 *           kernel: the MPI's own algorithm and segments, or piano's graph
 *           broadcast (binomial tree) under PIANO_COLL=graph; its segment
 *           column says "mpi".
 * Per repetition and method, on every rank:
 *   bcast   time from the start to the kernel loop seeing completion (a
 *           multiple of the kernel's length), n kernels run meanwhile;
 *   base    the same n kernels alone, right after: the computation's own
 *           time; lost = bcast - base is the time the broadcast took from
 *           the computation (its CPU cost where a kernel would have run:
 *           the paper's "CPU usage"), comp% = 100 * base / bcast;
 *   pure    the broadcast alone, completed as fast as the method can
 *           (manual: testing in a loop; thread: joining the thread;
 *           graph: piano_graph_wait; ibcast: MPI_Wait).
 * Reported per (size, segment, method): the slowest rank's bcast and pure,
 * the mean over ranks of lost and comp%, medians over --reps repetitions;
 * methods alternate repetition by repetition. Times in microseconds.
 * uKACC-2012's goals read here as: graph's lost <= 10 % of thread's, its
 * bcast <= 1.1 x manual's, its pure <= 1.2 x the MPI's own (ibcast run
 * natively).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench_mpi_common.h"

#include <dlfcn.h>
#include <piano/graph.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POINTS 32
#define MAX_SEGS 4096

static const char *usage_text =
        "usage: bench_pipeline [options]   (any number of ranks >= 2: a chain)\n"
        "  --sizes LIST     broadcast sizes (default 1280K, uKACC's 1.25 MB;\n"
        "                   quick the same)\n"
        "  --segments LIST  pipeline segments (default 8K,16K,32K,64K,128K;\n"
        "                   quick 16K,64K); at most 4096 segments per message\n"
        "  --methods LIST   manual, thread, graph, ibcast (default all; graph\n"
        "                   only under piano-run)\n"
        "  --kernel-us K    length of one dgemm kernel (default 50): the\n"
        "                   matrix order is chosen before MPI_Init to last K us\n"
        "  --reps N         repetitions per point (default 11; quick 5)\n";

enum { M_MANUAL, M_THREAD, M_GRAPH, M_IBCAST, NMETHODS };
static const char *method_names[NMETHODS] = { "manual", "thread", "graph", "ibcast" };

struct opts {
	long sizes[MAX_POINTS], segs[MAX_POINTS];
	int nsizes, nsegs;
	int methods[NMETHODS];
	double kernel_us;
	long reps;
	int have_reps;
};

static enum bm_arg pipe_arg(void *prog, const char *a, const char *v)
{
	struct opts *o = prog;
	int bad = 0;
	if (!v)
		return BM_ARG_UNKNOWN;
	if (!strcmp(a, "--sizes")) {
		bad = (o->nsizes = bm_parse_sizes(v, o->sizes, MAX_POINTS, 1, 1L << 30)) < 0;
	} else if (!strcmp(a, "--segments")) {
		bad = (o->nsegs = bm_parse_sizes(v, o->segs, MAX_POINTS, 1, 1L << 30)) < 0;
	} else if (!strcmp(a, "--methods")) {
		memset(o->methods, 0, sizeof o->methods);
		char buf[256];
		snprintf(buf, sizeof buf, "%s", v);
		for (char *save = NULL, *t = strtok_r(buf, ",", &save); t && !bad;
		     t = strtok_r(NULL, ",", &save)) {
			int k = 0;
			while (k < NMETHODS && strcmp(t, method_names[k]))
				k++;
			if (k == NMETHODS)
				bad = 1;
			else
				o->methods[k] = 1;
		}
	} else if (!strcmp(a, "--kernel-us")) {
		bad = bm_parse_double(v, 1, 1e6, &o->kernel_us);
	} else if (!strcmp(a, "--reps")) {
		bad = bm_parse_int(v, 1, 100000, &o->reps);
		o->have_reps = 1;
	} else {
		return BM_ARG_UNKNOWN;
	}
	return bad ? BM_ARG_BAD : BM_ARG_VALUE;
}

static int parse(int argc, char **argv, struct bm_opts *co, struct opts *o, char *err,
                 size_t errlen)
{
	*o = (struct opts){ .kernel_us = 50, .reps = 11 };
	for (int k = 0; k < NMETHODS; k++)
		o->methods[k] = 1;
	if (bm_opts_parse(co, argc, argv, pipe_arg, o, err, errlen))
		return -1;
	if (!o->nsizes) {
		o->nsizes = 1;
		o->sizes[0] = 1280L << 10;
	}
	if (!o->nsegs) {
		static const long d[] = { 8L << 10, 16L << 10, 32L << 10, 64L << 10, 128L << 10 };
		static const long q[] = { 16L << 10, 64L << 10 };
		o->nsegs = co->quick ? 2 : 5;
		memcpy(o->segs, co->quick ? q : d, sizeof(long) * (size_t)o->nsegs);
	}
	if (co->quick && !o->have_reps)
		o->reps = 5;
	return 0;
}

/* ------------------------------------------------------------ the chain */

struct chain {
	int rank, size, prev, next; /* prev, next: -1 at the ends */
	MPI_Comm comm;              /* a duplicate: the broadcasts' own messages */
	char *buf;
	long bytes, seg;
	int nseg;
	MPI_Request rreq[MAX_SEGS], sreq[MAX_SEGS];
};

static int seg_len(const struct chain *c, int k)
{
	long off = (long)k * c->seg;
	return (int)(c->bytes - off < c->seg ? c->bytes - off : c->seg);
}
static char *seg_at(const struct chain *c, int k) { return c->buf + (long)k * c->seg; }

/* manual: receives (or the root's sends) posted at start; forward() after
 * each kernel. */
struct manual {
	int next_recv; /* receives below it completed and forwarded */
	int nsent;
};

static void manual_start(struct chain *c, struct manual *m)
{
	m->next_recv = 0;
	m->nsent = 0;
	for (int k = 0; k < c->nseg; k++) {
		c->sreq[k] = MPI_REQUEST_NULL;
		if (c->prev >= 0)
			MPI_Irecv(seg_at(c, k), seg_len(c, k), MPI_BYTE, c->prev, k, c->comm,
			          &c->rreq[k]);
		else
			MPI_Isend(seg_at(c, k), seg_len(c, k), MPI_BYTE, c->next, k, c->comm,
			          &c->sreq[k]);
	}
	if (c->prev < 0)
		m->next_recv = m->nsent = c->nseg;
}

/* One progression call: forwards the segments that arrived, in order;
 * true once every receive and send is complete. */
static bool manual_progress(struct chain *c, struct manual *m)
{
	while (m->next_recv < c->nseg) {
		int flag = 0;
		MPI_Test(&c->rreq[m->next_recv], &flag, MPI_STATUS_IGNORE);
		if (!flag)
			break;
		if (c->next >= 0) {
			int k = m->next_recv;
			MPI_Isend(seg_at(c, k), seg_len(c, k), MPI_BYTE, c->next, k, c->comm,
			          &c->sreq[k]);
			m->nsent++;
		}
		m->next_recv++;
	}
	if (m->next_recv < c->nseg)
		return false;
	int flag = 1;
	if (c->next >= 0)
		MPI_Testall(c->nseg, c->sreq, &flag, MPI_STATUSES_IGNORE);
	return flag;
}

/* thread: the rounds, in a thread per broadcast. */
struct rounds {
	struct chain *c;
	pthread_t tid;
	_Atomic int done;
};

static void *rounds_run(void *arg)
{
	struct rounds *r = arg;
	struct chain *c = r->c;
	for (int k = 0; k <= c->nseg; k++) {
		MPI_Request q[2] = { MPI_REQUEST_NULL, MPI_REQUEST_NULL };
		if (k < c->nseg && c->prev >= 0)
			MPI_Irecv(seg_at(c, k), seg_len(c, k), MPI_BYTE, c->prev, k, c->comm,
			          &q[0]);
		/* The root sends segment k in round k; the others forward the
		 * one received in the previous round. */
		int s = c->prev < 0 ? k : k - 1;
		if (c->next >= 0 && s >= 0 && s < c->nseg)
			MPI_Isend(seg_at(c, s), seg_len(c, s), MPI_BYTE, c->next, s, c->comm,
			          &q[1]);
		MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
	}
	atomic_store_explicit(&r->done, 1, memory_order_release);
	return NULL;
}

/* graph: piano's API, looked up in the process. */
struct graph_api {
	__typeof__(&piano_graph_create) create;
	__typeof__(&piano_graph_add_send) add_send;
	__typeof__(&piano_graph_add_recv) add_recv;
	__typeof__(&piano_graph_add_edge) add_edge;
	__typeof__(&piano_graph_commit) commit;
	__typeof__(&piano_graph_start) start;
	__typeof__(&piano_graph_test) test;
	__typeof__(&piano_graph_wait) wait;
	__typeof__(&piano_graph_free) free;
};

static bool graph_api_find(struct graph_api *a)
{
#define FIND(field, name) *(void **)(&a->field) = dlsym(RTLD_DEFAULT, name)
	FIND(create, "piano_graph_create");
	FIND(add_send, "piano_graph_add_send");
	FIND(add_recv, "piano_graph_add_recv");
	FIND(add_edge, "piano_graph_add_edge");
	FIND(commit, "piano_graph_commit");
	FIND(start, "piano_graph_start");
	FIND(test, "piano_graph_test");
	FIND(wait, "piano_graph_wait");
	FIND(free, "piano_graph_free");
#undef FIND
	return a->create && a->add_send && a->add_recv && a->add_edge && a->commit && a->start &&
	       a->test && a->wait && a->free;
}

/* The chain of this rank as a graph: a receive per segment from prev, and
 * a send per segment to next that its receive releases. */
static piano_graph_t *graph_build(const struct graph_api *a, struct chain *c)
{
	piano_graph_t *g = NULL;
	if (a->create(c->comm, &g))
		return NULL;
	int rc = 0;
	for (int k = 0; k < c->nseg && !rc; k++) {
		int r = -1, s = -1;
		if (c->prev >= 0)
			rc = a->add_recv(g, seg_at(c, k), seg_len(c, k), MPI_BYTE, c->prev, k, &r);
		if (!rc && c->next >= 0)
			rc = a->add_send(g, seg_at(c, k), seg_len(c, k), MPI_BYTE, c->next, k, &s);
		if (!rc && r >= 0 && s >= 0)
			rc = a->add_edge(g, r, s);
	}
	if (!rc)
		rc = a->commit(g);
	if (rc) {
		a->free(g);
		return NULL;
	}
	return g;
}

/* ------------------------------------------------------------ one run */

struct run {
	struct chain *c;
	int method;
	const struct graph_api *api;
	piano_graph_t *g;
	struct manual m;
	struct rounds r;
	MPI_Request ib;
};

static void run_start(struct run *x)
{
	switch (x->method) {
	case M_MANUAL: manual_start(x->c, &x->m); break;
	case M_THREAD:
		x->r.c = x->c;
		atomic_store(&x->r.done, 0);
		if (pthread_create(&x->r.tid, NULL, rounds_run, &x->r)) {
			fprintf(stderr, "bench_pipeline: cannot create a thread\n");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		break;
	case M_GRAPH:
		if (x->api->start(x->g)) {
			fprintf(stderr, "bench_pipeline: piano_graph_start failed\n");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		break;
	default: MPI_Ibcast(x->c->buf, (int)x->c->bytes, MPI_BYTE, 0, x->c->comm, &x->ib); break;
	}
}

/* The method's query after a kernel: true once complete. */
static bool run_done(struct run *x)
{
	int flag = 0;
	switch (x->method) {
	case M_MANUAL: return manual_progress(x->c, &x->m);
	case M_THREAD:
		if (!atomic_load_explicit(&x->r.done, memory_order_acquire))
			return false;
		pthread_join(x->r.tid, NULL);
		return true;
	case M_GRAPH:
		if (x->api->test(x->g, &flag)) {
			fprintf(stderr, "bench_pipeline: piano_graph_test failed\n");
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
		return flag;
	default: MPI_Test(&x->ib, &flag, MPI_STATUS_IGNORE); return flag;
	}
}

/* Completes it as fast as the method can. */
static void run_finish(struct run *x)
{
	switch (x->method) {
	case M_MANUAL:
		while (!manual_progress(x->c, &x->m))
			;
		break;
	case M_THREAD: pthread_join(x->r.tid, NULL); break;
	case M_GRAPH: x->api->wait(x->g); break;
	default: MPI_Wait(&x->ib, MPI_STATUS_IGNORE); break;
	}
}

static void fill(struct chain *c, int rep)
{
	for (long i = 0; i < c->bytes; i++)
		c->buf[i] = c->rank == 0 ? (char)(i * 7 + rep) : 0;
}

static void check(const struct chain *c, int rep)
{
	for (long i = 0; i < c->bytes; i++)
		if (c->buf[i] != (char)(i * 7 + rep)) {
			fprintf(stderr,
			        "bench_pipeline: rank %d: byte %ld wrong after the broadcast\n",
			        c->rank, i);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
}

/* One repetition of one method: pure, then the overlapped phase and its
 * baseline. out: pure, bcast, base (µs), on this rank. */
static void one_rep(struct run *x, struct bm_dgemm *d, int rep, double out[3])
{
	fill(x->c, rep);
	bm_quiet_barrier(MPI_COMM_WORLD);
	double t0 = bm_now_us();
	run_start(x);
	run_finish(x);
	out[0] = bm_now_us() - t0;
	check(x->c, rep);

	fill(x->c, rep + 1);
	bm_quiet_barrier(MPI_COMM_WORLD);
	long n = 0;
	t0 = bm_now_us();
	run_start(x);
	do {
		bm_dgemm_run(d, 1);
		n++;
	} while (!run_done(x));
	out[1] = bm_now_us() - t0;
	check(x->c, rep + 1);

	t0 = bm_now_us();
	bm_dgemm_run(d, n);
	out[2] = bm_now_us() - t0;
}

/* The dgemm order whose call lasts about us microseconds (best of 5 calls
 * per order, before MPI_Init). */
static int dgemm_order(double us, double *call_us)
{
	int n = 8;
	for (;; n += n / 8 > 1 ? n / 8 : 1) {
		struct bm_dgemm d;
		if (bm_dgemm_init(&d, n))
			return -1;
		double best = 1e30;
		for (int k = 0; k < 5; k++) {
			double t0 = bm_now_us();
			bm_dgemm_run(&d, 1);
			double t = bm_now_us() - t0;
			best = t < best ? t : best;
		}
		bm_dgemm_free(&d);
		if (best >= us || n >= 2048) {
			*call_us = best;
			return n;
		}
	}
}

int main(int argc, char **argv)
{
	struct bm_opts co;
	struct opts o;
	char err[256] = "";
	bm_opts_init(&co);
	int prc = parse(argc, argv, &co, &o, err, sizeof err);
	double call_us = 0;
	int order = prc == 0 ? dgemm_order(o.kernel_us, &call_us) : 8;

	struct bm_ctx ctx;
	bm_init(&ctx, "pipeline", &co, 0, &argc, &argv);
	if (prc || co.help)
		return bm_usage_exit(&ctx, usage_text, err);
	int rc = bm_require_ranks(&ctx, 2, 0);
	if (rc)
		return rc;
	for (int i = 0; i < o.nsizes; i++)
		for (int j = 0; j < o.nsegs; j++)
			if ((o.sizes[i] + o.segs[j] - 1) / o.segs[j] > MAX_SEGS)
				return bm_usage_exit(&ctx, usage_text,
				                     "more than 4096 segments in a message");
	if (order < 0)
		bm_die(&ctx, "out of memory\n");
	struct graph_api api;
	bool have_graph = graph_api_find(&api);
	if (o.methods[M_GRAPH] && !have_graph)
		o.methods[M_GRAPH] = 0; /* said in the header */
	double orders[2], oo[2] = { order, -order };
	bm_quiet_allreduce(oo, orders, 2, MPI_MAX, MPI_COMM_WORLD);

	struct bm_dgemm d;
	struct chain c = { 0 };
	c.rank = ctx.rank;
	c.size = ctx.size;
	c.prev = ctx.rank - 1;
	c.next = ctx.rank + 1 < ctx.size ? ctx.rank + 1 : -1;
	long maxsize = 0;
	for (int i = 0; i < o.nsizes; i++)
		maxsize = o.sizes[i] > maxsize ? o.sizes[i] : maxsize;
	c.buf = malloc((size_t)maxsize);
	double *v = malloc(sizeof(double) * (size_t)o.reps);
	if (!c.buf || !v || bm_dgemm_init(&d, order))
		bm_die(&ctx, "out of memory\n");
	MPI_Comm_dup(MPI_COMM_WORLD, &c.comm);

	bm_header(&ctx, "piano pipeline benchmark: chained broadcast + repeated kernel "
	                "(uKACC-2012 §V)");
	bm_hline(&ctx,
	         "chain 0 -> 1 -> ... -> %d; kernel: dgemm of order %d..%d (%.0f us "
	         "on rank 0 before MPI_Init), queried after each kernel",
	         ctx.size - 1, -(int)orders[1], (int)orders[0], call_us);
	bm_hline(&ctx,
	         "bcast: start to completion seen, slowest rank; base: the same "
	         "kernels alone, lost = bcast - base, comp%% = 100 base / bcast, "
	         "means over ranks; pure: the broadcast alone, slowest rank; "
	         "medians of %ld repetitions",
	         o.reps);
	if (!have_graph)
		bm_hline(&ctx, "method graph skipped: piano's graph API is not in the process "
		               "(run under piano-run)");

	static const struct bm_col cols[] = {
		{ "size", BM_COL_SIZE, 8, "size_bytes" },
		{ "segment", BM_COL_STR, 8, NULL },
		{ "method", BM_COL_STR, 7, NULL },
		{ "pure(us)", BM_COL_F4, 10, "pure_us" },
		{ "bcast(us)", BM_COL_F4, 10, "bcast_us" },
		{ "base(us)", BM_COL_F4, 10, "base_us" },
		{ "lost(us)", BM_COL_F4, 10, "lost_us" },
		{ "comp%", BM_COL_F2, 7, "comp_pct" },
	};
	struct bm_table t;
	bm_table_begin(&t, &ctx, cols, (int)(sizeof cols / sizeof cols[0]));

	for (int i = 0; i < o.nsizes; i++) {
		c.bytes = o.sizes[i];
		/* ibcast has one segment size, the MPI's: run it once per size,
		 * alternated with the first segment's methods. */
		for (int j = 0; j < o.nsegs; j++) {
			c.seg = o.segs[j];
			c.nseg = (int)((c.bytes + c.seg - 1) / c.seg);
			struct run runs[NMETHODS];
			int nrun = 0;
			for (int k = 0; k < NMETHODS; k++) {
				if (!o.methods[k] || (k == M_IBCAST && j > 0))
					continue;
				runs[nrun] = (struct run){ .c = &c, .method = k, .api = &api };
				if (k == M_GRAPH && !(runs[nrun].g = graph_build(&api, &c)))
					bm_die(&ctx, "cannot build the chain's graph\n");
				nrun++;
			}
			enum { NF = 5 }; /* pure, bcast (slowest rank); base, lost, comp% (mean) */
			double *res = malloc(sizeof(double) * NF * (size_t)o.reps * (size_t)nrun);
			if (!res)
				bm_die(&ctx, "out of memory\n");
			for (int rep = 0; rep < o.reps; rep++) {
				for (int k = 0; k < nrun; k++) {
					double mine[3], mx[2], sum[3];
					one_rep(&runs[k], &d, 2 * rep, mine);
					double a[2] = { mine[0], mine[1] };
					double b[3] = { mine[2], mine[1] - mine[2],
						        mine[1] > 0 ? 100 * mine[2] / mine[1] : 0 };
					bm_quiet_allreduce(a, mx, 2, MPI_MAX, MPI_COMM_WORLD);
					bm_quiet_allreduce(b, sum, 3, MPI_SUM, MPI_COMM_WORLD);
					double *r = res +
					            NF * ((size_t)k * (size_t)o.reps + (size_t)rep);
					r[0] = mx[0];
					r[1] = mx[1];
					for (int f = 0; f < 3; f++)
						r[2 + f] = sum[f] / ctx.size;
				}
			}
			for (int k = 0; k < nrun; k++) {
				double med[NF];
				for (int f = 0; f < NF; f++) {
					for (int rep = 0; rep < o.reps; rep++)
						v[rep] = res[NF * ((size_t)k * (size_t)o.reps +
						                   (size_t)rep) +
						             (size_t)f];
					med[f] = bm_median(v, o.reps);
				}
				char segname[32];
				if (runs[k].method == M_IBCAST)
					snprintf(segname, sizeof segname, "mpi");
				else
					bm_fmt_size(c.seg, segname, sizeof segname);
				bm_table_row(&t, c.bytes, segname, method_names[runs[k].method],
				             med[0], med[1], med[2], med[3], med[4]);
				if (runs[k].g)
					api.free(runs[k].g);
			}
			free(res);
		}
	}
	MPI_Comm_free(&c.comm);
	bm_dgemm_free(&d);
	free(c.buf);
	free(v);
	MPI_Finalize();
	return 0;
}

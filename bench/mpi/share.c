/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A large reduction as a graph of piano's engine against MPI_Reduce_local,
 * on MPI_COMM_SELF: what sharing a graph's ready reductions with idle
 * threads (PIANO_COLL_SHARE, docs/coll.md "Shared reductions") gains where
 * a core is idle. Per size: a sum of doubles cut into --nodes REDUCE nodes
 * with no edges (as a collective's segments that all arrived while the
 * application computed), the graph built once and started --reps times
 * (start + wait), against MPI_Reduce_local of the whole vector on the
 * calling thread. Run it with one rank per idle core to see the gain
 * (`mpirun -np 1 piano-run bench_share_<mpi>`), with PIANO_COLL_SHARE=0 for
 * the graph alone; every rank measures its own, rank 0 reports.
 */
#include "bench_mpi_common.h"

#include <dlfcn.h>
#include <piano/graph.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_POINTS 16

static const char usage_text[] =
        "usage: bench_share_<mpi> [--sizes LIST] [--nodes N] [--reps N] [common options]\n"
        "  --sizes LIST  vector bytes (doubles), default 256K,1M,4M,16M\n"
        "  --nodes N     REDUCE nodes the vector is cut into (default 1)\n"
        "  --reps N      repetitions per point (default 50, --quick 5)\n";

struct opts {
	long sizes[MAX_POINTS];
	int nsizes;
	long nodes, reps;
	int have_reps;
};

static enum bm_arg share_arg(void *prog, const char *a, const char *v)
{
	struct opts *o = prog;
	int bad;
	if (!v)
		return BM_ARG_UNKNOWN;
	if (!strcmp(a, "--sizes"))
		bad = (o->nsizes = bm_parse_sizes(v, o->sizes, MAX_POINTS, 8, 1L << 30)) < 0;
	else if (!strcmp(a, "--nodes"))
		bad = bm_parse_int(v, 1, 4096, &o->nodes);
	else if (!strcmp(a, "--reps")) {
		bad = bm_parse_int(v, 1, 100000, &o->reps);
		o->have_reps = 1;
	} else
		return BM_ARG_UNKNOWN;
	return bad ? BM_ARG_BAD : BM_ARG_VALUE;
}

struct graph_api {
	__typeof__(&piano_graph_create) create;
	__typeof__(&piano_graph_add_reduce) add_reduce;
	__typeof__(&piano_graph_commit) commit;
	__typeof__(&piano_graph_start) start;
	__typeof__(&piano_graph_wait) wait;
	__typeof__(&piano_graph_free) free;
};

static bool graph_api_find(struct graph_api *a)
{
#define FIND(field, name) *(void **)(&a->field) = dlsym(RTLD_DEFAULT, name)
	FIND(create, "piano_graph_create");
	FIND(add_reduce, "piano_graph_add_reduce");
	FIND(commit, "piano_graph_commit");
	FIND(start, "piano_graph_start");
	FIND(wait, "piano_graph_wait");
	FIND(free, "piano_graph_free");
#undef FIND
	return a->create && a->add_reduce && a->commit && a->start && a->wait && a->free;
}

int main(int argc, char **argv)
{
	struct bm_opts co;
	struct opts o = { .nodes = 1, .reps = 50 };
	char err[256] = "";
	bm_opts_init(&co);
	int prc = bm_opts_parse(&co, argc, argv, share_arg, &o, err, sizeof err);
	struct bm_ctx ctx;
	bm_init(&ctx, "share", &co, 0, &argc, &argv);
	if (prc || co.help)
		return bm_usage_exit(&ctx, usage_text, err);
	if (!o.nsizes) {
		const long d[] = { 256L << 10, 1L << 20, 4L << 20, 16L << 20 };
		for (int k = 0; k < 4; k++)
			o.sizes[o.nsizes++] = d[k];
	}
	if (co.quick && !o.have_reps)
		o.reps = 5;
	struct graph_api api;
	bool have_graph = graph_api_find(&api);

	bm_header(&ctx, "piano shared reductions: a graph's REDUCE nodes against "
	                "MPI_Reduce_local (docs/coll.md, \"Shared reductions\")");
	bm_hline(&ctx,
	         "sum of doubles, %ld node(s) with no edges, %ld repetitions per point, "
	         "median us; graph: start + wait%s",
	         o.nodes, o.reps, have_graph ? "" : " (piano's graph API not loaded)");
	if (!co.csv && ctx.rank == 0)
		printf("%8s %12s %12s %8s %10s\n", "size", "local_us", "graph_us", "loc/gr",
		       "graph_GB/s");
	if (co.csv && ctx.rank == 0)
		printf("bench,label,mpi,size,nodes,local_us,graph_us,ratio\n");

	long maxn = 0;
	for (int k = 0; k < o.nsizes; k++)
		if (o.sizes[k] / 8 > maxn)
			maxn = o.sizes[k] / 8;
	double *in = malloc((size_t)maxn * sizeof(double));
	double *io = malloc((size_t)maxn * sizeof(double));
	double *tl = malloc((size_t)o.reps * sizeof(double));
	double *tg = malloc((size_t)o.reps * sizeof(double));
	if (!in || !io || !tl || !tg)
		bm_die(&ctx, "out of memory");
	for (long i = 0; i < maxn; i++)
		in[i] = io[i] = 1.0;

	for (int k = 0; k < o.nsizes; k++) {
		long n = o.sizes[k] / 8;
		piano_graph_t *g = NULL;
		if (have_graph && !api.create(MPI_COMM_SELF, &g)) {
			int rc = 0;
			for (long j = 0; j < o.nodes && !rc; j++) {
				long a = n * j / o.nodes, b = n * (j + 1) / o.nodes;
				rc = api.add_reduce(g, in + a, io + a, (int)(b - a), MPI_DOUBLE,
				                    MPI_SUM, NULL);
			}
			if (rc || api.commit(g)) {
				api.free(g);
				g = NULL;
			}
		}
		/* Alternated, so that drift hits both alike. */
		for (long r = 0; r < o.reps; r++) {
			double t0 = bm_now_us();
			MPI_Reduce_local(in, io, (int)n, MPI_DOUBLE, MPI_SUM);
			tl[r] = bm_now_us() - t0;
			tg[r] = 0;
			if (g) {
				t0 = bm_now_us();
				if (api.start(g) || api.wait(g))
					bm_die(&ctx, "graph run failed");
				tg[r] = bm_now_us() - t0;
			}
		}
		if (g)
			api.free(g);
		double ml = bm_median(tl, o.reps), mg = bm_median(tg, o.reps);
		char sz[32];
		bm_fmt_size(o.sizes[k], sz, sizeof sz);
		if (ctx.rank == 0 && !co.csv)
			printf("%8s %12.1f %12.1f %8.2f %10.2f\n", sz, ml, mg, mg > 0 ? ml / mg : 0,
			       mg > 0 ? (double)o.sizes[k] / mg / 1e3 : 0);
		if (ctx.rank == 0 && co.csv)
			printf("share,%s,%s,%ld,%ld,%.1f,%.1f,%.3f\n", co.label, ctx.mpi_name,
			       o.sizes[k], o.nodes, ml, mg, mg > 0 ? ml / mg : 0);
	}
	free(in);
	free(io);
	free(tl);
	free(tg);
	MPI_Finalize();
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_file: overlap of non-blocking file transfers with computation, as
 * APSM-2013 (section 5) measures it. Every rank, on a file of its own in
 * --dir (a directory made there with mkdtemp), for each operation (write:
 * MPI_File_iwrite_at, read: MPI_File_iread_at) and each size:
 *   t_block   the blocking transfer alone (MPI_File_write_at/read_at);
 *   t_comp    the computation alone: bm_work calibrated before MPI_Init
 *             to last --compute-factor x the median t_block of a probe;
 *   t_ovl     start the non-blocking transfer, compute, MPI_Wait (no MPI
 *             call while computing);
 *   ratio     t_ovl / max(t_comp, t_block): 1 is a perfect overlap, about
 *             (t_comp + t_block) / max(...) (2 at factor 1) none.
 * The three are measured in turn in every repetition, so that a change in
 * the machine's load affects them alike; each is the slowest rank's (a
 * quiet barrier between), and each value is the median over --reps
 * repetitions. With piano, t_block is also the check that blocking file
 * calls are not slower than natively (same table, variant native).
 * --layout strided moves the data from every other 1 KiB block of a buffer
 * twice as large (a vector type): MPICH makes such a transfer inside the
 * call, Open MPI in the wait. Times in milliseconds.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench_mpi_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MAX_POINTS 16
#define BLOCK 1024 /* bytes per block of the strided layout */

static const char *usage_text =
        "usage: bench_file [options]   (any number of ranks)\n"
        "  --sizes LIST     bytes per rank and transfer, e.g. 64M,1G (default\n"
        "                   64MiB,256MiB,1GiB; quick 64MiB), multiples of 1 KiB up\n"
        "                   to 1 GiB\n"
        "  --ops LIST       write and/or read (default both)\n"
        "  --layout L       contig or strided (default contig)\n"
        "  --dir DIR        where the files go (default /tmp; /dev/shm: tmpfs)\n"
        "  --reps N         repetitions per point (default 5; quick 3)\n"
        "  --compute-factor F  compute F x t_block (default 1)\n";

struct opts {
	long sizes[MAX_POINTS];
	int nsizes;
	int write, read, strided;
	const char *dir;
	long reps;
	double factor;
	int have_reps;
};

static enum bm_arg file_arg(void *prog, const char *a, const char *v)
{
	struct opts *o = prog;
	int bad;
	char *end;
	if (!v)
		return BM_ARG_UNKNOWN;
	if (!strcmp(a, "--sizes")) {
		bad = (o->nsizes = bm_parse_sizes(v, o->sizes, MAX_POINTS, BLOCK, 1L << 30)) < 0;
		for (int k = 0; !bad && k < o->nsizes; k++)
			bad = o->sizes[k] % BLOCK != 0;
	} else if (!strcmp(a, "--ops")) {
		o->write = strstr(v, "write") != NULL;
		o->read = strstr(v, "read") != NULL;
		bad = !o->write && !o->read;
	} else if (!strcmp(a, "--layout")) {
		o->strided = !strcmp(v, "strided");
		bad = !o->strided && strcmp(v, "contig");
	} else if (!strcmp(a, "--dir")) {
		o->dir = v;
		bad = !*v;
	} else if (!strcmp(a, "--reps")) {
		bad = bm_parse_int(v, 1, 10000, &o->reps);
		o->have_reps = 1;
	} else if (!strcmp(a, "--compute-factor")) {
		o->factor = strtod(v, &end);
		bad = end == v || *end || !(o->factor > 0) || o->factor > 1000;
	} else {
		return BM_ARG_UNKNOWN;
	}
	return bad ? BM_ARG_BAD : BM_ARG_VALUE;
}

static int parse(int argc, char **argv, struct bm_opts *co, struct opts *o, char *err,
                 size_t errlen)
{
	*o = (struct opts){ .write = 1, .read = 1, .dir = "/tmp", .reps = 5, .factor = 1 };
	if (bm_opts_parse(co, argc, argv, file_arg, o, err, errlen))
		return -1;
	if (!o->nsizes) {
		o->sizes[o->nsizes++] = 64L << 20;
		if (!co->quick) {
			o->sizes[o->nsizes++] = 256L << 20;
			o->sizes[o->nsizes++] = 1L << 30;
		}
	}
	if (co->quick && !o->have_reps)
		o->reps = 3;
	return 0;
}

struct point {
	MPI_File fh;
	int write;
	char *buf;
	MPI_Datatype dt; /* MPI_BYTE, or every other block */
	int count;
};

static double slowest(double t)
{
	double m = 0;
	MPI_Allreduce(&t, &m, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
	return m;
}

static double blocking(const struct bm_ctx *c, struct point *p)
{
	bm_quiet_barrier(MPI_COMM_WORLD);
	double t0 = bm_now_us();
	int rc = p->write ? MPI_File_write_at(p->fh, 0, p->buf, p->count, p->dt, MPI_STATUS_IGNORE)
	                  : MPI_File_read_at(p->fh, 0, p->buf, p->count, p->dt, MPI_STATUS_IGNORE);
	double t = bm_now_us() - t0;
	if (rc != MPI_SUCCESS)
		bm_die(c, "blocking file transfer failed");
	return slowest(t);
}

static double computing(uint64_t iters)
{
	bm_quiet_barrier(MPI_COMM_WORLD);
	double t0 = bm_now_us();
	bm_work(iters);
	return slowest(bm_now_us() - t0);
}

static double overlapped(const struct bm_ctx *c, struct point *p, uint64_t iters)
{
	bm_quiet_barrier(MPI_COMM_WORLD);
	MPI_Request r;
	double t0 = bm_now_us();
	int rc = p->write ? MPI_File_iwrite_at(p->fh, 0, p->buf, p->count, p->dt, &r)
	                  : MPI_File_iread_at(p->fh, 0, p->buf, p->count, p->dt, &r);
	if (rc != MPI_SUCCESS)
		bm_die(c, "non-blocking file transfer failed");
	bm_work(iters);
	rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
	double t = bm_now_us() - t0;
	if (rc != MPI_SUCCESS)
		bm_die(c, "file transfer failed in MPI_Wait");
	return slowest(t);
}

int main(int argc, char **argv)
{
	struct bm_opts co;
	struct opts o;
	char err[256] = "";
	bm_opts_init(&co);
	int prc = parse(argc, argv, &co, &o, err, sizeof err);
	double rate = prc == 0 ? bm_calibrate() : 0;

	struct bm_ctx ctx;
	bm_init(&ctx, "file", &co, rate, &argc, &argv);
	if (prc || co.help)
		return bm_usage_exit(&ctx, usage_text, err);

	long maxsize = 0;
	for (int k = 0; k < o.nsizes; k++)
		if (o.sizes[k] > maxsize)
			maxsize = o.sizes[k];
	size_t bytes = (size_t)maxsize * (o.strided ? 2 : 1);
	char *buf = malloc(bytes);
	double *tb = malloc((size_t)o.reps * sizeof(double));
	double *tc = malloc((size_t)o.reps * sizeof(double));
	double *to = malloc((size_t)o.reps * sizeof(double));
	if (!buf || !tb || !tc || !to)
		bm_die(&ctx, "out of memory");
	memset(buf, 7, bytes);

	char dir[4096];
	snprintf(dir, sizeof dir, "%s/piano-bench-file-XXXXXX", o.dir);
	int made = ctx.rank != 0 || mkdtemp(dir) != NULL;
	MPI_Bcast(&made, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (!made)
		bm_die(&ctx, "cannot make a directory in %s", o.dir);
	MPI_Bcast(dir, sizeof dir, MPI_CHAR, 0, MPI_COMM_WORLD);
	char path[4200];
	snprintf(path, sizeof path, "%s/rank%d", dir, ctx.rank);

	bm_header(&ctx, "piano file transfer benchmark: non-blocking MPI-IO overlapped with "
	                "computation (APSM-2013 section 5)");
	bm_hline(&ctx, "directory %s, one file per rank, %s layout, compute %g x t_block", o.dir,
	         o.strided ? "strided (every other 1 KiB block)" : "contiguous", o.factor);
	bm_hline(&ctx,
	         "%ld repetitions per point; times: slowest rank, ms, median; ratio = "
	         "t_ovl / max(t_comp, t_block)",
	         o.reps);
	if (!co.csv && ctx.rank == 0)
		printf("%6s %8s %6s %10s %10s %10s %7s\n", "op", "size", "ranks", "t_block",
		       "t_comp", "t_ovl", "ratio");
	if (co.csv && ctx.rank == 0)
		printf("bench,label,mpi,dir,op,layout,size,ranks,t_block_ms,t_comp_ms,t_ovl_ms,"
		       "ratio\n");

	MPI_File fh;
	if (MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL,
	                  &fh) != MPI_SUCCESS)
		bm_die(&ctx, "cannot open %s", path);
	for (int k = 0; k < o.nsizes; k++) {
		struct point p = { fh, 1, buf, MPI_BYTE, (int)o.sizes[k] };
		if (o.strided) {
			MPI_Type_vector((int)(o.sizes[k] / BLOCK), BLOCK, 2 * BLOCK, MPI_BYTE,
			                &p.dt);
			MPI_Type_commit(&p.dt);
			p.count = 1;
		}
		for (int op = 0; op < 2; op++) {
			p.write = op == 0;
			if ((p.write && !o.write) || (!p.write && !o.read))
				continue;
			/* Warm-up (and, for reads, the data to read), then the
			 * probe that sizes the computation. */
			struct point w = p;
			w.write = 1;
			blocking(&ctx, &w);
			double probe[3];
			for (int i = 0; i < 3; i++)
				probe[i] = blocking(&ctx, &p);
			uint64_t iters = (uint64_t)(bm_median(probe, 3) * o.factor * rate);
			for (long r = 0; r < o.reps; r++) {
				tb[r] = blocking(&ctx, &p) / 1000;
				tc[r] = computing(iters) / 1000;
				to[r] = overlapped(&ctx, &p, iters) / 1000;
			}
			double b = bm_median(tb, o.reps), c = bm_median(tc, o.reps);
			double v = bm_median(to, o.reps);
			double ratio = v / (b > c ? b : c);
			char sz[32];
			bm_fmt_size(o.sizes[k], sz, sizeof sz);
			if (ctx.rank == 0 && co.csv)
				printf("file,%s,%s,%s,%s,%s,%ld,%d,%.3f,%.3f,%.3f,%.3f\n", co.label,
				       ctx.mpi_name, o.dir, p.write ? "write" : "read",
				       o.strided ? "strided" : "contig", o.sizes[k], ctx.size, b, c,
				       v, ratio);
			else if (ctx.rank == 0)
				printf("%6s %8s %6d %10.2f %10.2f %10.2f %7.2f\n",
				       p.write ? "write" : "read", sz, ctx.size, b, c, v, ratio);
			fflush(stdout);
		}
		if (o.strided)
			MPI_Type_free(&p.dt);
	}
	MPI_File_close(&fh);
	unlink(path);
	MPI_Barrier(MPI_COMM_WORLD);
	if (ctx.rank == 0 && rmdir(dir) != 0)
		fprintf(stderr, "bench_file: cannot remove %s\n", dir);
	free(buf);
	free(tb);
	free(tc);
	free(to);
	MPI_Finalize();
	return 0;
}

/* bench_common2.c: see bench_common2.h. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity, environ, getloadavg */
#endif
#include "bench_common2.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ------------------------------------------------------------- clocks */

double bc_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

double bc_cpu_us(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
}

/* ---------------------------------------------------------- statistics */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double order_stat(const double *v, int n, double p)
{
	double pos = p * (n - 1);
	int lo = (int)floor(pos);
	int hi = lo + 1 < n ? lo + 1 : lo;
	double f = pos - lo;
	return v[lo] + (v[hi] - v[lo]) * f;
}

double bc_quartiles(double *v, int n, double *q1, double *q3)
{
	if (n <= 0) {
		if (q1)
			*q1 = 0;
		if (q3)
			*q3 = 0;
		return 0;
	}
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	if (q1)
		*q1 = order_stat(v, n, 0.25);
	if (q3)
		*q3 = order_stat(v, n, 0.75);
	return order_stat(v, n, 0.5);
}

/* ------------------------------------------------------------- parsing */

static int parse_scaled(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !(v >= 0))
		return -1;
	double mult;
	if (!*end || !strcasecmp(end, "b"))
		mult = 1;
	else if (!strcasecmp(end, "k") || !strcasecmp(end, "kib") || !strcasecmp(end, "kb"))
		mult = 1024;
	else if (!strcasecmp(end, "m") || !strcasecmp(end, "mib") || !strcasecmp(end, "mb"))
		mult = 1024.0 * 1024;
	else if (!strcasecmp(end, "g") || !strcasecmp(end, "gib") || !strcasecmp(end, "gb"))
		mult = 1024.0 * 1024 * 1024;
	else
		return -1;
	v *= mult;
	if (v != floor(v) || v > 1e15)
		return -1;
	*out = v;
	return 0;
}

int bc_parse_size(const char *s, long *out)
{
	double v;
	if (parse_scaled(s, &v) || v < 1 || v > 1024.0 * 1024 * 1024)
		return -1;
	*out = (long)v;
	return 0;
}

int bc_parse_count(const char *s, long long *out)
{
	double v;
	if (parse_scaled(s, &v))
		return -1;
	*out = (long long)v;
	return 0;
}

int bc_parse_int(const char *s, long min, long max, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = (int)v;
	return 0;
}

static int parse_list(const char *arg, long *sizes, long long *counts, int max)
{
	char buf[1024];
	if (strlen(arg) >= sizeof buf)
		return -1;
	strcpy(buf, arg);
	int n = 0;
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == max)
			return -1;
		int rc = sizes ? bc_parse_size(tok, &sizes[n]) : bc_parse_count(tok, &counts[n]);
		if (rc)
			return -1;
		n++;
	}
	return n > 0 ? n : -1;
}

int bc_parse_size_list(const char *arg, long *out, int max)
{
	return parse_list(arg, out, NULL, max);
}

int bc_parse_count_list(const char *arg, long long *out, int max)
{
	return parse_list(arg, NULL, out, max);
}

void bc_fmt_size(long s, char *out, size_t len)
{
	if (s >= (1L << 20) && s % (1L << 20) == 0)
		snprintf(out, len, "%ldMiB", s >> 20);
	else if (s >= 1024 && s % 1024 == 0)
		snprintf(out, len, "%ldKiB", s >> 10);
	else
		snprintf(out, len, "%ldB", s);
}

void bc_opts_init(struct bc_opts *o)
{
	memset(o, 0, sizeof *o);
	const char *l = getenv("PIANO_BENCH_LABEL");
	o->label = l && *l && !strpbrk(l, ",\"\n") ? l : "unlabelled";
}

int bc_common_opt(int argc, char **argv, int *i, struct bc_opts *o, char *err,
                  size_t errlen)
{
	const char *a = argv[*i];
	if (!strcmp(a, "--help") || !strcmp(a, "-h"))
		return 2;
	if (!strcmp(a, "--quick")) {
		o->quick = 1;
		return 1;
	}
	if (!strcmp(a, "--csv")) {
		o->csv = 1;
		return 1;
	}
	if (!strcmp(a, "--bind")) {
		o->bind = 1;
		return 1;
	}
	if (!strcmp(a, "--label")) {
		const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
		if (!v || !*v || strpbrk(v, ",\"\n")) {
			snprintf(err, errlen, "--label needs a non-empty name without , \" or newline");
			return -1;
		}
		o->label = v;
		(*i)++;
		return 1;
	}
	return 0;
}

/* ------------------------------------------------------ compute kernels */

size_t bc_l2_bytes(void)
{
	long v = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
	v = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
	return v > 0 ? (size_t)v : (size_t)1 << 20;
}

static volatile double bc_scalar = 3.0;
volatile double bc_sink;

/* Three arrays in one block at fixed offsets from a page boundary (0, 1088
 * and 2176 bytes mod 4096): the layout, hence 4K aliasing between the
 * stores and the loads, does not depend on where the heap put them (it
 * differs with and without an LD_PRELOADed library). */
static double *carve(void **block, size_t each, int i)
{
	size_t stride = ((each + 4095) & ~(size_t)4095) + 4096;
	return (double *)((char *)*block + (size_t)i * stride + (size_t)i * 1088);
}

static void *alloc3(size_t each)
{
	size_t stride = ((each + 4095) & ~(size_t)4095) + 4096;
	return aligned_alloc(4096, 3 * stride + 4096);
}

int bc_triad_init(struct bc_triad *t, size_t bytes)
{
	size_t n = bytes / (3 * sizeof(double));
	if (n < 1024)
		n = 1024;
	n &= ~(size_t)7;
	t->n = n;
	t->block = alloc3(n * sizeof(double));
	if (!t->block)
		return -1;
	t->a = carve(&t->block, n * sizeof(double), 0);
	t->b = carve(&t->block, n * sizeof(double), 1);
	t->c = carve(&t->block, n * sizeof(double), 2);
	for (size_t i = 0; i < n; i++) {
		t->a[i] = 0;
		t->b[i] = 1.0 + (double)(i % 7);
		t->c[i] = 0.5 * (double)(i % 5);
	}
	return 0;
}

void bc_triad_free(struct bc_triad *t)
{
	free(t->block);
	t->block = NULL;
	t->a = t->b = t->c = NULL;
}

/* The kernels are aligned on 64 bytes: their loops then sit at the same
 * place relative to cache lines and 32-byte fetch blocks in every binary
 * (built against either MPI, with or without other code around them);
 * their speed otherwise changed by up to 2x from one binary to another. */
__attribute__((noinline, aligned(64))) static void triad_sweep(double *restrict a,
                                                  const double *restrict b,
                                                  const double *restrict c,
                                                  size_t n, double s)
{
	for (size_t i = 0; i < n; i++)
		a[i] = b[i] + s * c[i];
}

void bc_triad_run(struct bc_triad *t, uint64_t elems)
{
	while (elems > 0) {
		size_t n = elems < t->n ? (size_t)elems : t->n;
		triad_sweep(t->a, t->b, t->c, n, bc_scalar);
		elems -= n;
	}
	bc_sink = t->a[0];
}

double bc_triad_rate(struct bc_triad *t)
{
	/* Runs of ~1 ms fit in a time slice: on a shared machine some run
	 * undisturbed; the best of them is the speed of a free core. */
	uint64_t elems = t->n;
	double dt;
	bc_triad_run(t, elems); /* warm the cache */
	for (;;) {
		double t0 = bc_now_us();
		bc_triad_run(t, elems);
		dt = bc_now_us() - t0;
		if (dt >= 1000.0)
			break;
		elems *= 2;
	}
	double best = (double)elems / dt;
	for (int i = 0; i < 40; i++) {
		double t0 = bc_now_us();
		bc_triad_run(t, elems);
		double rate = (double)elems / (bc_now_us() - t0);
		if (rate > best)
			best = rate;
	}
	return best;
}

int bc_dgemm_init(struct bc_dgemm *d, int n)
{
	size_t bytes = (size_t)n * (size_t)n * sizeof(double);
	d->n = n;
	d->block = alloc3(bytes);
	if (!d->block)
		return -1;
	d->a = carve(&d->block, bytes, 0);
	d->b = carve(&d->block, bytes, 1);
	d->c = carve(&d->block, bytes, 2);
	for (int i = 0; i < n * n; i++) {
		d->a[i] = 1.0 / (1 + i % 13);
		d->b[i] = 1.0 / (1 + i % 11);
		d->c[i] = 0;
	}
	return 0;
}

void bc_dgemm_free(struct bc_dgemm *d)
{
	free(d->block);
	d->block = NULL;
	d->a = d->b = d->c = NULL;
}

__attribute__((noinline, aligned(64))) static void dgemm_once(const double *restrict a,
                                                 const double *restrict b,
                                                 double *restrict c, int n)
{
	for (int i = 0; i < n; i++)
		for (int k = 0; k < n; k++) {
			double aik = a[i * n + k];
			for (int j = 0; j < n; j++)
				c[i * n + j] += aik * b[k * n + j];
		}
}

void bc_dgemm_run(struct bc_dgemm *d, long calls)
{
	for (long i = 0; i < calls; i++)
		dgemm_once(d->a, d->b, d->c, d->n);
	bc_sink = d->c[0];
}

/* ------------------------------------------------------------------ MPI */

void bc_quiet_wait(MPI_Request *req)
{
	const struct timespec pause = { 0, 20000 };
	for (;;) {
		int flag = 0;
		MPI_Test(req, &flag, MPI_STATUS_IGNORE);
		if (flag)
			return;
		nanosleep(&pause, NULL);
	}
}

void bc_quiet_barrier(MPI_Comm comm)
{
	MPI_Request req;
	MPI_Ibarrier(comm, &req);
	bc_quiet_wait(&req);
	MPI_Barrier(comm);
}

void bc_quiet_allreduce(const double *in, double *out, int n, MPI_Op op, MPI_Comm comm)
{
	MPI_Request req;
	MPI_Iallreduce(in, out, n, MPI_DOUBLE, op, comm, &req);
	bc_quiet_wait(&req);
}

int bc_bind_main_thread(int n)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) == 0)
		return -1;
	n %= CPU_COUNT(&set);
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &set) || n-- > 0)
			continue;
		cpu_set_t one;
		CPU_ZERO(&one);
		CPU_SET(cpu, &one);
		return sched_setaffinity(0, sizeof one, &one) == 0 ? cpu : -1;
	}
	return -1;
}

/* ---------------------------------------------------------------- output */

static void mpi_short_name(const char *first_line, char *out, size_t len)
{
	char ver[48] = "";
	if (!strncmp(first_line, "Open MPI v", 10)) {
		sscanf(first_line + 10, "%47[^, \t]", ver);
		snprintf(out, len, "openmpi-%s", ver);
	} else if (!strncmp(first_line, "MPICH Version:", 14)) {
		sscanf(first_line + 14, " %47[^, \t]", ver);
		snprintf(out, len, "mpich-%s", ver);
	} else {
		snprintf(out, len, "%.*s", (int)len - 1, first_line);
		for (char *c = out; *c; c++)
			if (*c == ',' || *c == ' ' || *c == '\t' || *c == '"')
				*c = '_';
	}
}

void bc_ctx_init(struct bc_ctx *c, const char *bench, const struct bc_opts *o,
                 int provided)
{
	memset(c, 0, sizeof *c);
	c->bench = bench;
	c->opts = *o;
	c->provided = provided;
	MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &c->size);
	c->bound_cpu = o->bind ? bc_bind_main_thread(c->rank) : -1;
	char v[MPI_MAX_LIBRARY_VERSION_STRING] = "";
	int vlen = 0;
	MPI_Get_library_version(v, &vlen);
	v[strcspn(v, "\r\n")] = 0;
	for (char *p = v; *p; p++)
		if (*p == '\t')
			*p = ' ';
	snprintf(c->version, sizeof c->version, "%.*s", (int)sizeof c->version - 1, v);
	mpi_short_name(c->version, c->mpi, sizeof c->mpi);
}

static int printing(const struct bc_ctx *c)
{
	return c->rank == 0 && !c->opts.csv;
}

void bc_note(struct bc_ctx *c, const char *fmt, ...)
{
	if (!printing(c))
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("# ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
}

static const char *level_name(int level)
{
	switch (level) {
	case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
	case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
	case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
	case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
	default: return "unknown";
	}
}

void bc_print_header(struct bc_ctx *c, const char *title)
{
	/* Collective part first: host names and bindings of every rank. */
	char host[MPI_MAX_PROCESSOR_NAME] = "";
	int hlen = 0;
	MPI_Get_processor_name(host, &hlen);
	char *hosts = NULL;
	int *cpus = NULL;
	if (c->rank == 0) {
		hosts = calloc((size_t)c->size, MPI_MAX_PROCESSOR_NAME);
		cpus = calloc((size_t)c->size, sizeof *cpus);
		if (!hosts || !cpus) {
			fprintf(stderr, "%s: out of memory\n", c->bench);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	MPI_Gather(host, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, hosts, MPI_MAX_PROCESSOR_NAME,
	           MPI_CHAR, 0, MPI_COMM_WORLD);
	MPI_Gather(&c->bound_cpu, 1, MPI_INT, cpus, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (!printing(c)) {
		free(hosts);
		free(cpus);
		return;
	}
	printf("# %s\n", title);
	printf("# MPI: %s\n", c->version);
	printf("# label: %s\n", c->opts.label);
	/* Distinct hosts, in rank order. */
	printf("# host:");
	for (int r = 0; r < c->size; r++) {
		const char *h = hosts + (size_t)r * MPI_MAX_PROCESSOR_NAME;
		int seen = 0;
		for (int q = 0; q < r && !seen; q++)
			seen = !strcmp(h, hosts + (size_t)q * MPI_MAX_PROCESSOR_NAME);
		if (!seen)
			printf(" %s", h);
	}
	printf("\n# nproc: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
	printf("# ranks: %d\n", c->size);
	double load[3];
	if (getloadavg(load, 3) == 3)
		printf("# load average at start: %.2f %.2f %.2f\n", load[0], load[1], load[2]);
	printf("# thread level: MPI_THREAD_MULTIPLE requested, %s provided\n",
	       level_name(c->provided));
	printf("# PIANO_* env:");
	int any = 0;
	for (char **e = environ; e && *e; e++)
		if (!strncmp(*e, "PIANO_", 6) && strncmp(*e, "PIANO_BENCH_LABEL=", 18)) {
			printf(" %s", *e);
			any = 1;
		}
	printf("%s\n", any ? "" : " (none)");
	const char *pre = getenv("LD_PRELOAD");
	printf("# piano layer: %s\n", pre && strstr(pre, "libpiano-mpi")
	       ? "preloaded (piano-run)" : "not preloaded");
	const char *async = getenv("MPIR_CVAR_ASYNC_PROGRESS");
	if (async)
		printf("# MPIR_CVAR_ASYNC_PROGRESS=%s\n", async);
	if (c->opts.bind) {
		printf("# binding: main thread of rank r on CPU:");
		for (int r = 0; r < c->size; r++)
			printf(" %d", cpus[r]);
		printf(" (-1: failed); other threads as launched\n");
	} else {
		printf("# binding: as launched\n");
	}
	fflush(stdout);
	free(hosts);
	free(cpus);
}

void bc_table_begin(struct bc_ctx *c, const struct bc_col *cols, int ncols)
{
	c->cols = cols;
	c->ncols = ncols > BC_MAX_COLS ? BC_MAX_COLS : ncols;
	c->cell = 0;
	c->len = 0;
	if (c->rank != 0)
		return;
	if (c->opts.csv) {
		fputs("bench,label,mpi", stdout);
		for (int i = 0; i < c->ncols; i++)
			printf(",%s", cols[i].csv ? cols[i].csv : cols[i].name);
		fputc('\n', stdout);
	} else {
		fputs("#", stdout);
		for (int i = 0; i < c->ncols; i++)
			printf(" %*s", cols[i].width, cols[i].name);
		fputc('\n', stdout);
	}
	fflush(stdout);
}

static void cell(struct bc_ctx *c, const char *text)
{
	if (c->rank != 0 || c->cell >= c->ncols)
		return;
	size_t room = sizeof c->line - c->len;
	int n;
	if (c->opts.csv)
		n = snprintf(c->line + c->len, room, "%s%s", c->cell ? "," : "", text);
	else
		n = snprintf(c->line + c->len, room, " %*s", c->cols[c->cell].width, text);
	if (n > 0)
		c->len += (size_t)n < room ? (size_t)n : room - 1;
	c->cell++;
}

void bc_row_str(struct bc_ctx *c, const char *s)
{
	cell(c, s);
}

void bc_row_f(struct bc_ctx *c, double v)
{
	char buf[64];
	snprintf(buf, sizeof buf, c->opts.csv ? "%.4f" : "%.2f", v);
	cell(c, buf);
}

void bc_row_int(struct bc_ctx *c, long long v)
{
	char buf[64];
	snprintf(buf, sizeof buf, "%lld", v);
	cell(c, buf);
}

void bc_row_size(struct bc_ctx *c, long bytes)
{
	char buf[64] = "-";
	if (c->opts.csv)
		snprintf(buf, sizeof buf, "%ld", bytes > 0 ? bytes : 0);
	else if (bytes > 0)
		bc_fmt_size(bytes, buf, sizeof buf);
	cell(c, buf);
}

void bc_row_end(struct bc_ctx *c)
{
	if (c->rank == 0) {
		if (c->opts.csv)
			printf("%s,%s,%s,%s\n", c->bench, c->opts.label, c->mpi, c->line);
		else
			printf(" %s\n", c->line);
		fflush(stdout);
	}
	c->cell = 0;
	c->len = 0;
	c->line[0] = 0;
}

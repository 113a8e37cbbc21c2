/*
 * bench_mpi_common: shared helpers of the MPI benchmarks (see the header).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, CPU_*, RTLD_DEFAULT, dladdr */
#endif
#include "bench_mpi_common.h"

#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

/* ------------------------------------------------------------- clocks */

double bm_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

/* ------------------------------------------------------------- statistics */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

double bm_quantile_sorted(const double *v, long n, double q)
{
	if (n <= 0)
		return NAN;
	double pos = q * (double)(n - 1);
	long lo = (long)floor(pos);
	if (lo >= n - 1)
		return v[n - 1];
	double f = pos - (double)lo;
	return v[lo] + (v[lo + 1] - v[lo]) * f;
}

void bm_stats(double *v, long n, struct bm_stats *s)
{
	s->n = n;
	if (n <= 0) {
		s->min = s->p25 = s->median = s->p75 = s->max = NAN;
		return;
	}
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	s->min = v[0];
	s->max = v[n - 1];
	s->p25 = bm_quantile_sorted(v, n, 0.25);
	s->median = bm_quantile_sorted(v, n, 0.5);
	s->p75 = bm_quantile_sorted(v, n, 0.75);
}

/* ------------------------------------------------------ calibrated work */

/* The seed is volatile so that the chain cannot be precomputed; every step
 * depends on the previous one, so nothing vectorises or overlaps. */
static volatile double work_seed = 1.0;

double bm_work(uint64_t iters)
{
	double x = work_seed;
	for (uint64_t i = 0; i < iters; i++)
		x = x * 0.999999999 + 1e-9;
	return x;
}

static volatile double work_sink;

double bm_calibrate(void)
{
	uint64_t iters = 1u << 12;
	double t;
	for (;;) { /* runs of about 1 ms */
		double t0 = bm_now_us();
		work_sink = bm_work(iters);
		t = bm_now_us() - t0;
		if (t >= 1000.0)
			break;
		iters *= 2;
	}
	double best = (double)iters / t;
	for (int i = 0; i < 60; i++) {
		double t0 = bm_now_us();
		work_sink = bm_work(iters);
		double dt = bm_now_us() - t0;
		if (dt > 0 && (double)iters / dt > best)
			best = (double)iters / dt;
	}
	return best;
}

/* ---------------------------------------------------- compute threads */

struct bm_worker {
	_Alignas(64) atomic_uint_fast64_t done;
	struct bm_team *team;
	double sink;
};

static void *worker_main(void *arg)
{
	struct bm_worker *w = arg;
	struct bm_team *t = w->team;
	double acc = 0;
	while (!__atomic_load_n(&t->stop, __ATOMIC_RELAXED)) {
		acc += bm_work(t->chunk);
		atomic_fetch_add_explicit(&w->done, t->chunk, memory_order_relaxed);
	}
	w->sink = acc;
	return NULL;
}

int bm_team_start(struct bm_team *t, int n, double rate, double chunk_us)
{
	memset(t, 0, sizeof *t);
	t->n = 0;
	t->chunk = (uint64_t)(rate * chunk_us);
	if (t->chunk < 1)
		t->chunk = 1;
	if (n <= 0)
		return 0;
	t->tids = calloc((size_t)n, sizeof *t->tids);
	t->w = aligned_alloc(64, (size_t)n * sizeof *t->w);
	if (!t->tids || !t->w) {
		free(t->tids);
		free(t->w);
		t->tids = NULL;
		t->w = NULL;
		return -1;
	}
	memset(t->w, 0, (size_t)n * sizeof *t->w);
	for (int i = 0; i < n; i++) {
		atomic_init(&t->w[i].done, 0);
		t->w[i].team = t;
		if (pthread_create(&t->tids[i], NULL, worker_main, &t->w[i])) {
			bm_team_stop(t);
			return -1;
		}
		t->n = i + 1;
	}
	return 0;
}

uint64_t bm_team_iters(const struct bm_team *t)
{
	uint64_t sum = 0;
	for (int i = 0; i < t->n; i++)
		sum += atomic_load_explicit(&t->w[i].done, memory_order_relaxed);
	return sum;
}

void bm_team_stop(struct bm_team *t)
{
	__atomic_store_n(&t->stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < t->n; i++)
		pthread_join(t->tids[i], NULL);
	free(t->tids);
	free(t->w);
	t->tids = NULL;
	t->w = NULL;
	t->n = 0;
}

int bm_affinity_count(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) < 1)
		return 1;
	return CPU_COUNT(&set);
}

void bm_affinity_string(char *out, size_t len)
{
	cpu_set_t set;
	size_t used = 0;
	out[0] = 0;
	if (sched_getaffinity(0, sizeof set, &set) != 0) {
		snprintf(out, len, "?");
		return;
	}
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		int last = cpu;
		while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set))
			last++;
		int w = last == cpu ? snprintf(out + used, len - used, "%s%d", used ? "," : "", cpu)
		                    : snprintf(out + used, len - used, "%s%d-%d", used ? "," : "",
		                               cpu, last);
		if (w < 0 || (size_t)w >= len - used)
			return;
		used += (size_t)w;
		cpu = last;
	}
}

/* -------------------------------------------------------------- options */

const char bm_common_usage[] =
	"  --quick          small configuration (whole program well under 20 s)\n"
	"  --csv            CSV with a header row (bench,label,mpi,...) instead of the table\n"
	"  --label NAME     variant label (default $PIANO_BENCH_LABEL, else \"unlabelled\")\n"
	"  --help           this text\n";

void bm_opts_init(struct bm_opts *o)
{
	memset(o, 0, sizeof *o);
	const char *env = getenv("PIANO_BENCH_LABEL");
	o->label = env && *env && !strpbrk(env, ",\"\n") ? env : "unlabelled";
}

int bm_opts_arg(struct bm_opts *o, int argc, char **argv, int *i, char *err, size_t errlen)
{
	const char *a = argv[*i];
	if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
		o->help = 1;
		return 1;
	}
	if (!strcmp(a, "--quick")) {
		o->quick = 1;
		return 1;
	}
	if (!strcmp(a, "--csv")) {
		o->csv = 1;
		return 1;
	}
	if (!strcmp(a, "--label")) {
		const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
		if (!v || !*v || strpbrk(v, ",\"\n")) {
			snprintf(err, errlen, "--label needs a non-empty name without comma or quote");
			return -1;
		}
		o->label = v;
		(*i)++;
		return 1;
	}
	return 0;
}

int bm_parse_int(const char *s, long min, long maxval, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > maxval)
		return -1;
	*out = v;
	return 0;
}

int bm_parse_double(const char *s, double min, double maxval, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= min) || !(v <= maxval))
		return -1;
	*out = v;
	return 0;
}

static int parse_size(const char *s, long *out)
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
	if (v != floor(v) || v > 2147483647.0)
		return -1;
	*out = (long)v;
	return 0;
}

/* Calls parse(tok) for each comma-separated token. */
static int split_list(const char *arg, int max, int (*each)(const char *, int, void *),
                      void *ctx)
{
	char buf[1024];
	if (!arg || strlen(arg) >= sizeof buf)
		return -1;
	strcpy(buf, arg);
	int n = 0;
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == max || each(tok, n, ctx))
			return -1;
		n++;
	}
	return n > 0 ? n : -1;
}

struct size_ctx { long *out, min, max; };
static int each_size(const char *tok, int n, void *p)
{
	struct size_ctx *c = p;
	long v;
	if (parse_size(tok, &v) || v < c->min || v > c->max)
		return -1;
	c->out[n] = v;
	return 0;
}

int bm_parse_sizes(const char *arg, long *out, int max, long min, long maxval)
{
	struct size_ctx c = { out, min, maxval };
	return split_list(arg, max, each_size, &c);
}

struct int_ctx { int *out, min, max; };
static int each_int(const char *tok, int n, void *p)
{
	struct int_ctx *c = p;
	long v;
	if (bm_parse_int(tok, c->min, c->max, &v))
		return -1;
	c->out[n] = (int)v;
	return 0;
}

int bm_parse_ints(const char *arg, int *out, int max, int min, int maxval)
{
	struct int_ctx c = { out, min, maxval };
	return split_list(arg, max, each_int, &c);
}

void bm_fmt_size(long s, char *out, size_t len)
{
	if (s >= (1L << 20) && s % (1L << 20) == 0)
		snprintf(out, len, "%ldMiB", s >> 20);
	else if (s >= 1024 && s % 1024 == 0)
		snprintf(out, len, "%ldKiB", s >> 10);
	else
		snprintf(out, len, "%ldB", s);
}

/* ---------------------------------------------------------------- MPI */

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
		for (char *p = out; *p; p++)
			if (*p == ',' || *p == ' ' || *p == '\t' || *p == '"')
				*p = '_';
	}
}

void bm_init(struct bm_ctx *c, const char *bench, const struct bm_opts *o, double rate,
             int *argc, char ***argv)
{
	memset(c, 0, sizeof *c);
	c->provided = MPI_THREAD_SINGLE;
	MPI_Init_thread(argc, argv, MPI_THREAD_MULTIPLE, &c->provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &c->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &c->size);
	c->bench = bench;
	c->opts = *o;
	c->rate = rate;
	c->rate0 = rate;
	MPI_Bcast(&c->rate0, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	int vlen = 0;
	char version[MPI_MAX_LIBRARY_VERSION_STRING];
	version[0] = 0;
	MPI_Get_library_version(version, &vlen);
	version[strcspn(version, "\r\n")] = 0;
	for (char *p = version; *p; p++)
		if (*p == '\t')
			*p = ' ';
	snprintf(c->version, sizeof c->version, "%.*s", (int)sizeof c->version - 1, version);
	mpi_short_name(c->version, c->mpi_name, sizeof c->mpi_name);
	c->nproc = sysconf(_SC_NPROCESSORS_ONLN);
}

int bm_usage_exit(struct bm_ctx *c, const char *usage, const char *err)
{
	int code = c->opts.help ? 0 : 2;
	if (c->rank == 0) {
		if (c->opts.help)
			printf("%s%s", usage, bm_common_usage);
		else
			fprintf(stderr, "bench_%s: %s\n%s%s", c->bench,
			        err && *err ? err : "bad arguments", usage, bm_common_usage);
	}
	MPI_Finalize();
	return code;
}

int bm_require_ranks(struct bm_ctx *c, int n)
{
	if (c->size == n)
		return 0;
	if (c->rank == 0)
		fprintf(stderr, "bench_%s: needs exactly %d MPI processes, got %d\n", c->bench, n,
		        c->size);
	return 2;
}

void bm_die(const struct bm_ctx *c, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "bench_%s: rank %d: ", c->bench, c->rank);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
	MPI_Abort(MPI_COMM_WORLD, 1);
	abort();
}

void bm_hline(const struct bm_ctx *c, const char *fmt, ...)
{
	if (c->rank != 0 || c->opts.csv)
		return;
	va_list ap;
	va_start(ap, fmt);
	fputs("# ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
}

/* What piano is doing in this process: nothing if its library is absent;
 * otherwise where it was loaded from and whether its engine runs. */
static void piano_status(char *out, size_t len)
{
	void *sym = dlsym(RTLD_DEFAULT, "piano_initialized");
	if (!sym) {
		snprintf(out, len, "not loaded (native MPI)");
		return;
	}
	int (*initialized)(void);
	*(void **)&initialized = sym;
	Dl_info info;
	const char *lib = "?";
	if (dladdr(sym, &info) && info.dli_fname) {
		lib = strrchr(info.dli_fname, '/');
		lib = lib ? lib + 1 : info.dli_fname;
	}
	snprintf(out, len, "loaded (%s), engine %s", lib,
	         initialized() ? "initialised" : "not initialised");
}

void bm_header(const struct bm_ctx *c, const char *title)
{
	enum { HOST = 64, AFF = 64 };
	int n = c->size < BM_MAX_RANKS_DESCRIBED ? c->size : BM_MAX_RANKS_DESCRIBED;
	char mine[HOST + AFF];
	memset(mine, 0, sizeof mine);
	char host[MPI_MAX_PROCESSOR_NAME];
	int hlen = 0;
	MPI_Get_processor_name(host, &hlen);
	snprintf(mine, HOST, "%.*s", HOST - 1, host);
	bm_affinity_string(mine + HOST, AFF);
	double rate = c->rate;
	char *all = c->rank == 0 ? calloc((size_t)c->size, sizeof mine) : NULL;
	double *rates = c->rank == 0 ? calloc((size_t)c->size, sizeof *rates) : NULL;
	MPI_Gather(mine, (int)sizeof mine, MPI_CHAR, all, (int)sizeof mine, MPI_CHAR, 0,
	           MPI_COMM_WORLD);
	MPI_Gather(&rate, 1, MPI_DOUBLE, rates, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
	if (c->rank != 0 || c->opts.csv) {
		free(all);
		free(rates);
		return;
	}
	printf("# %s\n", title);
	printf("# MPI: %s\n", c->version);
	printf("# label: %s\n", c->opts.label);
	printf("# ranks: %d\n", c->size);
	for (int r = 0; r < n; r++)
		printf("# rank %d: host %s, cpus %s\n", r, all + (size_t)r * sizeof mine,
		       all + (size_t)r * sizeof mine + HOST);
	printf("# nproc: %ld\n", c->nproc);
	printf("# thread level: MPI_THREAD_MULTIPLE requested, %s provided\n",
	       level_name(c->provided));
	if (c->rate > 0) {
		printf("# compute: dependent FP chain calibrated before MPI_Init, iterations/us:");
		for (int r = 0; r < n; r++)
			printf(" %.1f", rates[r]);
		printf("\n");
	}
	char ps[256];
	piano_status(ps, sizeof ps);
	printf("# piano: %s\n", ps);
	int any = 0;
	printf("# env:");
	for (char **e = environ; e && *e; e++) {
		if (!strncmp(*e, "PIANO_", 6) || !strncmp(*e, "MPIR_CVAR_", 10)) {
			printf(" %s", *e);
			any = 1;
		}
	}
	printf("%s\n", any ? "" : " (no PIANO_* or MPIR_CVAR_* variable set)");
	double load[3];
	if (getloadavg(load, 3) == 3)
		printf("# load average at start: %.2f %.2f %.2f\n", load[0], load[1], load[2]);
	free(all);
	free(rates);
}

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

long bm_pingpong(const struct bm_pp *p)
{
	const long total = p->warmup + (p->iters > 0 ? p->iters : 1);
	long min_total = p->warmup + (p->min_timed > 0 ? p->min_timed : 1);
	if (min_total > total)
		min_total = total;
	long timed = 0;
	int last = 0;
	const long cap = p->lat_cap > 0 ? p->lat_cap : total - p->warmup;
	uint64_t rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)(unsigned)p->tag;
	if (p->initiator) {
		const double deadline = bm_now_us() + p->budget_s * 1e6;
		double t_first = 0;
		for (long i = 0; !last; i++) {
			if (p->gap_us > 0 && i > 0) {
				double g = 2 * p->gap_us * (double)(xorshift(&rng) >> 11) * 0x1p-53;
				struct timespec ts = { (time_t)(g / 1e6), (long)(fmod(g, 1e6) * 1e3) };
				while (nanosleep(&ts, &ts) != 0)
					;
			}
			if (i == p->warmup && p->mark)
				p->mark(p->mark_arg, 0);
			double t0 = bm_now_us();
			if (i == p->warmup)
				t_first = t0;
			last = bm_is_last(i, total, min_total, t0, deadline) &&
			       (p->min_time_s <= 0 ||
			        (i >= p->warmup && t0 - t_first >= p->min_time_s * 1e6));
			p->sbuf[0] = last ? BM_MSG_LAST : BM_MSG_MORE;
			if (p->nonblocking) {
				MPI_Request r[2];
				MPI_Irecv(p->rbuf, p->count, MPI_CHAR, p->peer, p->tag, p->comm, &r[1]);
				MPI_Isend(p->sbuf, p->count, MPI_CHAR, p->peer, p->tag, p->comm, &r[0]);
				MPI_Wait(&r[0], MPI_STATUS_IGNORE);
				MPI_Wait(&r[1], MPI_STATUS_IGNORE);
			} else {
				MPI_Send(p->sbuf, p->count, MPI_CHAR, p->peer, p->tag, p->comm);
				MPI_Recv(p->rbuf, p->count, MPI_CHAR, p->peer, p->tag, p->comm,
				         MPI_STATUS_IGNORE);
			}
			double t1 = bm_now_us();
			if (i < p->warmup)
				continue;
			if (timed < cap) {
				p->lat[timed] = (t1 - t0) / 2;
			} else { /* reservoir sampling */
				uint64_t j = xorshift(&rng) % (uint64_t)(timed + 1);
				if (j < (uint64_t)cap)
					p->lat[j] = (t1 - t0) / 2;
			}
			timed++;
		}
	} else {
		p->sbuf[0] = BM_MSG_MORE;
		for (long i = 0; !last; i++) {
			if (i == p->warmup && p->mark)
				p->mark(p->mark_arg, 0);
			if (p->nonblocking) {
				MPI_Request r;
				MPI_Irecv(p->rbuf, p->count, MPI_CHAR, p->peer, p->tag, p->comm, &r);
				MPI_Wait(&r, MPI_STATUS_IGNORE);
				MPI_Isend(p->sbuf, p->count, MPI_CHAR, p->peer, p->tag, p->comm, &r);
				MPI_Wait(&r, MPI_STATUS_IGNORE);
			} else {
				MPI_Recv(p->rbuf, p->count, MPI_CHAR, p->peer, p->tag, p->comm,
				         MPI_STATUS_IGNORE);
				MPI_Send(p->sbuf, p->count, MPI_CHAR, p->peer, p->tag, p->comm);
			}
			if (i >= p->warmup)
				timed++;
			if (p->rbuf[0] == BM_MSG_LAST) {
				last = 1;
			} else if (p->rbuf[0] != BM_MSG_MORE) {
				fprintf(stderr, "bench: corrupted ping-pong message (first byte %d)\n",
				        p->rbuf[0]);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
		}
	}
	if (p->mark)
		p->mark(p->mark_arg, 1);
	return timed;
}

/* --------------------------------------------------------------- output */

static int col_width(const struct bm_col *col)
{
	int w = col->width;
	int l = (int)strlen(col->name);
	if (w <= 0)
		w = l > 10 ? l : 10;
	return w < l ? l : w;
}

void bm_table_begin(struct bm_table *t, const struct bm_ctx *c, const struct bm_col *cols,
                    int ncols)
{
	t->c = c;
	t->cols = cols;
	t->ncols = ncols;
	if (c->rank != 0)
		return;
	if (c->opts.csv) {
		printf("bench,label,mpi");
		for (int i = 0; i < ncols; i++)
			printf(",%s", cols[i].name);
	} else {
		printf("#");
		for (int i = 0; i < ncols; i++)
			printf(" %*s", col_width(&cols[i]), cols[i].name);
	}
	printf("\n");
	fflush(stdout);
}

void bm_table_row(const struct bm_table *t, ...)
{
	if (t->c->rank != 0)
		return;
	const int csv = t->c->opts.csv;
	va_list ap;
	va_start(ap, t);
	if (csv)
		printf("%s,%s,%s", t->c->bench, t->c->opts.label, t->c->mpi_name);
	else
		printf(" ");
	for (int i = 0; i < t->ncols; i++) {
		const struct bm_col *col = &t->cols[i];
		int w = csv ? 0 : col_width(col);
		const char *sep = csv ? "," : " ";
		switch (col->type) {
		case BM_COL_STR:
			printf("%s%*s", sep, w, va_arg(ap, const char *));
			break;
		case BM_COL_INT:
			printf("%s%*ld", sep, w, va_arg(ap, long));
			break;
		case BM_COL_F2: {
			double v = va_arg(ap, double);
			if (isnan(v))
				printf("%s%*s", sep, w, csv ? "" : "-");
			else
				printf("%s%*.2f", sep, w, v);
			break;
		}
		}
	}
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

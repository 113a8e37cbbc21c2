/* SPDX-License-Identifier: BSD-3-Clause */
#include "common.h"

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct bench_opts bench_opt;
int bench_rows_printed;

/* -------------------------------------------------------------- time */

uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
	                       .tv_nsec = (long)(ns % 1000000000u) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

void spin_ns(uint64_t ns)
{
	uint64_t end = now_ns() + ns;
	while (now_ns() < end)
		cpu_relax();
}

uint64_t rand_next(uint64_t *state)
{
	uint64_t x = *state ? *state : 0x9e3779b97f4a7c15u;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	*state = x;
	return x;
}

/* -------------------------------------------------------- statistics */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double quantile(const double *v, size_t n, double q)
{
	if (n == 0)
		return 0.0;
	double pos = q * (double)(n - 1);
	size_t i = (size_t)pos;
	if (i + 1 >= n)
		return v[n - 1];
	double frac = pos - (double)i;
	return v[i] + (v[i + 1] - v[i]) * frac;
}

void summarize(double *v, size_t n, struct summary *s)
{
	memset(s, 0, sizeof(*s));
	s->n = n;
	if (n == 0)
		return;
	qsort(v, n, sizeof(*v), cmp_double);
	s->min = v[0];
	s->q1 = quantile(v, n, 0.25);
	s->med = quantile(v, n, 0.5);
	s->q3 = quantile(v, n, 0.75);
	s->p90 = quantile(v, n, 0.90);
	s->p99 = quantile(v, n, 0.99);
	s->max = v[n - 1];
}

double median_of(double *v, size_t n)
{
	struct summary s;
	summarize(v, n, &s);
	return s.med;
}

/* ----------------------------------------------------- configuration */

/* Every field NULL: the registry's defaults (bcfg_pairs). */
const struct bcfg bcfg_default = { 0 };

#define NVARS 8

/* The built-in default of a setting, from the registry's table. */
static const char *registry_default(const char *name)
{
	int n = 0;
	struct piano_setting st;
	if (piano_setting_count(&n) == 0)
		for (int i = 0; i < n; i++)
			if (piano_setting_get(i, &st) == 0 && strcmp(st.name, name) == 0)
				return st.def;
	return "";
}

static void bcfg_pairs(const struct bcfg *c, const char *names[NVARS], const char *vals[NVARS])
{
	static const char *const n[NVARS] = {
		"PIANO_PROGRESSION", "PIANO_IDLE_LEVEL", "PIANO_IDLE_PERIOD_US",
		"PIANO_IDLE_COEF", "PIANO_TIMER_PERIOD_US", "PIANO_SPIN_US",
		"PIANO_BLOCK_HELPERS", "PIANO_QUEUE_LEVEL",
	};
	const char *v[NVARS] = {
		c->progression, c->idle_level, c->idle_period_us, c->idle_coef,
		c->timer_period_us, c->spin_us, c->block_helpers, c->queue_level,
	};
	for (int i = 0; i < NVARS; i++) {
		names[i] = n[i];
		vals[i] = v[i] ? v[i] : registry_default(n[i]);
	}
}

/* Overrides, not the environment: a run does not depend on the caller's
 * PIANO_* variables for these settings, and the process environment is
 * left alone. */
int bench_piano_init(const struct bcfg *c)
{
	const char *names[NVARS], *vals[NVARS];
	struct piano_override ov[NVARS];
	bcfg_pairs(c, names, vals);
	for (int i = 0; i < NVARS; i++)
		ov[i] = (struct piano_override){ names[i], vals[i] };
	if (piano_initialized()) {
		fprintf(stderr, "piano-bench-core: piano is already initialised: "
		                "the new configuration would be ignored\n");
		return -1;
	}
	PCHECK(piano_init_with(ov, NVARS));
	return 0;
}

int bench_piano_finalize(void)
{
	PCHECK(piano_finalize());
	return 0;
}

void bcfg_format(const struct bcfg *c, char *buf, size_t len)
{
	const char *names[NVARS], *vals[NVARS];
	bcfg_pairs(c, names, vals);
	size_t off = 0;
	buf[0] = '\0';
	for (int i = 0; i < NVARS && off < len; i++) {
		int w = snprintf(buf + off, len - off, "%s%s=%s", i ? " " : "", names[i], vals[i]);
		if (w < 0)
			break;
		off += (size_t)w;
	}
}

/* --------------------------------------------------- background load */

void load_sample(struct load_sample *s)
{
	memset(s, 0, sizeof(*s));
	unsigned long long v[8] = { 0 };
	FILE *f = fopen("/proc/stat", "r");
	if (!f)
		return;
	int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
	               &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n != 8)
		return;
	/* user nice system idle iowait irq softirq steal */
	s->busy = v[0] + v[1] + v[2] + v[5] + v[6];
	s->steal = v[7];
	s->total = s->busy + v[3] + v[4] + v[7];
	f = fopen("/proc/self/stat", "r");
	if (!f)
		return;
	/* The command name (field 2) may hold spaces: skip past its ')'. */
	char buf[1024];
	size_t len = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[len] = '\0';
	char *p = strrchr(buf, ')');
	unsigned long long ut, st;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut,
	                 &st) != 2)
		return;
	s->self = ut + st;
	s->ok = true;
}

bool load_delta(const struct load_sample *a, const struct load_sample *b, double *other_pct,
                double *steal_pct)
{
	if (!a->ok || !b->ok || b->total <= a->total)
		return false;
	double total = (double)(b->total - a->total);
	double other = (double)(b->busy - a->busy) - (double)(b->self - a->self);
	if (other < 0)
		other = 0;
	*other_pct = 100.0 * other / total;
	*steal_pct = 100.0 * (double)(b->steal - a->steal) / total;
	return true;
}

/* --------------------------------------------------------------- CPUs */

static cpu_set_t proc_set;
static int proc_cpus[CPU_SETSIZE];
static int proc_ncpus = -1;

static void cpus_load(void)
{
	if (proc_ncpus >= 0)
		return;
	proc_ncpus = 0;
	CPU_ZERO(&proc_set);
	if (sched_getaffinity(0, sizeof(proc_set), &proc_set) != 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		for (long i = 0; i < n && i < CPU_SETSIZE; i++)
			CPU_SET((int)i, &proc_set);
	}
	for (int i = 0; i < CPU_SETSIZE; i++)
		if (CPU_ISSET(i, &proc_set))
			proc_cpus[proc_ncpus++] = i;
	if (proc_ncpus == 0) {
		CPU_SET(0, &proc_set);
		proc_cpus[proc_ncpus++] = 0;
	}
}

int bench_ncpus(void)
{
	cpus_load();
	return proc_ncpus;
}

int pin_self(int i)
{
	cpus_load();
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(proc_cpus[(i % proc_ncpus + proc_ncpus) % proc_ncpus], &set);
	return pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

int unpin_self(void)
{
	cpus_load();
	return pthread_setaffinity_np(pthread_self(), sizeof(proc_set), &proc_set);
}

/* ------------------------------------------------------------- tables */

void table_begin(struct table *t, const char *id, const char *title)
{
	memset(t, 0, sizeof(*t));
	t->id = id;
	char host[256] = "unknown";
	if (gethostname(host, sizeof(host)) != 0)
		strcpy(host, "unknown");
	host[sizeof(host) - 1] = '\0';
	printf("# piano-bench-core: %s: %s\n", id, title);
	printf("# piano version: %s\n", PIANO_VERSION_STRING);
	printf("# host: %s, nproc: %d (online %ld)\n", host, bench_ncpus(),
	       sysconf(_SC_NPROCESSORS_ONLN));
	printf("# mode: %s\n", bench_opt.quick ? "quick" : "full");
}

void table_note(struct table *t, const char *fmt, ...)
{
	(void)t;
	va_list ap;
	va_start(ap, fmt);
	fputs("# ", stdout);
	vprintf(fmt, ap);
	fputc('\n', stdout);
	va_end(ap);
}

void table_columns(struct table *t, const struct col *cols, int ncols)
{
	if (ncols > TABLE_MAXCOLS)
		ncols = TABLE_MAXCOLS;
	t->cols = cols;
	t->ncols = ncols;
	if (bench_opt.csv) {
		fputs("bench", stdout);
		for (int i = 0; i < ncols; i++)
			printf(",%s", cols[i].name);
		fputc('\n', stdout);
		fflush(stdout);
		return;
	}
	for (int i = 0; i < ncols; i++) {
		int w = (int)strlen(cols[i].name);
		if (i == 0)
			w += 2; /* "# " prefix of the header line */
		t->width[i] = cols[i].width > w ? cols[i].width : w;
	}
	fputs("# ", stdout);
	for (int i = 0; i < ncols; i++)
		printf("%s%*s", i ? "  " : "", i ? t->width[i] : t->width[i] - 2, cols[i].name);
	fputc('\n', stdout);
	fflush(stdout);
}

static void format_cell(const struct cell *c, char *buf, size_t len)
{
	switch (c->kind) {
	case CELL_INT: snprintf(buf, len, "%lld", c->i); break;
	case CELL_F2: snprintf(buf, len, "%.2f", c->f); break;
	default: snprintf(buf, len, "%s", c->s ? c->s : "-"); break;
	}
}

void table_row(struct table *t, const struct cell *cells)
{
	char buf[128];
	if (bench_opt.csv) {
		fputs(t->id, stdout);
		for (int i = 0; i < t->ncols; i++) {
			format_cell(&cells[i], buf, sizeof(buf));
			if (strpbrk(buf, ",\"")) {
				fputs(",\"", stdout);
				for (const char *p = buf; *p; p++) {
					if (*p == '"')
						fputc('"', stdout);
					fputc(*p, stdout);
				}
				fputc('"', stdout);
			} else {
				printf(",%s", buf);
			}
		}
	} else {
		for (int i = 0; i < t->ncols; i++) {
			format_cell(&cells[i], buf, sizeof(buf));
			printf("%s%*s", i ? "  " : "", t->width[i], buf);
		}
	}
	fputc('\n', stdout);
	fflush(stdout);
	bench_rows_printed++;
}

void table_end(struct table *t)
{
	(void)t;
	fputc('\n', stdout);
	fflush(stdout);
}

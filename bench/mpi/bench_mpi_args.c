/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_mpi_args: clocks, order statistics, the common options and the
 * parsing of option values (see bench_mpi_common.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* clock_gettime, strtok_r */
#endif
#include "bench_mpi_common.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <time.h>

/* ------------------------------------------------------------- clocks */

double bm_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec * 1e-3;
}

double bm_cpu_us(void)
{
	struct rusage ru;
	if (getrusage(RUSAGE_SELF, &ru) != 0)
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 +
	       (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec);
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

double bm_median(double *v, long n)
{
	struct bm_stats s;
	bm_stats(v, n, &s);
	return s.median;
}

/* -------------------------------------------------------------- options */

void bm_opts_init(struct bm_opts *o)
{
	memset(o, 0, sizeof *o);
	const char *env = getenv("PIANO_BENCH_LABEL");
	o->label = env && *env && !strpbrk(env, ",\"\n") ? env : "unlabelled";
	o->thread_level = MPI_THREAD_MULTIPLE;
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
	if (o->can_bind && !strcmp(a, "--bind")) {
		o->bind = 1;
		return 1;
	}
	if (o->can_level && !strcmp(a, "--thread-level")) {
		static const struct {
			const char *name;
			int level;
		} levels[] = { { "single", MPI_THREAD_SINGLE },
			       { "funneled", MPI_THREAD_FUNNELED },
			       { "serialized", MPI_THREAD_SERIALIZED },
			       { "multiple", MPI_THREAD_MULTIPLE } };
		const char *v = *i + 1 < argc ? argv[*i + 1] : NULL;
		for (size_t k = 0; v && k < sizeof levels / sizeof levels[0]; k++)
			if (!strcmp(v, levels[k].name)) {
				o->thread_level = levels[k].level;
				(*i)++;
				return 1;
			}
		snprintf(err, errlen,
		         "--thread-level needs single, funneled, serialized or multiple");
		return -1;
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

/* The error of argv[i] that the program's handler could not take. */
static void arg_error(enum bm_arg r, const char *a, const char *v, char *err, size_t errlen)
{
	if (r == BM_ARG_UNKNOWN && v)
		snprintf(err, errlen, "unknown option: %s", a);
	else if (r == BM_ARG_UNKNOWN) /* a value option given last, or a typo */
		snprintf(err, errlen, "unknown option or missing value: %s", a);
	else if (v)
		snprintf(err, errlen, "invalid value for %s: '%s'", a, v);
	else
		snprintf(err, errlen, "missing value for %s", a);
}

int bm_opts_parse(struct bm_opts *o, int argc, char **argv, bm_arg_fn fn, void *prog,
                  char *err, size_t errlen)
{
	for (int i = 1; i < argc; i++) {
		int rc = bm_opts_arg(o, argc, argv, &i, err, errlen);
		if (rc < 0)
			return -1;
		if (rc > 0)
			continue;
		const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
		enum bm_arg r = fn(prog, a, v);
		if (r == BM_ARG_VALUE)
			i++;
		else if (r != BM_ARG_FLAG) {
			arg_error(r, a, v, err, errlen);
			return -1;
		}
	}
	return 0;
}

/* --------------------------------------------------------------- values */

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

int bm_parse_size(const char *s, long min, long maxval, long *out)
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
	/* 1e15 keeps the conversion to long exact. */
	if (v != floor(v) || v > 1e15 || v < (double)min || v > (double)maxval)
		return -1;
	*out = (long)v;
	return 0;
}

/* Calls each(tok, n, ctx) for the n-th comma-separated token. */
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
	return bm_parse_size(tok, c->min, c->max, &c->out[n]);
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

struct double_ctx { double *out, min, max; };
static int each_double(const char *tok, int n, void *p)
{
	struct double_ctx *c = p;
	return bm_parse_double(tok, c->min, c->max, &c->out[n]);
}

int bm_parse_doubles(const char *arg, double *out, int max, double min, double maxval)
{
	struct double_ctx c = { out, min, maxval };
	return split_list(arg, max, each_double, &c);
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

static void mark(int *given)
{
	if (given)
		*given = 1;
}

enum bm_arg bm_rt_arg(const struct bm_rt_opts *r, const char *a, const char *v)
{
	int bad;
	if (!v)
		return BM_ARG_UNKNOWN;
	if (!strcmp(a, "--iters")) {
		bad = bm_parse_int(v, 1, 100000000, r->iters) != 0;
		mark(r->iters_given);
	} else if (!strcmp(a, "--warmup")) {
		bad = bm_parse_int(v, 0, 1000000, r->warmup) != 0;
		mark(r->warmup_given);
	} else if (!strcmp(a, "--max-time")) {
		bad = bm_parse_double(v, 0.001, 3600, r->max_time) != 0;
		mark(r->time_given);
	} else {
		return BM_ARG_UNKNOWN;
	}
	return bad ? BM_ARG_BAD : BM_ARG_VALUE;
}

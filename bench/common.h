/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shared helpers of piano-bench-core: clocks, statistics, engine
 * configuration through the environment, CPU pinning and table output.
 */
#ifndef PIANO_BENCH_COMMON_H
#define PIANO_BENCH_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* pthread_setaffinity_np, CPU_SET */
#endif

#include <piano/piano.h>

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------- options */

struct bench_opts {
	bool quick; /* --quick: small sample counts, whole suite < 60 s */
	bool csv;   /* --csv: CSV rows instead of aligned columns */
};
extern struct bench_opts bench_opt;

/* Picks the quick or the full value. */
#define QF(q_, f_) (bench_opt.quick ? (q_) : (f_))

/* -------------------------------------------------------------- time */

uint64_t now_ns(void);            /* CLOCK_MONOTONIC */
void sleep_ns(uint64_t ns);       /* nanosleep, restarted on EINTR */
void spin_ns(uint64_t ns);        /* busy-waits */

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

/* Small xorshift generator for randomised delays (not shared). */
uint64_t rand_next(uint64_t *state);

/* -------------------------------------------------------- statistics */

struct summary {
	size_t n;
	double min, q1, med, q3, p90, p99, max;
};

/* Sorts v in place and fills s (linear interpolation between ranks). */
void summarize(double *v, size_t n, struct summary *s);
double median_of(double *v, size_t n); /* sorts v */

/* ----------------------------------------------------- configuration */

/*
 * Every variable the benchmarks depend on, passed to piano_init_with() as
 * overrides so that a run does not depend on the caller's environment.
 * Strings, as in the environment; NULL = the registry's default.
 */
struct bcfg {
	const char *progression;
	const char *idle_level;
	const char *idle_period_us;
	const char *idle_coef;
	const char *timer_period_us;
	const char *spin_us;
	const char *block_helpers;
	const char *queue_level;
};

/* The engine's built-in defaults: every field NULL. */
extern const struct bcfg bcfg_default;

/* piano_init_with() every field. Prints and returns the error. */
int bench_piano_init(const struct bcfg *c);
int bench_piano_finalize(void);
/* "PIANO_PROGRESSION=1 PIANO_IDLE_LEVEL=package ..." */
void bcfg_format(const struct bcfg *c, char *buf, size_t len);

/* Prints a piano error and returns -1 from the calling function. */
#define PCHECK(expr)                                                              \
	do {                                                                      \
		int rc_ = (expr);                                                 \
		if (rc_ < 0) {                                                    \
			fprintf(stderr, "piano-bench-core: %s:%d: %s: %s\n", __FILE__, \
			        __LINE__, #expr, piano_strerror(rc_));            \
			return -1;                                                \
		}                                                                 \
	} while (0)

/* Same for pthread/libc calls returning 0 or an errno value. */
#define SCHECK(expr)                                                              \
	do {                                                                      \
		int rc_ = (expr);                                                 \
		if (rc_ != 0) {                                                   \
			fprintf(stderr, "piano-bench-core: %s:%d: %s failed (%d)\n", \
			        __FILE__, __LINE__, #expr, rc_);                  \
			return -1;                                                \
		}                                                                 \
	} while (0)

/* --------------------------------------------------- background load */

/*
 * CPU time used by other processes between two samples, from /proc/stat
 * and /proc/self/stat (the machine is shared: this says how much the
 * numbers of a benchmark were disturbed). Fields are clock ticks.
 */
struct load_sample {
	unsigned long long busy;  /* all CPUs: user+nice+system+irq+softirq */
	unsigned long long steal; /* taken by the hypervisor */
	unsigned long long total; /* all of the above + idle + iowait */
	unsigned long long self;  /* this process: utime + stime */
	bool ok;
};
void load_sample(struct load_sample *s);
/* Percentages of the machine's CPU time over [a, b]. false if unknown. */
bool load_delta(const struct load_sample *a, const struct load_sample *b, double *other_pct,
                double *steal_pct);

/* --------------------------------------------------------------- CPUs */

/* CPUs the process may run on (its affinity mask at start). */
int bench_ncpus(void);
/* Pins the calling thread to the i-th allowed CPU (modulo). 0 or errno. */
int pin_self(int i);
/* Removes any pinning of the calling thread (back to the process mask). */
int unpin_self(void);

/* ------------------------------------------------------------- tables */

enum { CELL_STR, CELL_INT, CELL_F2 };

struct col {
	const char *name;
	int width; /* minimum width; the name's length wins when larger */
};

struct cell {
	int kind;
	const char *s;
	long long i;
	double f;
};

#define CS(x) ((struct cell){ .kind = CELL_STR, .s = (x) })
#define CI(x) ((struct cell){ .kind = CELL_INT, .i = (long long)(x) })
#define CF(x) ((struct cell){ .kind = CELL_F2, .f = (double)(x) })

#define TABLE_MAXCOLS 16

struct table {
	const char *id;
	int ncols;
	const struct col *cols;
	int width[TABLE_MAXCOLS];
};

/* Header block: benchmark id and title, version, host, nproc, mode. */
void table_begin(struct table *t, const char *id, const char *title);
/* One more "# " line of the header block (settings...). */
void table_note(struct table *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Column header line; ends the header block. */
void table_columns(struct table *t, const struct col *cols, int ncols);
/* One row: ncols cells; flushed at once. */
void table_row(struct table *t, const struct cell *cells);
void table_end(struct table *t);

/* Rows printed so far (the smoke test fails when nothing was printed). */
extern int bench_rows_printed;

/* Goal evaluation shown in the "met" column. */
static inline const char *yesno(bool ok) { return ok ? "yes" : "no"; }

#endif

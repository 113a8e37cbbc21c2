/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_mpi_common: what the MPI benchmarks of bench/mpi share,
 * compiled once per MPI into the static library
 * piano_bench_mpi_common_<flavour>:
 *
 *  - clocks (CLOCK_MONOTONIC and process CPU time, in microseconds);
 *  - order statistics (median and quartiles, never means);
 *  - fixed amounts of work, never a loop on the clock: a dependent
 *    floating-point chain whose speed is measured once, before MPI_Init, so
 *    that anything stealing the core (a progress thread, a spinning waiter)
 *    makes the work last longer instead of being hidden by a clock-based
 *    spin; a team of threads running it; STREAM triad and dgemm kernels
 *    sized to fit in L2;
 *  - the options every program understands (--quick, --csv, --label,
 *    --help, and --bind where the program allows it) and list parsing
 *    (sizes with K/M/G suffixes, counts, integers, reals);
 *  - MPI start-up (MPI_Init_thread with MPI_THREAD_MULTIPLE), the
 *    description of the run (MPI library, label, hosts, CPUs, piano
 *    settings, whether piano is loaded) and quiet, sleep-polling
 *    synchronisation;
 *  - OSU-style output: a header block of "# " lines, then a table with
 *    right-aligned columns and two decimals, or CSV whose first columns are
 *    bench,label,mpi.
 *
 * Only rank 0 prints; every printing function is a no-op on other ranks.
 * Nothing here calls MPI from a compute thread.
 */
#ifndef PIANO_BENCH_MPI_COMMON_H
#define PIANO_BENCH_MPI_COMMON_H

#include <mpi.h>

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

/* ------------------------------------------------------------- clocks */

/* CLOCK_MONOTONIC in microseconds. */
double bm_now_us(void);
/* CPU time of the whole process (every thread, user + system), in µs. */
double bm_cpu_us(void);

/* ------------------------------------------------------------- statistics */

struct bm_stats {
	long n;
	double min, p25, median, p75, max;
};

/* Sorts v[0..n) in place and fills *s (all fields NaN when n == 0).
 * Quantiles interpolate linearly between the closest ranks. */
void bm_stats(double *v, long n, struct bm_stats *s);
/* Quantile q in [0, 1] of an already sorted array. */
double bm_quantile_sorted(const double *v, long n, double q);
/* Sorts v[0..n) in place and returns its median (NaN when n == 0). */
double bm_median(double *v, long n);

/* ------------------------------------------------------ calibrated work */

/* iters steps of a dependent multiply-add chain; returns its result so that
 * the compiler cannot drop it. Time is proportional to iters. */
double bm_work(uint64_t iters);

/* Iterations of bm_work per microsecond on an undisturbed core: the best of
 * many runs of about a millisecond (they fit in a scheduler time slice, so
 * some run undisturbed even on a shared machine). Call it before MPI_Init,
 * when no MPI or piano thread exists yet. Takes about 0.1 s. */
double bm_calibrate(void);

/* ---------------------------------------------------- compute threads */

/* n threads, each running bm_work(chunk) in a loop and counting the
 * iterations done, until bm_team_stop(). They make no MPI call. */
struct bm_worker;
struct bm_team {
	int n;
	uint64_t chunk;
	pthread_t *tids;
	struct bm_worker *w;
	int stop; /* accessed atomically */
};

/* chunk_us: work between two counter updates (a few tens of µs). rate:
 * bm_calibrate()'s result. Returns 0, or -1 if a thread could not start
 * (the others are stopped). n == 0 is valid and starts nothing. */
int bm_team_start(struct bm_team *t, int n, double rate, double chunk_us);
/* Iterations done so far by all threads of the team. */
uint64_t bm_team_iters(const struct bm_team *t);
void bm_team_stop(struct bm_team *t);

/* Number of CPUs in the calling thread's affinity mask (>= 1). */
int bm_affinity_count(void);
/* The affinity mask as a CPU list ("0-1,4"). */
void bm_affinity_string(char *out, size_t len);
/* Binds the calling thread only (not the process) to the n-th CPU of its
 * affinity mask (n modulo their count). Returns the CPU or -1. */
int bm_bind_main_thread(int n);

/* ------------------------------------------------------ compute kernels */

/* Size of the L2 cache (sysconf), 1 MiB when unknown. */
size_t bm_l2_bytes(void);

/* STREAM triad a[i] = b[i] + s * c[i] on three arrays of n doubles. */
struct bm_triad {
	void *block;
	double *a, *b, *c;
	size_t n;
};
/* Arrays with 3 * n * 8 <= bytes (at least 1024 elements). 0 or -1. */
int bm_triad_init(struct bm_triad *t, size_t bytes);
void bm_triad_free(struct bm_triad *t);
/* elems element updates: whole sweeps over the arrays, then a partial one. */
void bm_triad_run(struct bm_triad *t, uint64_t elems);
/* Element updates per µs of an undisturbed core: the best of many short
 * runs (call it before MPI_Init, when no other thread of ours exists). */
double bm_triad_rate(struct bm_triad *t);

/* C += A * B on n x n matrices (i-k-j loop order). */
struct bm_dgemm {
	void *block;
	double *a, *b, *c;
	int n;
};
int bm_dgemm_init(struct bm_dgemm *d, int n);
void bm_dgemm_free(struct bm_dgemm *d);
void bm_dgemm_run(struct bm_dgemm *d, long calls);

/* -------------------------------------------------------------- options */

struct bm_opts {
	int quick;
	int csv;
	int help;
	/* --bind binds the main thread of rank r to the r-th CPU it may use
	 * (after MPI_Init: the MPI's and piano's threads keep the launcher's
	 * placement). Only programs that set can_bind accept it: in the others
	 * compute threads would inherit the single-CPU mask. */
	int can_bind;
	int bind;
	const char *label; /* --label, else $PIANO_BENCH_LABEL, else "unlabelled" */
	/* The level bm_init asks for: MPI_THREAD_MULTIPLE unless the program
	 * sets another (most applications call plain MPI_Init, and the level
	 * changes what every MPI call costs). --thread-level chooses it in the
	 * programs that set can_level (the others start threads that call
	 * MPI). */
	int thread_level;
	int can_level;
};

/* Sets the defaults of *o. */
void bm_opts_init(struct bm_opts *o);
/* Looks at argv[*i]: returns 1 if it was a common option (and advances *i
 * past its value), 0 if not, -1 on a bad value (message in err). */
int bm_opts_arg(struct bm_opts *o, int argc, char **argv, int *i, char *err, size_t errlen);

/* What a program's handler did with argv[i] (name) and argv[i + 1] (value,
 * NULL when name is the last argument): took name alone (a flag, or a bare
 * word), took name and value, did not know name, or knew it but not the
 * value. A handler returns BM_ARG_UNKNOWN for a value option whose value is
 * NULL, so that the message says "unknown option or missing value". */
enum bm_arg { BM_ARG_FLAG, BM_ARG_VALUE, BM_ARG_UNKNOWN, BM_ARG_BAD };
typedef enum bm_arg (*bm_arg_fn)(void *prog, const char *name, const char *value);
/* Parses argv[1..argc-1]: the common options with bm_opts_arg, every other
 * argument with fn(prog, ...), so that the programs share one loop and one
 * set of error messages ("unknown option: X", "invalid value for X: 'V'").
 * Returns 0, or -1 at the first bad argument with the message in err. */
int bm_opts_parse(struct bm_opts *o, int argc, char **argv, bm_arg_fn fn, void *prog,
                  char *err, size_t errlen);

/* The round-trip options of the ping-pong programs (latency, mthreads,
 * reactivity), for their handlers to try first: --iters N, --warmup N,
 * --max-time S. The fields point into the program's options; a non-NULL
 * *_given flag is set when its option is seen (the program's defaults then
 * do not apply). Returns BM_ARG_UNKNOWN for any other option. */
struct bm_rt_opts {
	long *iters, *warmup;
	double *max_time;
	int *iters_given, *warmup_given, *time_given;
};
enum bm_arg bm_rt_arg(const struct bm_rt_opts *r, const char *name, const char *value);

/* Sizes accept B, K/KiB/KB, M/MiB/MB, G/GiB/GB suffixes (powers of 1024)
 * and exponents ("4e6"); they serve for element counts too. Single values
 * return 0 or -1; comma-separated lists return the count (>= 1) or -1. */
int bm_parse_size(const char *s, long min, long maxval, long *out);
int bm_parse_int(const char *s, long min, long maxval, long *out);
int bm_parse_double(const char *s, double min, double maxval, double *out);
int bm_parse_sizes(const char *arg, long *out, int max, long min, long maxval);
int bm_parse_ints(const char *arg, int *out, int max, int min, int maxval);
int bm_parse_doubles(const char *arg, double *out, int max, double min, double maxval);
/* "1B", "4KiB", "1MiB". */
void bm_fmt_size(long s, char *out, size_t len);

/* ---------------------------------------------------------------- MPI */

#define BM_MAX_RANKS_DESCRIBED 8

struct bm_ctx {
	int rank, size;
	int provided; /* thread level */
	double rate;  /* bm_work iterations per µs of this rank (0: not calibrated) */
	double rate0; /* rank 0's */
	const char *bench; /* short name, first CSV column */
	struct bm_opts opts;
	char version[256];  /* first line of MPI_Get_library_version */
	char mpi_name[64];  /* short comma-free name: openmpi-4.1.4, mpich-4.0.2 */
	long nproc;         /* online CPUs of rank 0's host */
	int bound_cpu;      /* --bind: the CPU of this rank's main thread, or -1 */
};

/* MPI_Init_thread(o->thread_level), the context, and the binding asked
 * by --bind. rate is the result of bm_calibrate() run before (0 if the
 * program does not use bm_work). */
void bm_init(struct bm_ctx *c, const char *bench, const struct bm_opts *o, double rate,
             int *argc, char ***argv);

/* After bm_init when the options were bad or --help was asked: rank 0
 * prints usage then the common options (to stdout for --help, else err and
 * usage to stderr), everybody finalises; returns the exit code (0 for
 * --help, 2 otherwise). */
int bm_usage_exit(struct bm_ctx *c, const char *usage, const char *err);
/* Unless the job has between min and max ranks (max 0: no limit), rank 0
 * explains, everybody finalises and 2 is returned. Returns 0 if it has. */
int bm_require_ranks(struct bm_ctx *c, int min, int max);
/* MPI_Abort with a message from rank `rank`. */
void bm_die(const struct bm_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3), noreturn));

/* Header block (table mode only, rank 0 prints): benchmark title, MPI
 * library, label, ranks, host and affinity of each rank, nproc, thread
 * level, calibration, binding (programs with --bind), piano (loaded or not)
 * and the PIANO_* / MPIR_CVAR_* variables seen, load average. Collective
 * over MPI_COMM_WORLD. */
void bm_header(const struct bm_ctx *c, const char *title);
/* One more "# " line of the header (rank 0, table mode). */
void bm_hline(const struct bm_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Completes a request by MPI_Test + 20 µs sleeps: a rank that waits for
 * its peers leaves its core free (MPI_Wait and MPI_Barrier busy-poll, and
 * with all ranks on one host that core is one background progress could
 * have used). */
void bm_quiet_wait(MPI_Request *req);
/* Ibarrier completed quietly, then MPI_Barrier (everybody is already
 * there: ranks leave within microseconds of each other). */
void bm_quiet_barrier(MPI_Comm comm);
void bm_quiet_allreduce(const double *in, double *out, int n, MPI_Op op, MPI_Comm comm);

/* Stop rule of the ping-pong loops. The initiating side decides, at each
 * iteration, whether it is the last one and tells the peer in the message
 * itself (first byte BM_MSG_LAST instead of BM_MSG_MORE), so both sides
 * always agree without extra messages. Iteration i (0-based, warm-up ones
 * included) is the last if `total` iterations are reached, or if the
 * deadline has passed and at least `min_total` have run: a point never
 * lasts much longer than its time budget, even when every round trip is
 * slowed down by the scheduler, yet always gives enough samples. */
enum { BM_MSG_MORE = 1, BM_MSG_LAST = 2 };
static inline int bm_is_last(long i, long total, long min_total, double now_us,
                             double deadline_us)
{
	return i + 1 >= total || (i + 1 >= min_total && now_us >= deadline_us);
}

/* A ping-pong between the calling thread and one peer thread, on one tag:
 * the initiator sends first and times every round trip, the responder
 * echoes. The initiator applies bm_is_last() and carries the decision in the
 * first byte of each message, so the responder needs no count. Both sides
 * call mark(mark_arg, 0) just before the first timed round trip and
 * mark(mark_arg, 1) after the last one (to sample compute threads, say).
 * Buffers hold at least `count` bytes (>= 1); sbuf[0] is overwritten. */
struct bm_pp {
	MPI_Comm comm;
	int initiator; /* 1: starts, times and decides; 0: echoes */
	int peer, tag;
	char *sbuf, *rbuf;
	int count;
	int nonblocking; /* Isend/Irecv + Wait instead of Send/Recv */
	long warmup;     /* untimed round trips first */
	long iters;      /* timed round trips wanted */
	long min_timed;  /* timed round trips even past the deadline */
	double budget_s; /* time budget of the whole loop, warm-up included */
	double min_time_s; /* > 0: the timed part lasts at least this long, even
	                    * past iters or the budget (more round trips than
	                    * iters go to the lat_cap sample); for measurements,
	                    * like compute throughput, that need a long window */
	double *lat;     /* initiator: half round trips in µs */
	long lat_cap;    /* entries of lat; 0: iters. When more round trips are
	                  * timed, lat holds a uniform random sample of them
	                  * (reservoir sampling): quantiles stay unbiased. */
	double gap_us;   /* > 0: the initiator sleeps a random time, uniform in
	                  * [0, 2 gap_us], before each round trip (untimed), so that
	                  * pings arrive at random phases of the peer's scheduling
	                  * instead of right after its previous answer */
	void (*mark)(void *arg, int end);
	void *mark_arg;
};
/* Returns the number of timed round trips (on both sides); the initiator's
 * lat holds min(that, lat_cap) samples. */
long bm_pingpong(const struct bm_pp *p);

/* --------------------------------------------------------------- output */

enum bm_col_type {
	BM_COL_STR,   /* const char * */
	BM_COL_INT,   /* long */
	BM_COL_F2,    /* double, two decimals; NaN prints "-" (table) or "" (CSV) */
	BM_COL_F4,    /* double as BM_COL_F2, but four decimals in CSV */
	BM_COL_SIZE,  /* long bytes: "64KiB" in the table ("-" if <= 0), the
	               * byte count in CSV (0 if <= 0) */
};

struct bm_col {
	const char *name; /* column header, no comma */
	enum bm_col_type type;
	int width; /* table width (0: max(10, strlen(name))) */
	const char *csv; /* CSV header when it differs from name (NULL: name) */
};

struct bm_table {
	const struct bm_ctx *c;
	const struct bm_col *cols;
	int ncols;
};

/* Prints the column header: "# " + names (table) or
 * "bench,label,mpi," + CSV names (CSV). Rank 0 only. */
void bm_table_begin(struct bm_table *t, const struct bm_ctx *c, const struct bm_col *cols,
                    int ncols);
/* One row: one argument per column, of the column's type. Rank 0 only;
 * flushed at once so that a long run shows progress. */
void bm_table_row(const struct bm_table *t, ...);

#endif

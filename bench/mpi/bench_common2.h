/*
 * bench_common2: what the MPI application benchmarks (interference.c,
 * halo.c, nbc.c) share: clocks and CPU time, statistics, option parsing,
 * calibrated compute kernels that fit in L2, quiet (sleep-polling)
 * synchronisation, and OSU-style tables or CSV printed by rank 0.
 *
 * Conventions of every program built on it:
 *   --quick        a configuration that runs in well under 20 s on 2 cores
 *   --csv          CSV on stdout: a header row, then bench,label,mpi,<columns>
 *   --label NAME   variant label (default $PIANO_BENCH_LABEL, else
 *                  "unlabelled"); no comma, quote or newline
 *   --bind         bind the main thread of rank r to the r-th CPU it may use
 *   --help
 * Tables: "# " header lines (benchmark, MPI library, label, host, nproc,
 * ranks, PIANO_* variables seen), then right-aligned columns, two decimals.
 * Only rank 0 prints. Compute is a fixed amount of work (element updates,
 * matrix products), never a loop on the clock.
 */
#ifndef PIANO_BENCH_COMMON2_H
#define PIANO_BENCH_COMMON2_H

#include <mpi.h>

#include <stddef.h>
#include <stdint.h>

/* ------------------------------------------------------------- clocks */

/* CLOCK_MONOTONIC, in microseconds. */
double bc_now_us(void);
/* CPU time of the whole process (every thread, user + system), in µs. */
double bc_cpu_us(void);

/* ---------------------------------------------------------- statistics */

/* Sorts v (n >= 1) and returns the median; q1/q3 (may be NULL) get the
 * quartiles (linear interpolation between order statistics). */
double bc_quartiles(double *v, int n, double *q1, double *q3);

/* ------------------------------------------------------------- parsing */

/* "4", "64K", "1MiB", "2m", "1G" -> bytes (binary multiples). */
int bc_parse_size(const char *s, long *out);
/* Like bc_parse_size but decimal multiples allowed as well: "4M" = 4*2^20,
 * "4e6" = 4000000. Used for element counts. */
int bc_parse_count(const char *s, long long *out);
int bc_parse_int(const char *s, long min, long max, int *out);
/* Comma-separated list of sizes; returns the count or -1. */
int bc_parse_size_list(const char *arg, long *out, int max);
int bc_parse_count_list(const char *arg, long long *out, int max);

/* "4B", "64KiB", "1MiB" */
void bc_fmt_size(long bytes, char *out, size_t len);

struct bc_opts {
	int quick;
	int csv;
	int bind;
	const char *label;
};

/* Defaults (label from PIANO_BENCH_LABEL). */
void bc_opts_init(struct bc_opts *o);
/* Recognises the common options at argv[*i]. Returns 1 when consumed
 * (*i advanced past a value), 0 when not a common option, 2 for --help,
 * -1 on error (message in err). */
int bc_common_opt(int argc, char **argv, int *i, struct bc_opts *o, char *err,
                  size_t errlen);
#define BC_COMMON_USAGE                                                             \
	"  --quick          small configuration (< 20 s on 2 cores)\n"                  \
	"  --csv            CSV on stdout (header row; bench,label,mpi first)\n"        \
	"  --label NAME     variant label (default $PIANO_BENCH_LABEL or unlabelled)\n" \
	"  --bind           bind the main thread of rank r to the r-th CPU it may use\n" \
	"  --help           this text\n"

/* ------------------------------------------------------ compute kernels */

/* Size of the L2 cache (sysconf), 1 MiB when unknown. */
size_t bc_l2_bytes(void);

/* STREAM triad a[i] = b[i] + s * c[i] on three arrays of n doubles. */
struct bc_triad {
	void *block;
	double *a, *b, *c;
	size_t n;
};
/* Arrays with 3 * n * 8 <= bytes (at least 1024 elements). 0 or -1. */
int bc_triad_init(struct bc_triad *t, size_t bytes);
void bc_triad_free(struct bc_triad *t);
/* elems element updates: whole sweeps over the arrays, then a partial one. */
void bc_triad_run(struct bc_triad *t, uint64_t elems);
/* Element updates per µs of an undisturbed core: the best of many short
 * runs (call it before MPI_Init, when no other thread of ours exists). */
double bc_triad_rate(struct bc_triad *t);

/* C += A * B on n x n matrices (i-k-j loop order). */
struct bc_dgemm {
	void *block;
	double *a, *b, *c;
	int n;
};
int bc_dgemm_init(struct bc_dgemm *d, int n);
void bc_dgemm_free(struct bc_dgemm *d);
void bc_dgemm_run(struct bc_dgemm *d, long calls);

/* ------------------------------------------------------------------ MPI */

/* Completes a request by MPI_Test + 20 µs sleeps: a rank that waits for
 * its peers leaves its core free (MPI_Wait and MPI_Barrier busy-poll). */
void bc_quiet_wait(MPI_Request *req);
/* Ibarrier completed quietly, then MPI_Barrier (everybody is already
 * there: ranks leave within microseconds of each other). */
void bc_quiet_barrier(MPI_Comm comm);
void bc_quiet_allreduce(const double *in, double *out, int n, MPI_Op op,
                        MPI_Comm comm);

/* Binds the calling thread only to the n-th CPU of its affinity mask.
 * Returns the CPU or -1. */
int bc_bind_main_thread(int n);

/* ---------------------------------------------------------------- output */

#define BC_MAX_COLS 24

struct bc_col {
	const char *name;   /* table header */
	const char *csv;    /* CSV column name (plain identifier) */
	int width;          /* table width (right-aligned) */
};

struct bc_ctx {
	const char *bench;  /* short name: CSV "bench" column */
	struct bc_opts opts;
	int rank, size, provided;
	int bound_cpu;
	char version[256];  /* first line of MPI_Get_library_version */
	char mpi[64];       /* comma-free short name: openmpi-4.1.4 */
	const struct bc_col *cols;
	int ncols, cell;
	char line[1024];
	size_t len;
};

/* After MPI_Init_thread: rank, size, library version, optional binding. */
void bc_ctx_init(struct bc_ctx *c, const char *bench, const struct bc_opts *o,
                 int provided);
/* Common "# " header lines (rank 0, table mode only); collective. */
void bc_print_header(struct bc_ctx *c, const char *title);
/* One more "# " line (rank 0, table mode only). */
void bc_note(struct bc_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Column header line (table) or CSV header row (rank 0). */
void bc_table_begin(struct bc_ctx *c, const struct bc_col *cols, int ncols);
/* One row, cell by cell, in column order (rank 0 prints, others ignore). */
void bc_row_str(struct bc_ctx *c, const char *s);
void bc_row_f(struct bc_ctx *c, double v);
void bc_row_int(struct bc_ctx *c, long long v);
/* A size: "64KiB" in the table (bytes <= 0: "-"), the byte count in CSV. */
void bc_row_size(struct bc_ctx *c, long bytes);
void bc_row_end(struct bc_ctx *c);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_mpi_common: MPI start-up, usage and errors, the description of the
 * run, quiet synchronisation (see bench_mpi_common.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* RTLD_DEFAULT, dladdr, getloadavg */
#endif
#include "bench_mpi_common.h"

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

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
	MPI_Init_thread(argc, argv, o->thread_level, &c->provided);
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
	c->bound_cpu = o->bind ? bm_bind_main_thread(c->rank) : -1;
}

static void print_common_usage(FILE *f, const struct bm_opts *o)
{
	fputs("  --quick          small configuration (whole program well under 20 s)\n"
	      "  --csv            CSV with a header row (bench,label,mpi,...) instead of the table\n"
	      "  --label NAME     variant label (default $PIANO_BENCH_LABEL, else \"unlabelled\")\n",
	      f);
	if (o->can_level)
		fprintf(f,
		        "  --thread-level L single, funneled, serialized or multiple: what\n"
		        "                   MPI_Init_thread asks for (default %s)\n",
		        o->thread_level == MPI_THREAD_SINGLE ? "single" : "multiple");
	if (o->can_bind)
		fputs("  --bind           bind the main thread of rank r to the r-th CPU it may use\n"
		      "                   (after MPI_Init: the threads of the MPI and of piano keep\n"
		      "                   the placement the launcher gave them)\n",
		      f);
	fputs("  --help           this text\n", f);
}

int bm_usage_exit(struct bm_ctx *c, const char *usage, const char *err)
{
	int code = c->opts.help ? 0 : 2;
	if (c->rank == 0) {
		FILE *f = c->opts.help ? stdout : stderr;
		if (!c->opts.help)
			fprintf(f, "bench_%s: %s\n", c->bench, err && *err ? err : "bad arguments");
		fputs(usage, f);
		print_common_usage(f, &c->opts);
	}
	MPI_Finalize();
	return code;
}

int bm_require_ranks(struct bm_ctx *c, int min, int max)
{
	if (c->size >= min && (max <= 0 || c->size <= max))
		return 0;
	if (c->rank == 0)
		fprintf(stderr, "bench_%s: needs %s %d MPI processes, got %d\n", c->bench,
		        min == max ? "exactly" : "at least", min, c->size);
	MPI_Finalize();
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

/* What the header says of each rank (gathered as bytes on rank 0). */
struct rank_info {
	char host[64];
	char cpus[64]; /* affinity of the main thread, after --bind */
	double rate;
	int bound_cpu;
};

static void print_env(void)
{
	int any = 0;
	printf("# env:");
	for (char **e = environ; e && *e; e++) {
		if (!strncmp(*e, "PIANO_", 6) || !strncmp(*e, "MPIR_CVAR_", 10)) {
			printf(" %s", *e);
			any = 1;
		}
	}
	printf("%s\n", any ? "" : " (no PIANO_* or MPIR_CVAR_* variable set)");
}

static void print_ranks(const struct bm_ctx *c, const struct rank_info *all)
{
	int n = c->size < BM_MAX_RANKS_DESCRIBED ? c->size : BM_MAX_RANKS_DESCRIBED;
	for (int r = 0; r < n; r++)
		printf("# rank %d: host %s, cpus %s\n", r, all[r].host, all[r].cpus);
	printf("# nproc: %ld\n", c->nproc);
	printf("# thread level: %s requested, %s provided\n", level_name(c->opts.thread_level),
	       level_name(c->provided));
	if (c->rate > 0) {
		printf("# compute: dependent FP chain calibrated before MPI_Init, iterations/us:");
		for (int r = 0; r < n; r++)
			printf(" %.1f", all[r].rate);
		printf("\n");
	}
	if (!c->opts.can_bind)
		return;
	if (!c->opts.bind) {
		printf("# binding: as launched\n");
		return;
	}
	printf("# binding: main thread of rank r on CPU:");
	for (int r = 0; r < n; r++)
		printf(" %d", all[r].bound_cpu);
	printf(" (-1: failed); other threads as launched\n");
}

void bm_header(const struct bm_ctx *c, const char *title)
{
	struct rank_info mine;
	memset(&mine, 0, sizeof mine);
	char host[MPI_MAX_PROCESSOR_NAME];
	int hlen = 0;
	MPI_Get_processor_name(host, &hlen);
	snprintf(mine.host, sizeof mine.host, "%.*s", (int)sizeof mine.host - 1, host);
	bm_affinity_string(mine.cpus, sizeof mine.cpus);
	mine.rate = c->rate;
	mine.bound_cpu = c->bound_cpu;
	struct rank_info *all = c->rank == 0 ? calloc((size_t)c->size, sizeof mine) : NULL;
	MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0,
	           MPI_COMM_WORLD);
	if (c->rank != 0 || c->opts.csv || !all) {
		free(all);
		return;
	}
	printf("# %s\n", title);
	printf("# MPI: %s\n", c->version);
	printf("# label: %s\n", c->opts.label);
	printf("# ranks: %d\n", c->size);
	print_ranks(c, all);
	char ps[256];
	piano_status(ps, sizeof ps);
	printf("# piano: %s\n", ps);
	print_env();
	double load[3];
	if (getloadavg(load, 3) == 3)
		printf("# load average at start: %.2f %.2f %.2f\n", load[0], load[1], load[2]);
	fflush(stdout);
	free(all);
}

void bm_quiet_wait(MPI_Request *req)
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

void bm_quiet_barrier(MPI_Comm comm)
{
	MPI_Request req;
	MPI_Ibarrier(comm, &req);
	bm_quiet_wait(&req);
	MPI_Barrier(comm);
}

void bm_quiet_allreduce(const double *in, double *out, int n, MPI_Op op, MPI_Comm comm)
{
	MPI_Request req;
	MPI_Iallreduce(in, out, n, MPI_DOUBLE, op, comm, &req);
	bm_quiet_wait(&req);
}

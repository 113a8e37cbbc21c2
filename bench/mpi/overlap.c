/*
 * bench_overlap: the simple overlap benchmark of APSM (§5.1) and PIOMan
 * (section V-B, Figs 7-9), for two MPI processes.
 *
 * Rank 0 sends, rank 1 receives. One iteration, timed on each rank from
 * just before MPI_Isend / MPI_Irecv to just after MPI_Wait:
 *
 *     MPI_Barrier
 *     t0                         t0
 *     MPI_Isend(size)            MPI_Irecv(size)
 *     compute(t_w) if sender     compute(t_w) if receiver
 *       computes (--side)          computes (--side)
 *     MPI_Wait                   MPI_Wait
 *     t1                         t1
 *
 * t_t of an iteration is the larger of the two ranks' t1 - t0 (the slower
 * rank); the reported t_t is the median over the repetitions. t_c is t_t
 * with t_w = 0 for the same size, measured in the same run; the overlap ratio
 * is t_t / max(t_c, t_w): 1 when communication is entirely hidden behind
 * computation (or the reverse), (t_c + t_w) / max(t_c, t_w) when the MPI
 * only progresses inside MPI_Wait (printed as "no-ovl" for reference).
 *
 * The computation is a fixed amount of work, not a clock: a dependent
 * floating-point chain whose speed each rank calibrates before MPI_Init,
 * when neither the MPI's nor piano's threads exist yet. Anything that
 * steals the computing core (a progress thread spinning on it, say) makes
 * the work last longer and shows in t_t; the "work" column reports how long
 * the computation itself took (slowest computing rank, median), and the
 * header how long a t_w of 10 ms takes once MPI is initialised and idle.
 * No MPI call is made while computing; times come from CLOCK_MONOTONIC.
 *
 * MPI_Init_thread asks for MPI_THREAD_MULTIPLE, natively too: piano asks
 * the MPI for it anyway, and MPICH's own progress thread
 * (MPIR_CVAR_ASYNC_PROGRESS=1) needs it.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_setaffinity, CPU_SET */
#endif
#include <mpi.h>

#include <errno.h>
#include <sched.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define MAX_POINTS 64
#define TAG 7701
#define CSV_HEADER "label,mpi,side,size,t_w_ms,t_t_ms,t_c_ms,ratio"

static const char *usage_text =
	"usage: bench_overlap [options]   (2 MPI processes: rank 0 sends, rank 1 receives)\n"
	"  --sizes LIST     message sizes, e.g. 4K,64KiB,1M,16MiB (default 4KiB..16MiB, x4)\n"
	"  --compute LIST   compute times t_w in ms, e.g. 0,1,2.5 (default 0,1,2,5,10,20);\n"
	"                   0 is always measured (it gives t_c)\n"
	"  --side S         who computes: sender, receiver or both (default both)\n"
	"  --reps N         timed repetitions per point (default 11; median reported)\n"
	"  --warmup N       untimed repetitions per point (default 2)\n"
	"  --calib local|rank0  compute speed of each rank, or rank 0's for both\n"
	"                   (default local)\n"
	"  --sync quiet|spin  synchronisation between iterations: sleep-polling\n"
	"                   non-blocking collectives (default), or MPI_Barrier and\n"
	"                   MPI_Allreduce, which busy-poll the core of the rank that\n"
	"                   finished first\n"
	"  --bind           bind the main thread of rank r to the r-th CPU it may use\n"
	"                   (after MPI_Init: the threads of the MPI and of piano keep\n"
	"                   the placement the launcher gave them)\n"
	"  --label STR      variant label printed in the header and the CSV rows\n"
	"  --csv            CSV rows instead of the table\n"
	"                   (label,mpi,side,size,t_w_ms,t_t_ms,t_c_ms,ratio)\n"
	"  --csv-append F   also append the CSV rows to file F (header line if empty)\n"
	"  --quick          sizes 64KiB,1MiB,16MiB; t_w 0,5,20 ms; 5 reps\n";

enum side { SIDE_SENDER, SIDE_RECEIVER, SIDE_BOTH };
static const char *side_names[] = { "sender", "receiver", "both" };

struct opts {
	long sizes[MAX_POINTS];
	int nsizes;
	double tw[MAX_POINTS];
	int ntw;
	enum side side;
	int reps, warmup;
	int calib_rank0;
	int spin_sync;
	int bind;
	const char *label;
	int csv;
	const char *csv_append;
};

/* ------------------------------------------------------------ clock */

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

/* ----------------------------------------------------------- compute */

/* A chain of dependent multiply-adds: nothing to vectorise or overlap, one
 * core kept busy for a time proportional to iters. The seed is volatile
 * and the result stored so that the compiler can neither precompute nor
 * drop the loop. */
static volatile double work_seed = 1.0;
static volatile double work_sink;

static void work(uint64_t iters)
{
	double x = work_seed;
	for (uint64_t i = 0; i < iters; i++)
		x = x * 0.999999999 + 1e-9;
	work_sink = x;
}

/* Iterations per millisecond: the best of many short runs. Runs of ~2 ms
 * fit in a scheduler time slice, so on a shared machine some of them run
 * undisturbed even when other processes compete for the cores; the best
 * one gives the speed of an undisturbed core. */
static double calibrate(void)
{
	uint64_t iters = 1u << 12;
	double t;
	for (;;) {
		double t0 = now_ms();
		work(iters);
		t = now_ms() - t0;
		if (t >= 1.0)
			break;
		iters *= 2;
	}
	double best = (double)iters / t;
	for (int i = 0; i < 60; i++) {
		double t0 = now_ms();
		work(iters);
		double rate = (double)iters / (now_ms() - t0);
		if (rate > best)
			best = rate;
	}
	return best;
}

/* ----------------------------------------------------------- options */

static int parse_size(const char *s, long *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || v <= 0)
		return -1;
	double mult = 1;
	if (!strcmp(end, "") || !strcasecmp(end, "b"))
		mult = 1;
	else if (!strcasecmp(end, "k") || !strcasecmp(end, "kib") || !strcasecmp(end, "kb"))
		mult = 1024;
	else if (!strcasecmp(end, "m") || !strcasecmp(end, "mib") || !strcasecmp(end, "mb"))
		mult = 1024 * 1024;
	else if (!strcasecmp(end, "g") || !strcasecmp(end, "gib") || !strcasecmp(end, "gb"))
		mult = 1024.0 * 1024 * 1024;
	else
		return -1;
	v *= mult;
	if (v < 1 || v > 1024.0 * 1024 * 1024 || v != floor(v))
		return -1;
	*out = (long)v;
	return 0;
}

static int parse_ms(const char *s, double *out)
{
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || *end || !(v >= 0) || v > 60000)
		return -1;
	*out = v;
	return 0;
}

/* Splits a comma-separated list; returns the count or -1. */
static int parse_list(const char *arg, int is_size, long *sizes, double *ms)
{
	char buf[1024];
	if (strlen(arg) >= sizeof buf)
		return -1;
	strcpy(buf, arg);
	int n = 0;
	for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (n == MAX_POINTS)
			return -1;
		int rc = is_size ? parse_size(tok, &sizes[n]) : parse_ms(tok, &ms[n]);
		if (rc)
			return -1;
		n++;
	}
	return n > 0 ? n : -1;
}

static int parse_int(const char *s, int min, int max, int *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < min || v > max)
		return -1;
	*out = (int)v;
	return 0;
}

/* Returns 0, 1 for --help, -1 (message in err) on a bad argument. */
static int parse_args(int argc, char **argv, struct opts *o, char *err, size_t errlen)
{
	int quick = 0, have_sizes = 0, have_tw = 0, have_reps = 0;
	memset(o, 0, sizeof *o);
	o->side = SIDE_BOTH;
	o->reps = 11;
	o->warmup = 2;
	o->label = "native";
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		const char *v = i + 1 < argc ? argv[i + 1] : NULL;
		int takes = 1;
		int bad = 0;
		if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
			return 1;
		} else if (!strcmp(a, "--bind")) {
			o->bind = 1;
			takes = 0;
		} else if (!strcmp(a, "--csv")) {
			o->csv = 1;
			takes = 0;
		} else if (!strcmp(a, "--quick")) {
			quick = 1;
			takes = 0;
		} else if (!v) {
			snprintf(err, errlen, "unknown option or missing value: %s", a);
			return -1;
		} else if (!strcmp(a, "--sizes")) {
			bad = (o->nsizes = parse_list(v, 1, o->sizes, NULL)) < 0;
			have_sizes = 1;
		} else if (!strcmp(a, "--compute")) {
			bad = (o->ntw = parse_list(v, 0, NULL, o->tw)) < 0;
			have_tw = 1;
		} else if (!strcmp(a, "--side")) {
			if (!strcmp(v, "sender"))
				o->side = SIDE_SENDER;
			else if (!strcmp(v, "receiver"))
				o->side = SIDE_RECEIVER;
			else if (!strcmp(v, "both"))
				o->side = SIDE_BOTH;
			else
				bad = 1;
		} else if (!strcmp(a, "--reps")) {
			bad = parse_int(v, 1, 100000, &o->reps) != 0;
			have_reps = 1;
		} else if (!strcmp(a, "--warmup")) {
			bad = parse_int(v, 0, 100000, &o->warmup) != 0;
		} else if (!strcmp(a, "--calib")) {
			if (!strcmp(v, "local"))
				o->calib_rank0 = 0;
			else if (!strcmp(v, "rank0"))
				o->calib_rank0 = 1;
			else
				bad = 1;
		} else if (!strcmp(a, "--sync")) {
			if (!strcmp(v, "quiet"))
				o->spin_sync = 0;
			else if (!strcmp(v, "spin"))
				o->spin_sync = 1;
			else
				bad = 1;
		} else if (!strcmp(a, "--csv-append")) {
			o->csv_append = v;
		} else if (!strcmp(a, "--label")) {
			if (!*v || strpbrk(v, ",\"\n"))
				bad = 1;
			o->label = v;
		} else {
			snprintf(err, errlen, "unknown option: %s", a);
			return -1;
		}
		if (bad) {
			snprintf(err, errlen, "invalid value for %s: '%s'", a, v);
			return -1;
		}
		i += takes;
	}
	if (!have_sizes) {
		if (quick) {
			long q[] = { 64L << 10, 1L << 20, 16L << 20 };
			o->nsizes = 3;
			memcpy(o->sizes, q, sizeof q);
		} else {
			o->nsizes = 0;
			for (long s = 4L << 10; s <= 16L << 20; s *= 4)
				o->sizes[o->nsizes++] = s;
		}
	}
	if (!have_tw) {
		if (quick) {
			double q[] = { 0, 5, 20 };
			o->ntw = 3;
			memcpy(o->tw, q, sizeof q);
		} else {
			double d[] = { 0, 1, 2, 5, 10, 20 };
			o->ntw = 6;
			memcpy(o->tw, d, sizeof d);
		}
	}
	if (!have_reps && quick)
		o->reps = 5;
	/* t_w = 0 gives t_c: always measured, first. */
	int zero = -1;
	for (int i = 0; i < o->ntw; i++)
		if (o->tw[i] == 0)
			zero = i;
	if (zero < 0) {
		if (o->ntw == MAX_POINTS) {
			snprintf(err, errlen, "too many compute times");
			return -1;
		}
		memmove(&o->tw[1], &o->tw[0], (size_t)o->ntw * sizeof o->tw[0]);
		o->ntw++;
	} else {
		memmove(&o->tw[1], &o->tw[0], (size_t)zero * sizeof o->tw[0]);
	}
	o->tw[0] = 0;
	return 0;
}

/* ------------------------------------------------------------ helpers */

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

static double median(double *v, int n)
{
	qsort(v, (size_t)n, sizeof *v, cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
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

/* Short, comma-free MPI name for the CSV: openmpi-4.1.4, mpich-4.0.2. */
static void mpi_short_name(const char *first_line, char *out, size_t len)
{
	char ver[64] = "";
	if (!strncmp(first_line, "Open MPI v", 10)) {
		sscanf(first_line + 10, "%63[^, \t]", ver);
		snprintf(out, len, "openmpi-%s", ver);
	} else if (!strncmp(first_line, "MPICH Version:", 14)) {
		sscanf(first_line + 14, " %63[^, \t]", ver);
		snprintf(out, len, "mpich-%s", ver);
	} else {
		snprintf(out, len, "%s", first_line);
		for (char *c = out; *c; c++)
			if (*c == ',' || *c == ' ' || *c == '\t' || *c == '"')
				*c = '_';
	}
}

static void fmt_size(long s, char *out, size_t len)
{
	if (s >= (1L << 20) && s % (1L << 20) == 0)
		snprintf(out, len, "%ldMiB", s >> 20);
	else if (s >= 1024 && s % 1024 == 0)
		snprintf(out, len, "%ldKiB", s >> 10);
	else
		snprintf(out, len, "%ldB", s);
}

/* Binds the calling thread only (not the process) to the n-th CPU of its
 * current affinity mask. Returns the CPU or -1. */
static int bind_main_thread(int n)
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

/* ------------------------------------------------------ synchronisation */

/* Between iterations the rank that finished first waits for the other.
 * MPI_Barrier and MPI_Allreduce busy-poll while they wait: with both ranks
 * on one host that rank would keep a core busy while its peer computes,
 * a core that background progress could have used. The quiet variants
 * sleep-poll a non-blocking collective instead (outside the timed part). */
static void quiet_complete(MPI_Request *req)
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

/* Both ranks leave within a few microseconds: the quiet part absorbs the
 * long wait, the final MPI_Barrier (both ranks already there) aligns. */
static void sync_barrier(int spin)
{
	if (!spin) {
		MPI_Request req;
		MPI_Ibarrier(MPI_COMM_WORLD, &req);
		quiet_complete(&req);
	}
	MPI_Barrier(MPI_COMM_WORLD);
}

static void sync_max(double *in, double *out, int n, int spin)
{
	if (spin) {
		MPI_Allreduce(in, out, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
		return;
	}
	MPI_Request req;
	MPI_Iallreduce(in, out, n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD, &req);
	quiet_complete(&req);
}

/* ---------------------------------------------------------------- main */

int main(int argc, char **argv)
{
	struct opts o;
	char err[256] = "";
	int prc = parse_args(argc, argv, &o, err, sizeof err);

	/* Before MPI_Init: no MPI or piano thread exists yet. */
	double rate = prc == 0 ? calibrate() : 0;

	int provided = MPI_THREAD_SINGLE;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	int rank, size;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (prc != 0 || size != 2) {
		int code = prc == 1 ? 0 : 2;
		if (rank == 0) {
			if (prc == 1)
				fputs(usage_text, stdout);
			else if (prc < 0)
				fprintf(stderr, "bench_overlap: %s\n%s", err, usage_text);
			else
				fprintf(stderr, "bench_overlap: needs exactly 2 MPI processes, got %d\n",
				        size);
		}
		MPI_Finalize();
		return code;
	}
	const int peer = 1 - rank;
	const int sender = rank == 0;
	const int computes = o.side == SIDE_BOTH || (o.side == SIDE_SENDER) == sender;

	int cpus[2] = { -1, -1 }, cpu = o.bind ? bind_main_thread(rank) : -1;
	MPI_Gather(&cpu, 1, MPI_INT, cpus, 1, MPI_INT, 0, MPI_COMM_WORLD);

	/* Calibration of both ranks, for the header (and --calib rank0). */
	double rates[2];
	MPI_Allgather(&rate, 1, MPI_DOUBLE, rates, 1, MPI_DOUBLE, MPI_COMM_WORLD);
	if (o.calib_rank0)
		rate = rates[0];

	long maxsize = 0;
	for (int i = 0; i < o.nsizes; i++)
		if (o.sizes[i] > maxsize)
			maxsize = o.sizes[i];
	char *buf = malloc((size_t)maxsize);
	double *tt = malloc((size_t)o.reps * sizeof *tt);
	double *tw_real = malloc((size_t)o.reps * sizeof *tw_real);
	if (!buf || !tt || !tw_real) {
		fprintf(stderr, "bench_overlap: out of memory\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	memset(buf, rank + 1, (size_t)maxsize); /* no page faults while timed */

	/* Idle check: 10 ms of work, MPI initialised, nothing in flight. */
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = now_ms();
	work((uint64_t)(rate * 10.0));
	double idle_check = now_ms() - t0, idle_checks[2];
	MPI_Gather(&idle_check, 1, MPI_DOUBLE, idle_checks, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);

	char hosts[2][MPI_MAX_PROCESSOR_NAME];
	int hlen;
	memset(hosts, 0, sizeof hosts);
	MPI_Get_processor_name(hosts[rank], &hlen);
	MPI_Gather(rank == 0 ? MPI_IN_PLACE : hosts[rank], MPI_MAX_PROCESSOR_NAME, MPI_CHAR,
	           hosts[0], MPI_MAX_PROCESSOR_NAME, MPI_CHAR, 0, MPI_COMM_WORLD);

	char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
	int vlen;
	MPI_Get_library_version(version, &vlen);
	version[strcspn(version, "\r\n")] = 0;
	for (char *c = version; *c; c++)
		if (*c == '\t')
			*c = ' ';
	char mpi_name[128];
	mpi_short_name(version, mpi_name, sizeof mpi_name);

	FILE *csv = NULL;
	int csv_ok = 1;
	if (rank == 0 && o.csv_append) {
		csv = fopen(o.csv_append, "a");
		if (!csv) {
			fprintf(stderr, "bench_overlap: cannot open %s: %s\n", o.csv_append,
			        strerror(errno));
			csv_ok = 0;
		} else if (ftell(csv) == 0) {
			fputs(CSV_HEADER "\n", csv);
		}
	}
	MPI_Bcast(&csv_ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	if (!csv_ok) {
		MPI_Finalize();
		return 1;
	}

	if (rank == 0) {
		if (o.csv) {
			puts(CSV_HEADER);
		} else {
			printf("# piano overlap benchmark: MPI_Isend/MPI_Irecv + compute t_w + "
			       "MPI_Wait (APSM 5.1, PIOMan V-B)\n");
			printf("# MPI: %s\n", version);
			printf("# label: %s\n", o.label);
			printf("# side: %s (%s)\n", side_names[o.side],
			       o.side == SIDE_BOTH ? "sender and receiver compute"
			       : o.side == SIDE_SENDER ? "only the sender computes"
			                              : "only the receiver computes");
			printf("# host: rank 0 %s, rank 1 %s\n", hosts[0], hosts[1]);
			printf("# nproc: %ld\n", sysconf(_SC_NPROCESSORS_ONLN));
			double load[3];
			if (getloadavg(load, 3) == 3)
				printf("# load average at start: %.2f %.2f %.2f (other processes "
				       "make every time longer)\n", load[0], load[1], load[2]);
			printf("# reps: %d (+%d warm-up) per point; t_t = median of the slower "
			       "rank's time; %s synchronisation between iterations\n", o.reps,
			       o.warmup, o.spin_sync ? "busy-polling" : "sleep-polling");
			if (o.bind)
				printf("# binding: main thread of rank 0 on CPU %d, rank 1 on CPU %d "
				       "(-1: failed); other threads as launched\n", cpus[0], cpus[1]);
			else
				printf("# binding: as launched\n");
			printf("# thread level: MPI_THREAD_MULTIPLE requested, %s provided\n",
			       level_name(provided));
			printf("# compute: dependent FP chain calibrated before MPI_Init "
			       "(%s): rank 0 %.0f, rank 1 %.0f iterations/ms\n",
			       o.calib_rank0 ? "rank 0's speed used" : "each rank its own",
			       rates[0], rates[1]);
			printf("# idle check: 10 ms of work after MPI_Init took %.2f / %.2f ms "
			       "(rank 0 / 1)\n", idle_checks[0], idle_checks[1]);
			printf("# ratio = t_t / max(t_c, t_w): 1.00 = full overlap; "
			       "no-ovl = (t_c + t_w) / max(t_c, t_w)\n");
			printf("# work = time the computation itself took (slower computing "
			       "rank, median)\n");
			printf("# %10s %10s %10s %10s %10s %8s %8s\n", "size", "t_w(ms)",
			       "work(ms)", "t_t(ms)", "t_c(ms)", "ratio", "no-ovl");
		}
		fflush(stdout);
	}

	for (int si = 0; si < o.nsizes; si++) {
		const long bytes = o.sizes[si];
		const int count = (int)bytes;
		double tc = 0;
		for (int wi = 0; wi < o.ntw; wi++) {
			const double tw = o.tw[wi];
			const uint64_t iters = computes ? (uint64_t)llround(rate * tw) : 0;
			for (int r = -o.warmup; r < o.reps; r++) {
				MPI_Request req;
				double local[2], global[2];
				sync_barrier(o.spin_sync);
				double start = now_ms();
				if (sender)
					MPI_Isend(buf, count, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, &req);
				else
					MPI_Irecv(buf, count, MPI_BYTE, peer, TAG, MPI_COMM_WORLD, &req);
				double ws = now_ms();
				if (iters)
					work(iters);
				double we = now_ms();
				MPI_Wait(&req, MPI_STATUS_IGNORE);
				double end = now_ms();
				local[0] = end - start;
				local[1] = iters ? we - ws : 0;
				sync_max(local, global, 2, o.spin_sync);
				if (r >= 0) {
					tt[r] = global[0];
					tw_real[r] = global[1];
				}
			}
			double t_t = median(tt, o.reps);
			double t_work = median(tw_real, o.reps);
			if (wi == 0)
				tc = t_t;
			double best = tc > tw ? tc : tw;
			double ratio = best > 0 ? t_t / best : 0;
			double noovl = best > 0 ? (tc + tw) / best : 0;
			if (rank == 0) {
				if (csv)
					fprintf(csv, "%s,%s,%s,%ld,%.3f,%.3f,%.3f,%.3f\n", o.label,
					        mpi_name, side_names[o.side], bytes, tw, t_t, tc, ratio);
				if (o.csv) {
					printf("%s,%s,%s,%ld,%.3f,%.3f,%.3f,%.3f\n", o.label, mpi_name,
					       side_names[o.side], bytes, tw, t_t, tc, ratio);
				} else {
					char sz[32];
					fmt_size(bytes, sz, sizeof sz);
					printf("  %10s %10.2f %10.2f %10.2f %10.2f %8.2f %8.2f\n", sz, tw,
					       t_work, t_t, tc, ratio, noovl);
				}
				fflush(stdout);
			}
		}
	}

	if (csv && fclose(csv) != 0)
		fprintf(stderr, "bench_overlap: error writing %s\n", o.csv_append);
	free(buf);
	free(tt);
	free(tw_real);
	MPI_Finalize();
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * [groups] What piano's threads take from other processes where each
 * process is a scheduling group of its own (an autogroup per session, or a
 * cgroup with the cpu controller per job). SCHED_IDLE ranks a thread only
 * within its group, so there an idle thread is not kept off other groups'
 * CPUs by its policy alone (docs/performance.md, "Known problems").
 *
 * ncpus + 1 processes, each in a session of its own (setsid(): its own
 * autogroup where autogroups are on). Process 0 runs a spinning thread
 * beside an engine whose repeat task always reports work, so that its idle
 * thread never parks and its timer ticks; the others are plain spinners,
 * the neighbours. Each spinner records the longest time it went without
 * the CPU (its loop reads the clock: a gap is time it did not run) and the
 * CPU time it got. With ncpus + 1 equal spinners, each gets ncpus / (ncpus
 * + 1) of a CPU and waits a few ms at a time; the first row has no engine
 * at all. The table gives, per configuration of process 0's engine, the
 * neighbours' longest gap (median and maximum over repetitions) and their
 * CPU time as a share of that fair part (median).
 */
#include "benches.h"
#include "common.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MAXPROC 65

struct groups_row {
	const char *label;
	bool engine;
	const char *idle_level;      /* NULL: default */
	const char *timer_period_us; /* NULL: default */
	bool held;                   /* the MPI layer's timer: demand mode, held */
};

static const struct groups_row rows[] = {
	{ "no engine", false, NULL, NULL, false },
	{ "default", true, NULL, NULL, false },
	{ "timer only (idle none)", true, "none", NULL, false },
	{ "idle only (timer 0)", true, NULL, "0", false },
	{ "timer 10 ms", true, NULL, "10000", false },
	{ "MPI layer's timer, held", true, NULL, NULL, true },
};
#define NROWS ((int)(sizeof(rows) / sizeof(rows[0])))

static volatile unsigned work_sink;

static unsigned always_work(void *arg)
{
	(void)arg;
	for (unsigned i = 0; i < 2000; i++)
		work_sink += i;
	return 1; /* the idle thread never parks */
}

struct spin_result {
	double gap_ms; /* longest time without the CPU */
	double cpu_s;  /* CPU time of the spinning thread */
};

static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static struct spin_result spin_for(double secs)
{
	uint64_t t0 = now_ns(), last = t0, worst = 0, end = t0 + (uint64_t)(secs * 1e9);
	double c0 = thread_cpu_s();
	for (uint64_t now = t0; now < end; now = now_ns()) {
		if (now - last > worst)
			worst = now - last;
		last = now;
	}
	return (struct spin_result){ (double)worst / 1e6, thread_cpu_s() - c0 };
}

/* One process: its own session; spins beside an engine when `engine`. */
static int child(const struct groups_row *r, bool engine, double secs, int fd)
{
	if (setsid() < 0)
		return 1;
	piano_ltask_t *t = NULL;
	if (engine) {
		struct bcfg c = bcfg_default;
		c.progression = "1";
		c.idle_level = r->idle_level;
		c.timer_period_us = r->timer_period_us;
		c.block_helpers = "0";
		if (r->held) {
			/* As the MPI layer sets it up (src/mpi/init.c) while a
			 * tracked operation is in flight. */
			setenv("PIANO_TIMER_MODE", "demand", 1);
			setenv("PIANO_TIMER_MAX_US", "4000", 1);
		}
		if (bench_piano_init(&c) || (r->held && piano_timer_hold(0)) ||
		    piano_ltask_create(always_work, NULL, PIANO_LTASK_REPEAT, &t) ||
		    piano_ltask_submit(t))
			return 1;
	}
	struct spin_result res = spin_for(secs);
	if (engine) {
		if (r->held)
			piano_timer_release(0);
		piano_ltask_cancel(t);
		piano_ltask_wait(t);
		piano_ltask_destroy(t);
		bench_piano_finalize();
	}
	return write(fd, &res, sizeof(res)) == (ssize_t)sizeof(res) ? 0 : 1;
}

/* One repetition: the neighbours' longest gap and mean CPU share. */
static int run_once(const struct groups_row *r, int nproc, double secs, double *gap_ms,
                    double *share)
{
	int fds[MAXPROC];
	pid_t pids[MAXPROC];
	int started = 0;
	bool failed = false;
	fflush(stdout);
	for (; started < nproc; started++) {
		int p[2];
		if (pipe(p) != 0)
			break;
		pid_t pid = fork();
		if (pid < 0) {
			close(p[0]);
			close(p[1]);
			break;
		}
		if (pid == 0) {
			close(p[0]);
			_exit(child(r, r->engine && started == 0, secs, p[1]));
		}
		close(p[1]);
		fds[started] = p[0];
		pids[started] = pid;
	}
	if (started < nproc) {
		fprintf(stderr, "piano-bench-core: groups: cannot start process %d of %d\n",
		        started + 1, nproc);
		failed = true; /* the ones started still run to their end and are reaped */
	}
	double worst = 0, cpu = 0;
	for (int i = 0; i < started; i++) {
		struct spin_result res = { -1, 0 };
		if (read(fds[i], &res, sizeof(res)) != (ssize_t)sizeof(res))
			failed = true;
		close(fds[i]);
		int st = 0;
		waitpid(pids[i], &st, 0);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			failed = true;
		if (i == 0 && r->engine)
			continue; /* the engine's own spinner is not a neighbour */
		if (res.gap_ms > worst)
			worst = res.gap_ms;
		cpu += res.cpu_s;
	}
	if (failed) {
		fprintf(stderr, "piano-bench-core: groups: a process did not start, report its "
		                "result or exit with 0\n");
		return -1;
	}
	int neighbours = r->engine ? nproc - 1 : nproc;
	double fair = secs * (double)(nproc - 1) / (double)nproc;
	*gap_ms = worst;
	*share = cpu / neighbours / fair;
	return 0;
}

static const char *groups_state(char *buf, size_t len)
{
	FILE *f = fopen("/proc/sys/kernel/sched_autogroup_enabled", "r");
	int on = -1;
	if (f) {
		if (fscanf(f, "%d", &on) != 1)
			on = -1;
		fclose(f);
	}
	snprintf(buf, len, "kernel.sched_autogroup_enabled=%s",
	         on < 0 ? "unknown"
	         : on   ? "1 (each session a group)"
	                : "0 (no autogroups)");
	return buf;
}

int bench_groups(void)
{
	int nproc = bench_ncpus() + 1;
	if (nproc > MAXPROC)
		nproc = MAXPROC;
	int reps = QF(1, 5);
	double secs = QF(2.0, 6.0);
	char gs[96];
	struct table t;
	table_begin(&t, "groups",
	            "neighbours' CPU beside an engine, each process a scheduling group of its own");
	table_note(&t,
	           "%d processes, each setsid(); process 0: spinner + engine with an "
	           "always-busy repeat task; the others: plain spinners",
	           nproc);
	table_note(&t, "%s", groups_state(gs, sizeof(gs)));
	table_note(&t,
	           "%d repetitions of %.0f s; gap = neighbours' longest time without the "
	           "CPU; share = their CPU time / their fair part",
	           reps, secs);
	static const struct col cols[] = {
		{ "engine of process 0", 24 },
		{ "gap med ms", 10 },
		{ "gap max ms", 10 },
		{ "share med", 9 },
	};
	table_columns(&t, cols, 4);
	/* Rows alternate within each repetition: the machine's load drifts. */
	double gaps[NROWS][5], shares[NROWS][5];
	for (int k = 0; k < reps; k++)
		for (int i = 0; i < NROWS; i++)
			if (run_once(&rows[i], nproc, secs, &gaps[i][k], &shares[i][k]))
				return -1;
	for (int i = 0; i < NROWS; i++) {
		double max = 0;
		for (int k = 0; k < reps; k++)
			if (gaps[i][k] > max)
				max = gaps[i][k];
		table_row(&t,
		          (struct cell[]){ CS(rows[i].label), CF(median_of(gaps[i], (size_t)reps)),
		                           CF(max), CF(median_of(shares[i], (size_t)reps)) });
	}
	table_end(&t);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * [reaction] Submit-to-execution latency of a one-shot task: the submitter
 * reads CLOCK_MONOTONIC right before piano_ltask_submit(), the task reads it
 * first thing in its callback. Per polling point:
 *
 * explicit      PROGRESSION=0; the submitter calls piano_poll() right after
 *               submitting.
 * idle/busy     idle threads only (IDLE_LEVEL=machine, TIMER_PERIOD_US=0);
 *               the submitter sleeps after submitting; a repeat task that
 *               returns 0 stays in the engine so the idle thread keeps
 *               polling (never parks).
 * idle/parked   same without that task: the idle thread parks between
 *               samples and the submit has to wake it.
 * timer/busy    IDLE_LEVEL=none, TIMER_PERIOD_US=1000, one spinning thread
 *               pinned on every CPU (full load); engine kept busy as above.
 * timer/parked  same, the timer thread parks between samples.
 *
 * Between samples the submitter sleeps a random gap so that samples do not
 * lock onto the pollers' phase. The submitter only tests the task
 * (piano_ltask_test, which never polls) while it waits for completion.
 */
#include "benches.h"
#include "common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

enum kind { K_EXPLICIT, K_SLEEP };

struct variant {
	const char *name;
	enum kind kind;
	bool keepalive;  /* a repeat task keeps the engine busy */
	bool load;       /* one spinning thread per CPU */
	const char *idle_level;
	const char *timer_us;
	const char *progression;
	int samples_quick, samples_full;
	uint64_t gap_min_ns, gap_max_ns;
	const char *goal;     /* printed */
	int goal_stat;        /* 0 none, 1 median, 2 max */
	double goal_us;
};

static const struct variant variants[] = {
	{ "explicit", K_EXPLICIT, false, false, "package", "1000", "0", 20000, 200000, 0, 0,
	  "-", 0, 0 },
	{ "idle/busy", K_SLEEP, true, false, "machine", "0", "1", 500, 4000, 100000, 600000,
	  "med<=10", 1, 10 },
	{ "idle/parked", K_SLEEP, false, false, "machine", "0", "1", 500, 4000, 100000, 600000,
	  "med<=10", 1, 10 },
	{ "timer/busy", K_SLEEP, true, true, "none", "1000", "1", 200, 1500, 100000, 1100000,
	  "max<=1000", 2, 1000 },
	{ "timer/parked", K_SLEEP, false, true, "none", "1000", "1", 200, 1500, 100000, 1100000,
	  "max<=1000", 2, 1000 },
};
#define NVARIANTS ((int)(sizeof(variants) / sizeof(variants[0])))

#define TIMEOUT_NS 1000000000ull
#define MAX_LOAD 1024

static struct bcfg variant_cfg(const struct variant *v)
{
	struct bcfg c = bcfg_default;
	c.progression = v->progression;
	c.idle_level = v->idle_level;
	c.timer_period_us = v->timer_us;
	return c;
}

/* ------------------------------------------------------------- tasks */

static _Atomic uint64_t t_run;

static unsigned probe(void *arg)
{
	(void)arg;
	atomic_store_explicit(&t_run, now_ns(), memory_order_release);
	return 1;
}

static unsigned idle_task(void *arg)
{
	(void)arg;
	return 0;
}

/* ------------------------------------------------------------- load */

struct load {
	atomic_int stop;
	int n;
	pthread_t tid[MAX_LOAD];
};

struct spinner_arg {
	struct load *l;
	int cpu;
};

static void *spinner(void *arg)
{
	struct spinner_arg *a = arg;
	struct load *l = a->l;
	pin_self(a->cpu);
	free(a);
	volatile uint64_t x = 0;
	while (!atomic_load_explicit(&l->stop, memory_order_relaxed))
		x = x + 1;
	return NULL;
}

static int load_start(struct load *l)
{
	memset(l, 0, sizeof(*l));
	int n = bench_ncpus() < MAX_LOAD ? bench_ncpus() : MAX_LOAD;
	for (int i = 0; i < n; i++) {
		struct spinner_arg *a = malloc(sizeof(*a));
		if (!a)
			return -1;
		a->l = l;
		a->cpu = i;
		SCHECK(pthread_create(&l->tid[i], NULL, spinner, a));
		l->n++;
	}
	return 0;
}

static void load_stop(struct load *l)
{
	atomic_store(&l->stop, 1);
	for (int i = 0; i < l->n; i++)
		pthread_join(l->tid[i], NULL);
}

/* ---------------------------------------------------------- sampling */

/* Samples are taken until n are collected or the time budget is spent
 * (a starved SCHED_IDLE thread could otherwise make a run last minutes on a
 * busy machine); *got says how many. */
static int measure(const struct variant *v, int n, double *lat, int *got, int *timeouts)
{
	uint64_t budget = QF(3, 20) * 1000000000ull, start;
	piano_ltask_t *task, *keep = NULL;
	uint64_t rng = 0x1234567u;
	struct load load;
	*timeouts = 0;
	struct bcfg c = variant_cfg(v);
	if (bench_piano_init(&c))
		return -1;
	int nidle = 0, ntimer = 0;
	PCHECK(piano_thread_count(PIANO_POINT_IDLE, &nidle));
	PCHECK(piano_thread_count(PIANO_POINT_TIMER, &ntimer));
	if (v->kind == K_SLEEP && nidle + ntimer == 0)
		fprintf(stderr, "piano-bench-core: reaction %s: the engine started no idle or "
		                "timer thread\n", v->name);
	PCHECK(piano_ltask_create(probe, NULL, PIANO_LTASK_ONESHOT, &task));
	if (v->keepalive) {
		PCHECK(piano_ltask_create(idle_task, NULL, PIANO_LTASK_REPEAT, &keep));
		PCHECK(piano_ltask_submit(keep));
	}
	if (v->load && load_start(&load))
		return -1;
	sleep_ns(20000000); /* let the threads settle */

	start = now_ns();
	*got = 0;
	for (int i = -10; i < n; i++) { /* i < 0: warm-up */
		if (i >= 0 && now_ns() - start > budget)
			break;
		if (v->kind == K_SLEEP)
			sleep_ns(v->gap_min_ns + rand_next(&rng) % (v->gap_max_ns - v->gap_min_ns));
		atomic_store(&t_run, 0);
		uint64_t t0 = now_ns();
		PCHECK(piano_ltask_submit(task));
		if (v->kind == K_EXPLICIT) {
			while (piano_ltask_test(task) != 0)
				PCHECK(piano_poll());
		} else {
			sleep_ns(50000);
			while (piano_ltask_test(task) != 0) {
				if (now_ns() - t0 > TIMEOUT_NS) {
					/* Nobody ran it: run it ourselves, count it. */
					(*timeouts)++;
					while (piano_ltask_test(task) != 0)
						PCHECK(piano_poll_all());
					break;
				}
				sleep_ns(20000);
			}
		}
		uint64_t t1 = atomic_load_explicit(&t_run, memory_order_acquire);
		if (i >= 0) {
			lat[i] = (double)(t1 - t0) / 1e3;
			*got = i + 1;
		}
	}

	if (v->load)
		load_stop(&load);
	if (keep) {
		PCHECK(piano_ltask_complete(keep));
		PCHECK(piano_ltask_wait(keep));
		PCHECK(piano_ltask_destroy(keep));
	}
	PCHECK(piano_ltask_destroy(task));
	return bench_piano_finalize();
}

int bench_reaction(void)
{
	static const struct col cols[] = {
		{ "Variant", 12 }, { "Samples", 7 }, { "med(us)", 9 }, { "q1", 8 },
		{ "q3", 8 },       { "p90", 8 },     { "p99", 8 },     { "max", 9 },
		{ "timeouts", 8 }, { "goal(us)", 9 }, { "met", 3 },
	};
	struct table tb;
	char cfg[512];
	table_begin(&tb, "reaction", "submit-to-execution latency of a one-shot task");
	for (int i = 0; i < NVARIANTS; i++) {
		struct bcfg c = variant_cfg(&variants[i]);
		bcfg_format(&c, cfg, sizeof(cfg));
		table_note(&tb, "%-12s %s%s%s", variants[i].name, cfg,
		           variants[i].keepalive ? " +1 repeat task pending" : "",
		           variants[i].load ? " +1 spinning thread per CPU" : "");
	}
	table_note(&tb, "explicit: piano_poll() right after submit; others: the submitter sleeps "
	                "after submit, random gap between samples");
	table_note(&tb, "latency = task start - time before submit (CLOCK_MONOTONIC), us; "
	                "timeouts: not run after %.0f s (then run by an explicit poll)",
	           (double)TIMEOUT_NS / 1e9);
	table_note(&tb, "samples: up to %d (quick) / %d (full) per variant, fewer when the %.0f s "
	                "budget of a variant runs out",
	           variants[1].samples_quick, variants[1].samples_full,
	           (double)QF(3, 20));
	table_columns(&tb, cols, (int)(sizeof(cols) / sizeof(cols[0])));

	for (int i = 0; i < NVARIANTS; i++) {
		const struct variant *v = &variants[i];
		int n = QF(v->samples_quick, v->samples_full);
		double *lat = calloc((size_t)n, sizeof(double));
		int timeouts, got;
		if (!lat || measure(v, n, lat, &got, &timeouts))
			return -1;
		struct summary s;
		summarize(lat, (size_t)got, &s);
		const char *met = "-";
		if (v->goal_stat == 1)
			met = yesno(s.med <= v->goal_us);
		else if (v->goal_stat == 2)
			met = yesno(s.max <= v->goal_us);
		table_row(&tb, (struct cell[]){ CS(v->name), CI(got), CF(s.med), CF(s.q1), CF(s.q3),
		                                CF(s.p90), CF(s.p99), CF(s.max), CI(timeouts),
		                                CS(v->goal), CS(met) });
		free(lat);
	}
	table_end(&tb);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * [submit] Submission throughput under contention, PROGRESSION=0.
 *
 * T submitter threads (unbound) each own a pool of one-shot tasks: a task
 * whose completion the thread observes (piano_ltask_test) is resubmitted at
 * once; a pass over the pool that finds nothing to resubmit yields the CPU.
 * Two poller threads call piano_poll_all() in a loop and yield the CPU when
 * a poll did nothing. Throughput = tasks
 * completed (and seen completed by their owner) per second during a fixed
 * window.
 *
 * Baseline: the same pattern on a pthread_mutex-protected linked list:
 * submit = lock, append, unlock; poll = lock, detach the whole list, unlock,
 * run every task and publish its completion (release store). Piano and the
 * baseline alternate within each repetition; the ratio column is the median
 * of the per-repetition ratios piano/baseline.
 */
#include "benches.h"
#include "common.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#define POOL 64
#define NPOLLERS 2
#define MAX_SUBMITTERS 16

/* ---------------------------------------------------------- baseline */

struct mq_task {
	struct mq_task *next;
	unsigned (*fn)(void *);
	void *arg;
	atomic_int done;
};

struct mq {
	pthread_mutex_t lock;
	struct mq_task *head, *tail;
};

static void mq_submit(struct mq *q, struct mq_task *t)
{
	atomic_store_explicit(&t->done, 0, memory_order_relaxed);
	t->next = NULL;
	pthread_mutex_lock(&q->lock);
	if (q->tail)
		q->tail->next = t;
	else
		q->head = t;
	q->tail = t;
	pthread_mutex_unlock(&q->lock);
}

static unsigned mq_poll(struct mq *q)
{
	pthread_mutex_lock(&q->lock);
	struct mq_task *t = q->head;
	q->head = q->tail = NULL;
	pthread_mutex_unlock(&q->lock);
	unsigned n = 0;
	while (t) {
		struct mq_task *next = t->next;
		t->fn(t->arg);
		atomic_store_explicit(&t->done, 1, memory_order_release);
		n++;
		t = next;
	}
	return n;
}

/* ----------------------------------------------------------- harness */

static unsigned noop(void *arg)
{
	(void)arg;
	return 0;
}

struct run {
	bool use_piano;
	struct mq mq;
	atomic_int ready;
	atomic_int go;
	atomic_int stop;     /* submitters stop resubmitting */
	atomic_int pstop;    /* pollers stop */
	int failed;
};

struct submitter {
	struct run *run;
	pthread_t tid;
	piano_ltask_t *pt[POOL];
	struct mq_task mt[POOL];
	uint64_t completed;
};

static void wait_go(struct run *r)
{
	atomic_fetch_add(&r->ready, 1);
	while (!atomic_load_explicit(&r->go, memory_order_acquire))
		cpu_relax();
}

static void *poller_main(void *arg)
{
	struct run *r = arg;
	wait_go(r);
	while (!atomic_load_explicit(&r->pstop, memory_order_relaxed)) {
		int work;
		if (r->use_piano) {
			work = piano_poll_all();
			if (work < 0) {
				r->failed = 1;
				break;
			}
		} else {
			work = (int)mq_poll(&r->mq);
		}
		/* Nothing to do: let the submitters run (2 cores are shared by
		 * T + 2 threads; a poller that never yields would hold a core
		 * for a whole time slice while the submitters wait). */
		if (!work)
			sched_yield();
	}
	return NULL;
}

static bool task_done(struct submitter *s, int i)
{
	if (s->run->use_piano)
		return piano_ltask_test(s->pt[i]) == 0;
	return atomic_load_explicit(&s->mt[i].done, memory_order_acquire) != 0;
}

static void task_submit(struct submitter *s, int i)
{
	if (s->run->use_piano) {
		if (piano_ltask_submit(s->pt[i]) != 0)
			s->run->failed = 1;
	} else {
		mq_submit(&s->run->mq, &s->mt[i]);
	}
}

static void *submitter_main(void *arg)
{
	struct submitter *s = arg;
	struct run *r = s->run;
	wait_go(r);
	for (int i = 0; i < POOL; i++)
		task_submit(s, i);
	uint64_t n = 0;
	while (!atomic_load_explicit(&r->stop, memory_order_relaxed)) {
		unsigned did = 0;
		for (int i = 0; i < POOL; i++)
			if (task_done(s, i)) {
				task_submit(s, i);
				did++;
			}
		n += did;
		if (!did)
			sched_yield();
	}
	s->completed = n;
	/* Drain: every task must be finished before the next run reuses it. */
	for (int i = 0; i < POOL; i++)
		while (!task_done(s, i))
			sched_yield();
	return NULL;
}

/* One window of `ns` with t submitters; returns M tasks/s, < 0 on error. */
static double run_once(struct submitter *subs, int t, bool use_piano, uint64_t ns)
{
	struct run *r = subs[0].run;
	pthread_t pollers[NPOLLERS];
	atomic_store(&r->ready, 0);
	atomic_store(&r->go, 0);
	atomic_store(&r->stop, 0);
	atomic_store(&r->pstop, 0);
	r->use_piano = use_piano;
	r->failed = 0;
	for (int i = 0; i < NPOLLERS; i++)
		if (pthread_create(&pollers[i], NULL, poller_main, r))
			return -1;
	for (int i = 0; i < t; i++)
		if (pthread_create(&subs[i].tid, NULL, submitter_main, &subs[i]))
			return -1;
	while (atomic_load(&r->ready) < t + NPOLLERS)
		sched_yield();
	uint64_t t0 = now_ns();
	atomic_store_explicit(&r->go, 1, memory_order_release);
	sleep_ns(ns);
	atomic_store(&r->stop, 1);
	uint64_t t1 = now_ns();
	for (int i = 0; i < t; i++)
		pthread_join(subs[i].tid, NULL);
	atomic_store(&r->pstop, 1);
	for (int i = 0; i < NPOLLERS; i++)
		pthread_join(pollers[i], NULL);
	if (r->failed)
		return -1;
	uint64_t n = 0;
	for (int i = 0; i < t; i++)
		n += subs[i].completed;
	return (double)n / (double)(t1 - t0) * 1e3;
}

int bench_submit(void)
{
	static const int ts[] = { 1, 2, 4, 8, 16 };
	static const struct col cols[] = {
		{ "Submitters", 10 }, { "piano(M/s)", 10 }, { "q1", 7 },       { "q3", 7 },
		{ "mutex(M/s)", 10 }, { "q1", 7 },          { "q3", 7 },       { "ratio", 6 },
		{ "bg%", 5 },
	};
	int reps = QF(3, 7);
	uint64_t window = QF(100, 300) * 1000000ull;
	struct table tb;
	char cfg[512];
	struct bcfg c = bcfg_default;
	c.progression = "0";
	bcfg_format(&c, cfg, sizeof(cfg));

	table_begin(&tb, "submit", "submission throughput under contention (one-shot tasks)");
	table_note(&tb, "settings: %s", cfg);
	table_note(&tb, "%d poller threads calling piano_poll_all() in a loop (sched_yield() when it did nothing); each submitter "
	                "resubmits its %d pre-created tasks as they complete; threads unbound",
	           NPOLLERS, POOL);
	table_note(&tb, "baseline: pthread_mutex linked-list queue, same pattern (poll = detach "
	                "the whole list under the lock, run it outside)");
	table_note(&tb, "repetitions: %d windows of %.0f ms per implementation, alternating; "
	                "ratio = median of per-repetition piano/mutex",
	           reps, (double)window / 1e6);
	table_note(&tb, "bg%%: median share of the machine's CPU time used by other processes "
	                "during a repetition");
	table_columns(&tb, cols, (int)(sizeof(cols) / sizeof(cols[0])));

	if (bench_piano_init(&c))
		return -1;
	struct run *run = calloc(1, sizeof(*run));
	struct submitter *subs = calloc(MAX_SUBMITTERS, sizeof(*subs));
	double *vp = calloc((size_t)reps, sizeof(double));
	double *vm = calloc((size_t)reps, sizeof(double));
	double *vr = calloc((size_t)reps, sizeof(double));
	double *vg = calloc((size_t)reps, sizeof(double));
	if (!run || !subs || !vp || !vm || !vr || !vg)
		return -1;
	SCHECK(pthread_mutex_init(&run->mq.lock, NULL));
	for (int i = 0; i < MAX_SUBMITTERS; i++) {
		subs[i].run = run;
		for (int j = 0; j < POOL; j++) {
			PCHECK(piano_ltask_create(noop, NULL, PIANO_LTASK_ONESHOT, &subs[i].pt[j]));
			subs[i].mt[j].fn = noop;
		}
	}
	for (size_t ti = 0; ti < sizeof(ts) / sizeof(ts[0]); ti++) {
		int t = ts[ti];
		for (int rep = 0; rep < reps; rep++) {
			/* Alternate which implementation goes first. */
			bool piano_first = rep % 2 == 0;
			struct load_sample l0, l1;
			double steal;
			load_sample(&l0);
			double a = run_once(subs, t, piano_first, window);
			double b = run_once(subs, t, !piano_first, window);
			if (a < 0 || b < 0) {
				fprintf(stderr, "piano-bench-core: submit: a run failed\n");
				return -1;
			}
			load_sample(&l1);
			if (!load_delta(&l0, &l1, &vg[rep], &steal))
				vg[rep] = -1;
			vp[rep] = piano_first ? a : b;
			vm[rep] = piano_first ? b : a;
			vr[rep] = vm[rep] > 0 ? vp[rep] / vm[rep] : 0.0;
		}
		struct summary sp, sm;
		summarize(vp, (size_t)reps, &sp);
		summarize(vm, (size_t)reps, &sm);
		double ratio = median_of(vr, (size_t)reps);
		double bg = median_of(vg, (size_t)reps);
		table_row(&tb, (struct cell[]){ CI(t), CF(sp.med), CF(sp.q1), CF(sp.q3), CF(sm.med),
		                                CF(sm.q1), CF(sm.q3), CF(ratio), CF(bg) });
	}
	table_end(&tb);
	for (int i = 0; i < MAX_SUBMITTERS; i++)
		for (int j = 0; j < POOL; j++)
			PCHECK(piano_ltask_destroy(subs[i].pt[j]));
	pthread_mutex_destroy(&run->mq.lock);
	free(vg);
	free(vr);
	free(vm);
	free(vp);
	free(subs);
	free(run);
	return bench_piano_finalize();
}

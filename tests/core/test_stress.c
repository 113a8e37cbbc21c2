/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.stress — every submitted task runs exactly once under contention:
 * 8 submitter threads, 3 threads calling piano_poll() in a loop, and the
 * engine's own threads (default configuration). Each submitter submits
 * N one-shot tasks (N = 250000, 4000 with PIANO_TEST_SCALE=small, or argv[1]);
 * each run increments the counter of its task number, and at the end every
 * counter is exactly 1 (none lost, none run twice).
 *
 * Submitters keep a window of 64 reusable task objects; each task signals
 * a piano_cond when it ran, and the submitter waits on that cond
 * (piano_cond_wait, then piano_ltask_wait) before resubmitting the object.
 * Every 8th task is instead a fresh PIANO_LTASK_NOWAIT task whose destructor
 * must also be called exactly once.
 */
#include "common.h"

#define NSUB 8
#define NPOLL 3
#define WINDOW 64

struct slot {
	piano_ltask_t *t;
	piano_cond_t done;
	long idx;
	int used;
};

struct submitter {
	int id;
	pthread_t th;
	struct slot slots[WINDOW];
	atomic_long progress;
};

static long per_sub;
static _Atomic unsigned char *runs;
static _Atomic unsigned char *dtors;
static atomic_long nowait_expected, nowait_done, total_runs;
static atomic_int stop_pollers;
static struct submitter subs[NSUB];

static unsigned cb_slot(void *arg)
{
	struct slot *s = arg;
	long idx = s->idx;
	atomic_fetch_add_explicit(&runs[idx], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&total_runs, 1, memory_order_relaxed);
	/* last touch of the slot: the submitter may reuse it afterwards */
	piano_cond_signal(&s->done, 1);
	return 1;
}

static unsigned cb_nowait(void *arg)
{
	long idx = (long)(intptr_t)arg;
	atomic_fetch_add_explicit(&runs[idx], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&total_runs, 1, memory_order_relaxed);
	return 1;
}

static void dtor_nowait(void *arg)
{
	long idx = (long)(intptr_t)arg;
	atomic_fetch_add_explicit(&dtors[idx], 1, memory_order_relaxed);
	atomic_fetch_add(&nowait_done, 1);
}

static void progress_report(void);

static void reclaim(struct slot *s, long idx)
{
	if (!s->used)
		return;
	/* generous bound: a task that never runs is reported, not a hang */
	int rc = piano_cond_wait_timeout(&s->done, 1, 30000000);
	if (rc == PIANO_ETIMEDOUT) {
		progress_report();
		FAIL("task %ld was not run within 30 s of being waited for (lost?); its state "
		     "is %s", s->idx, test_statename(piano_ltask_state(s->t)));
	}
	if (rc != 0)
		FAIL("piano_cond_wait_timeout on the slot of task %ld returned %d (%s)", s->idx,
		     rc, test_errname(rc));
	rc = piano_ltask_wait(s->t);
	if (rc != 0)
		FAIL("piano_ltask_wait(task %ld) returned %d (%s) (before submitting %ld)", s->idx,
		     rc, test_errname(rc), idx);
	CHECK_OK(piano_cond_clear(&s->done, 1));
	s->used = 0;
}

static void *submitter_main(void *arg)
{
	struct submitter *sub = arg;
	long base = (long)sub->id * per_sub;

	for (int i = 0; i < WINDOW; i++) {
		CHECK_OK(piano_ltask_create(cb_slot, &sub->slots[i], PIANO_LTASK_ONESHOT,
		                            &sub->slots[i].t));
		CHECK_OK(piano_cond_init(&sub->slots[i].done, 0));
	}
	for (long n = 0; n < per_sub; n++) {
		long idx = base + n;
		if (n % 8 == 7) {
			piano_ltask_t *t;
			CHECK_OK(piano_ltask_create(cb_nowait, (void *)(intptr_t)idx,
			                            PIANO_LTASK_ONESHOT | PIANO_LTASK_NOWAIT, &t));
			CHECK_OK(piano_ltask_set_dtor(t, dtor_nowait));
			atomic_fetch_add(&nowait_expected, 1);
			CHECK_OK(piano_ltask_submit(t));
		} else {
			struct slot *s = &sub->slots[n % WINDOW];
			reclaim(s, idx);
			s->idx = idx;
			s->used = 1;
			int rc = piano_ltask_submit(s->t);
			if (rc != 0)
				FAIL("submitter %d: piano_ltask_submit(task %ld) returned %d (%s)",
				     sub->id, idx, rc, test_errname(rc));
		}
		atomic_store_explicit(&sub->progress, n + 1, memory_order_relaxed);
	}
	for (int i = 0; i < WINDOW; i++) {
		reclaim(&sub->slots[i], -1);
		CHECK_OK(piano_ltask_destroy(sub->slots[i].t));
		CHECK_OK(piano_cond_destroy(&sub->slots[i].done));
	}
	return NULL;
}

static void *poller_main(void *arg)
{
	(void)arg;
	while (!atomic_load_explicit(&stop_pollers, memory_order_relaxed)) {
		int rc = piano_poll();
		if (rc < 0)
			FAIL("piano_poll() in a poller thread returned %d (%s)", rc,
			     test_errname(rc));
		if (rc == 0)
			sched_yield();
	}
	return NULL;
}

static void progress_report(void)
{
	long done = 0;
	for (int i = 0; i < NSUB; i++)
		done += atomic_load(&subs[i].progress);
	fprintf(stderr, "  progress: %ld/%ld submitted, %ld runs, nowait dtors %ld/%ld\n", done,
	        per_sub * NSUB, atomic_load(&total_runs), atomic_load(&nowait_done),
	        atomic_load(&nowait_expected));
}

int main(int argc, char **argv)
{
	pthread_t pollers[NPOLL];

	test_watchdog(115);
	per_sub = test_scale(250000, 4000);
	if (argc > 1) {
		char *end;
		per_sub = strtol(argv[1], &end, 10);
		if (*end || per_sub <= 0) {
			fprintf(stderr, "usage: %s [tasks per submitter]\n", argv[0]);
			return TEST_FAIL;
		}
	}
	long total = per_sub * NSUB;
	runs = calloc((size_t)total, sizeof *runs);
	dtors = calloc((size_t)total, sizeof *dtors);
	CHECK(runs && dtors, "calloc of %ld counters failed", total);

	test_setenv("PIANO_PROGRESSION", "1");
	CHECK_OK(piano_init());
	printf("stress: %d submitters x %ld tasks, %d pollers, engine threads idle=%d "
	       "timer=%d block=%d\n",
	       NSUB, per_sub, NPOLL, test_thread_count(PIANO_POINT_IDLE),
	       test_thread_count(PIANO_POINT_TIMER), test_thread_count(PIANO_POINT_BLOCK));

	double t0 = test_now();
	test_phase("stress: submitting");
	for (int i = 0; i < NPOLL; i++)
		test_thread_start(&pollers[i], poller_main, NULL);
	for (int i = 0; i < NSUB; i++) {
		subs[i].id = i;
		atomic_init(&subs[i].progress, 0);
		test_thread_start(&subs[i].th, submitter_main, &subs[i]);
	}
	for (int i = 0; i < NSUB; i++)
		pthread_join(subs[i].th, NULL);

	test_phase("stress: waiting for the NOWAIT destructors");
	double deadline = test_now() + 30.0;
	while (atomic_load(&nowait_done) < atomic_load(&nowait_expected)) {
		if (test_now() > deadline) {
			progress_report();
			FAIL("NOWAIT tasks not all finished 30 s after the last submit");
		}
		test_sleep_us(1000);
	}
	atomic_store(&stop_pollers, 1);
	for (int i = 0; i < NPOLL; i++)
		pthread_join(pollers[i], NULL);
	double dt = test_now() - t0;

	long lost = 0, dup = 0, dlost = 0, ddup = 0;
	long first_bad = -1;
	for (long i = 0; i < total; i++) {
		unsigned r = atomic_load_explicit(&runs[i], memory_order_relaxed);
		if (r != 1 && first_bad < 0)
			first_bad = i;
		lost += r == 0;
		dup += r > 1;
		if (i % per_sub % 8 == 7) {
			unsigned d = atomic_load_explicit(&dtors[i], memory_order_relaxed);
			dlost += d == 0;
			ddup += d > 1;
		} else {
			CHECK(atomic_load_explicit(&dtors[i], memory_order_relaxed) == 0,
			      "destructor called for task %ld which has none", i);
		}
	}
	if (lost || dup || dlost || ddup) {
		progress_report();
		FAIL("%ld tasks never ran, %ld ran more than once (first bad: task %ld ran %u "
		     "times); NOWAIT destructors: %ld missing, %ld called more than once",
		     lost, dup, first_bad, first_bad >= 0 ? (unsigned)runs[first_bad] : 0u,
		     dlost, ddup);
	}
	CHECK_EQ(atomic_load(&total_runs), total);

	struct piano_stats st[PIANO_POINT_COUNT];
	uint64_t sum = 0;
	for (int p = 0; p < PIANO_POINT_COUNT; p++) {
		st[p] = test_stats(p);
		sum += st[p].ltasks_run;
	}
	CHECK(sum >= (uint64_t)total, "the points' ltasks_run add up to %llu, expected >= %ld",
	      (unsigned long long)sum, total);

	test_phase("stress: piano_finalize");
	CHECK_OK(piano_finalize());
	printf("stress: ok, %ld tasks in %.2f s (runs by point: explicit %llu idle %llu timer "
	       "%llu block %llu)\n",
	       total, dt, (unsigned long long)st[0].ltasks_run,
	       (unsigned long long)st[1].ltasks_run, (unsigned long long)st[2].ltasks_run,
	       (unsigned long long)st[3].ltasks_run);
	free((void *)runs);
	free((void *)dtors);
	return TEST_PASS;
}

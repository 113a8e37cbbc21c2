/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * [cond] Wake-up latency of piano_cond_wait(): a waiter thread (pinned on
 * the first CPU) waits on a piano_cond; a signaller thread (pinned on the
 * second CPU) reads CLOCK_MONOTONIC and calls piano_cond_signal(); the
 * waiter reads the clock as soon as its wait returns.
 *
 * spinning  PIANO_SPIN_US=10000000: the waiter is still in its explicit
 *           polling phase when the signal comes (signal ~10 us after the
 *           waiter announced itself).
 * blocked   PIANO_SPIN_US=0: the signaller waits until the waiter has set
 *           the cond's waiters bit (bit 31, documented as reserved for
 *           waiters) and 20 us more, so the waiter sleeps in the futex.
 *
 * blocked% = share of samples where the waiters bit was set right before
 * the signal (checks that each variant measures what it claims).
 * Both variants run with PROGRESSION=1, IDLE_LEVEL=none and the timer
 * parked (no task), since waits never block without progression threads.
 */
#include "benches.h"
#include "common.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define WAITERS_BIT 0x80000000u
#define WARMUP 20

struct variant {
	const char *name;
	const char *spin_us;
	bool blocked;
	int samples_quick, samples_full;
};

static const struct variant variants[] = {
	{ "spinning", "10000000", false, 4000, 40000 },
	{ "blocked", "0", true, 1500, 15000 },
};
#define NVARIANTS ((int)(sizeof(variants) / sizeof(variants[0])))

struct shared {
	piano_cond_t cond;
	const struct variant *v;
	int n;            /* samples after warm-up */
	double *lat;      /* us */
	atomic_int ready; /* sequence number the waiter is about to wait for */
	atomic_int done;  /* sequence number the waiter has finished */
	atomic_int last;  /* last sequence number (lowered when the budget is spent) */
	uint64_t deadline;
	_Atomic uint64_t t_sig;
	int nblocked;
	int failed;
};

static uint32_t cond_word(piano_cond_t *c)
{
	return __atomic_load_n(&c->word, __ATOMIC_ACQUIRE);
}

static void *waiter(void *arg)
{
	struct shared *sh = arg;
	if (pin_self(0))
		fprintf(stderr, "piano-bench-core: cond: cannot pin the waiter\n");
	for (int seq = 1; seq <= atomic_load(&sh->last); seq++) {
		atomic_store_explicit(&sh->ready, seq, memory_order_release);
		int rc = piano_cond_wait(&sh->cond, 1);
		uint64_t t = now_ns();
		if (rc != 0) {
			fprintf(stderr, "piano-bench-core: cond: wait: %s\n", piano_strerror(rc));
			sh->failed = 1;
			atomic_store(&sh->done, sh->n + WARMUP + 1);
			return NULL;
		}
		uint64_t ts = atomic_load_explicit(&sh->t_sig, memory_order_relaxed);
		if (seq > WARMUP)
			sh->lat[seq - WARMUP - 1] = (double)(t - ts) / 1e3;
		piano_cond_clear(&sh->cond, 1);
		atomic_store_explicit(&sh->done, seq, memory_order_release);
	}
	return NULL;
}

static void *signaller(void *arg)
{
	struct shared *sh = arg;
	if (pin_self(1))
		fprintf(stderr, "piano-bench-core: cond: cannot pin the signaller\n");
	for (int seq = 1; seq <= sh->n + WARMUP; seq++) {
		/* Budget spent: seq is the last round (the store is published
		 * to the waiter by the signal's release). */
		if (seq > WARMUP && now_ns() > sh->deadline)
			atomic_store(&sh->last, seq);
		while (atomic_load_explicit(&sh->ready, memory_order_acquire) < seq) {
			if (sh->failed)
				return NULL;
			cpu_relax();
		}
		if (sh->v->blocked) {
			/* Until the waiter announced itself as a sleeper (bounded). */
			uint64_t end = now_ns() + 10000000u;
			while (!(cond_word(&sh->cond) & WAITERS_BIT) && now_ns() < end)
				cpu_relax();
			spin_ns(20000); /* it is in the futex now */
		} else {
			spin_ns(10000);
		}
		bool blocked = (cond_word(&sh->cond) & WAITERS_BIT) != 0;
		atomic_store_explicit(&sh->t_sig, now_ns(), memory_order_relaxed);
		/* The release CAS inside piano_cond_signal publishes t_sig. */
		if (piano_cond_signal(&sh->cond, 1) != 0) {
			sh->failed = 1;
			return NULL;
		}
		if (seq > WARMUP && blocked)
			sh->nblocked++;
		while (atomic_load_explicit(&sh->done, memory_order_acquire) < seq)
			cpu_relax();
		if (seq == atomic_load(&sh->last))
			break;
	}
	return NULL;
}

/* Takes n samples, or fewer (*got) when the time budget runs out first. */
static int measure(const struct variant *v, int n, double *lat, int *got, int *nblocked)
{
	struct bcfg c = bcfg_default;
	c.idle_level = "none";
	c.spin_us = v->spin_us;
	if (bench_piano_init(&c))
		return -1;
	struct shared *sh = calloc(1, sizeof(*sh));
	if (!sh)
		return -1;
	PCHECK(piano_cond_init(&sh->cond, 0));
	sh->v = v;
	sh->n = n;
	sh->lat = lat;
	atomic_init(&sh->last, n + WARMUP);
	sh->deadline = now_ns() + QF(3, 15) * 1000000000ull;
	pthread_t tw, ts;
	SCHECK(pthread_create(&tw, NULL, waiter, sh));
	SCHECK(pthread_create(&ts, NULL, signaller, sh));
	pthread_join(tw, NULL);
	pthread_join(ts, NULL);
	int failed = sh->failed;
	*nblocked = sh->nblocked;
	*got = atomic_load(&sh->last) - WARMUP;
	PCHECK(piano_cond_destroy(&sh->cond));
	free(sh);
	if (failed)
		return -1;
	return bench_piano_finalize();
}

int bench_cond(void)
{
	static const struct col cols[] = {
		{ "Waiter", 10 }, { "SPIN_US", 8 }, { "Samples", 7 }, { "med(us)", 8 },
		{ "q1", 7 },      { "q3", 7 },      { "p90", 7 },     { "p99", 7 },
		{ "max", 8 },     { "blocked%", 8 },
	};
	struct table tb;
	char cfg[512];
	struct bcfg c = bcfg_default;
	c.idle_level = "none";
	c.spin_us = "(see column)";
	bcfg_format(&c, cfg, sizeof(cfg));
	table_begin(&tb, "cond", "piano_cond wake-up latency (signal to return of wait)");
	table_note(&tb, "settings: %s", cfg);
	table_note(&tb, "waiter pinned on CPU #0, signaller on CPU #1 (of the process mask); "
	                "no task in the engine");
	table_note(&tb, "spinning: signal 10 us after the waiter starts waiting; blocked: 20 us "
	                "after the waiter set the waiters bit");
	table_note(&tb, "samples: fewer than asked when the %.0f s budget of a variant runs out",
	           (double)QF(3, 15));
	table_columns(&tb, cols, (int)(sizeof(cols) / sizeof(cols[0])));
	for (int i = 0; i < NVARIANTS; i++) {
		const struct variant *v = &variants[i];
		int n = QF(v->samples_quick, v->samples_full);
		double *lat = calloc((size_t)n, sizeof(double));
		int nblocked = 0, got = 0;
		if (!lat || measure(v, n, lat, &got, &nblocked))
			return -1;
		struct summary s;
		summarize(lat, (size_t)got, &s);
		table_row(&tb, (struct cell[]){ CS(v->name), CS(v->spin_us), CI(got), CF(s.med),
		                                CF(s.q1), CF(s.q3), CF(s.p90), CF(s.p99), CF(s.max),
		                                CF(got ? 100.0 * nblocked / got : 0.0) });
		free(lat);
	}
	table_end(&tb);
	return 0;
}

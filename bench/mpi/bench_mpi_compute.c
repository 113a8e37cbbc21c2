/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_mpi_compute: fixed amounts of work and where they run: the
 * calibrated floating-point chain, teams of compute threads, CPU affinity,
 * and the triad and dgemm kernels (see bench_mpi_common.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity, sched_setaffinity, CPU_* */
#endif
#include "bench_mpi_common.h"

#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------------ calibrated work */

/* The seed is volatile so that the chain cannot be precomputed; every step
 * depends on the previous one, so nothing vectorises or overlaps. */
static volatile double work_seed = 1.0;

double bm_work(uint64_t iters)
{
	double x = work_seed;
	for (uint64_t i = 0; i < iters; i++)
		x = x * 0.999999999 + 1e-9;
	return x;
}

static volatile double work_sink;

double bm_calibrate(void)
{
	uint64_t iters = 1u << 12;
	double t;
	for (;;) { /* runs of about 1 ms */
		double t0 = bm_now_us();
		work_sink = bm_work(iters);
		t = bm_now_us() - t0;
		if (t >= 1000.0)
			break;
		iters *= 2;
	}
	double best = (double)iters / t;
	for (int i = 0; i < 60; i++) {
		double t0 = bm_now_us();
		work_sink = bm_work(iters);
		double dt = bm_now_us() - t0;
		if (dt > 0 && (double)iters / dt > best)
			best = (double)iters / dt;
	}
	return best;
}

/* ---------------------------------------------------- compute threads */

struct bm_worker {
	_Alignas(64) atomic_uint_fast64_t done;
	struct bm_team *team;
	double sink;
};

static void *worker_main(void *arg)
{
	struct bm_worker *w = arg;
	struct bm_team *t = w->team;
	double acc = 0;
	while (!__atomic_load_n(&t->stop, __ATOMIC_RELAXED)) {
		acc += bm_work(t->chunk);
		atomic_fetch_add_explicit(&w->done, t->chunk, memory_order_relaxed);
	}
	w->sink = acc;
	return NULL;
}

int bm_team_start(struct bm_team *t, int n, double rate, double chunk_us)
{
	memset(t, 0, sizeof *t);
	t->n = 0;
	t->chunk = (uint64_t)(rate * chunk_us);
	if (t->chunk < 1)
		t->chunk = 1;
	if (n <= 0)
		return 0;
	t->tids = calloc((size_t)n, sizeof *t->tids);
	t->w = aligned_alloc(64, (size_t)n * sizeof *t->w);
	if (!t->tids || !t->w) {
		free(t->tids);
		free(t->w);
		t->tids = NULL;
		t->w = NULL;
		return -1;
	}
	memset(t->w, 0, (size_t)n * sizeof *t->w);
	for (int i = 0; i < n; i++) {
		atomic_init(&t->w[i].done, 0);
		t->w[i].team = t;
		if (pthread_create(&t->tids[i], NULL, worker_main, &t->w[i])) {
			bm_team_stop(t);
			return -1;
		}
		t->n = i + 1;
	}
	return 0;
}

uint64_t bm_team_iters(const struct bm_team *t)
{
	uint64_t sum = 0;
	for (int i = 0; i < t->n; i++)
		sum += atomic_load_explicit(&t->w[i].done, memory_order_relaxed);
	return sum;
}

void bm_team_stop(struct bm_team *t)
{
	__atomic_store_n(&t->stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; i < t->n; i++)
		pthread_join(t->tids[i], NULL);
	free(t->tids);
	free(t->w);
	t->tids = NULL;
	t->w = NULL;
	t->n = 0;
}

int bm_affinity_count(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) < 1)
		return 1;
	return CPU_COUNT(&set);
}

void bm_affinity_string(char *out, size_t len)
{
	cpu_set_t set;
	size_t used = 0;
	out[0] = 0;
	if (sched_getaffinity(0, sizeof set, &set) != 0) {
		snprintf(out, len, "?");
		return;
	}
	for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &set))
			continue;
		int last = cpu;
		while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, &set))
			last++;
		int w = last == cpu ? snprintf(out + used, len - used, "%s%d", used ? "," : "", cpu)
		                    : snprintf(out + used, len - used, "%s%d-%d", used ? "," : "",
		                               cpu, last);
		if (w < 0 || (size_t)w >= len - used)
			return;
		used += (size_t)w;
		cpu = last;
	}
}

int bm_bind_main_thread(int n)
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

/* ------------------------------------------------------ compute kernels */

size_t bm_l2_bytes(void)
{
	long v = -1;
#ifdef _SC_LEVEL2_CACHE_SIZE
	v = sysconf(_SC_LEVEL2_CACHE_SIZE);
#endif
	return v > 0 ? (size_t)v : (size_t)1 << 20;
}

static volatile double bm_scalar = 3.0;
volatile double bm_sink;

/* Three arrays in one block at fixed offsets from a page boundary (0, 1088
 * and 2176 bytes mod 4096): the layout, hence 4K aliasing between the
 * stores and the loads, does not depend on where the heap put them (it
 * differs with and without an LD_PRELOADed library). */
static double *carve(void **block, size_t each, int i)
{
	size_t stride = ((each + 4095) & ~(size_t)4095) + 4096;
	return (double *)((char *)*block + (size_t)i * stride + (size_t)i * 1088);
}

static void *alloc3(size_t each)
{
	size_t stride = ((each + 4095) & ~(size_t)4095) + 4096;
	return aligned_alloc(4096, 3 * stride + 4096);
}

int bm_triad_init(struct bm_triad *t, size_t bytes)
{
	size_t n = bytes / (3 * sizeof(double));
	if (n < 1024)
		n = 1024;
	n &= ~(size_t)7;
	t->n = n;
	t->block = alloc3(n * sizeof(double));
	if (!t->block)
		return -1;
	t->a = carve(&t->block, n * sizeof(double), 0);
	t->b = carve(&t->block, n * sizeof(double), 1);
	t->c = carve(&t->block, n * sizeof(double), 2);
	for (size_t i = 0; i < n; i++) {
		t->a[i] = 0;
		t->b[i] = 1.0 + (double)(i % 7);
		t->c[i] = 0.5 * (double)(i % 5);
	}
	return 0;
}

void bm_triad_free(struct bm_triad *t)
{
	free(t->block);
	t->block = NULL;
	t->a = t->b = t->c = NULL;
}

/* The kernels are aligned on 64 bytes: their loops then sit at the same
 * place relative to cache lines and 32-byte fetch blocks in every binary
 * (built against either MPI, with or without other code around them);
 * their speed otherwise changed by up to 2x from one binary to another. */
__attribute__((noinline, aligned(64))) static void triad_sweep(double *restrict a,
                                                  const double *restrict b,
                                                  const double *restrict c,
                                                  size_t n, double s)
{
	for (size_t i = 0; i < n; i++)
		a[i] = b[i] + s * c[i];
}

void bm_triad_run(struct bm_triad *t, uint64_t elems)
{
	while (elems > 0) {
		size_t n = elems < t->n ? (size_t)elems : t->n;
		triad_sweep(t->a, t->b, t->c, n, bm_scalar);
		elems -= n;
	}
	bm_sink = t->a[0];
}

double bm_triad_rate(struct bm_triad *t)
{
	/* Runs of ~1 ms fit in a time slice: on a shared machine some run
	 * undisturbed; the best of them is the speed of a free core. */
	uint64_t elems = t->n;
	double dt;
	bm_triad_run(t, elems); /* warm the cache */
	for (;;) {
		double t0 = bm_now_us();
		bm_triad_run(t, elems);
		dt = bm_now_us() - t0;
		if (dt >= 1000.0)
			break;
		elems *= 2;
	}
	double best = (double)elems / dt;
	for (int i = 0; i < 40; i++) {
		double t0 = bm_now_us();
		bm_triad_run(t, elems);
		double rate = (double)elems / (bm_now_us() - t0);
		if (rate > best)
			best = rate;
	}
	return best;
}

int bm_dgemm_init(struct bm_dgemm *d, int n)
{
	size_t bytes = (size_t)n * (size_t)n * sizeof(double);
	d->n = n;
	d->block = alloc3(bytes);
	if (!d->block)
		return -1;
	d->a = carve(&d->block, bytes, 0);
	d->b = carve(&d->block, bytes, 1);
	d->c = carve(&d->block, bytes, 2);
	for (int i = 0; i < n * n; i++) {
		d->a[i] = 1.0 / (1 + i % 13);
		d->b[i] = 1.0 / (1 + i % 11);
		d->c[i] = 0;
	}
	return 0;
}

void bm_dgemm_free(struct bm_dgemm *d)
{
	free(d->block);
	d->block = NULL;
	d->a = d->b = d->c = NULL;
}

__attribute__((noinline, aligned(64))) static void dgemm_once(const double *restrict a,
                                                 const double *restrict b,
                                                 double *restrict c, int n)
{
	for (int i = 0; i < n; i++)
		for (int k = 0; k < n; k++) {
			double aik = a[i * n + k];
			for (int j = 0; j < n; j++)
				c[i * n + j] += aik * b[k * n + j];
		}
}

void bm_dgemm_run(struct bm_dgemm *d, long calls)
{
	for (long i = 0; i < calls; i++)
		dgemm_once(d->a, d->b, d->c, d->n);
	bm_sink = d->c[0];
}

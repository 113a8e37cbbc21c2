/* SPDX-License-Identifier: BSD-3-Clause */
/* The overlap report's recording (report.h, docs/report.md). */
#include "report.h"
#include "report_site.h"
#include "offload.h"
#include "sys.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

int report_on;

static const char *const kind_names[REPORT_KIND_COUNT] = {
	[REPORT_ISEND] = "isend",
	[REPORT_ISSEND] = "issend",
	[REPORT_IBSEND] = "ibsend",
	[REPORT_IRSEND] = "irsend",
	[REPORT_IRECV] = "irecv",
	[REPORT_IMRECV] = "imrecv",
	[REPORT_ISENDRECV] = "isendrecv",
	[REPORT_SEND_INIT] = "send_init",
	[REPORT_BSEND_INIT] = "bsend_init",
	[REPORT_SSEND_INIT] = "ssend_init",
	[REPORT_RSEND_INIT] = "rsend_init",
	[REPORT_RECV_INIT] = "recv_init",
	[REPORT_IBARRIER] = "ibarrier",
	[REPORT_IBCAST] = "ibcast",
	[REPORT_IREDUCE] = "ireduce",
	[REPORT_IALLREDUCE] = "iallreduce",
	[REPORT_IREDUCE_SCATTER] = "ireduce_scatter",
	[REPORT_IREDUCE_SCATTER_BLOCK] = "ireduce_scatter_block",
	[REPORT_ISCAN] = "iscan",
	[REPORT_IEXSCAN] = "iexscan",
	[REPORT_IGATHER] = "igather",
	[REPORT_IGATHERV] = "igatherv",
	[REPORT_ISCATTER] = "iscatter",
	[REPORT_ISCATTERV] = "iscatterv",
	[REPORT_IALLGATHER] = "iallgather",
	[REPORT_IALLGATHERV] = "iallgatherv",
	[REPORT_IALLTOALL] = "ialltoall",
	[REPORT_IALLTOALLV] = "ialltoallv",
	[REPORT_IALLTOALLW] = "ialltoallw",
	[REPORT_INEIGHBOR] = "ineighbor",
	[REPORT_PCOLL] = "coll_init",
	[REPORT_FILE_IREAD_AT] = "file_iread_at",
	[REPORT_FILE_IWRITE_AT] = "file_iwrite_at",
	[REPORT_FILE_IREAD] = "file_iread",
	[REPORT_FILE_IWRITE] = "file_iwrite",
	[REPORT_FILE_IREAD_SHARED] = "file_iread_shared",
	[REPORT_FILE_IWRITE_SHARED] = "file_iwrite_shared",
	[REPORT_FILE_IREAD_ALL] = "file_iread_all",
	[REPORT_FILE_IWRITE_ALL] = "file_iwrite_all",
	[REPORT_FILE_IREAD_AT_ALL] = "file_iread_at_all",
	[REPORT_FILE_IWRITE_AT_ALL] = "file_iwrite_at_all",
};

const char *report_kind_name(int kind)
{
	return kind >= 0 && kind < REPORT_KIND_COUNT ? kind_names[kind] : "?";
}

/* ------------------------------------------------------------- clock */

/*
 * The recording reads a clock four times per operation of a wait on two
 * (post, the wait's start and end, a readiness question); with
 * clock_gettime(CLOCK_MONOTONIC) those reads were about 40 % of the
 * recording's cost (perf, a loop of MPI_PROC_NULL operations: ~30 ns each
 * in this VM). Where the processor has an invariant time-stamp counter
 * (constant rate, not stopped in sleep states: CPUID 0x80000007 EDX bit
 * 8), the recording counts its ticks instead, and converts sums of ticks
 * to ns when the rows are read, at the rate measured between set-up and
 * that moment (as exact as two clock_gettime readings over the whole run).
 * Elsewhere a tick is a ns of CLOCK_MONOTONIC.
 */
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <x86intrin.h>
static bool tsc_ok; /* written once by report_setup() before recording starts */
static inline uint64_t ticks(void) { return tsc_ok ? __rdtsc() : sys_now_ns(); }
static bool tsc_invariant(void)
{
	unsigned a, b, c, d;
	return __get_cpuid(0x80000007, &a, &b, &c, &d) && (d & (1u << 8));
}
#else
static const bool tsc_ok = false;
static inline uint64_t ticks(void) { return sys_now_ns(); }
static bool tsc_invariant(void) { return false; }
#endif

/* Set-up's readings, and READY_NS and REPORT_SHORT_NS in ticks (from a
 * short calibration). */
static uint64_t ns0, ticks0, ready_ticks, short_ticks;

enum { READY_NS = 1000 }; /* see complete_now() */

static void clock_setup(void)
{
#if defined(__x86_64__) || defined(__i386__)
	tsc_ok = tsc_invariant();
#endif
	ns0 = sys_now_ns();
	ticks0 = ticks();
	ready_ticks = READY_NS;
	short_ticks = REPORT_SHORT_NS;
	if (!tsc_ok)
		return;
	/* 200 us: the threshold's error is that of two clock readings in it
	 * (well under 1 %). */
	uint64_t n1, t1;
	do {
		n1 = sys_now_ns();
		t1 = ticks();
	} while (n1 - ns0 < 200000);
	double rate = (double)(t1 - ticks0) / (double)(n1 - ns0);
	ready_ticks = (uint64_t)((double)READY_NS * rate);
	short_ticks = (uint64_t)((double)REPORT_SHORT_NS * rate);
}

/* ns per tick since set-up (1 without the counter). */
static double ns_per_tick(void)
{
	if (!tsc_ok)
		return 1.0;
	uint64_t n = sys_now_ns(), t = ticks();
	return t > ticks0 ? (double)(n - ns0) / (double)(t - ticks0) : 1.0;
}

/* ------------------------------------------------------ engine rounds */

/* Rounds of the engine's progress by polling point, written by whichever
 * thread runs the round; relaxed: a count, read as a snapshot. One cache
 * line each, so the idle thread's count does not move the timer's. */
static struct {
	_Atomic uint32_t v;
	char pad[60];
} rounds[PIANO_POINT_COUNT];

void report_round_(void)
{
	int p = piano_point_current();
	atomic_fetch_add_explicit(&rounds[p >= 0 ? p : PIANO_POINT_EXPLICIT].v, 1,
	                          memory_order_relaxed);
}

/* ---------------------------------------------------- operations in flight */

/*
 * Buckets of 8 keys (one cache line) over a parallel array of records. A
 * key is the request handle's bits; 0 = free, CLAIMED = being written.
 * Protocol: the poster claims a free key with a CAS (acquire), writes the
 * record, then publishes the key with a release store; whoever completes
 * or frees the request finds the key with an acquire load, reads the
 * record and frees the key with a release store. The MPI lets one thread
 * at a time use a request, so a published record has one user at a time.
 * A lookup scans the whole bucket (a freed key leaves no tombstone).
 */
enum { BUCKET = 8, NBUCKETS = 4096, CLAIMED = 1 };

struct flight {
	const void *site;
	uint64_t t_post; /* ticks(); 0: a persistent request not started */
	long bytes;
	uint32_t rounds[PIANO_POINT_COUNT]; /* engine rounds when posted */
	uint16_t kind;
	uint8_t eager, persistent;
	uint8_t ready; /* at the last report_begin: 1 complete, 0 not, 2 not asked */
};

static _Atomic uint64_t *fkeys; /* NBUCKETS * BUCKET, 64-byte aligned */
static struct flight *fdata;
static _Atomic uint64_t lost_full, lost_stale, lost_sites;

static uint64_t key_of(MPI_Request r)
{
	uint64_t k = 0;
	memcpy(&k, &r, sizeof(r) < sizeof(k) ? sizeof(r) : sizeof(k));
	return k;
}

static size_t bucket_of(uint64_t k)
{
	return (size_t)((k * 0x9e3779b97f4a7c15ull) >> 52) * BUCKET; /* 4096 = 2^12 */
}

/* The slot holding key k, or -1. */
static long find(uint64_t k)
{
	if (k <= CLAIMED)
		return -1;
	size_t b = bucket_of(k);
	for (size_t i = b; i < b + BUCKET; i++)
		if (atomic_load_explicit(&fkeys[i], memory_order_acquire) == k)
			return (long)i;
	return -1;
}

static void release(long slot) { atomic_store_explicit(&fkeys[slot], 0, memory_order_release); }

/* ------------------------------------------------------ call-site rows */

enum { SITES = 512 }; /* rows per thread, a power of two */

struct site_rec {
	bool used;
	struct report_row row;
};

/* A thread's rows: written by its thread only; read by report_rows() at
 * MPI_Finalize, when the standard says the other threads call no MPI. */
struct site_tab {
	struct site_tab *next; /* all_tabs list, under tabs_lock */
	struct site_rec rec[SITES];
};

static pthread_mutex_t tabs_lock = PTHREAD_MUTEX_INITIALIZER;
static struct site_tab *all_tabs; /* under tabs_lock */
static _Thread_local struct site_tab *my_tab;

static struct site_tab *tab_get(void)
{
	if (my_tab)
		return my_tab;
	/* Once per thread that records, not per request. */
	struct site_tab *t = calloc(1, sizeof(*t));
	if (!t)
		return NULL;
	pthread_mutex_lock(&tabs_lock);
	t->next = all_tabs;
	all_tabs = t;
	pthread_mutex_unlock(&tabs_lock);
	my_tab = t;
	return t;
}

/* The calling thread's row of (site, kind, eager), or NULL (counted lost). */
static struct report_row *row_of(const void *site, int kind, bool eager)
{
	struct site_tab *t = tab_get();
	if (t) {
		uintptr_t h = ((uintptr_t)site ^ ((uintptr_t)kind << 1) ^ eager) *
		              0x9e3779b97f4a7c15ull;
		for (unsigned i = 0; i < SITES; i++) {
			struct site_rec *r = &t->rec[(h + i) & (SITES - 1)];
			if (!r->used) {
				r->used = true;
				r->row.site = site;
				r->row.kind = kind;
				r->row.eager = eager;
				return &r->row;
			}
			if (r->row.site == site && r->row.kind == kind && r->row.eager == eager)
				return &r->row;
		}
	}
	atomic_fetch_add_explicit(&lost_sites, 1, memory_order_relaxed);
	return NULL;
}

/* ------------------------------------------------------------- set-up */

int report_setup(void)
{
	fkeys = aligned_alloc(64, sizeof(*fkeys) * NBUCKETS * BUCKET);
	fdata = calloc(NBUCKETS * BUCKET, sizeof(*fdata));
	if (!fkeys || !fdata) {
		free((void *)fkeys);
		free(fdata);
		fkeys = NULL;
		fdata = NULL;
		return -1;
	}
	for (size_t i = 0; i < NBUCKETS * BUCKET; i++)
		atomic_init(&fkeys[i], 0);
	clock_setup();
	report_site_setup();
	report_on = 1;
	pmpi_watch_add(1); /* for good: every completion call is recorded */
	return 0;
}

/* ------------------------------------------------------------- posting */

static void snapshot(uint32_t out[PIANO_POINT_COUNT])
{
	for (int p = 0; p < PIANO_POINT_COUNT; p++)
		out[p] = atomic_load_explicit(&rounds[p].v, memory_order_relaxed);
}

/* Records an operation under req; t_post 0 for a persistent one not yet
 * started. Returns whether it was recorded. */
static bool insert(int kind, long bytes, bool eager, bool persistent, MPI_Request req,
                   const void *site, uint64_t t_post)
{
	uint64_t k = key_of(req);
	if (k <= CLAIMED)
		return false;
	/* A key already there is a request the MPI completed out of piano's
	 * sight (its handle came back): its record is ours to reuse. */
	long slot = find(k);
	if (slot >= 0) {
		atomic_fetch_add_explicit(&lost_stale, 1, memory_order_relaxed);
	} else {
		size_t b = bucket_of(k);
		for (size_t i = b; i < b + BUCKET && slot < 0; i++) {
			uint64_t expect = 0;
			if (atomic_compare_exchange_strong_explicit(&fkeys[i], &expect, CLAIMED,
			                                            memory_order_acquire,
			                                            memory_order_relaxed))
				slot = (long)i;
		}
		if (slot < 0) {
			atomic_fetch_add_explicit(&lost_full, 1, memory_order_relaxed);
			return false;
		}
	}
	struct flight *f = &fdata[slot];
	f->site = site;
	f->t_post = t_post;
	f->bytes = bytes;
	snapshot(f->rounds);
	f->kind = (uint16_t)kind;
	f->eager = eager;
	f->persistent = persistent;
	f->ready = 2;
	atomic_store_explicit(&fkeys[slot], k, memory_order_release);
	return true;
}

void report_post_(int kind, long bytes, bool eager, MPI_Request req, const void *site)
{
	uint64_t now = ticks();
	site = report_site_of(site);
	if (insert(kind, bytes, eager, false, req, site, now)) {
		struct report_row *row = row_of(site, kind, eager);
		if (row)
			row->posted++;
	}
}

void report_init_(int kind, long bytes, bool eager, MPI_Request req, const void *site)
{
	site = report_site_of(site);
	insert(kind, bytes, eager, true, req, site, 0);
}

void report_start_(const MPI_Request *reqs, int n)
{
	uint64_t now = ticks();
	for (int i = 0; i < n; i++) {
		long slot = find(key_of(reqs[i]));
		if (slot < 0)
			continue;
		struct flight *f = &fdata[slot];
		f->t_post = now;
		snapshot(f->rounds);
		f->ready = 2;
		struct report_row *row = row_of(f->site, f->kind, f->eager);
		if (row)
			row->posted++;
	}
}

/* ---------------------------------------------------------- completion */

/*
 * Whether req was complete when the wait began. Only the MPI knows, and
 * asking it (MPI_Request_get_status) runs one progress call when the
 * request is not complete yet, which may complete it: a 1 MiB receive over
 * shared memory is then copied inside the question. So a request counts as
 * complete when the MPI says so within READY_NS of being asked: a request
 * it already had is answered in well under that (a few dozen ns); one that
 * needed a progress call that moved data is not. A request of a send
 * queued for offload is asked through its record.
 */
/* *clock: a time read just before the question, replaced by one read
 * after it, so that a wait's questions share their readings (a clock read
 * is a sizeable part of the recording's cost per operation). */
static bool complete_now(MPI_Request req, uint64_t *clock)
{
	int flag = 0, rc;
	uint64_t t0 = *clock;
	if (!offload_get_status(req, &flag, MPI_STATUS_IGNORE, &rc))
		rc = PMPI_Request_get_status(req, &flag, MPI_STATUS_IGNORE);
	*clock = ticks();
	return rc == MPI_SUCCESS && flag && *clock - t0 < ready_ticks;
}

/* A wait asks at most this many recorded requests that turn out still in
 * flight whether they are complete: each such question is one progress
 * call of the MPI, which a wait on thousands of requests would pay
 * thousands of times. Past it, the rest are "not asked". */
enum { ASK_INCOMPLETE = 8 };

void report_begin_(struct report_call *rep, const MPI_Request *reqs, int n, bool wait)
{
	if (n <= 0 || !reqs)
		return;
	/* The questions below are part of the wait: its time starts here. */
	uint64_t t0 = ticks();
	rep->before = n <= (int)(sizeof(rep->small) / sizeof(rep->small[0]))
	                      ? rep->small
	                      : malloc((size_t)n * sizeof(MPI_Request));
	if (!rep->before)
		return; /* unrecorded completion: its operations show as pending */
	memcpy(rep->before, reqs, (size_t)n * sizeof(MPI_Request));
	rep->n = n;
	rep->wait = wait;
	int incomplete = 0;
	uint64_t clock = t0;
	for (int i = 0; i < n; i++) {
		long slot = find(key_of(reqs[i]));
		if (slot < 0)
			continue;
		struct flight *f = &fdata[slot];
		if (!wait || incomplete >= ASK_INCOMPLETE) {
			f->ready = 2;
		} else {
			/* A slot lookup between two questions adds its few ns to
			 * the second's time; READY_NS is far above. */
			f->ready = complete_now(reqs[i], &clock);
			incomplete += !f->ready;
		}
	}
	rep->t0 = t0 ? t0 : 1;
}

/* Whether index i was completed by the call (see report_end). */
static bool completed(const struct report_call *rep, int rc, const MPI_Request *after, int i)
{
	if (rep->before[i] == MPI_REQUEST_NULL)
		return false;
	/* After an error the MPI does not say which it completed: a handle it
	 * set to MPI_REQUEST_NULL is one (a persistent request's is not, and
	 * stays recorded as started: its next start takes its record again). */
	return rc == MPI_SUCCESS || after[i] == MPI_REQUEST_NULL;
}

static int by_of(const struct flight *f, bool wait, const uint32_t now[PIANO_POINT_COUNT],
                 uint32_t delta[PIANO_POINT_COUNT])
{
	int best = -1;
	for (int p = 0; p < PIANO_POINT_COUNT; p++) {
		delta[p] = now[p] - f->rounds[p]; /* modulo 2^32 */
		if (delta[p] && (best < 0 || delta[p] > delta[best]))
			best = p;
	}
	if (!wait)
		return REPORT_BY_TEST;
	if (f->ready != 1)
		return REPORT_BY_WAIT;
	/* piano's file helper, a blocking helper, made the transfer whatever
	 * the progress rounds did meanwhile. */
	if (report_is_file(f->kind) && f->eager)
		return REPORT_BY_BLOCK;
	if (best < 0)
		return REPORT_BY_MPI;
	return REPORT_BY_EXPLICIT + best;
}

void report_end_(struct report_call *rep, int rc, const MPI_Request *after, const int *idx,
                 int nidx)
{
	uint64_t t1 = ticks();
	uint32_t now[PIANO_POINT_COUNT];
	snapshot(now);
	/* Two passes: count the recorded requests the call completed, then
	 * give each its share of the call's time. */
	long slots_small[8], *slots = slots_small;
	int cap = (int)(sizeof(slots_small) / sizeof(slots_small[0]));
	int m = 0;
	int count = rc == MPI_SUCCESS ? nidx : rep->n;
	if (count > cap) {
		slots = malloc((size_t)count * sizeof(long));
		if (!slots) {
			slots = slots_small;
			count = cap; /* the rest stay recorded: pending at the end */
		}
	}
	for (int d = 0; d < count; d++) {
		int i = rc == MPI_SUCCESS ? (idx ? idx[d] : d) : d;
		if (i < 0 || i >= rep->n || !completed(rep, rc, after, i))
			continue;
		long slot = find(key_of(rep->before[i]));
		if (slot >= 0 && fdata[slot].t_post)
			slots[m++] = slot;
	}
	uint64_t call_ticks = t1 > rep->t0 ? t1 - rep->t0 : 0;
	/* A wait whose operations were all complete when it began had nothing
	 * to wait for: its time is its own (ready_waits). */
	bool all_ready = rep->wait && m > 0;
	for (int j = 0; j < m; j++)
		all_ready &= fdata[slots[j]].ready == 1;
	for (int j = 0; j < m; j++) {
		struct flight *f = &fdata[slots[j]];
		struct report_row *row = row_of(f->site, f->kind, f->eager);
		uint32_t delta[PIANO_POINT_COUNT];
		int by = by_of(f, rep->wait, now, delta);
		if (row) {
			uint64_t share = call_ticks / (uint64_t)m;
			row->completed++;
			if (f->bytes > 0)
				row->bytes += (uint64_t)f->bytes;
			uint64_t window = rep->t0 > f->t_post ? rep->t0 - f->t_post : 0;
			row->window_ns += window;
			row->short_windows += window < short_ticks;
			row->blocked_ns += share;
			row->ready += rep->wait && f->ready == 1;
			if (all_ready) {
				row->ready_waits++;
				row->ready_waits_ns += share;
			}
			row->by[by]++;
			for (int p = 0; p < PIANO_POINT_COUNT; p++)
				row->rounds[p] += delta[p];
		}
		if (f->persistent)
			f->t_post = 0; /* inactive until its next start */
		else
			release(slots[j]);
	}
	if (slots != slots_small)
		free(slots);
	if (rep->before != rep->small)
		free(rep->before);
}

void report_free_(MPI_Request req)
{
	long slot = find(key_of(req));
	if (slot < 0)
		return;
	struct flight *f = &fdata[slot];
	if (f->t_post) {
		struct report_row *row = row_of(f->site, f->kind, f->eager);
		if (row)
			row->freed++;
	}
	release(slot);
}

/* ------------------------------------------------------------ reading */

void report_rows(void (*f)(const struct report_row *row, void *arg), void *arg)
{
	if (!report_on)
		return;
	for (size_t i = 0; i < NBUCKETS * BUCKET; i++) {
		uint64_t k = atomic_load_explicit(&fkeys[i], memory_order_acquire);
		if (k <= CLAIMED || !fdata[i].t_post)
			continue;
		struct report_row *row = row_of(fdata[i].site, fdata[i].kind, fdata[i].eager);
		if (row)
			row->pending++;
	}
	/* The rows' times are sums of ticks: the reader gets ns. */
	double scale = ns_per_tick();
	pthread_mutex_lock(&tabs_lock);
	for (struct site_tab *t = all_tabs; t; t = t->next)
		for (unsigned i = 0; i < SITES; i++)
			if (t->rec[i].used) {
				struct report_row row = t->rec[i].row;
				row.window_ns = (uint64_t)((double)row.window_ns * scale);
				row.blocked_ns = (uint64_t)((double)row.blocked_ns * scale);
				row.ready_waits_ns = (uint64_t)((double)row.ready_waits_ns * scale);
				f(&row, arg);
			}
	pthread_mutex_unlock(&tabs_lock);
}

void report_losses(struct report_losses *out)
{
	out->inflight_full = atomic_load(&lost_full);
	out->sites_full = atomic_load(&lost_sites);
	out->stale = atomic_load(&lost_stale);
}

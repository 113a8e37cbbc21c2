/* SPDX-License-Identifier: BSD-3-Clause */
/* The overlap report's output (report_out.h). */
#include "report_out.h"
#include "report.h"
#include "symbol.h"
#include "sys.h"

#include <piano/settings.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static bool asked;          /* PIANO_REPORT is set: this rank takes part in the merge */
static char path[PATH_MAX]; /* absolute; set once at set-up; empty when it cannot be */
static char failed[160];    /* why this rank records nothing; empty when it records */
static uint64_t t_open;

int report_open(void)
{
	char v[PATH_MAX];
	pmpi_setting_text("PIANO_REPORT", v, sizeof(v), NULL);
	if (!v[0])
		return 0;
	/* From here on the rank joins the collective merge at MPI_Finalize,
	 * whatever fails: the other ranks, whose set-up went well, wait for
	 * it there. */
	asked = true;
	/* Absolute now: the application may change directory before
	 * MPI_Finalize, and the user named the path from where they started. */
	char cwd[PATH_MAX];
	int n = v[0] == '/'                ? snprintf(path, sizeof(path), "%s", v)
	        : getcwd(cwd, sizeof(cwd)) ? snprintf(path, sizeof(path), "%s/%s", cwd, v)
	                                   : -1;
	if (n < 0 || (size_t)n + sizeof(".json.XXXXXX") > sizeof(path)) {
		const char *why = n < 0 ? strerror(errno) : "too long";
		pmpi_warn("PIANO_REPORT=%s: cannot make an absolute path of it (%s): no overlap "
		          "report",
		          v, why);
		snprintf(failed, sizeof(failed),
		         "cannot make an absolute path of PIANO_REPORT (%s)", why);
		path[0] = '\0';
		return -1;
	}
	if (report_setup()) {
		pmpi_warn("out of memory for the overlap report's tables: no report");
		/* The path stays: on rank 0, the other ranks' report is still
		 * written. */
		snprintf(failed, sizeof(failed), "out of memory for the recording tables");
		return -1;
	}
	t_open = sys_now_ns();
	return 0;
}

/* ------------------------------------------------------------ counters */

/* The numbers of a row, in the order of the exchange between ranks and of
 * the JSON file. */
#define COUNTERS(X)      \
	X(posted)        \
	X(completed)     \
	X(freed)         \
	X(pending)       \
	X(bytes)         \
	X(window_ns)     \
	X(short_windows) \
	X(blocked_ns)    \
	X(ready)         \
	X(ready_waits)   \
	X(ready_waits_ns)
enum {
#define C_ENUM(n) C_##n,
	COUNTERS(C_ENUM)
#undef C_ENUM
	        C_BY,
	C_ROUNDS = C_BY + REPORT_BY_COUNT,
	NV = C_ROUNDS + PIANO_POINT_COUNT
};
static const char *const counter_names[] = {
#define C_NAME(n) #n,
	COUNTERS(C_NAME)
#undef C_NAME
};
static const char *const by_names[REPORT_BY_COUNT] = { "wait", "test",  "mpi",  "explicit",
	                                               "idle", "timer", "block" };

static void to_vec(const struct report_row *r, uint64_t v[NV])
{
#define C_COPY(n) v[C_##n] = r->n;
	COUNTERS(C_COPY)
#undef C_COPY
	for (int i = 0; i < REPORT_BY_COUNT; i++)
		v[C_BY + i] = r->by[i];
	for (int i = 0; i < PIANO_POINT_COUNT; i++)
		v[C_ROUNDS + i] = r->rounds[i];
}

/* -------------------------------------------------- one rank's rows */

struct local {
	const void *site;
	int kind;
	bool eager;
	uint64_t v[NV];
};

struct locals {
	struct local *a;
	size_t n, cap;
	bool oom;
};

/* Room for one more element of size `elem` in the array *a of *cap
 * elements, n used: false when memory is out (the array is unchanged). */
static bool room(void **a, size_t *cap, size_t n, size_t elem)
{
	if (n < *cap)
		return true;
	size_t c = *cap ? 2 * *cap : 64;
	void *b = realloc(*a, c * elem);
	if (!b)
		return false;
	*a = b;
	*cap = c;
	return true;
}

static void collect(const struct report_row *row, void *arg)
{
	struct locals *l = arg;
	if (!room((void **)&l->a, &l->cap, l->n, sizeof(*l->a))) {
		l->oom = true;
		return;
	}
	struct local *e = &l->a[l->n++];
	e->site = row->site;
	e->kind = row->kind;
	e->eager = row->eager;
	to_vec(row, e->v);
}

static int cmp_local(const void *pa, const void *pb)
{
	const struct local *a = pa, *b = pb;
	if (a->site != b->site)
		return (uintptr_t)a->site < (uintptr_t)b->site ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind - b->kind;
	return (int)a->eager - (int)b->eager;
}

/* Text fields go between tabs and newlines: neither may be in them. */
static void put_field(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == '\t' || *s == '\n' ? ' ' : *s, f);
	fputc('\t', f);
}

/* This rank's part of the exchange: a line "#" run_ns full sites stale,
 * then one line per (site, kind, protocol): module, offset, function,
 * file, line, kind, eager and the NV counters, tab-separated. */
static char *serialize(size_t *len)
{
	struct locals l = { 0 };
	report_rows(collect, &l);
	if (l.n)
		qsort(l.a, l.n, sizeof(*l.a), cmp_local);
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	if (!f) {
		free(l.a);
		return NULL;
	}
	struct report_losses lost;
	report_losses(&lost);
	fprintf(f, "#\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%" PRIu64 "\t%d\n",
	        sys_now_ns() - t_open, lost.inflight_full, lost.sites_full + (l.oom ? 1 : 0),
	        lost.stale, pmpi_g.threaded);
	struct symbolizer *sym = symbolizer_open();
	struct symbol s;
	const void *resolved = NULL;
	for (size_t i = 0; i < l.n;) {
		/* Rows of the same key from several threads: one line. */
		struct local *e = &l.a[i];
		size_t j = i + 1;
		for (; j < l.n && !cmp_local(&l.a[j], e); j++)
			for (int k = 0; k < NV; k++)
				e->v[k] += l.a[j].v[k];
		if (!resolved || resolved != e->site) {
			symbolizer_lookup(sym, e->site, &s);
			resolved = e->site;
		}
		put_field(f, s.module);
		fprintf(f, "%" PRIx64 "\t", s.offset);
		put_field(f, s.function);
		put_field(f, s.file);
		fprintf(f, "%d\t%d\t%d", s.line, e->kind, e->eager);
		for (int k = 0; k < NV; k++)
			fprintf(f, "\t%" PRIu64, e->v[k]);
		fputc('\n', f);
		i = j;
	}
	symbolizer_close(sym);
	free(l.a);
	if (fclose(f))
		return NULL;
	return buf;
}

/* ------------------------------------------------------ merged rows */

struct merged {
	char *module, *function, *file;
	uint64_t offset;
	int line, kind;
	bool eager;
	int ranks;
	uint64_t v[NV];
	uint64_t blocked_max; /* the largest one rank's blocked time */
	int blocked_max_rank;
	int id; /* call site's number in the report */
	char *diag[8];
	int ndiag;
};

/* A rank that recorded nothing, and why (its own words). */
struct failed_rank {
	int rank;
	const char *why;
};

struct totals {
	int ranks; /* whose rows were merged */
	struct failed_rank *failed;
	size_t nfailed, capfailed;
	uint64_t run_ns; /* longest rank */
	uint64_t lost_full, lost_sites, lost_stale;
	int threaded; /* rank 0's background progress */
	struct merged *m;
	size_t n, cap;
	bool oom;
};

static char *next_field(char **p)
{
	char *s = *p, *t = s ? strchr(s, '\t') : NULL;
	if (t) {
		*t = '\0';
		*p = t + 1;
	} else {
		*p = NULL;
	}
	return s;
}

/* A rank that recorded nothing: named in the report's header. */
static void add_failed(struct totals *t, int rank, const char *why)
{
	if (!room((void **)&t->failed, &t->capfailed, t->nfailed, sizeof(*t->failed))) {
		t->oom = true;
		return;
	}
	t->failed[t->nfailed++] = (struct failed_rank){ rank, why };
}

/* One rank's part, len bytes of lines that each end with a newline; the
 * rows keep pointers into it. A part that is the one line "!" why comes
 * from a rank that recorded nothing. */
static void parse_rank(struct totals *t, int rank, char *text, size_t len)
{
	if (!len || text[len - 1] != '\n') {
		add_failed(t, rank, "its part of the report was lost");
		return;
	}
	if (text[0] == '!') {
		text[len - 1] = '\0';
		add_failed(t, rank, len > 2 ? text + 2 : "no reason given");
		return;
	}
	t->ranks++;
	for (char *line = text, *end = text + len, *nl; line < end; line = nl) {
		nl = memchr(line, '\n', (size_t)(end - line));
		if (!nl)
			break; /* not ours: every line the ranks send ends with one */
		*nl++ = '\0';
		char *p = line;
		if (line[0] == '#') {
			next_field(&p);
			uint64_t run = strtoull(next_field(&p) ?: "0", NULL, 10);
			t->run_ns = run > t->run_ns ? run : t->run_ns;
			t->lost_full += strtoull(next_field(&p) ?: "0", NULL, 10);
			t->lost_sites += strtoull(next_field(&p) ?: "0", NULL, 10);
			t->lost_stale += strtoull(next_field(&p) ?: "0", NULL, 10);
			int threaded = (int)strtol(next_field(&p) ?: "0", NULL, 10);
			if (rank == 0)
				t->threaded = threaded;
			continue;
		}
		if (!room((void **)&t->m, &t->cap, t->n, sizeof(*t->m))) {
			t->oom = true;
			return;
		}
		struct merged *m = &t->m[t->n];
		memset(m, 0, sizeof(*m));
		m->module = next_field(&p);
		m->offset = strtoull(next_field(&p) ?: "0", NULL, 16);
		m->function = next_field(&p);
		m->file = next_field(&p);
		m->line = (int)strtol(next_field(&p) ?: "0", NULL, 10);
		m->kind = (int)strtol(next_field(&p) ?: "0", NULL, 10);
		m->eager = strtol(next_field(&p) ?: "0", NULL, 10) != 0;
		for (int k = 0; k < NV; k++)
			m->v[k] = strtoull(next_field(&p) ?: "0", NULL, 10);
		if (!m->module || !m->function || !m->file)
			continue; /* a line cut short: cannot happen between our ranks */
		m->ranks = 1;
		m->blocked_max = m->v[C_blocked_ns];
		m->blocked_max_rank = rank;
		t->n++;
	}
}

static int cmp_key(const void *pa, const void *pb)
{
	const struct merged *a = pa, *b = pb;
	int c = strcmp(a->module, b->module);
	if (c)
		return c;
	if (a->offset != b->offset)
		return a->offset < b->offset ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind - b->kind;
	return (int)a->eager - (int)b->eager;
}

static int cmp_blocked(const void *pa, const void *pb)
{
	const struct merged *a = pa, *b = pb;
	if (a->v[C_blocked_ns] != b->v[C_blocked_ns])
		return a->v[C_blocked_ns] > b->v[C_blocked_ns] ? -1 : 1;
	if (a->v[C_window_ns] != b->v[C_window_ns])
		return a->v[C_window_ns] > b->v[C_window_ns] ? -1 : 1;
	return cmp_key(pa, pb);
}

/* Rows of the same key from several ranks: one row. */
static void merge_ranks(struct totals *t)
{
	if (!t->n)
		return;
	qsort(t->m, t->n, sizeof(*t->m), cmp_key);
	size_t out = 0;
	for (size_t i = 0; i < t->n; i++) {
		if (out && !cmp_key(&t->m[out - 1], &t->m[i])) {
			struct merged *d = &t->m[out - 1], *s = &t->m[i];
			for (int k = 0; k < NV; k++)
				d->v[k] += s->v[k];
			d->ranks++;
			if (s->blocked_max > d->blocked_max) {
				d->blocked_max = s->blocked_max;
				d->blocked_max_rank = s->blocked_max_rank;
			}
			continue;
		}
		t->m[out++] = t->m[i];
	}
	t->n = out;
	qsort(t->m, t->n, sizeof(*t->m), cmp_blocked);
}

/* --------------------------------------------------------- diagnoses */

static bool is_p2p(int kind) { return kind <= REPORT_RECV_INIT; }

static bool is_send(int kind)
{
	return kind <= REPORT_IRSEND || (kind >= REPORT_SEND_INIT && kind <= REPORT_RSEND_INIT);
}

static double us(uint64_t ns, uint64_t n) { return n ? (double)ns / (double)n / 1e3 : 0.0; }

__attribute__((format(printf, 2, 3))) static void diag(struct merged *m, const char *fmt, ...)
{
	if (m->ndiag >= (int)(sizeof(m->diag) / sizeof(m->diag[0])))
		return;
	va_list ap;
	va_start(ap, fmt);
	char *s = NULL;
	if (vasprintf(&s, fmt, ap) >= 0)
		m->diag[m->ndiag++] = s;
	va_end(ap);
}

/* Only what the numbers show (docs/report.md, "Diagnoses"). */
static void diagnose(struct merged *m)
{
	uint64_t done = m->v[C_completed];
	uint64_t tests = m->v[C_BY + REPORT_BY_TEST], waits = done - tests;
	double window = us(m->v[C_window_ns], done), blocked = us(m->v[C_blocked_ns], done);
	uint64_t rounds = 0;
	for (int p = 0; p < PIANO_POINT_COUNT; p++)
		rounds += m->v[C_ROUNDS + p];
	bool eager = done && is_p2p(m->kind) && m->eager && (is_send(m->kind) || blocked < 2.0);
	/* By the share of short windows, not by the mean window: one
	 * operation whose thread was preempted between post and wait (a
	 * scheduler slice: milliseconds) lifts the mean of forty past any
	 * bound that tells "at once" from "after a computation". */
	bool at_once = !eager && done && blocked >= 5.0 && 4 * m->v[C_short_windows] >= 3 * done;
	if (eager)
		diag(m,
		     "eager-size messages (at most %ld B): the MPI sends them at once, nothing "
		     "to overlap",
		     pmpi_g.eager_limit);
	if (at_once)
		diag(m,
		     "the wait follows the post within %.0f us in %.0f%% of the operations (%.1f "
		     "us on average) while the operation takes %.1f us more: there is no "
		     "computation to overlap; move the wait later (or the post earlier)",
		     REPORT_SHORT_NS / 1e3, 100.0 * (double)m->v[C_short_windows] / (double)done,
		     window, blocked);
	uint64_t by_timer = m->v[C_BY + REPORT_BY_TIMER];
	if (done && by_timer * 2 > done)
		diag(m,
		     "%.0f%% completed in the background by the timer thread: every core computes; "
		     "leave a core idle (one rank fewer per node), or lower PIANO_TIMER_PERIOD_US",
		     100.0 * (double)by_timer / (double)done);
	uint64_t ready = m->v[C_ready_waits];
	double ready_blocked = us(m->v[C_ready_waits_ns], ready);
	if (ready && ready_blocked >= 10.0)
		diag(m,
		     "%" PRIu64 " operations had finished before the wait that completed them "
		     "began, as had every other operation it completed, yet their share of its "
		     "time is %.1f us per operation on average: the time is the completion call's "
		     "own, not the transfers'",
		     ready, ready_blocked);
	uint64_t in_flight = m->v[C_BY + REPORT_BY_WAIT];
	bool file = report_is_file(m->kind);
	/* Not after at_once: the mean window that says "in flight after so
	 * long" is then an outlier's. */
	if (waits && in_flight * 2 > waits && window >= 5.0 && !at_once &&
	    !(is_p2p(m->kind) && m->eager)) {
		double per_op = (double)rounds / (double)done;
		uint64_t timer_rounds = m->v[C_ROUNDS + PIANO_POINT_TIMER];
		/* piano's helper makes the transfer whatever the engine's rounds
		 * do; the MPI's own file calls are not what those rounds drive. */
		if (file && m->eager)
			diag(m,
			     "%.0f%% still in flight at the wait after %.1f us on average: piano's "
			     "file helper was still transferring; the I/O takes longer than the "
			     "computation between post and wait",
			     100.0 * (double)in_flight / (double)waits, window);
		else if (file)
			diag(m,
			     "%.0f%% still in flight at the wait after %.1f us on average: the "
			     "MPI's "
			     "own non-blocking file call had not finished (piano leaves a transfer "
			     "to the MPI with PIANO_MPI_FILE=native, in serialized mode, and on "
			     "MPICH for contiguous independent ones: docs/mpi.md, \"Non-blocking "
			     "file I/O\")",
			     100.0 * (double)in_flight / (double)waits, window);
		else if (rounds && timer_rounds * 2 > rounds)
			diag(m,
			     "%.0f%% still in flight at the wait after %.1f us on average; the "
			     "engine "
			     "reached them mostly from the timer thread (%.1f rounds per "
			     "operation): "
			     "every core computes; leave a core idle (one rank fewer per node), or "
			     "lower PIANO_TIMER_PERIOD_US",
			     100.0 * (double)in_flight / (double)waits, window, per_op);
		else if (per_op < 1.0)
			diag(m,
			     "%.0f%% still in flight at the wait after %.1f us on average, with "
			     "%.1f engine rounds per operation in between: hardly anything "
			     "progressed "
			     "them while the application computed (background progress off, or no "
			     "idle core and no timer tick for it)",
			     100.0 * (double)in_flight / (double)waits, window, per_op);
		else
			diag(m,
			     "%.0f%% still in flight at the wait after %.1f us on average although "
			     "the engine ran %.1f rounds per operation meanwhile: the transfer (or "
			     "the "
			     "peer) takes longer than the computation between post and wait",
			     100.0 * (double)in_flight / (double)waits, window, per_op);
	}
	if (m->v[C_pending])
		diag(m, "%" PRIu64 " still pending at MPI_Finalize (not in the numbers)",
		     m->v[C_pending]);
	if (m->v[C_freed])
		diag(m,
		     "%" PRIu64 " freed with MPI_Request_free before completing: their times are "
		     "unknown (not in the numbers)",
		     m->v[C_freed]);
}

/* ------------------------------------------------------------ output */

static const char *proto(const struct merged *m)
{
	if (report_is_file(m->kind))
		return m->eager ? "piano" : "mpi";
	return !is_p2p(m->kind) ? "-" : m->eager ? "eager" : "rndv";
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static void bytes_text(char *out, size_t len, uint64_t b)
{
	static const char *const units[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)b;
	int u = 0;
	while (v >= 1024.0 && u < 4) {
		v /= 1024.0;
		u++;
	}
	if (u == 0)
		snprintf(out, len, "%" PRIu64 " B", b);
	else
		snprintf(out, len, "%.1f %s", v, units[u]);
}

static void percent_text(char *out, size_t len, uint64_t part, uint64_t whole)
{
	if (whole)
		snprintf(out, len, "%.1f%%", 100.0 * (double)part / (double)whole);
	else
		snprintf(out, len, "-");
}

/* "idle 95%, wait 5%": the completers of a row, most first. */
static void by_text(char *out, size_t len, const uint64_t v[NV])
{
	uint64_t done = v[C_completed];
	out[0] = '\0';
	if (!done) {
		snprintf(out, len, "-");
		return;
	}
	bool taken[REPORT_BY_COUNT] = { false };
	size_t used = 0;
	for (int r = 0; r < REPORT_BY_COUNT; r++) {
		int best = -1;
		for (int i = 0; i < REPORT_BY_COUNT; i++)
			if (!taken[i] && v[C_BY + i] && (best < 0 || v[C_BY + i] > v[C_BY + best]))
				best = i;
		if (best < 0)
			break;
		taken[best] = true;
		int n = snprintf(out + used, len - used, "%s%s %.0f%%", used ? ", " : "",
		                 by_names[best], 100.0 * (double)v[C_BY + best] / (double)done);
		if (n < 0 || (size_t)n >= len - used)
			break;
		used += (size_t)n;
	}
}

static void site_name(char *out, size_t len, const struct merged *m)
{
	if (m->file[0])
		snprintf(out, len, "%s (%s:%d)", m->function[0] ? m->function : "?",
		         base_name(m->file), m->line);
	else if (m->function[0])
		snprintf(out, len, "%s (%s+0x%" PRIx64 ")", m->function, base_name(m->module),
		         m->offset);
	else
		snprintf(out, len, "%s+0x%" PRIx64, base_name(m->module), m->offset);
}

struct header {
	char command[1024];
	char date[64];
	char mpi[256];
	char settings[2048];
};

static void read_header(struct header *h)
{
	memset(h, 0, sizeof(*h));
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t n = read(fd, h->command, sizeof(h->command) - 1);
		close(fd);
		for (ssize_t i = 0; i < n - 1; i++)
			if (!h->command[i])
				h->command[i] = ' ';
	}
	time_t now = time(NULL);
	struct tm tm;
	gmtime_r(&now, &tm);
	strftime(h->date, sizeof(h->date), "%Y-%m-%d %H:%M:%S UTC", &tm);
	char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
	int vlen = 0;
	PMPI_Get_library_version(version, &vlen);
	version[strcspn(version, "\n")] = '\0';
	snprintf(h->mpi, sizeof(h->mpi), "%s", version);
	int n = 0;
	size_t used = 0;
	piano_setting_count(&n);
	for (int i = 0; i < n; i++) {
		struct piano_setting s;
		if (piano_setting_get(i, &s) || !s.value || !strcmp(s.value, s.def ? s.def : ""))
			continue;
		int w = snprintf(h->settings + used, sizeof(h->settings) - used, "%s%s=%s",
		                 used ? " " : "", s.name, s.value);
		if (w < 0 || (size_t)w >= sizeof(h->settings) - used)
			break;
		used += (size_t)w;
	}
	if (!used)
		snprintf(h->settings, sizeof(h->settings), "(all defaults)");
}

static void write_text(FILE *f, const struct header *h, const struct totals *t)
{
	fprintf(f, "# piano overlap report\n");
	fprintf(f, "# Command      : %s\n", h->command);
	fprintf(f, "# Date         : %s\n", h->date);
	fprintf(f, "# MPI          : %s\n", h->mpi);
	if (t->nfailed)
		fprintf(f, "# Ranks        : %d of %d\n", t->ranks, t->ranks + (int)t->nfailed);
	else
		fprintf(f, "# Ranks        : %d\n", t->ranks);
	for (size_t i = 0; i < t->nfailed; i++)
		fprintf(f, "# Failed       : rank %d recorded nothing: %s\n", t->failed[i].rank,
		        t->failed[i].why);
	fprintf(f, "# Run time     : %.3f s (MPI_Init to MPI_Finalize, longest rank)\n",
	        (double)t->run_ns / 1e9);
	fprintf(f, "# piano        : %s, background progress %s, eager limit %ld B, symbols: %s\n",
	        PIANO_VERSION_STRING, t->threaded ? "on" : "off", pmpi_g.eager_limit,
	        symbolizer_kind());
	fprintf(f, "# Settings     : %s\n", h->settings);
	if (t->lost_full || t->lost_sites || t->lost_stale)
		fprintf(f,
		        "# Not recorded : %" PRIu64 " operations (in-flight table full), %" PRIu64
		        " (site tables full), %" PRIu64 " completed out of piano's sight\n",
		        t->lost_full, t->lost_sites, t->lost_stale);
	fprintf(f, "#\n# Window: post to the start of the call that completed the operation. "
	           "Blocked: that call's\n# time, shared among the operations it completed. "
	           "Hidden: window / (window + blocked).\n# Ready: complete when the wait "
	           "began. Times in ms, summed over ranks.\n\n");
	fprintf(f, "## Operations by call site, most blocked first\n");
	fprintf(f, "%4s  %-22s %-6s %5s %9s %11s %12s %12s %7s %7s  %s\n", "ID", "Kind", "Proto",
	        "Ranks", "Ops", "Bytes", "Window", "Blocked", "Hidden", "Ready", "Completed by");
	uint64_t sum[NV] = { 0 };
	for (size_t i = 0; i < t->n; i++) {
		const struct merged *m = &t->m[i];
		char b[32], hid[16], rdy[16], by[128];
		bytes_text(b, sizeof(b), m->v[C_bytes]);
		percent_text(hid, sizeof(hid), m->v[C_window_ns],
		             m->v[C_window_ns] + m->v[C_blocked_ns]);
		percent_text(rdy, sizeof(rdy), m->v[C_ready],
		             m->v[C_completed] - m->v[C_BY + REPORT_BY_TEST]);
		by_text(by, sizeof(by), m->v);
		fprintf(f, "%4d  %-22s %-6s %5d %9" PRIu64 " %11s %12.3f %12.3f %7s %7s  %s\n",
		        m->id, report_kind_name(m->kind), proto(m), m->ranks, m->v[C_completed], b,
		        (double)m->v[C_window_ns] / 1e6, (double)m->v[C_blocked_ns] / 1e6, hid, rdy,
		        by);
		for (int k = 0; k < NV; k++)
			sum[k] += m->v[k];
	}
	char b[32], hid[16], rdy[16], by[128];
	bytes_text(b, sizeof(b), sum[C_bytes]);
	percent_text(hid, sizeof(hid), sum[C_window_ns], sum[C_window_ns] + sum[C_blocked_ns]);
	percent_text(rdy, sizeof(rdy), sum[C_ready], sum[C_completed] - sum[C_BY + REPORT_BY_TEST]);
	by_text(by, sizeof(by), sum);
	fprintf(f, "%4s  %-22s %-6s %5d %9" PRIu64 " %11s %12.3f %12.3f %7s %7s  %s\n", "all", "",
	        "", t->ranks, sum[C_completed], b, (double)sum[C_window_ns] / 1e6,
	        (double)sum[C_blocked_ns] / 1e6, hid, rdy, by);

	fprintf(f, "\n## Call sites\n%4s  %-40s %s\n", "ID", "Function (source)", "Module+offset");
	for (size_t i = 0; i < t->n; i++) {
		const struct merged *m = &t->m[i];
		char name[512];
		site_name(name, sizeof(name), m);
		fprintf(f, "%4d  %-40s %s+0x%" PRIx64 "\n", m->id, name, m->module, m->offset);
	}
	fprintf(f, "\n## Diagnoses\n");
	int shown = 0;
	for (size_t i = 0; i < t->n; i++) {
		const struct merged *m = &t->m[i];
		char name[512];
		site_name(name, sizeof(name), m);
		for (int d = 0; d < m->ndiag; d++, shown++)
			fprintf(f, "[%d] %s at %s: %s\n", m->id, report_kind_name(m->kind), name,
			        m->diag[d]);
	}
	if (!shown)
		fprintf(f, "(none)\n");
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(f, "\\%c", c);
		else if (c < 0x20)
			fprintf(f, "\\u%04x", c);
		else
			fputc(c, f);
	}
	fputc('"', f);
}

static void write_json(FILE *f, const struct header *h, const struct totals *t)
{
	fprintf(f, "{\n  \"piano_report\": 1,\n  \"command\": ");
	json_string(f, h->command);
	fprintf(f, ",\n  \"date\": ");
	json_string(f, h->date);
	fprintf(f, ",\n  \"mpi\": ");
	json_string(f, h->mpi);
	fprintf(f, ",\n  \"ranks\": %d,\n  \"failed_ranks\": [", t->ranks);
	for (size_t i = 0; i < t->nfailed; i++) {
		fprintf(f, "%s{\"rank\": %d, \"reason\": ", i ? ", " : "", t->failed[i].rank);
		json_string(f, t->failed[i].why);
		fputc('}', f);
	}
	fprintf(f,
	        "],\n  \"run_time_ns\": %" PRIu64
	        ",\n  \"piano\": \"%s\",\n  \"background_progress\": %s,\n  \"eager_limit\": "
	        "%ld,\n  \"symbols\": \"%s\",\n  \"settings\": ",
	        t->run_ns, PIANO_VERSION_STRING, t->threaded ? "true" : "false", pmpi_g.eager_limit,
	        symbolizer_kind());
	json_string(f, h->settings);
	fprintf(f,
	        ",\n  \"not_recorded\": {\"inflight_full\": %" PRIu64 ", \"sites_full\": %" PRIu64
	        ", \"stale\": %" PRIu64 "},\n  \"sites\": [",
	        t->lost_full, t->lost_sites, t->lost_stale);
	for (size_t i = 0; i < t->n; i++) {
		const struct merged *m = &t->m[i];
		fprintf(f,
		        "%s\n    {\"id\": %d, \"kind\": \"%s\", \"protocol\": \"%s\", \"module\": ",
		        i ? "," : "", m->id, report_kind_name(m->kind), proto(m));
		json_string(f, m->module);
		fprintf(f, ", \"offset\": %" PRIu64 ", \"function\": ", m->offset);
		json_string(f, m->function);
		fprintf(f, ", \"file\": ");
		json_string(f, m->file);
		fprintf(f,
		        ", \"line\": %d, \"ranks\": %d, \"blocked_max_ns\": %" PRIu64
		        ", \"blocked_max_rank\": %d",
		        m->line, m->ranks, m->blocked_max, m->blocked_max_rank);
		for (int k = 0; k < C_BY; k++)
			fprintf(f, ", \"%s\": %" PRIu64, counter_names[k], m->v[k]);
		fprintf(f, ", \"by\": {");
		for (int k = 0; k < REPORT_BY_COUNT; k++)
			fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", by_names[k],
			        m->v[C_BY + k]);
		fprintf(f, "}, \"rounds\": {");
		for (int k = 0; k < PIANO_POINT_COUNT; k++)
			fprintf(f, "%s\"%s\": %" PRIu64, k ? ", " : "", piano_point_name(k),
			        m->v[C_ROUNDS + k]);
		fprintf(f, "}, \"diagnoses\": [");
		for (int d = 0; d < m->ndiag; d++) {
			fprintf(f, "%s", d ? ", " : "");
			json_string(f, m->diag[d]);
		}
		fprintf(f, "]}");
	}
	fprintf(f, "\n  ]\n}\n");
}

/* Writes through a file of an unpredictable name in the same directory,
 * renamed over `name` once complete: a reader never sees half a report,
 * and nothing is written through a link an other user planted. */
static void write_file(const char *name, const struct header *h, const struct totals *t,
                       void (*writer)(FILE *, const struct header *, const struct totals *))
{
	char tmp[PATH_MAX + 16];
	snprintf(tmp, sizeof(tmp), "%s.XXXXXX", name);
	int fd = mkostemp(tmp, O_CLOEXEC);
	FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		pmpi_warn("cannot write the overlap report %s: %s", name, strerror(errno));
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return;
	}
	fchmod(fd, 0644);
	writer(f, h, t);
	if (fclose(f) || rename(tmp, name)) {
		pmpi_warn("cannot write the overlap report %s: %s", name, strerror(errno));
		unlink(tmp);
	}
}

static void write_report(struct totals *t)
{
	merge_ranks(t);
	for (size_t i = 0; i < t->n; i++) {
		t->m[i].id = (int)i + 1;
		diagnose(&t->m[i]);
	}
	struct header h;
	read_header(&h);
	write_file(path, &h, t, write_text);
	char json[PATH_MAX + 8]; /* report_open() left room for the suffix */
	snprintf(json, sizeof(json), "%s.json", path);
	write_file(json, &h, t, write_json);
	for (size_t i = 0; i < t->n; i++)
		for (int d = 0; d < t->m[i].ndiag; d++)
			free(t->m[i].diag[d]);
}

void report_finish(void)
{
	if (!asked)
		return;
	MPI_Comm comm;
	if (PMPI_Comm_dup(MPI_COMM_WORLD, &comm) != MPI_SUCCESS) {
		pmpi_warn("cannot gather the overlap report: no report");
		return;
	}
	int rank = 0, size = 1;
	PMPI_Comm_rank(comm, &rank);
	PMPI_Comm_size(comm, &size);
	/* A rank without rows of its own still sends a part, the line "!" and
	 * why, so that the report names it instead of merging fewer ranks
	 * without a word. */
	size_t len = 0;
	char *mine = failed[0] ? NULL : serialize(&len);
	const char *why = failed[0]        ? failed
	                  : !mine          ? "out of memory building its rows"
	                  : len >= INT_MAX ? "its rows exceed one message (2 GiB)"
	                                   : NULL;
	char note[sizeof(failed) + 4];
	const char *part = mine;
	int n = (int)len;
	if (why) {
		n = snprintf(note, sizeof(note), "!\t%s\n", why);
		part = note;
	}
	/* Rank 0 says at each step whether it has room to receive (a Bcast):
	 * a root that gathered into no buffer would crash, and one that posted
	 * shorter receives than the parts would fail them (truncation), and
	 * every rank must take the same collective steps, or some would wait
	 * in one for ever. */
	int *lens = rank == 0 ? calloc((size_t)size, sizeof(int)) : NULL;
	int *displs = rank == 0 ? calloc((size_t)size, sizeof(int)) : NULL;
	char *all = NULL;
	int room = rank != 0 || (lens && displs);
	PMPI_Bcast(&room, 1, MPI_INT, 0, comm);
	if (room) {
		PMPI_Gather(&n, 1, MPI_INT, lens, 1, MPI_INT, 0, comm);
		if (rank == 0) {
			long total = 0;
			for (int r = 0; r < size; r++) {
				displs[r] = (int)total;
				total += lens[r];
			}
			all = total < INT_MAX ? malloc((size_t)total + 1) : NULL;
			if (all)
				all[total] = '\0';
			room = all != NULL;
		}
		PMPI_Bcast(&room, 1, MPI_INT, 0, comm);
	}
	if (room)
		PMPI_Gatherv(part, n, MPI_CHAR, all, lens, displs, MPI_CHAR, 0, comm);
	if (rank == 0) {
		if (!room) {
			pmpi_warn("out of memory gathering the overlap report: no report");
		} else if (!path[0]) {
			pmpi_warn("no overlap report: rank 0 has no path to write it to (above)");
		} else {
			struct totals t = { .threaded = pmpi_g.threaded };
			for (int r = 0; r < size; r++)
				parse_rank(&t, r, all + displs[r], (size_t)lens[r]);
			if (t.oom)
				pmpi_warn("out of memory merging the overlap report: rows are "
				          "missing");
			write_report(&t);
			free(t.m);
			free(t.failed);
		}
	}
	free(mine);
	free(all);
	free(lens);
	free(displs);
	PMPI_Comm_free(&comm);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The overlap report's recording (report.c; docs/report.md): per call site
 * of the application and kind of operation, how long its non-blocking
 * operations ran before the application asked for them (the window), how
 * long the completion call that completed them blocked, whether they were
 * complete when that call began, and which polling points drove the MPI
 * meanwhile. PIANO_REPORT=PATH turns it on; off, every hook returns after
 * one load.
 *
 * Memory: one table of operations in flight for the process, allocated
 * once at set-up, in buckets of eight slots claimed with a compare-and-swap
 * (no lock, no allocation per request); one table of call sites per
 * application thread, written only by its thread and read at MPI_Finalize,
 * when the standard says no other thread calls MPI.
 */
#ifndef PIANO_MPI_REPORT_H
#define PIANO_MPI_REPORT_H

#include "hidden.h"
#include "base.h"

/* The kinds of operation a row of the report counts. The names
 * (report_kind_name) are the report's. */
enum report_kind {
	REPORT_ISEND,
	REPORT_ISSEND,
	REPORT_IBSEND,
	REPORT_IRSEND,
	REPORT_IRECV,
	REPORT_IMRECV,
	REPORT_ISENDRECV, /* and MPI_Isendrecv_replace (MPI-4) */
	REPORT_SEND_INIT, /* persistent: counted at each MPI_Start(all) */
	REPORT_BSEND_INIT,
	REPORT_SSEND_INIT,
	REPORT_RSEND_INIT,
	REPORT_RECV_INIT,
	REPORT_IBARRIER,
	REPORT_IBCAST,
	REPORT_IREDUCE,
	REPORT_IALLREDUCE,
	REPORT_IREDUCE_SCATTER,
	REPORT_IREDUCE_SCATTER_BLOCK,
	REPORT_ISCAN,
	REPORT_IEXSCAN,
	REPORT_IGATHER,
	REPORT_IGATHERV,
	REPORT_ISCATTER,
	REPORT_ISCATTERV,
	REPORT_IALLGATHER,
	REPORT_IALLGATHERV,
	REPORT_IALLTOALL,
	REPORT_IALLTOALLV,
	REPORT_IALLTOALLW,
	REPORT_INEIGHBOR, /* every MPI_Ineighbor_* */
	REPORT_PCOLL,     /* every persistent collective: counted at each start */
	/* Non-blocking file transfers (REPORT_FILE_FIRST..REPORT_FILE_LAST);
	 * the row's `eager` bit says who transfers: piano's file helper (1) or
	 * the MPI's own call (0). */
	REPORT_FILE_IREAD_AT,
	REPORT_FILE_IWRITE_AT,
	REPORT_FILE_IREAD,
	REPORT_FILE_IWRITE,
	REPORT_FILE_IREAD_SHARED,
	REPORT_FILE_IWRITE_SHARED,
	REPORT_FILE_IREAD_ALL,
	REPORT_FILE_IWRITE_ALL,
	REPORT_FILE_IREAD_AT_ALL,
	REPORT_FILE_IWRITE_AT_ALL,
	REPORT_KIND_COUNT
};

enum { REPORT_FILE_FIRST = REPORT_FILE_IREAD_AT, REPORT_FILE_LAST = REPORT_FILE_IWRITE_AT_ALL };

/* A window shorter than this is a wait right after its post (report_row's
 * short_windows; the diagnosis "the wait follows the post"). */
enum { REPORT_SHORT_NS = 5000 };

const char *report_kind_name(int kind);

static inline bool report_is_file(int kind)
{
	return kind >= REPORT_FILE_FIRST && kind <= REPORT_FILE_LAST;
}

/* Who completed an operation (the report's "by" columns). */
enum report_by {
	REPORT_BY_WAIT,     /* not complete when the wait that completed it began */
	REPORT_BY_TEST,     /* completed by a test */
	REPORT_BY_MPI,      /* complete at the wait, no engine round in its window */
	REPORT_BY_EXPLICIT, /* complete at the wait; engine rounds at these points */
	REPORT_BY_IDLE,     /* (the point with the most rounds in the window) */
	REPORT_BY_TIMER,
	REPORT_BY_BLOCK,
	REPORT_BY_COUNT
};

/* Whether the report records (read-only after set-up). */
extern PIANO_HIDDEN int report_on;

/* Set-up from PIANO_REPORT (init.c, under its lock): 0, or -1 after a
 * message when the tables cannot be had (the job then runs unrecorded). */
int report_setup(void);

/* The application's call site: the return address into the caller of the
 * exported MPI function that calls this macro (report_site.h turns one in
 * a Fortran binding into the program's). */
#define REPORT_SITE() __builtin_return_address(0)

/*
 * First statement of a piano Fortran procedure that posts: for the length
 * of the procedure, its caller is the thread's `report_fsite`, which the C
 * call inside it records as the site without walking the stack
 * (report_site.c). Restored at the end (a procedure of the MPI's binding
 * may call piano's).
 */
extern _Thread_local const void *report_fsite;
static inline const void *report_fsite_begin(const void *site)
{
	if (!report_on)
		return NULL;
	const void *saved = report_fsite;
	report_fsite = site;
	return saved;
}
static inline void report_fsite_end(const void *const *saved)
{
	if (report_on)
		report_fsite = *saved;
}
#define REPORT_FORTRAN_SCOPE()                                                                   \
	const void *report_fsite_saved_ __attribute__((cleanup(report_fsite_end), unused)) = \
	        report_fsite_begin(__builtin_return_address(0))

/* An operation was posted: *req is its request (MPI_REQUEST_NULL: ignored);
 * bytes its message size (-1: not known); eager whether it is at most the
 * eager limit (a file transfer: whether piano's helper makes it). */
void report_post_(int kind, long bytes, bool eager, MPI_Request req, const void *site);
static inline void report_post(int kind, long bytes, bool eager, int rc, const MPI_Request *req,
                               const void *site)
{
	if (report_on && rc == MPI_SUCCESS)
		report_post_(kind, bytes, eager, *req, site);
}

/*
 * A completion call on n requests. report_begin before it copies the
 * handles (wait: and asks the MPI whether each recorded request is already
 * complete, which a test need not); report_end after it, with the handles
 * as they are now, the call's return code and, on success, the completed
 * indices (idx NULL: 0..nidx-1). Every call of report_begin is followed by
 * one of report_end with the same rep.
 */
struct report_call {
	uint64_t t0; /* report.c's clock (ticks); 0: nothing recorded */
	bool wait;
	int n;
	MPI_Request *before;
	MPI_Request small[8];
};
void report_begin_(struct report_call *rep, const MPI_Request *reqs, int n, bool wait);
static inline void report_begin(struct report_call *rep, const MPI_Request *reqs, int n, bool wait)
{
	rep->t0 = 0;
	if (report_on)
		report_begin_(rep, reqs, n, wait);
}
void report_end_(struct report_call *rep, int rc, const MPI_Request *after, const int *idx,
                 int nidx);
static inline void report_end(struct report_call *rep, int rc, const MPI_Request *after,
                              const int *idx, int nidx)
{
	if (rep->t0)
		report_end_(rep, rc, after, idx, nidx);
}

/* A persistent request was created (MPI_Send_init, ...): recorded as an
 * operation of its kind, bytes and site each time it is started. */
void report_init_(int kind, long bytes, bool eager, MPI_Request req, const void *site);
static inline void report_init(int kind, long bytes, bool eager, int rc, const MPI_Request *req,
                               const void *site)
{
	if (report_on && rc == MPI_SUCCESS)
		report_init_(kind, bytes, eager, *req, site);
}
/* Persistent requests were started (MPI_Start, MPI_Startall). */
void report_start_(const MPI_Request *reqs, int n);
static inline void report_start(int rc, const MPI_Request *reqs, int n)
{
	if (report_on && rc == MPI_SUCCESS)
		report_start_(reqs, n);
}

/* The application freed a request (MPI_Request_free). */
void report_free_(MPI_Request req);
static inline void report_free(MPI_Request req)
{
	if (report_on)
		report_free_(req);
}

/* A round of the engine's progress (the progress and watcher tasks). */
void report_round_(void);
static inline void report_round(void)
{
	if (report_on)
		report_round_();
}

/*
 * What the recording holds, for report_out.c at MPI_Finalize: call f for
 * every site row of every thread (rows of one site in several threads
 * come separately; the reader sums them), after counting the operations
 * still in flight into their rows. The tables keep times in report.c's
 * clock ticks; f gets a copy in ns.
 */
struct report_row {
	const void *site;
	int kind;
	bool eager;
	uint64_t posted, completed, freed, pending;
	uint64_t bytes;          /* of the completed ones */
	uint64_t window_ns;      /* post to the start of the completing call */
	uint64_t short_windows;  /* completed ones whose window was under REPORT_SHORT_NS */
	uint64_t blocked_ns;     /* the completing calls, shared among their requests */
	uint64_t ready;          /* complete when the completing wait began */
	uint64_t ready_waits;    /* completed by a wait that found all its own complete */
	uint64_t ready_waits_ns; /* blocked_ns of those */
	uint64_t by[REPORT_BY_COUNT];
	uint64_t rounds[PIANO_POINT_COUNT]; /* engine rounds in the windows */
};
void report_rows(void (*f)(const struct report_row *row, void *arg), void *arg);

/* Operations not recorded: the in-flight table's bucket was full, or a
 * thread's site table. */
struct report_losses {
	uint64_t inflight_full; /* posted while their bucket of the in-flight table was full */
	uint64_t sites_full;    /* counts a thread's full site table could not take */
	uint64_t stale;         /* in flight under a handle the MPI gave again: completed
	                         * by a call piano does not see */
};
void report_losses(struct report_losses *out);

#endif

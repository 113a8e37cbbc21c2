/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Point-to-point operations. Non-blocking and persistent calls go straight
 * to the MPI; the request is tracked when the message may need the peer's
 * cooperation (larger than the eager limit).
 *
 * Synchronous sends (Issend, Ssend_init) follow the same rule, though a
 * small one also completes only once the receiver has matched it: matching
 * takes the receiver's progress, which piano gives when the receive is
 * tracked (a receive larger than the eager limit), never the sender's.
 * The sender's MPI then only has the acknowledgement to read, which its
 * own Test or Wait does; tracking the send would run the progress task
 * for nothing (docs/mpi.md, "Tracking"; test mpi.<mpi>.ssend).
 */
#include "base.h"
#include "coll_persist.h"
#include "init.h"
#include "offload.h"
#include "progress.h"
#include "report.h"
#include "track.h"
#include "waitop.h"
#include "serial.h"

enum post_mode { POST_ACTIVE, POST_PERSISTENT, POST_OFFLOADED };

/*
 * After a call that made a request: recorded for the overlap report
 * (report.h), and tracked when the message may need the peer's cooperation
 * (larger than the eager limit; a persistent one when started). A request
 * of a send queued for offload is piano's own, never tracked. `site` is the
 * application's call site (REPORT_SITE() in the exported function);
 * `known` the message's size in bytes if the caller found it in the type
 * cache, else -1.
 */
static int posted_slow(int rc, MPI_Count count, MPI_Datatype dt, MPI_Request *req,
                       enum post_mode mode, int kind, const void *site, long known)
{
	long bytes = known;
	bool eager = bytes >= 0 ? bytes <= pmpi_g.eager_limit
	                        : pmpi_type_bytes(count, dt, &bytes) == 0 &&
	                                  bytes <= pmpi_g.eager_limit;
	if (pmpi_g.threaded && mode != POST_OFFLOADED) {
		if (eager) {
			/* Counted for PIANO_STATS only: a locked increment on every
			 * small send cost more than the MPI's own work there. */
			if (pmpi_g.stats)
				atomic_fetch_add_explicit(&pmpi_g.bypassed, 1,
				                          memory_order_relaxed);
		} else {
			bool persistent = mode == POST_PERSISTENT;
			if (track_add(*req, persistent, !persistent, true))
				progress_kick();
		}
	}
	/* Last: the window starts when the application has the call back. */
	if (report_on) {
		if (mode == POST_PERSISTENT)
			report_init_(kind, bytes, eager, *req, site);
		else
			report_post_(kind, bytes, eager, *req, site);
	}
	return rc;
}

/* The size in bytes of count elements of a cached predefined type, else
 * -1 (a type not cached, or a count the cache's arithmetic does not
 * cover). */
static inline long post_cached_bytes(MPI_Count count, MPI_Datatype dt)
{
	int size = pmpi_type_cached(dt);
	/* count * size without overflow: both are below 2^31 here. */
	if (size < 0 || count < 0 || count > INT_MAX)
		return -1;
	return (long)count * size;
}

/* Inline, the case of most calls: a small message of a cached predefined
 * type, nothing to track or record (an eager receive or send, in a code
 * made of many of them, costs the MPI a few hundred instructions: the
 * call and frame of posted_slow() would add a tenth). */
static inline __attribute__((always_inline)) int posted(int rc, MPI_Count count, MPI_Datatype dt,
                                                        MPI_Request *req, enum post_mode mode,
                                                        int kind, const void *site, long known)
{
	if (rc != MPI_SUCCESS || ((!pmpi_g.threaded || mode == POST_OFFLOADED) && !report_on))
		return rc;
	if (mode == POST_ACTIVE && !report_on && !pmpi_g.stats) {
		if (known < 0)
			known = post_cached_bytes(count, dt);
		if (known >= 0 && known <= pmpi_g.eager_limit)
			return rc;
	}
	return posted_slow(rc, count, dt, req, mode, kind, site, known);
}

/*
 * How a post goes to the MPI (set-up's verdict, pmpi_post_plain, and the
 * message's size). POST_PLAIN: with nothing around it but serialized mode's
 * gate: set-up found nothing that watches posts (no overlap report, no
 * statistics, no offload) and the message is eager, or nothing is ever
 * tracked (no background progress). Decided before the MPI's call, from
 * the cache of predefined types alone, so that nothing asks the MPI about a
 * datatype before the MPI has checked it: a type not cached takes the full
 * path, which asks after a successful call. Inline, only the thread's last
 * eager type is compared (post_memo); any other post is POST_DECIDE, an out
 * of line decision with the type cache (post_decide()), which may be eager
 * too, or the full path without a call site (nothing records one in such a
 * process). POST_FULL: the full path with the call site. With the gated
 * call out of line too, the exported function is the memo's compare and
 * tail calls: no frame, nothing kept across the MPI's call (with the type
 * cache's lookup inline it saved two registers and moved its stack
 * argument, and 40 of piano's instructions per eager post cost the
 * random-access kernel 3 %; the full path inline kept six registers and the
 * arguments: 56 instructions of an eager MPI_Isend).
 */
enum post_way { POST_PLAIN, POST_DECIDE, POST_FULL };

/* The calling thread's last eager datatype, and the largest count of it
 * that is eager (eager limit / size): written by post_decide() when the
 * type cache knows the type. Initial-exec: two instructions to reach. */
struct post_memo {
	MPI_Datatype dt;
	uint64_t max;
};
static _Thread_local struct post_memo post_memo __attribute__((tls_model("initial-exec")));

static inline enum post_way post_way(MPI_Count count, MPI_Datatype dt)
{
	/* Acquire, partner: set-up's release store after pmpi_ready's. */
	int plain = atomic_load_explicit(&pmpi_post_plain, memory_order_acquire);
	if (plain == PMPI_POST_PLAIN_TRACKING)
		/* A negative count is above every limit (an error for the MPI). */
		return dt == post_memo.dt && (uint64_t)count <= post_memo.max ? POST_PLAIN
		                                                               : POST_DECIDE;
	return plain == PMPI_POST_PLAIN_ALL ? POST_PLAIN : POST_FULL;
}

/* POST_DECIDE's decision: whether the post is eager (then the type is the
 * thread's memo); *bytes its size for the full path, or -1. */
static bool post_decide(MPI_Count count, MPI_Datatype dt, long *bytes)
{
	*bytes = post_cached_bytes(count, dt);
	if (*bytes < 0)
		return false;
	long limit = pmpi_g.eager_limit;
	if (limit >= 0) {
		post_memo.dt = dt;
		post_memo.max = (uint64_t)(limit / pmpi_type_cached(dt));
	}
	return *bytes <= limit;
}

/* A plain post with the gate on (SERIAL_WRAP's second half), out of line
 * (see post_way()). */
#define POST_GATED(fn, PARAMS, call)                   \
	static __attribute__((noinline)) int fn PARAMS \
	{                                              \
		gate_app_close();                      \
		int rc_ = call;                        \
		gate_app_open();                       \
		return rc_;                            \
	}

/* A plain post: the MPI's call, or `gated` (POST_GATED's) with the gate
 * on. */
#define POST_PLAIN_CALL(NAMES, gated, call)            \
	do {                                           \
		if (!pmpi_g.serial || gate_app_idle()) \
			return call;                   \
		return gated(NAMES(), req);            \
	} while (0)

/* The exported post: NAMES the macro of its argument names, `full` the
 * full path (arguments, request, site, size or -1), `decide`
 * POST_DECIDED's, `gated` POST_GATED's. */
#define POST_CALL(way, NAMES, full, decide, gated, call)            \
	do {                                                        \
		enum post_way way_ = (way);                         \
		if (__builtin_expect(way_ == POST_DECIDE, 0))       \
			return decide(NAMES(), req);                \
		if (__builtin_expect(way_ == POST_FULL, 0))         \
			return full(NAMES(), req, REPORT_SITE(), -1); \
		POST_PLAIN_CALL(NAMES, gated, call);                \
	} while (0)

/* POST_DECIDE out of line, with the exported function's arguments. */
#define POST_DECIDED(fn, PARAMS, NAMES, full, gated, call)     \
	static __attribute__((noinline)) int fn PARAMS         \
	{                                                      \
		long bytes;                                    \
		if (!post_decide(count, dt, &bytes))           \
			return full(NAMES(), req, NULL, bytes);  \
		POST_PLAIN_CALL(NAMES, gated, call);           \
	}

/* Every call in both forms (BOTH_FORMS, base.h): a program that uses the
 * _c ones, or Fortran 2008 procedures that call them, is tracked the same
 * way. */
#define SEND_ARGS(C) const void *buf, C count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm
#define SEND_NAMES() buf, count, dt, dest, tag, comm
#define RECV_ARGS(C) void *buf, C count, MPI_Datatype dt, int src, int tag, MPI_Comm comm
#define RECV_NAMES() buf, count, dt, src, tag, comm
#define MRECV_ARGS(C) void *buf, C count, MPI_Datatype dt, MPI_Message *msg
#define MRECV_NAMES() buf, count, dt, msg

/* A call that creates a request: recorded and tracked as posted() decides.
 * A send goes behind the sends queued for offload (offload_flush,
 * offload.h); receives and the persistent inits send nothing and wait for
 * nothing. */
#define STARTS(sfx, C, name, ARGS, NAMES, mode, flush, kind)                                    \
	POST_GATED(name##_gated##sfx, (ARGS(C), MPI_Request *req), PMPI_##name##sfx(NAMES(), req))  \
	static __attribute__((noinline)) int name##_full##sfx(ARGS(C), MPI_Request *req,        \
	                                                      const void *site, long known)     \
	{                                                                                       \
		PMPI_APP_SCOPE();                                                               \
		pmpi_ensure();                                                                  \
		if (flush)                                                                      \
			offload_flush();                                                        \
		return posted(PMPI_##name##sfx(NAMES(), req), count, dt, req, mode, kind, site, \
		              known);                                                           \
	}                                                                                       \
	POST_DECIDED(name##_decide##sfx, (ARGS(C), MPI_Request *req), NAMES, name##_full##sfx,  \
	             name##_gated##sfx, PMPI_##name##sfx(NAMES(), req))                         \
	PMPI_EXPORT int MPI_##name##sfx(ARGS(C), MPI_Request *req)                              \
	{                                                                                       \
		POST_CALL(mode == POST_ACTIVE ? post_way(count, dt) : POST_FULL, NAMES,       \
		          name##_full##sfx, name##_decide##sfx, name##_gated##sfx,              \
		          PMPI_##name##sfx(NAMES(), req));                                      \
	}

/* MPI_Isend: deferred when offload takes it. */
#define ISEND(sfx, C, unused)                                                                    \
	POST_GATED(isend_gated##sfx, (SEND_ARGS(C), MPI_Request *req), PMPI_Isend##sfx(SEND_NAMES(), req)) \
	static __attribute__((noinline)) int isend_full##sfx(SEND_ARGS(C), MPI_Request *req,     \
	                                                     const void *site, long known)       \
	{                                                                                        \
		PMPI_APP_SCOPE();                                                                \
		pmpi_ensure();                                                                   \
		if (offload_isend(SEND_NAMES(), sizeof(C) > sizeof(int), req))                   \
			return posted(MPI_SUCCESS, count, dt, req, POST_OFFLOADED, REPORT_ISEND, \
			              site, known);                                              \
		offload_flush();                                                                 \
		return posted(PMPI_Isend##sfx(SEND_NAMES(), req), count, dt, req, POST_ACTIVE,   \
		              REPORT_ISEND, site, known);                                        \
	}                                                                                        \
	POST_DECIDED(isend_decide##sfx, (SEND_ARGS(C), MPI_Request *req), SEND_NAMES,           \
	             isend_full##sfx, isend_gated##sfx, PMPI_Isend##sfx(SEND_NAMES(), req))      \
	PMPI_EXPORT int MPI_Isend##sfx(SEND_ARGS(C), MPI_Request *req)                           \
	{                                                                                        \
		POST_CALL(post_way(count, dt), SEND_NAMES, isend_full##sfx, isend_decide##sfx, \
		          isend_gated##sfx, PMPI_Isend##sfx(SEND_NAMES(), req));                 \
	}

BOTH_FORMS(ISEND, -)
BOTH_FORMS(STARTS, Ibsend, SEND_ARGS, SEND_NAMES, POST_ACTIVE, true, REPORT_IBSEND)
BOTH_FORMS(STARTS, Issend, SEND_ARGS, SEND_NAMES, POST_ACTIVE, true, REPORT_ISSEND)
BOTH_FORMS(STARTS, Irsend, SEND_ARGS, SEND_NAMES, POST_ACTIVE, true, REPORT_IRSEND)
BOTH_FORMS(STARTS, Irecv, RECV_ARGS, RECV_NAMES, POST_ACTIVE, false, REPORT_IRECV)
BOTH_FORMS(STARTS, Imrecv, MRECV_ARGS, MRECV_NAMES, POST_ACTIVE, false, REPORT_IMRECV)
BOTH_FORMS(STARTS, Send_init, SEND_ARGS, SEND_NAMES, POST_PERSISTENT, false, REPORT_SEND_INIT)
BOTH_FORMS(STARTS, Bsend_init, SEND_ARGS, SEND_NAMES, POST_PERSISTENT, false, REPORT_BSEND_INIT)
BOTH_FORMS(STARTS, Ssend_init, SEND_ARGS, SEND_NAMES, POST_PERSISTENT, false, REPORT_SSEND_INIT)
BOTH_FORMS(STARTS, Rsend_init, SEND_ARGS, SEND_NAMES, POST_PERSISTENT, false, REPORT_RSEND_INIT)
BOTH_FORMS(STARTS, Recv_init, RECV_ARGS, RECV_NAMES, POST_PERSISTENT, false, REPORT_RECV_INIT)

PMPI_EXPORT int MPI_Start(MPI_Request *req)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	offload_flush();
	int rc;
	if (req && coll_persist_start(req, &rc)) {
		report_start(rc, req, 1);
		return rc;
	}
	rc = PMPI_Start(req);
	report_start(rc, req, 1);
	if (rc == MPI_SUCCESS && pmpi_g.threaded && track_start(*req))
		progress_kick();
	return rc;
}

/* MPI_Startall with a persistent graph collective among the requests: each
 * started in turn, as MPI_Startall is defined (MPI-4.0 §3.9). */
static int startall_each(int n, MPI_Request reqs[])
{
	bool kick = false;
	for (int i = 0; i < n; i++) {
		int rc;
		if (!coll_persist_start(&reqs[i], &rc)) {
			rc = PMPI_Start(&reqs[i]);
			if (rc == MPI_SUCCESS && pmpi_g.threaded)
				kick |= track_start(reqs[i]);
		}
		report_start(rc, &reqs[i], 1);
		if (rc != MPI_SUCCESS)
			return rc;
	}
	if (kick)
		progress_kick();
	return MPI_SUCCESS;
}

PMPI_EXPORT int MPI_Startall(int n, MPI_Request reqs[])
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	offload_flush();
	if (n > 0 && reqs && coll_persist_among(reqs, n))
		return startall_each(n, reqs);
	int rc = PMPI_Startall(n, reqs);
	report_start(rc, reqs, n);
	if (rc != MPI_SUCCESS || !pmpi_g.threaded)
		return rc;
	bool kick = false;
	for (int i = 0; i < n; i++)
		kick |= track_start(reqs[i]);
	if (kick)
		progress_kick();
	return rc;
}

/*
 * Blocking Send/Recv: the MPI's own call when the thread waits alone (or
 * without background progress); with other threads already waiting, the
 * non-blocking call and a delegated wait, so that the thread sleeps while
 * one poller serves them all.
 */
static int delegated(int rc, MPI_Request *r, MPI_Status *status)
{
	if (rc != MPI_SUCCESS)
		return rc;
	struct waitop op = { .kind = WAIT_ONE, .n = 1, .reqs = r };
	waitop_block(&op);
	return PMPI_Wait(r, status);
}

#define SEND(sfx, C, unused)                                                                       \
	PMPI_EXPORT int MPI_Send##sfx(SEND_ARGS(C))                                                \
	{                                                                                          \
		PMPI_APP_SCOPE();                                                                  \
		pmpi_ensure();                                                                     \
		offload_flush();                                                                   \
		struct waitop op = { .kind = WAIT_ONE, .n = 0 };                                   \
		MPI_Request r = MPI_REQUEST_NULL;                                                  \
		enum wait_mode mode = wait_enter(&op);                                             \
		int rc = mode != WAIT_DELEGATED ? PMPI_Send##sfx(SEND_NAMES())                     \
		                                : delegated(PMPI_Isend##sfx(SEND_NAMES(), &r), &r, \
		                                            MPI_STATUS_IGNORE);                    \
		wait_leave(mode);                                                                  \
		wait_aside_end(mode);                                                              \
		return rc;                                                                         \
	}
#define RECV(sfx, C, unused)                                                                 \
	PMPI_EXPORT int MPI_Recv##sfx(RECV_ARGS(C), MPI_Status *status)                      \
	{                                                                                    \
		PMPI_APP_SCOPE();                                                            \
		pmpi_ensure();                                                               \
		offload_flush();                                                             \
		struct waitop op = { .kind = WAIT_ONE, .n = 0 };                             \
		MPI_Request r = MPI_REQUEST_NULL;                                            \
		enum wait_mode mode = wait_enter(&op);                                       \
		int rc = mode != WAIT_DELEGATED                                              \
		                 ? PMPI_Recv##sfx(RECV_NAMES(), status)                      \
		                 : delegated(PMPI_Irecv##sfx(RECV_NAMES(), &r), &r, status); \
		wait_leave(mode);                                                            \
		wait_aside_end(mode);                                                        \
		return rc;                                                                   \
	}

BOTH_FORMS(SEND, -)
BOTH_FORMS(RECV, -)

/*
 * Calls piano intercepts only so that the sends queued for offload go
 * first (offload.h): the other sends (MPI's non-overtaking rule) and the
 * blocking and probing calls (their wait may depend on a queued send).
 * With set-up done and nothing queued (the acquire of offload_flush()),
 * the MPI's call as serialized mode's generated wrappers make it.
 */
#define FLUSHED(name, PARAMS, ARGS)                                                            \
	static __attribute__((noinline)) int name##_flushed PARAMS                             \
	{                                                                                      \
		PMPI_APP_SCOPE();                                                              \
		pmpi_ensure();                                                                 \
		offload_flush();                                                               \
		return PMPI_##name ARGS;                                                       \
	}                                                                                      \
	PMPI_EXPORT int MPI_##name PARAMS                                                      \
	{                                                                                      \
		if (__builtin_expect(!atomic_load_explicit(&pmpi_ready, memory_order_acquire) || \
		                             atomic_load_explicit(&offload_queued_n,           \
		                                                  memory_order_acquire),       \
		                     0))                                                       \
			return name##_flushed ARGS;                                            \
		SERIAL_WRAP(PMPI_##name ARGS);                                                 \
	}
#define SENDS(sfx, C, unused)                                                                  \
	FLUSHED(Ssend##sfx, (SEND_ARGS(C)), (SEND_NAMES()))                                    \
	FLUSHED(Bsend##sfx, (SEND_ARGS(C)), (SEND_NAMES()))                                    \
	FLUSHED(Rsend##sfx, (SEND_ARGS(C)), (SEND_NAMES()))                                    \
	FLUSHED(Sendrecv##sfx,                                                                 \
	        (const void *sbuf, C scount, MPI_Datatype sdt, int dest, int stag, void *rbuf, \
	         C rcount, MPI_Datatype rdt, int src, int rtag, MPI_Comm comm,                 \
	         MPI_Status *status),                                                          \
	        (sbuf, scount, sdt, dest, stag, rbuf, rcount, rdt, src, rtag, comm, status))   \
	FLUSHED(Sendrecv_replace##sfx,                                                         \
	        (void *buf, C count, MPI_Datatype dt, int dest, int stag, int src, int rtag,   \
	         MPI_Comm comm, MPI_Status *status),                                           \
	        (buf, count, dt, dest, stag, src, rtag, comm, status))
BOTH_FORMS(SENDS, -)

#if MPI_VERSION >= 4
/*
 * MPI_Isendrecv and MPI_Isendrecv_replace (MPI-4): one request for a send
 * and a receive. The send goes behind the sends queued for offload, as
 * every send does; the request is recorded as "isendrecv" (its bytes: the
 * larger message's) and tracked when either message is larger than the
 * eager limit (posted_slow()).
 */
static int isendrecv_posted(int rc, MPI_Count scount, MPI_Datatype sdt, MPI_Count rcount,
                            MPI_Datatype rdt, MPI_Request *req, const void *site)
{
	if (rc != MPI_SUCCESS || (!pmpi_g.threaded && !report_on))
		return rc;
	long sbytes = -1, rbytes = -1;
	if (pmpi_type_bytes(scount, sdt, &sbytes) != 0 || pmpi_type_bytes(rcount, rdt, &rbytes) != 0)
		return posted_slow(rc, scount, sdt, req, POST_ACTIVE, REPORT_ISENDRECV, site, -1);
	return posted_slow(rc, scount, sdt, req, POST_ACTIVE, REPORT_ISENDRECV, site,
	                   sbytes > rbytes ? sbytes : rbytes);
}

#define ISENDRECV(sfx, C, unused)                                                               \
	PMPI_EXPORT int MPI_Isendrecv##sfx(const void *sbuf, C scount, MPI_Datatype sdt, int dest,  \
	                                   int stag, void *rbuf, C rcount, MPI_Datatype rdt,       \
	                                   int src, int rtag, MPI_Comm comm, MPI_Request *req)     \
	{                                                                                       \
		PMPI_APP_SCOPE();                                                               \
		const void *site = REPORT_SITE();                                               \
		pmpi_ensure();                                                                  \
		offload_flush();                                                                \
		return isendrecv_posted(PMPI_Isendrecv##sfx(sbuf, scount, sdt, dest, stag, rbuf, \
		                                            rcount, rdt, src, rtag, comm, req),  \
		                        scount, sdt, rcount, rdt, req, site);                   \
	}                                                                                       \
	PMPI_EXPORT int MPI_Isendrecv_replace##sfx(void *buf, C count, MPI_Datatype dt, int dest,   \
	                                           int stag, int src, int rtag, MPI_Comm comm,     \
	                                           MPI_Request *req)                               \
	{                                                                                       \
		PMPI_APP_SCOPE();                                                               \
		const void *site = REPORT_SITE();                                               \
		pmpi_ensure();                                                                  \
		offload_flush();                                                                \
		return isendrecv_posted(PMPI_Isendrecv_replace##sfx(buf, count, dt, dest, stag,  \
		                                                    src, rtag, comm, req),       \
		                        count, dt, count, dt, req, site);                       \
	}
BOTH_FORMS(ISENDRECV, -)
#endif

FLUSHED(Probe, (int src, int tag, MPI_Comm comm, MPI_Status *status), (src, tag, comm, status))
FLUSHED(Iprobe, (int src, int tag, MPI_Comm comm, int *flag, MPI_Status *status),
        (src, tag, comm, flag, status))
FLUSHED(Mprobe, (int src, int tag, MPI_Comm comm, MPI_Message *msg, MPI_Status *status),
        (src, tag, comm, msg, status))
FLUSHED(Improbe, (int src, int tag, MPI_Comm comm, int *flag, MPI_Message *msg, MPI_Status *status),
        (src, tag, comm, flag, msg, status))
/* A queued send holds its communicator and datatype, which the application
 * may free while the send is pending. */
FLUSHED(Comm_free, (MPI_Comm * comm), (comm))
FLUSHED(Comm_disconnect, (MPI_Comm * comm), (comm))
FLUSHED(Type_free, (MPI_Datatype * dt), (dt))

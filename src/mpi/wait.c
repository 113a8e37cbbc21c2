/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion calls. Wait* calls wait natively or are delegated to the engine
 * (waitop.c); Test* calls are the MPI's own. Either way the MPI's own call
 * completes the requests in the caller's thread, and the tracking table
 * learns which tracked requests it completed.
 */
#include "base.h"
#include "coll_op.h"
#include "coll_persist.h"
#include "fileio.h"
#include "graph_list.h"
#include "init.h"
#include "offload.h"
#include "report.h"
#include "track.h"
#include "waitop.h"
#include "serial.h"
#include "sys.h"

#include <stdlib.h>
#include <string.h>

/* Copy of the handles before a completion call, to know afterwards which
 * tracked requests it completed (completion overwrites them); `door`: the
 * call is inside track.h's door (MPI_THREAD_MULTIPLE) until settle(). */
struct saved {
	MPI_Request small[16];
	MPI_Request *v;
	bool door;
};

static void save(struct saved *s, const MPI_Request *reqs, int n)
{
	s->v = NULL;
	s->door = false;
	if (n <= 0 || !track_any())
		return;
	s->door = track_door_enter();
	s->v = n <= 16 ? s->small : malloc((size_t)n * sizeof(MPI_Request));
	if (s->v)
		memcpy(s->v, reqs, (size_t)n * sizeof(MPI_Request));
	else
		pmpi_warn("out of memory: completions of %d requests not tracked", n);
}

/*
 * Tells the tracking table what the call completed: on success the
 * completed indices (idx, nidx; idx NULL means 0..nidx-1), on error whatever
 * the handles and statuses show (track_settle). `statuses` is the caller's
 * array indexed like the requests, or NULL.
 */
static void settle(struct saved *s, int rc, const MPI_Request *after, int n, const int *idx,
                   int nidx, const MPI_Status *statuses)
{
	if (s->v) {
		if (rc == MPI_SUCCESS)
			track_completed(s->v, n, idx, nidx);
		else
			track_settle(s->v, after, n, statuses);
		if (s->v != s->small)
			free(s->v);
	}
	/* Last: the table no longer holds what the call freed. */
	track_door_leave(s->door);
}

/* A completion count read from the call's outputs, which are only defined
 * when it succeeded (settle() ignores it otherwise). */
#define ok_count(rc, expr) ((rc) == MPI_SUCCESS ? (int)(expr) : 0)

static const MPI_Status *by_index(MPI_Status *statuses)
{
	return statuses == MPI_STATUSES_IGNORE ? NULL : statuses;
}

/*
 * A completion call on the request of a graph collective (coll_op.h)
 * advances the running graphs itself between the MPI's tests, as the MPI's
 * own wait drives its schedules: left to piano's threads, a graph waited
 * for while every core computes would take a timer period per step. The
 * waits become loops of the matching test, whose results are the wait's.
 */
static inline bool drives_graphs(const MPI_Request *reqs, int n)
{
	return n > 0 && (coll_op_among(reqs, n) || coll_persist_among(reqs, n));
}

/*
 * Who drives a wait on graph requests, by the rule of every other wait
 * (waitop.h): a thread steps the graphs back to back, as a native waiter
 * (the progress task neither probes the MPI nor steps the graphs beside
 * it: waiters.h, graph_list.h). A thread that found others already waiting
 * when it came, and has stepped for GRAPH_SLEEP_AFTER_NS without its
 * requests completing, delegates: it sleeps until its requests are seen
 * complete by a stepping waiter (which steps every running graph and
 * serves the sleepers) or by the progress task. N threads waiting on graph
 * collectives for long then cost one stepper, not N spinning threads that
 * take the list from each other; short waits never pay a wake-up (at once,
 * 2 threads per rank of back-to-back 8-double graph allreduces took 20-48
 * against 2-10 us per operation). Without background progress, or inside
 * an ltask, every waiter steps throughout.
 */
struct graph_wait {
	struct waitop *op;
	bool first;  /* no other thread was waiting when this one came */
	bool native; /* stepping, not asleep */
	uint64_t since;
};

static void graph_wait_begin(struct graph_wait *w, struct waitop *op)
{
	w->op = op;
	w->first = waiters_enter();
	w->native = true;
	w->since = w->first ? 0 : sys_now_ns();
	waiters_go_native();
	graphs_drive_begin();
}

/* One round of a stepping waiter: the running graphs, then the threads
 * asleep on them, woken here rather than left to a progress task that may
 * not get a CPU beside the stepper (a rank bound to one core). Then, for a
 * waiter that may sleep, the sleep: when it returns, the requests are
 * finished and the caller's test completes them. */
static void graph_wait_round(struct graph_wait *w)
{
	graphs_progress();
	if (waiters_pending())
		waiters_progress();
	if (w->first || !w->native || !pmpi_g.threaded || pmpi_g.serial || ltask_current_tls ||
	    sys_now_ns() - w->since < GRAPH_SLEEP_AFTER_NS)
		return;
	graphs_drive_end();
	waiters_delegate();
	w->native = false;
	waitop_block(w->op);
}

static void graph_wait_end(struct graph_wait *w)
{
	if (w->native)
		graphs_drive_end();
	waiters_leave(w->native);
}

/*
 * Whether a completion call is the MPI's own and nothing else: no send
 * queued or deferred for offload, no graph collective or persistent graph
 * handle, no entry in the tracking table, no overlap report. Each step of
 * the full call would then find nothing; checked first, they also save its
 * frame of handle copies (of the 96 instructions piano added to an
 * MPI_Test of a small message, 60). One word says it (pmpi_watch_n,
 * base.h): one load on the plain path, not one per counter.
 */
static inline bool completion_plain(void)
{
	/* Acquire, partner: the release of pmpi_watch_add(): an offloaded
	 * send's count drops after it was posted. */
	return !atomic_load_explicit(&pmpi_watch_n, memory_order_acquire);
}

/*
 * An exported test call. Its common case, set-up done and completion_plain(),
 * is the MPI's call inside the gate of serialized mode (a tail call outside
 * it), with the checks made before the gate closes so that the function
 * keeps nothing across the MPI's call but its return (the checks after the
 * gate, with the slow cases in the same function, kept four registers and
 * the arguments: half of the 60 instructions piano added to an MPI_Test of
 * a small message). Reading them first is safe: a counter that reads 0
 * here was last raised by this thread's own earlier calls (or, in
 * serialized mode, by the application's previous call, which its own
 * synchronisation orders before this one) and lowered since; one read stale
 * takes the full path, which reads them again inside the gate.
 */
#define COMPLETION_CALL(name, full, PARAMS, ARGS)                                                 \
	static __attribute__((noinline)) int name##_slow PARAMS                                   \
	{                                                                                         \
		PMPI_APP_SCOPE();                                                                 \
		pmpi_ensure();                                                                    \
		if (completion_plain())                                                           \
			return PMPI_##name ARGS;                                                  \
		return full ARGS;                                                                 \
	}                                                                                         \
	PMPI_EXPORT int MPI_##name PARAMS                                                         \
	{                                                                                         \
		/* Acquire, partner: set-up's release store (pmpi_ensure()). */                  \
		if (__builtin_expect(!atomic_load_explicit(&pmpi_ready, memory_order_acquire) ||  \
		                             !completion_plain(),                                 \
		                     0))                                                          \
			return name##_slow ARGS;                                                  \
		SERIAL_WRAP(PMPI_##name ARGS);                                                    \
	}

/* The same for a wait, which also sleeps on file transfers (fileio_wait()). */
static inline bool wait_plain(void)
{
	return completion_plain() && !atomic_load_explicit(&fileio_live, memory_order_acquire);
}

/* A plain wait: the MPI's own call, between the waiter bookkeeping every
 * blocking call takes (waitop.h). */
#define WAIT_PLAIN(kind_, n_, reqs_, call)                                           \
	do {                                                                         \
		struct waitop op_ = { .kind = (kind_), .n = (n_), .reqs = (reqs_) }; \
		enum wait_mode mode_ = wait_enter(&op_);                             \
		int rc_ = (call);                                                    \
		wait_leave(mode_);                                                   \
		wait_aside_end(mode_);                                               \
		return rc_;                                                          \
	} while (0)

static int wait_one(MPI_Request *req, MPI_Status *status)
{
	struct saved s;
	save(&s, req, 1);
	int rc;
	struct waitop op = { .kind = WAIT_ONE, .n = 1, .reqs = req };
	if (drives_graphs(req, 1)) {
		struct graph_wait w;
		graph_wait_begin(&w, &op);
		for (int flag = 0; !flag;) {
			graph_wait_round(&w);
			rc = PMPI_Test(req, &flag, status);
			if (rc != MPI_SUCCESS)
				break;
		}
		graph_wait_end(&w);
		settle(&s, rc, req, 1, NULL, 1, NULL);
		return rc;
	}
	fileio_wait(req, 1);
	enum wait_mode mode = wait_enter(&op);
	rc = PMPI_Wait(req, status);
	wait_leave(mode);
	settle(&s, rc, req, 1, NULL, 1, NULL);
	wait_aside_end(mode);
	return rc;
}

static int wait_all(int n, MPI_Request reqs[], MPI_Status statuses[])
{
	struct saved s;
	save(&s, reqs, n);
	int rc;
	if (drives_graphs(reqs, n)) {
		/* Asked one by one, completed by the MPI's MPI_Waitall once all
		 * are done: PMPI_Testall aborts on MPICH 4.0.2 when the array
		 * holds the MPI's own persistent collectives (waiters.c). A
		 * request found complete stays so: each round asks from the first
		 * one not seen complete (usually one progress call). */
		struct waitop op = { .kind = WAIT_ALL, .n = n, .reqs = reqs };
		struct graph_wait w;
		graph_wait_begin(&w, &op);
		for (int i = 0; i < n;) {
			graph_wait_round(&w);
			int flag = 1, grc = MPI_SUCCESS;
			while (i < n &&
			       (grc = PMPI_Request_get_status(reqs[i], &flag, MPI_STATUS_IGNORE)) ==
			               MPI_SUCCESS &&
			       flag)
				i++;
			if (grc != MPI_SUCCESS)
				break; /* the MPI's MPI_Waitall below reports it */
		}
		graph_wait_end(&w);
		rc = PMPI_Waitall(n, reqs, statuses);
		settle(&s, rc, reqs, n, NULL, n, by_index(statuses));
		return rc;
	}
	fileio_wait(reqs, n);
	struct waitop op = { .kind = WAIT_ALL, .n = n, .reqs = reqs };
	enum wait_mode mode = wait_enter(&op);
	rc = PMPI_Waitall(n, reqs, statuses);
	wait_leave(mode);
	settle(&s, rc, reqs, n, NULL, n, by_index(statuses));
	wait_aside_end(mode);
	return rc;
}

static int wait_any(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
	struct saved s;
	save(&s, reqs, n);
	int rc;
	struct waitop op = { .kind = WAIT_ANY, .n = n, .reqs = reqs };
	enum wait_mode mode = WAIT_PLAIN;
	if (drives_graphs(reqs, n)) {
		struct graph_wait w;
		graph_wait_begin(&w, &op);
		for (int flag = 0; !flag;) {
			graph_wait_round(&w);
			rc = PMPI_Testany(n, reqs, index, &flag, status);
			if (rc != MPI_SUCCESS)
				break;
		}
		graph_wait_end(&w);
	} else {
		mode = wait_enter(&op);
		rc = PMPI_Waitany(n, reqs, index, status);
		wait_leave(mode);
	}
	settle(&s, rc, reqs, n, index, ok_count(rc, *index != MPI_UNDEFINED), NULL);
	wait_aside_end(mode);
	return rc;
}

static int wait_some(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
	struct saved s;
	save(&s, reqs, n);
	int rc;
	struct waitop op = { .kind = WAIT_SOME, .n = n, .reqs = reqs };
	enum wait_mode mode = WAIT_PLAIN;
	if (drives_graphs(reqs, n)) {
		struct graph_wait w;
		graph_wait_begin(&w, &op);
		do {
			graph_wait_round(&w);
			rc = PMPI_Testsome(n, reqs, outcount, indices, statuses);
		} while (rc == MPI_SUCCESS && *outcount == 0);
		graph_wait_end(&w);
	} else {
		mode = wait_enter(&op);
		rc = PMPI_Waitsome(n, reqs, outcount, indices, statuses);
		wait_leave(mode);
	}
	settle(&s, rc, reqs, n, indices, ok_count(rc, *outcount == MPI_UNDEFINED ? 0 : *outcount),
	       NULL);
	wait_aside_end(mode);
	return rc;
}

static int test_one(MPI_Request *req, int *flag, MPI_Status *status)
{
	struct saved s;
	save(&s, req, 1);
	if (drives_graphs(req, 1))
		graphs_progress();
	int rc = PMPI_Test(req, flag, status);
	settle(&s, rc, req, 1, NULL, ok_count(rc, *flag != 0), NULL);
	return rc;
}

static int test_all(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
	struct saved s;
	save(&s, reqs, n);
	if (drives_graphs(reqs, n))
		graphs_progress();
	int rc = PMPI_Testall(n, reqs, flag, statuses);
	settle(&s, rc, reqs, n, NULL, ok_count(rc, *flag ? n : 0), by_index(statuses));
	return rc;
}

static int test_any(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
	struct saved s;
	save(&s, reqs, n);
	if (drives_graphs(reqs, n))
		graphs_progress();
	int rc = PMPI_Testany(n, reqs, index, flag, status);
	settle(&s, rc, reqs, n, index, ok_count(rc, *flag && *index != MPI_UNDEFINED), NULL);
	return rc;
}

static int test_some(int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[])
{
	struct saved s;
	save(&s, reqs, n);
	if (drives_graphs(reqs, n))
		graphs_progress();
	int rc = PMPI_Testsome(n, reqs, outcount, indices, statuses);
	settle(&s, rc, reqs, n, indices, ok_count(rc, *outcount == MPI_UNDEFINED ? 0 : *outcount),
	       NULL);
	return rc;
}

/*
 * The application's calls, as the MPI sees them: a request of a send
 * queued for offload (offload.h) is replaced by the MPI's own send for the
 * call, and the queue is posted first (a completion call may wait for
 * what a queued send makes happen).
 */
static __attribute__((noinline)) int wait_full(MPI_Request *req, MPI_Status *status)
{
	offload_flush();
	struct report_call rep;
	report_begin(&rep, req, 1, true);
	struct offload_swap sw;
	int rc = wait_one(offload_swap(req, 1, &sw), status);
	offload_unswap(&sw, req);
	report_end(&rep, rc, req, NULL, 1);
	return rc;
}

PMPI_EXPORT int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	if (wait_plain())
		WAIT_PLAIN(WAIT_ONE, 1, req, PMPI_Wait(req, status));
	return wait_full(req, status);
}

static __attribute__((noinline)) int waitall_full(int n, MPI_Request reqs[], MPI_Status statuses[])
{
	offload_flush();
	struct report_call rep;
	report_begin(&rep, reqs, n, true);
	struct offload_swap sw;
	int rc = wait_all(n, offload_swap(reqs, n, &sw), statuses);
	offload_unswap(&sw, reqs);
	report_end(&rep, rc, reqs, NULL, n);
	return rc;
}

PMPI_EXPORT int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	if (wait_plain())
		WAIT_PLAIN(WAIT_ALL, n, reqs, PMPI_Waitall(n, reqs, statuses));
	return waitall_full(n, reqs, statuses);
}

static __attribute__((noinline)) int waitany_full(int n, MPI_Request reqs[], int *index,
                                                  MPI_Status *status)
{
	offload_flush();
	struct report_call rep;
	report_begin(&rep, reqs, n, true);
	struct offload_swap sw;
	int rc = wait_any(n, offload_swap(reqs, n, &sw), index, status);
	offload_unswap(&sw, reqs);
	report_end(&rep, rc, reqs, index, ok_count(rc, *index != MPI_UNDEFINED));
	return rc;
}

PMPI_EXPORT int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	if (wait_plain())
		WAIT_PLAIN(WAIT_ANY, n, reqs, PMPI_Waitany(n, reqs, index, status));
	return waitany_full(n, reqs, index, status);
}

static __attribute__((noinline)) int waitsome_full(int n, MPI_Request reqs[], int *outcount,
                                                   int indices[], MPI_Status statuses[])
{
	offload_flush();
	struct report_call rep;
	report_begin(&rep, reqs, n, true);
	struct offload_swap sw;
	int rc = wait_some(n, offload_swap(reqs, n, &sw), outcount, indices, statuses);
	offload_unswap(&sw, reqs);
	report_end(&rep, rc, reqs, indices,
	           ok_count(rc, *outcount == MPI_UNDEFINED ? 0 : *outcount));
	return rc;
}

PMPI_EXPORT int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                             MPI_Status statuses[])
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	if (wait_plain())
		WAIT_PLAIN(WAIT_SOME, n, reqs, PMPI_Waitsome(n, reqs, outcount, indices, statuses));
	return waitsome_full(n, reqs, outcount, indices, statuses);
}

static __attribute__((noinline)) int test_full(MPI_Request *req, int *flag, MPI_Status *status)
{
	offload_flush();
	struct report_call rep;
	report_begin(&rep, req, 1, false);
	struct offload_swap sw;
	int rc = test_one(offload_swap(req, 1, &sw), flag, status);
	offload_unswap(&sw, req);
	report_end(&rep, rc, req, NULL, ok_count(rc, *flag != 0));
	return rc;
}

COMPLETION_CALL(Test, test_full, (MPI_Request *req, int *flag, MPI_Status *status), (req, flag, status))

static __attribute__((noinline)) int testall_full(int n, MPI_Request reqs[], int *flag,
                                                  MPI_Status statuses[])
{
	offload_flush();
	struct report_call rep;
	report_begin(&rep, reqs, n, false);
	struct offload_swap sw;
	int rc = test_all(n, offload_swap(reqs, n, &sw), flag, statuses);
	offload_unswap(&sw, reqs);
	report_end(&rep, rc, reqs, NULL, ok_count(rc, *flag ? n : 0));
	return rc;
}

COMPLETION_CALL(Testall, testall_full, (int n, MPI_Request reqs[], int *flag, MPI_Status statuses[]), (n, reqs, flag, statuses))

static __attribute__((noinline)) int testany_full(int n, MPI_Request reqs[], int *index, int *flag,
                                                  MPI_Status *status)
{
	offload_flush();
	struct report_call rep;
	report_begin(&rep, reqs, n, false);
	struct offload_swap sw;
	int rc = test_any(n, offload_swap(reqs, n, &sw), index, flag, status);
	offload_unswap(&sw, reqs);
	report_end(&rep, rc, reqs, index, ok_count(rc, *flag && *index != MPI_UNDEFINED));
	return rc;
}

COMPLETION_CALL(Testany, testany_full, (int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status), (n, reqs, index, flag, status))

static __attribute__((noinline)) int testsome_full(int n, MPI_Request reqs[], int *outcount,
                                                   int indices[], MPI_Status statuses[])
{
	offload_flush();
	struct report_call rep;
	report_begin(&rep, reqs, n, false);
	struct offload_swap sw;
	int rc = test_some(n, offload_swap(reqs, n, &sw), outcount, indices, statuses);
	offload_unswap(&sw, reqs);
	report_end(&rep, rc, reqs, indices,
	           ok_count(rc, *outcount == MPI_UNDEFINED ? 0 : *outcount));
	return rc;
}

COMPLETION_CALL(Testsome, testsome_full,
                (int n, MPI_Request reqs[], int *outcount, int indices[], MPI_Status statuses[]),
                (n, reqs, outcount, indices, statuses))

PMPI_EXPORT int MPI_Request_free(MPI_Request *req)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	int rc;
	if (req)
		report_free(*req);
	if (req && offload_free(req, &rc))
		return rc;
	if (coll_persist_free(req, &rc))
		return rc;
	if (req && *req != MPI_REQUEST_NULL && track_any()) {
		bool door = track_door_enter();
		track_forget(*req);
		rc = PMPI_Request_free(req);
		track_door_leave(door);
		return rc;
	}
	return PMPI_Request_free(req);
}

PMPI_EXPORT int MPI_Cancel(MPI_Request *req)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	int rc;
	if (req && offload_cancel(*req, &rc))
		return rc;
	return PMPI_Cancel(req);
}

PMPI_EXPORT int MPI_Request_get_status(MPI_Request req, int *flag, MPI_Status *status)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	offload_flush();
	int rc;
	if (offload_get_status(req, flag, status, &rc))
		return rc;
	return PMPI_Request_get_status(req, flag, status);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Non-blocking file transfers run by piano (fileio.h; docs/mpi.md,
 * "Non-blocking file I/O"). Neither MPI makes a file request progress while
 * the application computes: ROMIO (MPICH) moves the data inside the call or
 * inside the Wait, Open MPI's ompio from its progress loop, which piano may
 * not call while a file is open (gate.c). So, as APSM-2013 (section 3.3)
 * does, the transfer runs on a thread of piano's own, through the MPI's
 * blocking calls: a task of the engine on a blocking helper thread (the
 * "mover"), which sleeps in the kernel during each write or read as a
 * blocking callback does (piano.h, piano_ltask_set_blocking).
 *
 * Each independent transfer is cut into calls of whole elements of about
 * PIANO_MPI_FILE_CHUNK bytes at explicit offsets, so that the application's
 * own file calls (ROMIO takes one process-wide lock for each; fileio_lock()
 * here) get their turn between chunks; a collective one is one collective
 * call (fileio.h says why no rank's helper then waits for a peer forever).
 * The application's request is a generalized request, which every
 * completion call accepts alone or mixed
 * with others; it is recorded as foreign (track.c), so a wait that includes
 * it is never delegated to the engine, and its status carries the element
 * count of what was moved and the error of the call that failed.
 *
 * Protocol. `q` (the queue of transfers in call order, the transfers made
 * but whose request the mover has yet to complete, `active`) is protected by
 * q.lock. One transfer at a time is made, the oldest: the process's file
 * calls keep their program order. The mover is a NOWAIT task submitted when
 * a transfer is queued and no mover is active, and it ends when the queue is
 * empty (q.active goes false under the lock, so a later submission starts a
 * new one; the two never overlap in making transfers because only the head
 * is taken, and only by the task whose round holds q.busy).
 * A transfer is referenced by the queue (until its request is completed)
 * and by the request (until its free function); the last one frees it.
 */
#include "fileio.h"
#include "gate.h"
#include "track.h"

#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct xfer {
	struct xfer *next;
	struct fileio_xfer x; /* x.dt: a duplicate the transfer owns, if derived */
	bool dup;             /* x.dt is such a duplicate */
	int size;             /* bytes of one element of x.dt */
	MPI_Aint extent;      /* of x.dt */
	MPI_Count done;       /* elements moved so far (mover only) */
	MPI_Count bytes;      /* bytes moved, for the status */
	int err;              /* MPI error code of the call that failed */
	MPI_Request req;      /* the generalized request */
	_Atomic int refs;
};

static struct {
	pthread_mutex_t lock;
	pthread_cond_t drained;   /* a transfer left the queue, or the mover ended */
	struct xfer *head, *tail; /* queued, the head being made */
	struct xfer *made;        /* made, request not yet completed */
	bool active;              /* a mover task is submitted and not ended */
	bool busy;                /* a chunk of the head is being made */
} q = { .lock = PTHREAD_MUTEX_INITIALIZER, .drained = PTHREAD_COND_INITIALIZER };

static pthread_mutex_t io_lock = PTHREAD_MUTEX_INITIALIZER;

/* Transfers queued or made whose request is not yet completed: fileio_wait
 * returns at once while there are none, without q.lock (every MPI_Wait of
 * the application passes there). Incremented under q.lock before the
 * transfer is listed, decremented after its request is completed; the
 * release/acquire pair orders the count with the listing for a waiter that
 * was handed the request by the thread that made it. */
_Atomic long fileio_live; /* fileio.h */

/* The holder is inside a file call: on Open MPI the gate is closed for
 * its length (gate.c; file.c says why). */
void fileio_lock(void)
{
	pthread_mutex_lock(&io_lock);
	gate_close("an MPI file call is running, and Open MPI's MPI-IO is not safe against a "
	           "progress call from another thread");
}

void fileio_unlock(void)
{
	gate_open();
	pthread_mutex_unlock(&io_lock);
}

bool fileio_usable(void)
{
	if (pmpi_g.file_helper)
		return true;
	static _Atomic int told;
	if (pmpi_g.file_why && !atomic_exchange(&told, 1))
		pmpi_warn("non-blocking file calls run as the MPI's own, without progress while "
		          "the application computes: %s",
		          pmpi_g.file_why);
	return false;
}

/* Transfers whose last reference went inside an MPI call (the request's
 * free function): MPICH's MPI_Type_free may not be called there, so their
 * type is freed later, outside the MPI (reap). Protected by q.lock. */
static struct xfer *graveyard;

static void xfer_free(struct xfer *t)
{
	if (t->dup)
		PMPI_Type_free(&t->x.dt);
	free(t);
}

static void xfer_put(struct xfer *t, bool in_mpi)
{
	if (atomic_fetch_sub(&t->refs, 1) != 1)
		return;
	if (!in_mpi) {
		xfer_free(t);
		return;
	}
	pthread_mutex_lock(&q.lock);
	t->next = graveyard;
	graveyard = t;
	pthread_mutex_unlock(&q.lock);
}

static void reap(void)
{
	pthread_mutex_lock(&q.lock);
	struct xfer *t = graveyard;
	graveyard = NULL;
	pthread_mutex_unlock(&q.lock);
	while (t) {
		struct xfer *next = t->next;
		xfer_free(t);
		t = next;
	}
}

/* A derived type is duplicated, so that the application may free its own
 * handle while the transfer runs; a named type is never freed (MPICH's
 * duplicate of one is the type itself). */
static int type_keep(struct xfer *t)
{
	int ni, na, nd, combiner;
	int rc = PMPI_Type_get_envelope(t->x.dt, &ni, &na, &nd, &combiner);
	if (rc != MPI_SUCCESS || combiner == MPI_COMBINER_NAMED)
		return rc;
	rc = PMPI_Type_dup(t->x.dt, &t->x.dt);
	t->dup = rc == MPI_SUCCESS;
	return rc;
}

/* The generalized request's functions: called by the application's
 * completion call (query, free) or MPI_Cancel. */
static int greq_query(void *extra, MPI_Status *status)
{
	struct xfer *t = extra;
	/* In bytes, as both MPIs keep a status's count: MPICH's
	 * MPI_Status_set_elements_x takes a derived type's count as whole
	 * elements of it, Open MPI's as basic elements. */
	PMPI_Status_set_elements_x(status, MPI_BYTE, t->bytes);
	PMPI_Status_set_cancelled(status, 0);
	status->MPI_SOURCE = MPI_UNDEFINED;
	status->MPI_TAG = MPI_UNDEFINED;
	status->MPI_ERROR = t->err;
	return t->err;
}

static int greq_free(void *extra)
{
	xfer_put(extra, true);
	return MPI_SUCCESS;
}

/* A file transfer cannot be cancelled once queued (natively neither). */
static int greq_cancel(void *extra, int complete)
{
	(void)extra;
	(void)complete;
	return MPI_SUCCESS;
}

/* The one call of collective transfer t, with the count the application
 * gave (the large-count form where the MPI has one). */
#if MPI_VERSION >= 4
#define COUNT_CALL(name) PMPI_File_##name##_c
typedef MPI_Count call_count;
#else
#define COUNT_CALL(name) PMPI_File_##name
typedef int call_count;
#endif
static int collective_call(const struct xfer *t, MPI_Status *st)
{
	MPI_File fh = t->x.fh;
	void *buf = t->x.buf;
	call_count n = (call_count)t->x.count;
	MPI_Datatype dt = t->x.dt;
	if (t->x.shared)
		return t->x.write ? COUNT_CALL(write_ordered)(fh, buf, n, dt, st)
		                  : COUNT_CALL(read_ordered)(fh, buf, n, dt, st);
	return t->x.write ? COUNT_CALL(write_at_all)(fh, t->x.offset, buf, n, dt, st)
	                  : COUNT_CALL(read_at_all)(fh, t->x.offset, buf, n, dt, st);
}

/* Makes one chunk of t; returns true when t is finished. Called with
 * q.busy set, so by one thread at a time; takes io_lock for the call. */
static bool xfer_step(struct xfer *t)
{
	MPI_Count left = t->x.count - t->done;
	MPI_Count n = left;
	/* A collective is one call: every rank's pieces would have to match. */
	if (!t->x.shared && !t->x.collective) {
		MPI_Count per = t->size ? (MPI_Count)pmpi_g.file_chunk / t->size : left;
		if (per < 1)
			per = 1;
		if (n > per)
			n = per;
		/* A chunk must start on an etype of the view. */
		if (t->x.etype_size > 1 && ((MPI_Count)t->size * n) % t->x.etype_size)
			n = left;
	}
	if (n > INT_MAX)
		n = INT_MAX;
	char *buf = (char *)t->x.buf + (MPI_Aint)t->done * t->extent;
	MPI_Status st;
	int rc;
	MPI_File fh = t->x.fh;
	MPI_Datatype dt = t->x.dt;
	MPI_Offset at = t->x.offset + (MPI_Offset)(t->done * t->size / t->x.etype_size);
	fileio_lock();
	if (t->x.collective)
		rc = collective_call(t, &st);
	else if (t->x.shared)
		rc = t->x.write ? PMPI_File_write_shared(fh, buf, (int)n, dt, &st)
		                : PMPI_File_read_shared(fh, buf, (int)n, dt, &st);
	else
		rc = t->x.write ? PMPI_File_write_at(fh, at, buf, (int)n, dt, &st)
		                : PMPI_File_read_at(fh, at, buf, (int)n, dt, &st);
	fileio_unlock();
	if (rc != MPI_SUCCESS) {
		t->err = rc;
		return true;
	}
	MPI_Count bytes = 0;
	PMPI_Get_elements_x(&st, MPI_BYTE, &bytes);
	if (bytes > 0)
		t->bytes += bytes;
	if (t->x.collective)
		return true;
	t->done += n;
	if (t->done >= t->x.count)
		return true;
	/* A read that came back short met the end of the file: the rest
	 * would read nothing. */
	int got = 0;
	return !t->x.write && (PMPI_Get_count(&st, t->x.dt, &got) != MPI_SUCCESS || got != n);
}

/*
 * The mover's blocking callback, on a blocking helper thread: makes one
 * chunk of the oldest transfer (the time it sleeps in the kernel is the
 * chunk's, not timeout_ms). Returns 1 so that the task callback runs next,
 * which completes what was made or ends the mover.
 */
static int mover_block(void *arg, int timeout_ms)
{
	(void)arg;
	(void)timeout_ms;
	pthread_mutex_lock(&q.lock);
	struct xfer *t = q.busy ? NULL : q.head;
	if (t)
		q.busy = true;
	pthread_mutex_unlock(&q.lock);
	if (!t)
		return 1;
	bool finished = xfer_step(t);
	pthread_mutex_lock(&q.lock);
	q.busy = false;
	if (finished) {
		q.head = t->next;
		if (!q.head)
			q.tail = NULL;
		t->next = q.made;
		q.made = t;
		pthread_cond_broadcast(&q.drained);
	}
	pthread_mutex_unlock(&q.lock);
	return 1;
}

/* Completes the requests of the transfers made (outside q.lock: the MPI
 * takes its own locks). Returns how many; *end: nothing is left, and the
 * mover has been marked ended. */
static unsigned complete_made(bool *end)
{
	pthread_mutex_lock(&q.lock);
	struct xfer *made = q.made;
	q.made = NULL;
	*end = !q.head && !made;
	if (*end) {
		q.active = false;
		pthread_cond_broadcast(&q.drained);
	}
	pthread_mutex_unlock(&q.lock);
	unsigned n = 0;
	while (made) {
		struct xfer *t = made;
		made = t->next;
		PMPI_Grequest_complete(t->req);
		atomic_fetch_sub_explicit(&fileio_live, 1, memory_order_release);
		xfer_put(t, false);
		n++;
	}
	return n;
}

/* The mover's task callback, after each chunk on the helper, or on a
 * poller while the mover waits for a free helper: completes requests, and
 * ends the mover once the queue is empty. */
static unsigned mover_run(void *arg)
{
	(void)arg;
	bool end;
	reap();
	unsigned n = complete_made(&end);
	if (end) {
		piano_ltask_complete(piano_ltask_current());
		piano_timer_release(0);
	}
	return n + end;
}

static void mover_dtor(void *arg) { (void)arg; }

/* Starts a mover; called by whoever set q.active. */
static int mover_start(void)
{
	piano_ltask_t *t = NULL;
	int rc = piano_ltask_create(mover_run, NULL, PIANO_LTASK_NOWAIT, &t);
	if (rc)
		return rc;
	rc = piano_ltask_set_blocking(t, mover_block, 0);
	if (!rc)
		rc = piano_ltask_set_dtor(t, mover_dtor);
	if (!rc)
		rc = piano_ltask_set_name(t, "piano-file");
	if (rc) {
		piano_ltask_destroy(t);
		return rc;
	}
	/* Held while the mover lives: with the timer in demand mode and no
	 * idle core, a mover that found no free helper at once is handed to
	 * one only at its first poll. */
	piano_timer_hold(0);
	rc = piano_ltask_submit(t);
	if (rc) {
		piano_timer_release(0);
		piano_ltask_destroy(t);
	}
	return rc;
}

/* Makes every queued transfer on the calling thread: when no mover task
 * could be started. */
static void make_here(void)
{
	bool end = false;
	while (!end) {
		mover_block(NULL, 0);
		complete_made(&end);
	}
}

int fileio_submit(const struct fileio_xfer *x, MPI_Request *req)
{
	reap();
	struct xfer *t = calloc(1, sizeof(*t));
	if (!t)
		return MPI_ERR_NO_MEM;
	t->x = *x;
	int rc = PMPI_Type_size(x->dt, &t->size);
	MPI_Aint lb = 0;
	if (rc == MPI_SUCCESS)
		rc = PMPI_Type_get_extent(x->dt, &lb, &t->extent);
	if (rc == MPI_SUCCESS)
		rc = type_keep(t);
	if (rc != MPI_SUCCESS) {
		free(t);
		return rc;
	}
	if (t->x.etype_size < 1)
		t->x.etype_size = 1;
	atomic_init(&t->refs, 2);
	rc = PMPI_Grequest_start(greq_query, greq_free, greq_cancel, t, &t->req);
	if (rc != MPI_SUCCESS) {
		if (t->dup)
			PMPI_Type_free(&t->x.dt);
		free(t);
		return rc;
	}
	track_foreign(t->req, false);
	*req = t->req;
	pthread_mutex_lock(&q.lock);
	atomic_fetch_add_explicit(&fileio_live, 1, memory_order_release);
	if (q.tail)
		q.tail->next = t;
	else
		q.head = t;
	q.tail = t;
	bool start = !q.active;
	q.active = true;
	pthread_mutex_unlock(&q.lock);
	if (start && (rc = mover_start()) != 0) {
		static _Atomic int told;
		if (!atomic_exchange(&told, 1))
			pmpi_warn("cannot start the file transfer task (%s): non-blocking file "
			          "calls complete inside the call",
			          piano_strerror(rc));
		make_here();
	}
	return MPI_SUCCESS;
}

void fileio_flush(MPI_File fh, bool collectives)
{
	if (atomic_load_explicit(&fileio_live, memory_order_acquire) == 0)
		return; /* nothing queued (live: see fileio_wait) */
	pthread_mutex_lock(&q.lock);
	for (;;) {
		bool pending = false;
		for (struct xfer *t = q.head; t && !pending; t = t->next)
			pending = (fh != MPI_FILE_NULL && t->x.fh == fh) ||
			          (collectives && t->x.collective);
		if (!pending)
			break;
		pthread_cond_wait(&q.drained, &q.lock);
	}
	pthread_mutex_unlock(&q.lock);
}

static bool listed(const struct xfer *t, MPI_Request req)
{
	for (; t; t = t->next)
		if (t->req == req)
			return true;
	return false;
}

void fileio_wait(const MPI_Request *reqs, int n)
{
	if (atomic_load_explicit(&fileio_live, memory_order_acquire) == 0)
		return;
	pthread_mutex_lock(&q.lock);
	bool ours = n > 0;
	for (int i = 0; i < n && ours; i++)
		ours = reqs[i] == MPI_REQUEST_NULL || listed(q.head, reqs[i]) ||
		       listed(q.made, reqs[i]);
	for (int i = 0; i < n && ours; i++)
		while (reqs[i] != MPI_REQUEST_NULL && listed(q.head, reqs[i]))
			pthread_cond_wait(&q.drained, &q.lock);
	pthread_mutex_unlock(&q.lock);
}

void fileio_shutdown(void)
{
	pthread_mutex_lock(&q.lock);
	while (q.active)
		pthread_cond_wait(&q.drained, &q.lock);
	pthread_mutex_unlock(&q.lock);
	reap();
}

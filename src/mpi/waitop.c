/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Blocking completion calls: native when a thread waits alone, delegated to
 * the engine when several wait at once (mpi_internal.h, enum wait_mode).
 *
 * The engine never completes an application request: it only asks the MPI
 * whether a request has finished (PMPI_Request_get_status, which neither
 * frees the request nor, on Open MPI, raises its error) and wakes the
 * waiter, which then completes it with the MPI's own call. So an error is
 * raised in the application's thread by the call it made, and MPI calls
 * the engine must not make (PMPI_Testall on MPICH 4.0.2 aborts on
 * persistent collectives that MPI_Waitall completes) are never made.
 */
#include "mpi_internal.h"
#include "sys.h"

#include <pthread.h>

static pthread_mutex_t wait_lock = PTHREAD_MUTEX_INITIALIZER;
static struct waitop *wait_head;   /* protected by wait_lock */
static _Atomic int nwaitops;       /* linked ops; read lock-free as a hint */

/* Threads inside a native or delegated completion call, and those of them
 * waiting natively. Plain counters: a thread's decision only needs to see
 * whether another thread is inside (seq_cst read-modify-write). */
static _Atomic int nwaiting;
static _Atomic int nnative;

bool waitops_empty(void) { return atomic_load(&nwaitops) == 0; }
bool waiter_native(void) { return atomic_load_explicit(&nnative, memory_order_relaxed) > 0; }

/* The MPI has finished r (complete, inactive or null): completing it now
 * does not block. A request the MPI reports an error for is finished too:
 * the waiter's own call will raise it. */
static bool finished(MPI_Request r)
{
	if (r == MPI_REQUEST_NULL)
		return true;
	int flag = 0;
	MPI_Status st;
	return PMPI_Request_get_status(r, &flag, &st) != MPI_SUCCESS || flag;
}

/* Whether the waiter's own completion call would return at once. */
static bool ready(struct waitop *op)
{
	if (op->kind == WAIT_ALL) {
		/* Requests finish in any order, but a finished one stays
		 * finished while its owner waits: the cursor only moves on. */
		while (op->first_open < op->n && finished(op->reqs[op->first_open]))
			op->first_open++;
		return op->first_open == op->n;
	}
	/* ONE, ANY, SOME: one finished request, or none active at all. */
	bool any_active = false;
	for (int i = 0; i < op->n; i++) {
		if (op->reqs[i] == MPI_REQUEST_NULL)
			continue;
		any_active = true;
		if (finished(op->reqs[i]))
			return true;
	}
	return !any_active;
}

static void unlink_op(struct waitop *op)
{
	if (op->prev)
		op->prev->next = op->next;
	else
		wait_head = op->next;
	if (op->next)
		op->next->prev = op->prev;
	op->linked = false;
	atomic_fetch_sub(&nwaitops, 1);
}

unsigned waitops_serve(void)
{
	if (waitops_empty())
		return 0;
	/* A waiter registering holds the lock for a few instructions; skip
	 * this round rather than block inside an ltask. */
	if (pthread_mutex_trylock(&wait_lock))
		return 0;
	struct waitop *done = NULL;
	for (struct waitop *op = wait_head, *next; op; op = next) {
		next = op->next;
		if (!ready(op))
			continue;
		unlink_op(op);
		op->next = done;
		done = op;
	}
	pthread_mutex_unlock(&wait_lock);
	unsigned work = 0;
	while (done) {
		struct waitop *next = done->next;
		piano_cond_signal(&done->cond, 1); /* last access: the waiter owns it again */
		done = next;
		work++;
	}
	return work;
}

/* Registers op and blocks until the progress task has found it ready. */
static void delegate(struct waitop *op)
{
	atomic_fetch_add_explicit(&pmpi_g.delegated_waits, 1, memory_order_relaxed);
	piano_cond_init(&op->cond, 0);
	pthread_mutex_lock(&wait_lock);
	op->prev = NULL;
	op->next = wait_head;
	if (wait_head)
		wait_head->prev = op;
	wait_head = op;
	op->linked = true;
	atomic_fetch_add(&nwaitops, 1);
	pthread_mutex_unlock(&wait_lock);
	progress_kick();
	/* Polls through the engine for PIANO_SPIN_US (the progress task
	 * checks op among the others), then sleeps. */
	int rc = piano_cond_wait(&op->cond, 1);
	if (rc == 0)
		return;
	/* Cannot happen outside an ltask (delegation is never chosen there);
	 * if it does, the MPI's own call still completes the wait: only take
	 * op back first, or wait for the signal already on its way. */
	pmpi_warn("waiting through the engine failed (%s): the MPI's own wait takes over",
	          piano_strerror(rc));
	pthread_mutex_lock(&wait_lock);
	bool mine = op->linked;
	if (mine)
		unlink_op(op);
	pthread_mutex_unlock(&wait_lock);
	while (!mine && piano_cond_test(&op->cond, 1))
		sys_yield();
}

enum wait_mode wait_enter(struct waitop *op)
{
	if (!pmpi_g.threaded || piano_ltask_current())
		return WAIT_PLAIN;
	/* Requests of kinds piano leaves alone are waited for natively too. */
	if (atomic_fetch_add(&nwaiting, 1) == 0 || track_any_foreign(op->reqs, op->n)) {
		atomic_fetch_add(&nnative, 1);
		return WAIT_NATIVE;
	}
	waitop_block(op);
	return WAIT_DELEGATED;
}

void waitop_block(struct waitop *op)
{
	op->first_open = 0;
	if (!ready(op))
		delegate(op);
}

void wait_leave(enum wait_mode mode)
{
	if (mode == WAIT_PLAIN)
		return;
	if (mode == WAIT_NATIVE)
		atomic_fetch_sub(&nnative, 1);
	atomic_fetch_sub(&nwaiting, 1);
}

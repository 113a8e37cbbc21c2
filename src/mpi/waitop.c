/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Blocking completion calls: native when a thread waits alone, delegated to
 * the engine when several wait at once (waitop.h); the progress task
 * serves the delegated ones (waiters.c).
 */
#include "waitop.h"
#include "progress.h"
#include "sys.h"
#include "track.h"

/* Registers op and blocks until the progress task has found it ready. */
static void delegate(struct waitop *op)
{
	atomic_fetch_add_explicit(&pmpi_g.delegated_waits, 1, memory_order_relaxed);
	waiters_link(op);
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
	bool mine = waiters_unlink(op);
	while (!mine && piano_cond_test(&op->cond, 1))
		sys_yield();
}

/* wait_enter() with background progress at MPI_THREAD_MULTIPLE. */
enum wait_mode wait_enter_threaded(struct waitop *op)
{
	/* Requests of kinds piano leaves alone are waited for natively too. */
	if (waiters_enter() || track_any_foreign(op->reqs, op->n)) {
		waiters_go_native();
		return WAIT_NATIVE;
	}
	waiters_delegate();
	waitop_block(op);
	return WAIT_DELEGATED;
}

void waitop_block(struct waitop *op)
{
	op->first_open = 0;
	if (!waitop_ready(op))
		delegate(op);
}

void wait_leave_threaded(enum wait_mode mode) { waiters_leave(mode == WAIT_NATIVE); }

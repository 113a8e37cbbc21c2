/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * How a blocking completion call (MPI_Wait*, blocking Send/Recv) waits
 * (waitop.c):
 * - plain: no background progress, or called from inside an ltask: the
 *   MPI's own call, nothing counted;
 * - native: no other thread is waiting, or one of the requests is of a kind
 *   piano leaves to the MPI (track_foreign): the MPI's own call, exactly as
 *   without piano (cost, errors, which thread runs the error handler), and
 *   the progress task stands back meanwhile (the waiter drives the MPI);
 * - delegated: other threads already wait: the thread registers a wait op
 *   and blocks; the progress task watches its requests without completing
 *   them and wakes it when the MPI has finished them; the thread then makes
 *   the MPI's own completion call, which returns at once. N waiting threads
 *   cost one poller, and every request is completed, and every error raised,
 *   by the application's thread in the call it made;
 * - serial: serialized mode (serial.h), where one application thread at a
 *   time calls the MPI: native, with no count of waiters to keep; with
 *   tracked requests pending, the MPI layer's hold on the timer is set
 *   aside for the call (track_native_wait_begin(): WAIT_SERIAL_ASIDE),
 *   until wait_aside_end(), after the call's completions are counted.
 */
#ifndef PIANO_MPI_WAITOP_H
#define PIANO_MPI_WAITOP_H

#include "waiters.h"
#include "ltask.h"
#include "track.h"

enum wait_mode { WAIT_PLAIN, WAIT_NATIVE, WAIT_DELEGATED, WAIT_SERIAL, WAIT_SERIAL_ASIDE };

/* Decides how a blocking completion call on op's requests goes and, when it
 * is delegated, blocks until the MPI has finished them. The caller then
 * makes the MPI's own call and passes the mode to wait_leave(). The plain
 * and serial modes inline: every blocking call takes them. */
enum wait_mode wait_enter_threaded(struct waitop *op);
void wait_leave_threaded(enum wait_mode mode);

static inline enum wait_mode wait_enter(struct waitop *op)
{
	if (!pmpi_g.threaded || ltask_current_tls)
		return WAIT_PLAIN;
	if (pmpi_g.serial) {
		waiters_serial_enter();
		return track_native_wait_begin() ? WAIT_SERIAL_ASIDE : WAIT_SERIAL;
	}
	return wait_enter_threaded(op);
}

static inline void wait_leave(enum wait_mode mode)
{
	if (mode == WAIT_SERIAL || mode == WAIT_SERIAL_ASIDE)
		waiters_serial_leave();
	else if (mode != WAIT_PLAIN)
		wait_leave_threaded(mode);
}

/* After wait_leave() and the bookkeeping of what the call completed (so
 * that a hold is not taken again for requests it just finished). */
static inline void wait_aside_end(enum wait_mode mode)
{
	if (mode == WAIT_SERIAL_ASIDE)
		track_native_wait_end();
}
/* Delegated mode: blocks until op's requests are finished (wait_enter()
 * does it for op; blocking Send/Recv call it for the request they post). */
void waitop_block(struct waitop *op);

#endif

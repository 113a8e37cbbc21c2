/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The requests piano tracks (track.c): those that need background progress
 * (sends above the eager limit, receives that may be larger, synchronous
 * sends, collectives) and those of kinds piano leaves to the MPI.
 */
#ifndef PIANO_MPI_TRACK_H
#define PIANO_MPI_TRACK_H

#include "hidden.h"
#include "base.h"

/* Records a request the engine must keep progressing; persistent requests
 * stay in the table while inactive. `p2p`: a point-to-point request, which
 * track_check_finished() may ask the MPI about. True when it is the first
 * pending request: the caller then kicks the progress task (progress_kick). */
bool track_add(MPI_Request req, bool persistent, bool active, bool p2p);
/* A tracked persistent request was started; true as for track_add(). */
bool track_start(MPI_Request req);
/* The request completed (non-persistent: forgotten; persistent: inactive). */
void track_done(MPI_Request req);
/* The request was freed by the application. */
void track_forget(MPI_Request req);
/* A request of a kind piano leaves to the MPI (generalized, one-sided,
 * partitioned, file): never counted pending, and a wait that includes one
 * is the MPI's own, in the caller's thread (the engine would run a
 * generalized request's query function, or drive a module that is not safe
 * against the application's concurrent calls). Forgotten like the others
 * when it completes. */
void track_foreign(MPI_Request req, bool persistent);
bool track_any_foreign(const MPI_Request *reqs, int n);
/* Active tracked requests not known to have finished, read lock-free. */
long track_pending(void);
/*
 * By the progress task between gate_enter() and gate_leave(): asks the MPI
 * (MPI_Request_get_status, which neither frees nor deactivates a request)
 * whether active point-to-point requests have finished, from where the
 * previous call stopped until one has not. A finished request stays in the
 * table until the application's completion call, but no longer counts as
 * pending: an application that completes its requests long after they
 * finished (ScaLAPACK's BLACS tests its sends at its next send) would
 * otherwise keep the timer ticking and the engine polling for nothing. In
 * serialized mode the gate keeps the application's calls out; at
 * MPI_THREAD_MULTIPLE the door below does it for the calls that may free
 * a tracked request. Returns how many it found finished.
 */
unsigned track_check_finished(void);
/*
 * MPI_THREAD_MULTIPLE only (false and nothing to leave otherwise): a call
 * that may complete or free a tracked request enters before the MPI's call
 * and leaves once the table knows what it completed; meanwhile
 * track_check_finished() asks the MPI nothing, and the call waits for a
 * check in progress to finish its current question (track.c, "the door").
 * Take it only when track_any(): a call whose requests have no entry
 * cannot conflict.
 */
bool track_door_enter(void);
void track_door_leave(bool entered);
/* Active tracked requests, finished or not: those the application has not
 * completed yet (PIANO_STATS' "still pending"). */
long track_active(void);
/* Entries of the table (tracked, persistent inactive, foreign), written
 * under the table's lock. Read relaxed by completion calls: an entry of a
 * request the caller holds was made before the caller got the handle.
 * Zero: no completion call can complete a request piano knows, and none
 * needs to copy its handles or ask the table (a process whose large
 * transfers are over pays for none of its small ones). */
extern PIANO_HIDDEN _Atomic long track_entries;
static inline bool track_any(void)
{
	return atomic_load_explicit(&track_entries, memory_order_relaxed) != 0;
}
/*
 * Serialized mode: the application thread is about to wait in the MPI's own
 * blocking call, which progresses every request itself while the gate keeps
 * piano's background calls out; a timer tick meanwhile could only preempt a
 * core for nothing (the one left computing, when this wait is for a slower
 * peer). So the MPI layer's hold on the timer is set aside until
 * track_native_wait_end(), which must follow a begin that returned true.
 * False (and nothing to end) when nothing is pending: one relaxed load.
 */
bool track_native_wait_begin(void);
void track_native_wait_end(void);

/* Bookkeeping after a completion call that succeeded: for each completed
 * index i, the handle it had before the call is marked done. */
void track_completed(const MPI_Request *before, int n, const int *done_idx, int ndone);
/* Bookkeeping after a completion call that returned an error, where the MPI
 * does not say which requests it completed: a non-persistent request whose
 * handle is now MPI_REQUEST_NULL is done; a persistent one is inactive unless
 * its status (when the caller asked for statuses, else NULL) says
 * MPI_ERR_PENDING. */
void track_settle(const MPI_Request *before, const MPI_Request *after, int n,
                  const MPI_Status *statuses);

#endif

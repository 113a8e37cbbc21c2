/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Non-blocking file transfers run by piano (fileio.c, docs/mpi.md,
 * "Non-blocking file I/O"): the application's MPI_File_i* call queues the
 * transfer and returns a generalized request; a task on a blocking helper
 * thread makes it as blocking explicit-offset calls of about
 * PIANO_MPI_FILE_CHUNK bytes each, in the order the calls were made, and
 * completes the request when the last one returned.
 *
 * A collective transfer (the _all and ordered forms, split or not) is one
 * collective call there, made when its turn comes; every rank queues its
 * collectives in the order the application called them.
 *
 * fileio_lock() / fileio_unlock() serialise every file call of the process
 * that this layer makes or passes on (the application's and the helper's):
 * Open MPI's MPI-IO is not safe from two threads at once. The helper holds
 * it for one chunk of an independent transfer, or for the whole of a
 * collective one; so that no rank's helper waits in a collective for a peer
 * whose own helper waits for the lock held by that peer's application in
 * another collective, every collective file call of the application first
 * waits for the queued collective transfers (fileio_flush(fh, true)).
 */
#ifndef PIANO_MPI_FILEIO_H
#define PIANO_MPI_FILEIO_H

#include "hidden.h"
#include "base.h"

/* Whether piano runs the transfers (PIANO_MPI_FILE=piano, background
 * progress, a blocking helper to spare); when not, the reason is told once
 * where the user asked for it and the MPI's own calls run. */
bool fileio_usable(void);

/* Queues a transfer of count elements of dt between buf and the file at
 * offset (etypes of the view, etype_size bytes each); shared: through the
 * shared file pointer instead (offset unused), as one blocking call;
 * collective: as one collective call (write_at_all, or write_ordered when
 * shared). Returns an MPI error code; *req is written only on success. */
struct fileio_xfer {
	MPI_File fh;
	bool write, shared, collective;
	void *buf;
	MPI_Count count;
	MPI_Datatype dt;
	MPI_Offset offset;
	int etype_size;
};
int fileio_submit(const struct fileio_xfer *x, MPI_Request *req);

/* Returns once no transfer of fh (MPI_FILE_NULL: of no file) is queued or
 * running, nor, when collectives, any collective transfer of any file; the
 * requests of those transfers may still be completing. */
void fileio_flush(MPI_File fh, bool collectives);

/* Sleeps until none of the n requests is a transfer still queued or being
 * made, if every one of them (MPI_REQUEST_NULL aside) is one of this
 * layer's transfers not yet completed; returns at once otherwise. A
 * completion call on those alone would spin in the MPI, on a core the
 * helper making them may need; the caller then completes them with the
 * MPI's own call, which finds them complete or about to be. */
void fileio_wait(const MPI_Request *reqs, int n);
/* Transfers queued or made whose request is not yet completed (fileio.c):
 * while there are none, fileio_wait() returns at once. */
extern PIANO_HIDDEN _Atomic long fileio_live;

/* At MPI_Finalize, before the engine stops: every queued transfer made and
 * every request completed. */
void fileio_shutdown(void);

void fileio_lock(void);
void fileio_unlock(void);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Non-blocking file transfers run by piano (fileio.c, docs/mpi.md,
 * "Non-blocking file I/O"): the application's MPI_File_i* call queues the
 * transfer and returns a generalized request; a task on a blocking helper
 * thread makes it as blocking explicit-offset calls of about
 * PIANO_MPI_FILE_CHUNK bytes each, in the order the calls were made, and
 * completes the request when the last one returned.
 *
 * fileio_lock() / fileio_unlock() serialise every file call of the process
 * that this layer makes or passes on (the application's and the helper's):
 * Open MPI's MPI-IO is not safe from two threads at once. The helper holds
 * it for one chunk, never across a collective call.
 */
#ifndef PIANO_MPI_FILEIO_H
#define PIANO_MPI_FILEIO_H

#include "base.h"

/* Whether piano runs the transfers (PIANO_MPI_FILE=piano, background
 * progress, a blocking helper to spare); when not, the reason is told once
 * where the user asked for it and the MPI's own calls run. */
bool fileio_usable(void);

/* Queues a transfer of count elements of dt between buf and the file at
 * offset (etypes of the view, etype_size bytes each); shared: through the
 * shared file pointer instead (offset unused), as one blocking call.
 * Returns an MPI error code; *req is written only on success. */
struct fileio_xfer {
	MPI_File fh;
	bool write, shared;
	void *buf;
	MPI_Count count;
	MPI_Datatype dt;
	MPI_Offset offset;
	int etype_size;
};
int fileio_submit(const struct fileio_xfer *x, MPI_Request *req);

/* Returns once no transfer of fh (MPI_FILE_NULL: of any file) is queued or
 * running; the requests of those transfers may still be completing. */
void fileio_flush(MPI_File fh);

/* At MPI_Finalize, before the engine stops: every queued transfer made and
 * every request completed. */
void fileio_shutdown(void);

void fileio_lock(void);
void fileio_unlock(void);

#endif

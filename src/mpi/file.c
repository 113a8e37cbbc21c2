/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI-IO closes the gate (gate.c), Open MPI only (docs/mpi.md, "The gate").
 *
 * Open MPI 4.1's MPI-IO (ompio) cannot run beside a progress call from
 * another thread. opal_progress() runs every registered callback without a
 * lock, and the first non-blocking file call registers
 * mca_common_ompio_progress(), which walks the global list
 * mca_common_ompio_pending_requests and advances each request's POSIX AIO
 * state (mca_fbtl_posix_progress: aio_error, aio_return, the next chunk's
 * aio_read/aio_write, then the request's completion). Nothing locks that
 * list or that state: a file request is appended by its constructor in
 * MPI_File_i* (the fbtl fills in its AIO state afterwards) and removed and
 * freed by the Wait or Test that completes it, and every progress call
 * anywhere in the process, a point-to-point MPI_Test included, runs the
 * callback. A piano thread probing at the same time corrupts the heap
 * (mpi4py's test_io, test mpi.openmpi.file_io).
 *
 * Unsafe therefore: a background progress call while a file call runs, and
 * while a file request exists at all, since the application may then make
 * any MPI call. The smallest span this layer can see that holds both is the
 * file's life, from MPI_File_open to the return of MPI_File_close: every
 * other file call (but delete) needs an open handle, and the standard has
 * the application complete a file's requests before closing it. The
 * narrower span (file calls plus the life of each file request) would need
 * the completion calls to report when they free a file request, and would
 * only open the gate between requests. MPI_File_delete needs no gate: it
 * unlinks a path and touches no request.
 *
 * `files` (the handles this layer saw opened) is protected by files_lock;
 * it lets MPI_File_close reopen the gate only for a file that closed it.
 */
#include "base.h"
#include "gate.h"
#include "init.h"

#include <pthread.h>
#include <stdlib.h>

#define WHY "an MPI file is open, and Open MPI's MPI-IO is not safe against a progress call " \
            "from another thread"

static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static MPI_File *files;  /* protected by files_lock */
static size_t nfiles, cap;  /* protected by files_lock */

static bool remember(MPI_File fh)
{
	pthread_mutex_lock(&files_lock);
	bool ok = true;
	if (nfiles == cap) {
		size_t ncap = cap ? 2 * cap : 16;
		MPI_File *n = realloc(files, ncap * sizeof(*n));
		if (n) {
			files = n;
			cap = ncap;
		}
		ok = n != NULL;
	}
	if (ok)
		files[nfiles++] = fh;
	pthread_mutex_unlock(&files_lock);
	return ok;
}

static bool forget(MPI_File fh)
{
	bool found = false;
	pthread_mutex_lock(&files_lock);
	for (size_t i = 0; i < nfiles && !found; i++)
		if (files[i] == fh) {
			files[i] = files[--nfiles];
			found = true;
		}
	pthread_mutex_unlock(&files_lock);
	return found;
}

PMPI_EXPORT int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                              MPI_File *fh)
{
	pmpi_ensure();
	/* Closed before the call: opening a file may already run ompio code
	 * that a concurrent progress call could meet. */
	gate_close(WHY);
	int rc = PMPI_File_open(comm, filename, amode, info, fh);
	if (rc != MPI_SUCCESS) {
		gate_open();
	} else if (!remember(*fh)) {
		/* The gate stays closed for good rather than open too early. */
		pmpi_warn("out of memory: background progress stays off until MPI_Finalize");
	}
	return rc;
}

PMPI_EXPORT int MPI_File_close(MPI_File *fh)
{
	pmpi_ensure();
	MPI_File was = *fh;
	int rc = PMPI_File_close(fh);
	if (rc != MPI_SUCCESS)
		return rc; /* the file may still be open: keep the gate closed */
	if (forget(was)) {
		gate_open();
	} else {
		static _Atomic int told;
		if (!atomic_exchange(&told, 1))
			pmpi_warn("MPI_File_close of a file piano did not see opened (PMPI_File_open, "
			          "or opened before piano was loaded): background progress may have "
			          "run beside it, which Open MPI's MPI-IO does not withstand "
			          "(docs/mpi.md, \"The gate\")");
	}
	return rc;
}

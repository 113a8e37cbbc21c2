/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The application's file calls (docs/mpi.md, "Non-blocking file I/O" and
 * "The gate"). Non-blocking transfers go to fileio.c, which makes them
 * while the application computes; the calls whose result depends on them
 * (a close, a pointer query, a new view...) first wait until the file's
 * queued transfers are made; every call holds fileio_lock() while it is in
 * the MPI. And on Open MPI an open file closes the gate:
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
 * `files` (the handles this layer saw opened, with what a transfer needs to
 * know of each: its access mode and the size of its view's etype) is
 * protected by files_lock; it lets MPI_File_close reopen the gate only for
 * a file that closed it.
 */
#include "base.h"
#include "fileio.h"
#include "gate.h"
#include "init.h"
#include "track.h"

#include <pthread.h>
#include <stdlib.h>

#define WHY                                                                               \
	"an MPI file is open, and Open MPI's MPI-IO is not safe against a progress call " \
	"from another thread"

struct file_rec {
	MPI_File fh;
	int amode;
	int etype_size;
};

static pthread_mutex_t files_lock = PTHREAD_MUTEX_INITIALIZER;
static struct file_rec *files; /* protected by files_lock */
static size_t nfiles, cap;     /* protected by files_lock */

static bool remember(MPI_File fh, int amode)
{
	pthread_mutex_lock(&files_lock);
	bool ok = true;
	if (nfiles == cap) {
		size_t ncap = cap ? 2 * cap : 16;
		struct file_rec *n = realloc(files, ncap * sizeof(*n));
		if (n) {
			files = n;
			cap = ncap;
		}
		ok = n != NULL;
	}
	if (ok)
		files[nfiles++] = (struct file_rec){ fh, amode, 1 };
	pthread_mutex_unlock(&files_lock);
	return ok;
}

static bool forget(MPI_File fh)
{
	bool found = false;
	pthread_mutex_lock(&files_lock);
	for (size_t i = 0; i < nfiles && !found; i++)
		if (files[i].fh == fh) {
			files[i] = files[--nfiles];
			found = true;
		}
	pthread_mutex_unlock(&files_lock);
	return found;
}

/* The record of fh copied to *r: false for a file this layer did not see
 * opened. */
static bool lookup(MPI_File fh, struct file_rec *r)
{
	bool found = false;
	pthread_mutex_lock(&files_lock);
	for (size_t i = 0; i < nfiles && !found; i++)
		if (files[i].fh == fh) {
			*r = files[i];
			found = true;
		}
	pthread_mutex_unlock(&files_lock);
	return found;
}

static void set_etype(MPI_File fh, int etype_size)
{
	pthread_mutex_lock(&files_lock);
	for (size_t i = 0; i < nfiles; i++)
		if (files[i].fh == fh)
			files[i].etype_size = etype_size;
	pthread_mutex_unlock(&files_lock);
}

PMPI_EXPORT int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                              MPI_File *fh)
{
	pmpi_ensure();
	/* Closed before the call: opening a file may already run ompio code
	 * that a concurrent progress call could meet. */
	gate_close(WHY);
	fileio_lock();
	int rc = PMPI_File_open(comm, filename, amode, info, fh);
	fileio_unlock();
	if (rc != MPI_SUCCESS) {
		gate_open();
	} else if (!remember(*fh, amode)) {
		/* The gate stays closed for good rather than open too early. */
		pmpi_warn("out of memory: background progress stays off until MPI_Finalize");
	}
	return rc;
}

PMPI_EXPORT int MPI_File_close(MPI_File *fh)
{
	pmpi_ensure();
	MPI_File was = *fh;
	fileio_flush(was);
	fileio_lock();
	int rc = PMPI_File_close(fh);
	fileio_unlock();
	if (rc != MPI_SUCCESS)
		return rc; /* the file may still be open: keep the gate closed */
	if (forget(was)) {
		gate_open();
	} else {
#if defined(OPEN_MPI)
		static _Atomic int told;
		if (!atomic_exchange(&told, 1))
			pmpi_warn(
			        "MPI_File_close of a file piano did not see opened "
			        "(PMPI_File_open, "
			        "or opened before piano was loaded): background progress may have "
			        "run beside it, which Open MPI's MPI-IO does not withstand "
			        "(docs/mpi.md, \"The gate\")");
#endif
	}
	return rc;
}

PMPI_EXPORT int MPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype,
                                  MPI_Datatype filetype, const char *datarep, MPI_Info info)
{
	pmpi_ensure();
	fileio_flush(fh);
	fileio_lock();
	int rc = PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
	fileio_unlock();
	int size = 0;
	if (rc == MPI_SUCCESS && PMPI_Type_size(etype, &size) == MPI_SUCCESS)
		set_etype(fh, size);
	return rc;
}

/* Calls that see or change what queued transfers do: they wait for the
 * file's transfers, then run under the lock. */
#define AFTER_TRANSFERS(name, params, args)     \
	PMPI_EXPORT int MPI_File_##name params  \
	{                                       \
		pmpi_ensure();                  \
		fileio_flush(fh);               \
		fileio_lock();                  \
		int rc = PMPI_File_##name args; \
		fileio_unlock();                \
		return rc;                      \
	}
AFTER_TRANSFERS(seek, (MPI_File fh, MPI_Offset offset, int whence), (fh, offset, whence))
AFTER_TRANSFERS(seek_shared, (MPI_File fh, MPI_Offset offset, int whence), (fh, offset, whence))
AFTER_TRANSFERS(get_position, (MPI_File fh, MPI_Offset *offset), (fh, offset))
AFTER_TRANSFERS(get_position_shared, (MPI_File fh, MPI_Offset *offset), (fh, offset))
AFTER_TRANSFERS(sync, (MPI_File fh), (fh))
AFTER_TRANSFERS(set_size, (MPI_File fh, MPI_Offset size), (fh, size))
AFTER_TRANSFERS(preallocate, (MPI_File fh, MPI_Offset size), (fh, size))
AFTER_TRANSFERS(set_atomicity, (MPI_File fh, int flag), (fh, flag))

/* The blocking transfers, the split collectives and the non-blocking
 * collectives stay the MPI's own, under the lock. */
#define LOCKED(name, params, args)              \
	PMPI_EXPORT int MPI_File_##name params  \
	{                                       \
		pmpi_ensure();                  \
		fileio_lock();                  \
		int rc = PMPI_File_##name args; \
		fileio_unlock();                \
		return rc;                      \
	}
#define XFER_PARAMS(bufq, C) (MPI_File fh, bufq void *buf, C count, MPI_Datatype dt, MPI_Status *st)
#define XFER_AT_PARAMS(bufq, C) \
	(MPI_File fh, MPI_Offset offset, bufq void *buf, C count, MPI_Datatype dt, MPI_Status *st)
#define BLOCKING(sfx, C, unused)                                                          \
	LOCKED(read##sfx, XFER_PARAMS(, C), (fh, buf, count, dt, st))                     \
	LOCKED(read_all##sfx, XFER_PARAMS(, C), (fh, buf, count, dt, st))                 \
	LOCKED(read_shared##sfx, XFER_PARAMS(, C), (fh, buf, count, dt, st))              \
	LOCKED(read_ordered##sfx, XFER_PARAMS(, C), (fh, buf, count, dt, st))             \
	LOCKED(read_at##sfx, XFER_AT_PARAMS(, C), (fh, offset, buf, count, dt, st))       \
	LOCKED(read_at_all##sfx, XFER_AT_PARAMS(, C), (fh, offset, buf, count, dt, st))   \
	LOCKED(write##sfx, XFER_PARAMS(const, C), (fh, buf, count, dt, st))               \
	LOCKED(write_all##sfx, XFER_PARAMS(const, C), (fh, buf, count, dt, st))           \
	LOCKED(write_shared##sfx, XFER_PARAMS(const, C), (fh, buf, count, dt, st))        \
	LOCKED(write_ordered##sfx, XFER_PARAMS(const, C), (fh, buf, count, dt, st))       \
	LOCKED(write_at##sfx, XFER_AT_PARAMS(const, C), (fh, offset, buf, count, dt, st)) \
	LOCKED(write_at_all##sfx, XFER_AT_PARAMS(const, C), (fh, offset, buf, count, dt, st))
BOTH_FORMS(BLOCKING, -)

#define BEGIN_PARAMS(bufq, C) (MPI_File fh, bufq void *buf, C count, MPI_Datatype dt)
#define BEGIN_AT_PARAMS(bufq, C) \
	(MPI_File fh, MPI_Offset offset, bufq void *buf, C count, MPI_Datatype dt)
#define SPLIT_BEGIN(sfx, C, unused)                                                        \
	LOCKED(read_all_begin##sfx, BEGIN_PARAMS(, C), (fh, buf, count, dt))               \
	LOCKED(read_ordered_begin##sfx, BEGIN_PARAMS(, C), (fh, buf, count, dt))           \
	LOCKED(read_at_all_begin##sfx, BEGIN_AT_PARAMS(, C), (fh, offset, buf, count, dt)) \
	LOCKED(write_all_begin##sfx, BEGIN_PARAMS(const, C), (fh, buf, count, dt))         \
	LOCKED(write_ordered_begin##sfx, BEGIN_PARAMS(const, C), (fh, buf, count, dt))     \
	LOCKED(write_at_all_begin##sfx, BEGIN_AT_PARAMS(const, C), (fh, offset, buf, count, dt))
BOTH_FORMS(SPLIT_BEGIN, -)
#define END_PARAMS(bufq) (MPI_File fh, bufq void *buf, MPI_Status *st)
LOCKED(read_all_end, END_PARAMS(), (fh, buf, st))
LOCKED(read_ordered_end, END_PARAMS(), (fh, buf, st))
LOCKED(read_at_all_end, END_PARAMS(), (fh, buf, st))
LOCKED(write_all_end, END_PARAMS(const), (fh, buf, st))
LOCKED(write_ordered_end, END_PARAMS(const), (fh, buf, st))
LOCKED(write_at_all_end, END_PARAMS(const), (fh, buf, st))

/*
 * A non-blocking transfer goes to fileio.c when piano can make it exactly
 * as the MPI would: a file it saw opened, an access mode that allows it,
 * whole etypes. Anything else (including what is erroneous: the MPI's own
 * call then reports the error as it always does) is the MPI's own call.
 */
static bool ours(MPI_File fh, bool write, MPI_Count count, MPI_Datatype dt, struct file_rec *r)
{
	int size = 0;
	if (!fileio_usable() || !lookup(fh, r) || count < 0 ||
	    PMPI_Type_size(dt, &size) != MPI_SUCCESS)
		return false;
	if (r->amode & (MPI_MODE_SEQUENTIAL | (write ? MPI_MODE_RDONLY : MPI_MODE_WRONLY)))
		return false;
	return ((MPI_Count)size * count) % r->etype_size == 0;
}

/* An individual file pointer's transfer at an explicit offset: the pointer
 * advances at the call, as the standard says, by the etypes transferred. */
static bool take_position(MPI_File fh, MPI_Count count, MPI_Datatype dt, const struct file_rec *r,
                          MPI_Offset *at)
{
	int size = 0;
	PMPI_Type_size(dt, &size);
	MPI_Offset pos = 0;
	/* No wait for queued transfers: they are made at explicit offsets and
	 * leave the pointer alone. */
	fileio_lock();
	bool ok = PMPI_File_get_position(fh, &pos) == MPI_SUCCESS &&
	          PMPI_File_seek(fh, pos + (MPI_Offset)((MPI_Count)size * count / r->etype_size),
	                         MPI_SEEK_SET) == MPI_SUCCESS;
	fileio_unlock();
	if (ok)
		*at = pos;
	return ok;
}

static int foreign(int rc, MPI_Request *req)
{
	if (rc == MPI_SUCCESS && pmpi_g.threaded)
		track_foreign(*req, false);
	return rc;
}

/* piano's transfer of x (x.offset ignored when `individual`): its MPI error
 * code, or -1 when the MPI's own call is to run instead. */
static int try_ours(struct fileio_xfer x, bool individual, MPI_Request *req)
{
	struct file_rec r;
	if (!ours(x.fh, x.write, x.count, x.dt, &r) ||
	    (individual && !take_position(x.fh, x.count, x.dt, &r, &x.offset)))
		return -1;
	x.etype_size = r.etype_size;
	return fileio_submit(&x, req);
}

/* The MPI's own call, under the file lock, its request recorded. */
#define NATIVE(call)                      \
	do {                              \
		fileio_lock();            \
		int rc_ = call;           \
		fileio_unlock();          \
		return foreign(rc_, req); \
	} while (0)

/* One non-blocking transfer: name, buffer qualifier, count type, whether
 * it writes, through which pointer (0: explicit offset, 1: individual,
 * 2: shared). */
#define IXFER_ONE(name, bufq, C, wr, ptr)                                                         \
	PMPI_EXPORT int MPI_File_##name(MPI_File fh, IXFER_PARAM_##ptr bufq void *buf, C count,   \
	                                MPI_Datatype dt, MPI_Request *req)                        \
	{                                                                                         \
		pmpi_ensure();                                                                    \
		int rc = try_ours((struct fileio_xfer){ fh, wr, ptr == 2, (void *)buf, count, dt, \
		                                        IXFER_AT_##ptr, 0 },                      \
		                  ptr == 1, req);                                                 \
		if (rc >= 0)                                                                      \
			return rc;                                                                \
		NATIVE(PMPI_File_##name(fh, IXFER_ARG_##ptr buf, count, dt, req));                \
	}
#define IXFER_PARAM_0 MPI_Offset offset,
#define IXFER_PARAM_1
#define IXFER_PARAM_2
#define IXFER_AT_0 offset
#define IXFER_AT_1 0
#define IXFER_AT_2 0
#define IXFER_ARG_0 offset,
#define IXFER_ARG_1
#define IXFER_ARG_2
#define IXFER(sfx, C, unused)                        \
	IXFER_ONE(iread_at##sfx, , C, false, 0)      \
	IXFER_ONE(iwrite_at##sfx, const, C, true, 0) \
	IXFER_ONE(iread##sfx, , C, false, 1)         \
	IXFER_ONE(iwrite##sfx, const, C, true, 1)    \
	IXFER_ONE(iread_shared##sfx, , C, false, 2)  \
	IXFER_ONE(iwrite_shared##sfx, const, C, true, 2)
BOTH_FORMS(IXFER, -)

/* The non-blocking collectives: the MPI's own (their request is recorded
 * as foreign, foreign.c), after the file's queued transfers. */
#define ICOLL_ONE(name, bufq, C, ptr)                                                           \
	PMPI_EXPORT int MPI_File_##name(MPI_File fh, IXFER_PARAM_##ptr bufq void *buf, C count, \
	                                MPI_Datatype dt, MPI_Request *req)                      \
	{                                                                                       \
		pmpi_ensure();                                                                  \
		fileio_flush(fh);                                                               \
		NATIVE(PMPI_File_##name(fh, IXFER_ARG_##ptr buf, count, dt, req));              \
	}
#define ICOLL(sfx, C, unused)                   \
	ICOLL_ONE(iread_all##sfx, , C, 1)       \
	ICOLL_ONE(iwrite_all##sfx, const, C, 1) \
	ICOLL_ONE(iread_at_all##sfx, , C, 0)    \
	ICOLL_ONE(iwrite_at_all##sfx, const, C, 0)
BOTH_FORMS(ICOLL, -)

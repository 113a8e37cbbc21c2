/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The application's file calls (docs/mpi.md, "Non-blocking file I/O" and
 * "The gate"). Non-blocking transfers go to fileio.c, which makes them
 * while the application computes; the calls whose result depends on them
 * (a close, a pointer query, a new view...) first wait until the file's
 * queued transfers are made; every call holds fileio_lock() while it is in
 * the MPI. And on Open MPI file calls close the gate:
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
 * Unsafe therefore: a background progress call while a file call runs
 * (blocking ones too: fcoll/vulcan's collective writes may go through
 * fbtl requests of their own, fcoll_vulcan_async_io), and while a file
 * request of the MPI's own exists at all, since the application may then
 * make any MPI call. So the gate is closed by every file call, for its
 * length (fileio_lock(): every file call this layer makes or passes on
 * holds it, those of piano's helper included), and, from before the first
 * non-blocking call of a file that goes to the MPI's own (or split
 * collective begin), until that file's close: the smallest span this layer
 * can see that holds the life of such a request, since the standard has
 * the application complete a file's requests before closing it. The
 * non-blocking calls piano makes itself create no request of the MPI's:
 * with them, a file open for the whole run costs background progress only
 * while a file call runs. MPI_File_delete needs no gate: it unlinks a path
 * and touches no request.
 *
 * `files` (the handles this layer saw opened, with what a transfer needs to
 * know of each: its access mode, its view's etype size and whether the
 * view has holes, whether the file holds the gate closed) is protected by
 * files_lock; it lets MPI_File_close reopen the gate only for a file that
 * closed it.
 */
#include "base.h"
#include "report.h"
#include "fileio.h"
#include "gate.h"
#include "init.h"
#include "track.h"
#include "serial.h"

#include <pthread.h>
#include <stdlib.h>

#define WHY                                                                                      \
	"an MPI file has a request of the MPI's own, and Open MPI's MPI-IO is not safe against " \
	"a progress call from another thread"

struct file_rec {
	MPI_File fh;
	int amode;
	int etype_size;
	bool view_contig;  /* the view's filetype has no holes */
	bool gated;        /* the MPI's own requests: the gate is closed till the close */
	MPI_Request split; /* the split collective piano runs, if one */
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
		files[nfiles++] = (struct file_rec){ fh, amode, 1, true, false, MPI_REQUEST_NULL };
	pthread_mutex_unlock(&files_lock);
	return ok;
}

/* Forgets fh; false for a file this layer did not see opened. *gated: the
 * file held the gate closed. */
static bool forget(MPI_File fh, bool *gated)
{
	bool found = false;
	pthread_mutex_lock(&files_lock);
	for (size_t i = 0; i < nfiles && !found; i++)
		if (files[i].fh == fh) {
			*gated = files[i].gated;
			files[i] = files[--nfiles];
			found = true;
		}
	pthread_mutex_unlock(&files_lock);
	return found;
}

/* Before the MPI's own non-blocking call on fh (or split collective
 * begin): the gate stays closed from now until fh is closed. */
static void gate_file(MPI_File fh)
{
	bool close_now = false;
	pthread_mutex_lock(&files_lock);
	for (size_t i = 0; i < nfiles; i++)
		if (files[i].fh == fh && !files[i].gated)
			close_now = files[i].gated = true;
	pthread_mutex_unlock(&files_lock);
	if (close_now)
		gate_close(WHY);
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

static void set_view(MPI_File fh, int etype_size, bool contig)
{
	pthread_mutex_lock(&files_lock);
	for (size_t i = 0; i < nfiles; i++)
		if (files[i].fh == fh) {
			files[i].etype_size = etype_size;
			files[i].view_contig = contig;
		}
	pthread_mutex_unlock(&files_lock);
}

/* A datatype whose data is one block from its start: no holes. */
static bool contiguous(MPI_Datatype dt)
{
	int size = 0;
	MPI_Aint lb = 0, extent = 0, tlb = 0, textent = 0;
	return PMPI_Type_size(dt, &size) == MPI_SUCCESS &&
	       PMPI_Type_get_extent(dt, &lb, &extent) == MPI_SUCCESS &&
	       PMPI_Type_get_true_extent(dt, &tlb, &textent) == MPI_SUCCESS && tlb == 0 &&
	       lb == 0 && textent == size && extent == size;
}

/* Swaps *req with the request of fh's split collective. */
static void swap_split(MPI_File fh, MPI_Request *req)
{
	pthread_mutex_lock(&files_lock);
	for (size_t i = 0; i < nfiles; i++)
		if (files[i].fh == fh) {
			MPI_Request r = files[i].split;
			files[i].split = *req;
			*req = r;
		}
	pthread_mutex_unlock(&files_lock);
}

PMPI_EXPORT int MPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info,
                              MPI_File *fh)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	fileio_flush(MPI_FILE_NULL, true);
	fileio_lock();
	int rc = PMPI_File_open(comm, filename, amode, info, fh);
	fileio_unlock();
	if (rc == MPI_SUCCESS && !remember(*fh, amode)) {
		/* Unrecorded, its native requests could not close the gate:
		 * it stays closed for good rather than open too early. */
		gate_close(WHY);
		pmpi_warn("out of memory: background progress stays off until MPI_Finalize");
	}
	return rc;
}

PMPI_EXPORT int MPI_File_close(MPI_File *fh)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	MPI_File was = *fh;
	fileio_flush(was, true);
	fileio_lock();
	int rc = PMPI_File_close(fh);
	fileio_unlock();
	if (rc != MPI_SUCCESS)
		return rc; /* the file may still be open: keep the gate closed */
	bool gated = false;
	if (forget(was, &gated)) {
		if (gated)
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
	PMPI_APP_SCOPE();
	pmpi_ensure();
	fileio_flush(fh, true);
	fileio_lock();
	int rc = PMPI_File_set_view(fh, disp, etype, filetype, datarep, info);
	fileio_unlock();
	int size = 0;
	if (rc == MPI_SUCCESS && PMPI_Type_size(etype, &size) == MPI_SUCCESS)
		set_view(fh, size, contiguous(filetype));
	return rc;
}

/* The MPI's own call under the lock, after the queued transfers that it
 * must follow: those of `after` (MPI_FILE_NULL: of no file), and when the
 * call is collective, every collective one (fileio.h says why). */
#define LOCKED_CALL(rc, after, collective, call)              \
	do {                                                  \
		if ((after) != MPI_FILE_NULL || (collective)) \
			fileio_flush(after, collective);      \
		fileio_lock();                                \
		rc = call;                                    \
		fileio_unlock();                              \
	} while (0)
#define LOCKED_AFTER(after, collective, call)              \
	do {                                               \
		int rc_;                                   \
		LOCKED_CALL(rc_, after, collective, call); \
		return rc_;                                \
	} while (0)
#define AFTER(name, params, args, after, collective)                    \
	PMPI_EXPORT int MPI_File_##name params                          \
	{                                                               \
		PMPI_APP_SCOPE();                                       \
		pmpi_ensure();                                          \
		LOCKED_AFTER(after, collective, PMPI_File_##name args); \
	}

/* Calls that see or change what queued transfers do: they wait for the
 * file's transfers. (The individual pointer's seek and get_position need
 * not: it moved at each call, and queued transfers use explicit offsets.) */
AFTER(seek, (MPI_File fh, MPI_Offset offset, int whence), (fh, offset, whence), MPI_FILE_NULL,
      false)
AFTER(get_position, (MPI_File fh, MPI_Offset *offset), (fh, offset), MPI_FILE_NULL, false)
AFTER(seek_shared, (MPI_File fh, MPI_Offset offset, int whence), (fh, offset, whence), fh, true)
AFTER(get_position_shared, (MPI_File fh, MPI_Offset *offset), (fh, offset), fh, false)
AFTER(sync, (MPI_File fh), (fh), fh, true)
AFTER(set_size, (MPI_File fh, MPI_Offset size), (fh, size), fh, true)
AFTER(preallocate, (MPI_File fh, MPI_Offset size), (fh, size), fh, true)
AFTER(set_atomicity, (MPI_File fh, int flag), (fh, flag), fh, true)

/* The blocking transfers stay the MPI's own. Those through the shared
 * pointer follow the file's queued transfers (which may move it), and the
 * collective ones the queued collectives. */
#define LOCKED(name, params, args) AFTER(name, params, args, MPI_FILE_NULL, false)
#define SHARED(name, params, args) AFTER(name, params, args, fh, false)
#define COLL(name, params, args) AFTER(name, params, args, MPI_FILE_NULL, true)
#define ORDERED(name, params, args) AFTER(name, params, args, fh, true)
#define XFER_PARAMS(bufq, C) (MPI_File fh, bufq void *buf, C count, MPI_Datatype dt, MPI_Status *st)
#define XFER_AT_PARAMS(bufq, C) \
	(MPI_File fh, MPI_Offset offset, bufq void *buf, C count, MPI_Datatype dt, MPI_Status *st)
#define BLOCKING(sfx, C, unused)                                                          \
	LOCKED(read##sfx, XFER_PARAMS(, C), (fh, buf, count, dt, st))                     \
	COLL(read_all##sfx, XFER_PARAMS(, C), (fh, buf, count, dt, st))                   \
	SHARED(read_shared##sfx, XFER_PARAMS(, C), (fh, buf, count, dt, st))              \
	ORDERED(read_ordered##sfx, XFER_PARAMS(, C), (fh, buf, count, dt, st))            \
	LOCKED(read_at##sfx, XFER_AT_PARAMS(, C), (fh, offset, buf, count, dt, st))       \
	COLL(read_at_all##sfx, XFER_AT_PARAMS(, C), (fh, offset, buf, count, dt, st))     \
	LOCKED(write##sfx, XFER_PARAMS(const, C), (fh, buf, count, dt, st))               \
	COLL(write_all##sfx, XFER_PARAMS(const, C), (fh, buf, count, dt, st))             \
	SHARED(write_shared##sfx, XFER_PARAMS(const, C), (fh, buf, count, dt, st))        \
	ORDERED(write_ordered##sfx, XFER_PARAMS(const, C), (fh, buf, count, dt, st))      \
	LOCKED(write_at##sfx, XFER_AT_PARAMS(const, C), (fh, offset, buf, count, dt, st)) \
	COLL(write_at_all##sfx, XFER_AT_PARAMS(const, C), (fh, offset, buf, count, dt, st))
BOTH_FORMS(BLOCKING, -)

/*
 * A non-blocking transfer goes to fileio.c when piano can make it exactly
 * as the MPI would: a file it saw opened, an access mode that allows it,
 * whole etypes. Anything else (including what is erroneous: the MPI's own
 * call then reports the error as it always does) is the MPI's own call.
 * So is, on MPICH, an independent transfer contiguous in memory and in the
 * file: ROMIO hands it to POSIX AIO, which makes it while the application
 * computes at no cost to the application's thread (bench_file, 1 rank:
 * total / max(compute, transfer) 0.99-1.07 natively, 0.97-1.18 by piano).
 */
static bool ours(MPI_File fh, bool write, bool collective, MPI_Count count, MPI_Datatype dt,
                 struct file_rec *r)
{
	int size = 0;
	if (!fileio_usable() || !lookup(fh, r) || count < 0 ||
	    PMPI_Type_size(dt, &size) != MPI_SUCCESS)
		return false;
	if (r->amode & (MPI_MODE_SEQUENTIAL | (write ? MPI_MODE_RDONLY : MPI_MODE_WRONLY)))
		return false;
#if defined(MPICH_VERSION)
	if (!collective && r->view_contig && contiguous(dt))
		return false;
#else
	(void)collective;
#endif
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
	if (!ours(x.fh, x.write, x.collective, x.count, x.dt, &r) ||
	    (individual && !take_position(x.fh, x.count, x.dt, &r, &x.offset)))
		return -1;
	x.etype_size = r.etype_size;
	return fileio_submit(&x, req);
}

/* The overlap report's record of a non-blocking transfer (report.h): made
 * by piano's helper or by the MPI's own call. */
static int ixfer_posted(int rc, MPI_Request *req, int kind, MPI_Count count, MPI_Datatype dt,
                        bool ours, const void *site)
{
	if (report_on && rc == MPI_SUCCESS) {
		long bytes = -1;
		pmpi_type_bytes(count, dt, &bytes);
		report_post_(kind, bytes, ours, *req, site);
	}
	return rc;
}

/* One non-blocking transfer: name, buffer qualifier, count type, whether
 * it writes, through which pointer (0: explicit offset, 1: individual,
 * 2: shared), whether it is collective (_all; ordered with the shared
 * pointer), its kind in the report. The MPI's own call runs as
 * LOCKED_AFTER, its request recorded; the file keeps the gate closed from
 * before the call until its close. */
#define IXFER_ONE(name, bufq, C, wr, ptr, coll, kind)                                           \
	PMPI_EXPORT int MPI_File_##name(MPI_File fh, IXFER_PARAM_##ptr bufq void *buf, C count, \
	                                MPI_Datatype dt, MPI_Request *req)                      \
	{                                                                                       \
		PMPI_APP_SCOPE();                                                               \
		pmpi_ensure();                                                                  \
		const void *site = REPORT_SITE();                                               \
		int rc = try_ours((struct fileio_xfer){ fh, wr, ptr == 2, coll, (void *)buf,    \
		                                        count, dt, IXFER_AT_##ptr, 0 },         \
		                  ptr == 1, req);                                               \
		if (rc >= 0)                                                                    \
			return ixfer_posted(rc, req, kind, count, dt, true, site);              \
		gate_file(fh);                                                                  \
		LOCKED_CALL(rc, ptr == 2 ? fh : MPI_FILE_NULL, coll,                            \
		            foreign(PMPI_File_##name(fh, IXFER_ARG_##ptr buf, count, dt, req),  \
		                    req));                                                      \
		return ixfer_posted(rc, req, kind, count, dt, false, site);                     \
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
#define IXFER(sfx, C, unused)                                                              \
	IXFER_ONE(iread_at##sfx, , C, false, 0, false, REPORT_FILE_IREAD_AT)               \
	IXFER_ONE(iwrite_at##sfx, const, C, true, 0, false, REPORT_FILE_IWRITE_AT)         \
	IXFER_ONE(iread##sfx, , C, false, 1, false, REPORT_FILE_IREAD)                     \
	IXFER_ONE(iwrite##sfx, const, C, true, 1, false, REPORT_FILE_IWRITE)               \
	IXFER_ONE(iread_shared##sfx, , C, false, 2, false, REPORT_FILE_IREAD_SHARED)       \
	IXFER_ONE(iwrite_shared##sfx, const, C, true, 2, false, REPORT_FILE_IWRITE_SHARED) \
	IXFER_ONE(iread_all##sfx, , C, false, 1, true, REPORT_FILE_IREAD_ALL)              \
	IXFER_ONE(iwrite_all##sfx, const, C, true, 1, true, REPORT_FILE_IWRITE_ALL)        \
	IXFER_ONE(iread_at_all##sfx, , C, false, 0, true, REPORT_FILE_IREAD_AT_ALL)        \
	IXFER_ONE(iwrite_at_all##sfx, const, C, true, 0, true, REPORT_FILE_IWRITE_AT_ALL)
BOTH_FORMS(IXFER, -)

/*
 * Split collectives: the begin call is a non-blocking collective transfer
 * whose request the file's record keeps (the standard allows one split
 * collective per file at a time), the end call waits for it. When the
 * begin was the MPI's own, so is the end.
 */
#define SPLIT_BEGIN_ONE(name, sfx, bufq, C, wr, ptr)                                               \
	PMPI_EXPORT int MPI_File_##name##_begin##sfx(MPI_File fh,                                  \
	                                             IXFER_PARAM_##ptr bufq void *buf, C count,    \
	                                             MPI_Datatype dt)                              \
	{                                                                                          \
		PMPI_APP_SCOPE();                                                                  \
		pmpi_ensure();                                                                     \
		MPI_Request req = MPI_REQUEST_NULL;                                                \
		int rc = try_ours((struct fileio_xfer){ fh, wr, ptr == 2, true, (void *)buf,       \
		                                        count, dt, IXFER_AT_##ptr, 0 },            \
		                  ptr == 1, &req);                                                 \
		if (rc < 0)                                                                        \
			gate_file(fh);                                                             \
		if (rc < 0)                                                                        \
			LOCKED_AFTER(ptr == 2 ? fh : MPI_FILE_NULL, true,                          \
			             PMPI_File_##name##_begin##sfx(fh, IXFER_ARG_##ptr buf, count, \
			                                           dt));                           \
		if (rc == MPI_SUCCESS)                                                             \
			swap_split(fh, &req);                                                      \
		return rc;                                                                         \
	}
#define SPLIT_BEGIN(sfx, C, unused)                           \
	SPLIT_BEGIN_ONE(read_all, sfx, , C, false, 1)         \
	SPLIT_BEGIN_ONE(write_all, sfx, const, C, true, 1)    \
	SPLIT_BEGIN_ONE(read_at_all, sfx, , C, false, 0)      \
	SPLIT_BEGIN_ONE(write_at_all, sfx, const, C, true, 0) \
	SPLIT_BEGIN_ONE(read_ordered, sfx, , C, false, 2)     \
	SPLIT_BEGIN_ONE(write_ordered, sfx, const, C, true, 2)
BOTH_FORMS(SPLIT_BEGIN, -)

#define SPLIT_END(name, bufq)                                                                   \
	PMPI_EXPORT int MPI_File_##name##_end(MPI_File fh, bufq void *buf, MPI_Status *st)      \
	{                                                                                       \
		PMPI_APP_SCOPE();                                                               \
		pmpi_ensure();                                                                  \
		MPI_Request req = MPI_REQUEST_NULL;                                             \
		swap_split(fh, &req);                                                           \
		if (req == MPI_REQUEST_NULL)                                                    \
			LOCKED_AFTER(MPI_FILE_NULL, true, PMPI_File_##name##_end(fh, buf, st)); \
		return PMPI_Wait(&req, st);                                                     \
	}
SPLIT_END(read_all, )
SPLIT_END(write_all, const)
SPLIT_END(read_at_all, )
SPLIT_END(write_at_all, const)
SPLIT_END(read_ordered, )
SPLIT_END(write_ordered, const)

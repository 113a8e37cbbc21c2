/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Calls that create requests piano leaves to the MPI (track_foreign):
 * generalized requests (their query function must run in the application's
 * completion call), request-based one-sided operations and partitioned
 * requests. The request is recorded so that a wait including it is never
 * delegated to the engine; nothing else changes.
 */
#include "base.h"
#include "init.h"
#include "track.h"

static int foreign(int rc, MPI_Request *req, bool persistent)
{
	if (rc == MPI_SUCCESS && pmpi_g.threaded)
		track_foreign(*req, persistent);
	return rc;
}

PMPI_EXPORT int MPI_Grequest_start(MPI_Grequest_query_function *query_fn,
                                   MPI_Grequest_free_function *free_fn,
                                   MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                                   MPI_Request *request)
{
	pmpi_ensure();
	return foreign(PMPI_Grequest_start(query_fn, free_fn, cancel_fn, extra_state, request),
	               request, false);
}

PMPI_EXPORT int MPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
	pmpi_ensure();
	return foreign(PMPI_Rput(origin_addr, origin_count, origin_datatype, target_rank,
	                         target_disp, target_count, target_datatype, win, request),
	               request, false);
}

PMPI_EXPORT int MPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
	pmpi_ensure();
	return foreign(PMPI_Rget(origin_addr, origin_count, origin_datatype, target_rank,
	                         target_disp, target_count, target_datatype, win, request),
	               request, false);
}

PMPI_EXPORT int MPI_Raccumulate(const void *origin_addr, int origin_count,
                                MPI_Datatype origin_datatype, int target_rank,
                                MPI_Aint target_disp, int target_count,
                                MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                                MPI_Request *request)
{
	pmpi_ensure();
	return foreign(PMPI_Raccumulate(origin_addr, origin_count, origin_datatype, target_rank,
	                                target_disp, target_count, target_datatype, op, win,
	                                request),
	               request, false);
}

PMPI_EXPORT int MPI_Rget_accumulate(const void *origin_addr, int origin_count,
                                    MPI_Datatype origin_datatype, void *result_addr,
                                    int result_count, MPI_Datatype result_datatype,
                                    int target_rank, MPI_Aint target_disp, int target_count,
                                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                                    MPI_Request *request)
{
	pmpi_ensure();
	return foreign(PMPI_Rget_accumulate(origin_addr, origin_count, origin_datatype,
	                                    result_addr, result_count, result_datatype,
	                                    target_rank, target_disp, target_count,
	                                    target_datatype, op, win, request),
	               request, false);
}

#if MPI_VERSION >= 4
PMPI_EXPORT int MPI_Psend_init(const void *buf, int partitions, MPI_Count count,
                               MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                               MPI_Info info, MPI_Request *request)
{
	pmpi_ensure();
	return foreign(PMPI_Psend_init(buf, partitions, count, datatype, dest, tag, comm, info,
	                               request),
	               request, true);
}

PMPI_EXPORT int MPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                               int source, int tag, MPI_Comm comm, MPI_Info info,
                               MPI_Request *request)
{
	pmpi_ensure();
	return foreign(PMPI_Precv_init(buf, partitions, count, datatype, source, tag, comm, info,
	                               request),
	               request, true);
}
#endif

/*
 * Non-blocking file I/O. MPICH's ROMIO completes a file request only from a
 * Test or Wait on that very request (its poll function), never from the
 * progress an engine's check would drive; Open MPI's ompio is driven by a
 * progress callback that piano keeps away from open files (gate.c).
 */
#define FILE_I(name, bufq, ...)                                                             \
	PMPI_EXPORT int MPI_File_##name(MPI_File fh, __VA_ARGS__ bufq void *buf, int count,  \
	                                MPI_Datatype dt, MPI_Request *request)               \
	{                                                                                   \
		pmpi_ensure();                                                              \
		return foreign(PMPI_File_##name(fh, FILE_OFS_##name buf, count, dt, request), \
		               request, false);                                             \
	}
#define FILE_OFS_iread
#define FILE_OFS_iwrite
#define FILE_OFS_iread_shared
#define FILE_OFS_iwrite_shared
#define FILE_OFS_iread_all
#define FILE_OFS_iwrite_all
#define FILE_OFS_iread_at offset,
#define FILE_OFS_iwrite_at offset,
#define FILE_OFS_iread_at_all offset,
#define FILE_OFS_iwrite_at_all offset,

FILE_I(iread, , )
FILE_I(iwrite, const, )
FILE_I(iread_shared, , )
FILE_I(iwrite_shared, const, )
FILE_I(iread_all, , )
FILE_I(iwrite_all, const, )
FILE_I(iread_at, , MPI_Offset offset, )
FILE_I(iwrite_at, const, MPI_Offset offset, )
FILE_I(iread_at_all, , MPI_Offset offset, )
FILE_I(iwrite_at_all, const, MPI_Offset offset, )

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
#include "serial.h"

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
	PMPI_APP_SCOPE();
	pmpi_ensure();
	return foreign(PMPI_Grequest_start(query_fn, free_fn, cancel_fn, extra_state, request),
	               request, false);
}

/* Request-based one-sided operations, in both forms (BOTH_FORMS). */
#define RMA_ORIGIN(C) const void *origin_addr, C origin_count, MPI_Datatype origin_datatype
#define RMA_TARGET(C) \
	int target_rank, MPI_Aint target_disp, C target_count, MPI_Datatype target_datatype
#define RMA_ORIGIN_NAMES() origin_addr, origin_count, origin_datatype
#define RMA_TARGET_NAMES() target_rank, target_disp, target_count, target_datatype

#define RPUT(sfx, C, unused)                                                               \
	PMPI_EXPORT int MPI_Rput##sfx(RMA_ORIGIN(C), RMA_TARGET(C), MPI_Win win,           \
	                              MPI_Request *request)                                \
	{                                                                                  \
		PMPI_APP_SCOPE();                                                          \
		pmpi_ensure();                                                             \
		return foreign(PMPI_Rput##sfx(RMA_ORIGIN_NAMES(), RMA_TARGET_NAMES(), win, \
		                              request),                                    \
		               request, false);                                            \
	}
/* MPI_Rget's origin buffer is not const. */
#define RGET(sfx, C, unused)                                                                    \
	PMPI_EXPORT int MPI_Rget##sfx(void *origin_addr, C origin_count,                        \
	                              MPI_Datatype origin_datatype, RMA_TARGET(C), MPI_Win win, \
	                              MPI_Request *request)                                     \
	{                                                                                       \
		PMPI_APP_SCOPE();                                                               \
		pmpi_ensure();                                                                  \
		return foreign(PMPI_Rget##sfx(RMA_ORIGIN_NAMES(), RMA_TARGET_NAMES(), win,      \
		                              request),                                         \
		               request, false);                                                 \
	}
#define RACCUMULATE(sfx, C, unused)                                                                \
	PMPI_EXPORT int MPI_Raccumulate##sfx(RMA_ORIGIN(C), RMA_TARGET(C), MPI_Op op, MPI_Win win, \
	                                     MPI_Request *request)                                 \
	{                                                                                          \
		PMPI_APP_SCOPE();                                                                  \
		pmpi_ensure();                                                                     \
		return foreign(PMPI_Raccumulate##sfx(RMA_ORIGIN_NAMES(), RMA_TARGET_NAMES(), op,   \
		                                     win, request),                                \
		               request, false);                                                    \
	}
#define RGET_ACCUMULATE(sfx, C, unused)                                                            \
	PMPI_EXPORT int MPI_Rget_accumulate##sfx(RMA_ORIGIN(C), void *result_addr, C result_count, \
	                                         MPI_Datatype result_datatype, RMA_TARGET(C),      \
	                                         MPI_Op op, MPI_Win win, MPI_Request *request)     \
	{                                                                                          \
		PMPI_APP_SCOPE();                                                                  \
		pmpi_ensure();                                                                     \
		return foreign(PMPI_Rget_accumulate##sfx(RMA_ORIGIN_NAMES(), result_addr,          \
		                                         result_count, result_datatype,            \
		                                         RMA_TARGET_NAMES(), op, win, request),    \
		               request, false);                                                    \
	}

BOTH_FORMS(RPUT, -)
BOTH_FORMS(RGET, -)
BOTH_FORMS(RACCUMULATE, -)
BOTH_FORMS(RGET_ACCUMULATE, -)

#if MPI_VERSION >= 4
PMPI_EXPORT int MPI_Psend_init(const void *buf, int partitions, MPI_Count count,
                               MPI_Datatype datatype, int dest, int tag, MPI_Comm comm,
                               MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	return foreign(PMPI_Psend_init(buf, partitions, count, datatype, dest, tag, comm, info,
	                               request),
	               request, true);
}

PMPI_EXPORT int MPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                               int source, int tag, MPI_Comm comm, MPI_Info info,
                               MPI_Request *request)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	return foreign(PMPI_Precv_init(buf, partitions, count, datatype, source, tag, comm, info,
	                               request),
	               request, true);
}
#endif

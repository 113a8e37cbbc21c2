/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI-3 non-blocking collectives. Those PIANO_COLL names run as piano's
 * graphs (src/coll, docs/coll.md); the others the MPI starts, and piano
 * tracks the request so the engine keeps the MPI's schedule moving in the
 * background. Collectives are always tracked: their rounds need progress
 * on every rank whatever the message size.
 */
#include "base.h"
#include "coll_algo.h"
#include "init.h"
#include "progress.h"
#include "settings.h"
#include "track.h"

static int coll_track(int rc, MPI_Request *req)
{
	if (rc == MPI_SUCCESS && pmpi_g.threaded && track_add(*req, false, true))
		progress_kick();
	return rc;
}

/*
 * Whether this call runs as a graph: chosen by PIANO_COLL, with background
 * progress, on an intra-communicator, with arguments the graph can take.
 * Only values equal on every rank decide (the setting, the communicator's
 * kind, the arguments MPI requires to match), so every rank takes the same
 * path. Invalid arguments go to the MPI, which reports them as natively.
 */
static bool use_graph(unsigned bit, MPI_Comm comm, int count, MPI_Datatype type, int root)
{
	if (!(pmpi_g.coll_graph & bit) || !pmpi_g.threaded || comm == MPI_COMM_NULL)
		return false;
	int inter = 1, size = 0;
	if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter)
		return false;
	if (PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
		return false;
	if (count < 0 || type == MPI_DATATYPE_NULL || root < 0 || root >= size)
		return false;
	atomic_fetch_add_explicit(&pmpi_g.graph_colls, 1, memory_order_relaxed);
	return true;
}

PMPI_EXPORT int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	return coll_track(PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request), request);
}

PMPI_EXPORT int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	return coll_track(PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request), request);
}

PMPI_EXPORT int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	if (op != MPI_OP_NULL && sendbuf != recvbuf &&
	    use_graph(PMPI_COLL_IALLREDUCE, comm, count, datatype, 0))
		return coll_iallreduce(sendbuf, recvbuf, count, datatype, op, comm,
		                       pmpi_g.coll_segment, request);
	return coll_track(PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request), request);
}

PMPI_EXPORT int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	return coll_track(PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request), request);
}

PMPI_EXPORT int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	return coll_track(PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request), request);
}

PMPI_EXPORT int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	return coll_track(PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, request), request);
}

PMPI_EXPORT int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	if (use_graph(PMPI_COLL_IBARRIER, comm, 0, MPI_BYTE, 0))
		return coll_ibarrier(comm, request);
	return coll_track(PMPI_Ibarrier(comm, request), request);
}

PMPI_EXPORT int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	if (use_graph(PMPI_COLL_IBCAST, comm, count, datatype, root))
		return coll_ibcast(buffer, count, datatype, root, comm, pmpi_g.coll_segment,
		                   request);
	return coll_track(PMPI_Ibcast(buffer, count, datatype, root, comm, request), request);
}

PMPI_EXPORT int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	return coll_track(PMPI_Iexscan(sendbuf, recvbuf, count, datatype, op, comm, request), request);
}

PMPI_EXPORT int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	return coll_track(PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request), request);
}

PMPI_EXPORT int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	return coll_track(PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, request), request);
}

PMPI_EXPORT int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	return coll_track(PMPI_Ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request), request);
}

PMPI_EXPORT int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	return coll_track(PMPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request), request);
}

PMPI_EXPORT int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	return coll_track(PMPI_Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request), request);
}

PMPI_EXPORT int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype, void *recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	return coll_track(PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, request), request);
}

PMPI_EXPORT int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[], const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	return coll_track(PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls, recvtypes, comm, request), request);
}

PMPI_EXPORT int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	return coll_track(PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request), request);
}

PMPI_EXPORT int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[], MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	return coll_track(PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request), request);
}

PMPI_EXPORT int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	return coll_track(PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request), request);
}

PMPI_EXPORT int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	return coll_track(PMPI_Iscan(sendbuf, recvbuf, count, datatype, op, comm, request), request);
}

PMPI_EXPORT int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	return coll_track(PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request), request);
}

PMPI_EXPORT int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	pmpi_ensure();
	return coll_track(PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, request), request);
}

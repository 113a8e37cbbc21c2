/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collectives that return a request: MPI-3's non-blocking MPI_I<coll> and
 * MPI-4's persistent MPI_<coll>_init (MPIX_<coll>_init in Open MPI's
 * pcollreq extension). Those PIANO_COLL names run as piano's graphs
 * (src/coll, docs/coll.md); the others the MPI runs, and piano tracks the
 * request so the engine keeps the MPI's schedule moving in the background.
 * Collectives are always tracked: their rounds need progress on every rank
 * whatever the message size.
 */
#include "coll.h"
#include "base.h"
#include "coll_algo.h"
#include "coll_persist.h"
#include "coll_shadow.h"
#include "init.h"
#include "op_hold.h"
#include "progress.h"
#include "report.h"
#include "settings.h"
#include "track.h"
#include "serial.h"

#include <limits.h>
#include <stdlib.h>
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h> /* OMPI_HAVE_MPI_EXT_PCOLLREQ */
#endif

/*
 * The MPI's own persistent collective: PCOLL(Bcast_init, (args)) calls
 * PMPI_Bcast_init (MPI-4) or PMPIX_Bcast_init (Open MPI's extension), and
 * PCOLL_NAME(Bcast_init) is the name piano exports for it.
 */
#if MPI_VERSION >= 4
#define PIANO_PCOLL 1
#define PCOLL(name, args) PMPI_##name args
#define PCOLL_NAME(name) MPI_##name
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ)
#define PIANO_PCOLL 1
#define PCOLL(name, args) PMPIX_##name args
#define PCOLL_NAME(name) MPIX_##name
#else
#define PIANO_PCOLL 0
#define PCOLL(name, args) MPI_ERR_INTERN
#endif

/* How the application called: its request, its call site (report.h), and
 * for a persistent collective its info. */
struct call {
	MPI_Request *request;
	const void *site;
	bool persistent;
	MPI_Info info;
};
#define ICALL(req, site_) (&(const struct call){ .request = (req), .site = (site_) })
#define PCALL(req, info_)      \
	(&(const struct call){ \
	        .request = (req), .site = REPORT_SITE(), .persistent = true, .info = (info_) })

/* The call of pmpi_*_graph(): persistent when `init` (its info) is given. */
#define FCALL(req, init_, site_)                              \
	(&(const struct call){ .request = (req),              \
	                       .site = (site_),               \
	                       .persistent = (init_) != NULL, \
	                       .info = (init_) ? *(const MPI_Info *)(init_) : MPI_INFO_NULL })

static int coll_track(int rc, MPI_Request *req)
{
	if (rc == MPI_SUCCESS && pmpi_g.threaded && track_add(*req, false, true, false))
		progress_kick();
	return rc;
}

/* The MPI's persistent collective: recorded inactive, so that MPI_Start
 * and MPI_Startall (track_start) make it pending each time it starts. */
static int coll_track_init(int rc, MPI_Request *req)
{
	if (rc == MPI_SUCCESS && pmpi_g.threaded)
		track_add(*req, true, false, false);
	return rc;
}

/* The MPI's non-blocking collective, tracked; or its persistent one,
 * tracked from each start. */
#define NATIVE(c, icall, pname, pargs)                                        \
	((c)->persistent ? coll_track_init(PCOLL(pname, pargs), (c)->request) \
	                 : coll_track(icall, (c)->request))

#if MPI_VERSION >= 4
/* The same with the MPI's large-count forms (MPI_<iname>_c,
 * MPI_<pname>_init_c). */
#define NATIVE_C(c, iname, iargs, pname, pargs)                                       \
	((c)->persistent ? coll_track_init(PMPI_##pname##_init_c pargs, (c)->request) \
	                 : coll_track(PMPI_##iname##_c iargs, (c)->request))
#endif

/* A reduction's own call in the MPI (MPI_<iname>, or MPI_<pname>_init
 * when c is persistent) with the arguments (sb, rb, count, ...): the int
 * form where count fits, else the large-count one. */
#define NATIVE_INT(c, iname, pname, sb, rb, count, ...)                                        \
	NATIVE(c, PMPI_##iname(sb, rb, (int)(count), __VA_ARGS__, (c)->request), pname##_init, \
	       (sb, rb, (int)(count), __VA_ARGS__, (c)->info, (c)->request))
#if MPI_VERSION >= 4
#define NATIVE_REDUCTION(c, iname, pname, sb, rb, count, ...)                            \
	((count) < 0 || (count) > INT_MAX                                                \
	         ? NATIVE_C(c, iname, (sb, rb, count, __VA_ARGS__, (c)->request), pname, \
	                    (sb, rb, count, __VA_ARGS__, (c)->info, (c)->request))       \
	         : NATIVE_INT(c, iname, pname, sb, rb, count, __VA_ARGS__))
#else
#define NATIVE_REDUCTION(c, iname, pname, sb, rb, count, ...) \
	NATIVE_INT(c, iname, pname, sb, rb, count, __VA_ARGS__)
#endif

/* Records a collective for the overlap report (report.h): its bytes are
 * count elements of type (the call's own buffer; count -1: per-rank counts,
 * not given). A persistent one is counted at each start. */
static int coll_report(int kind, MPI_Count count, MPI_Datatype type, int rc, const struct call *c)
{
	if (report_on && rc == MPI_SUCCESS) {
		long bytes = -1;
		if (count >= 0)
			pmpi_type_bytes(count, type, &bytes);
		if (c->persistent)
			report_init_(REPORT_PCOLL, bytes, false, *c->request, c->site);
		else
			report_post_(kind, bytes, false, *c->request, c->site);
	}
	return rc;
}

/*
 * Whether this call runs as a graph: chosen by PIANO_COLL, with background
 * progress, on an intra-communicator that may have a shadow (coll_shadow.h),
 * with arguments the graph can take (args_ok, evaluated only once the rest
 * allows a graph: most calls are not graphs, and on an inter-communicator
 * the arrays have the remote group's size).
 * Only values equal on every rank decide (the setting, the communicator's
 * kind, the arguments MPI requires to match), so every rank takes the same
 * path. Invalid arguments go to the MPI, which reports them as natively.
 */
#define USE_GRAPH(bit, comm, root, args_ok) \
	(graph_may((bit), (comm)) && (args_ok) && graph_chosen((comm), (root)))

static bool graph_may(unsigned bit, MPI_Comm comm)
{
	int inter = 1;
	return (pmpi_g.coll_graph & bit) && pmpi_g.threaded && comm != MPI_COMM_NULL &&
	       PMPI_Comm_test_inter(comm, &inter) == MPI_SUCCESS && !inter;
}

static bool graph_chosen(MPI_Comm comm, int root)
{
	int size = 0;
	if (PMPI_Comm_size(comm, &size) != MPI_SUCCESS || root < 0 || root >= size ||
	    !coll_shadow_allowed(comm, size, pmpi_g.coll_auto))
		return false;
	atomic_fetch_add_explicit(&pmpi_g.graph_colls, 1, memory_order_relaxed);
	return true;
}

/*
 * A builder's call (coll_algo.h) for c: GRAPH_BEGIN, the builder with every
 * datatype through GRAPH_TYPE and the operation through GRAPH_OP, GRAPH_END.
 * The graph holds a duplicate of each derived datatype and a hold on a
 * user-defined operation (coll_persist.h): the application may free its own
 * once the call returned, while the graph posts messages and reduces later.
 * In persistent mode the builder makes the handle instead of starting, and
 * GRAPH_END's result may be COLL_ENOTAGS: the MPI's own then runs the
 * collective.
 */
#define GRAPH_BEGIN(c)            \
	struct coll_persist pers; \
	coll_persist_begin(&pers, (c)->persistent)
#define GRAPH_TYPE(c, t) coll_persist_type(&pers, (t))
#define GRAPH_OP(c, o) coll_persist_op(&pers, (o))
#define GRAPH_TYPES(c, t, n) coll_persist_types(&pers, (t), (n))
/* GRAPH_TYPE for an argument the call may ignore (in place, or a root's
 * argument on another rank): the graph never uses an ignored one, and
 * duplicating whatever the application left there could fail, or abort in
 * the MPI's error handler. */
#define GRAPH_TYPE_IF(c, used, t) ((used) ? GRAPH_TYPE(c, (t)) : (t))
/* GRAPH_TYPE for the datatypes of n blocks (struct coll_blocks b): one per
 * block, or one for them all. */
#define GRAPH_BLOCKS(c, b, n)                                       \
	do {                                                        \
		if ((b).types)                                      \
			(b).types = GRAPH_TYPES(c, (b).types, (n)); \
		else                                                \
			(b).type = GRAPH_TYPE(c, (b).type);         \
	} while (0)
#define GRAPH_END(c, comm, rc)                                                                   \
	do {                                                                                     \
		(rc) = coll_persist_end(&pers, (rc), (c)->request);                              \
		if ((rc) == COLL_ENOTAGS)                                                        \
			atomic_fetch_sub_explicit(&pmpi_g.graph_colls, 1, memory_order_relaxed); \
		else if ((rc) != MPI_SUCCESS)                                                    \
			(rc) = graph_failed((comm), (rc), (c));                                  \
	} while (0)

/*
 * A graph that failed in the call itself (memory for its nodes or scratch,
 * an MPI call while it was built): reported as the MPI reports an error,
 * through the communicator's error handler (MPI_ERRORS_ARE_FATAL unless
 * the application chose another: the job ends there with the MPI's
 * message, as it would natively), then returned, the request null. The
 * graph sent nothing, and every rank fails alike where the cause is the
 * arguments (which MPI requires to match).
 */
static int graph_failed(MPI_Comm comm, int rc, const struct call *c)
{
	if (rc < 0)
		rc = MPI_ERR_INTERN; /* not an MPI code: no handler would know it */
	*c->request = MPI_REQUEST_NULL;
	PMPI_Comm_call_errhandler(comm, rc);
	return rc;
}

/* A buffer's description the MPI would accept. */
static bool ok(MPI_Count count, MPI_Datatype type)
{
	return count >= 0 && type != MPI_DATATYPE_NULL;
}

static struct coll_blocks uniform(const void *base, int count, MPI_Datatype type)
{
	return (struct coll_blocks){ .base = base, .count = count, .type = type };
}

static struct coll_blocks varied(const void *base, const int *counts, const int *displs,
                                 MPI_Datatype type)
{
	return (struct coll_blocks){
		.base = base, .counts = counts, .displs = displs, .type = type
	};
}

/* Alltoallw's blocks: a datatype each, displacements in bytes. */
static struct coll_blocks typed(const void *base, const int *counts, const int *displs,
                                const MPI_Datatype *types)
{
	return (struct coll_blocks){ .base = base,
		                     .counts = counts,
		                     .displs = displs,
		                     .type = MPI_DATATYPE_NULL,
		                     .types = types };
}

/* The communicator's size blocks described as the MPI would accept them. */
static bool blocks_ok(MPI_Comm comm, const struct coll_blocks *b)
{
	if (!b->counts)
		return ok(b->count, b->type);
	int size = 0;
	if ((!b->types && b->type == MPI_DATATYPE_NULL) || !(b->displs || b->bdispls) ||
	    PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
		return false;
	for (int i = 0; i < size; i++)
		if (!ok(b->counts[i], b->types ? b->types[i] : b->type))
			return false;
	return true;
}

static int iallgather_at(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         int recvcount, MPI_Datatype recvtype, MPI_Comm comm, const struct call *c)
{
	pmpi_ensure();
	if (USE_GRAPH(PMPI_COLL_IALLGATHER, comm, 0,
	              ok(recvcount, recvtype) &&
	                      (sendbuf == MPI_IN_PLACE || ok(sendcount, sendtype)))) {
		GRAPH_BEGIN(c);
		int rc = coll_iallgather(sendbuf, sendcount,
		                         GRAPH_TYPE_IF(c, sendbuf != MPI_IN_PLACE, sendtype),
		                         uniform(recvbuf, recvcount, GRAPH_TYPE(c, recvtype)), comm,
		                         c->request);
		GRAPH_END(c, comm, rc);
		if (rc != COLL_ENOTAGS)
			return coll_report(REPORT_IALLGATHER, recvcount, recvtype, rc, c);
	}
	return coll_report(REPORT_IALLGATHER, recvcount, recvtype,
	                   NATIVE(c,
	                          PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
	                                          recvtype, comm, c->request),
	                          Allgather_init,
	                          (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
	                           c->info, c->request)),
	                   c);
}

PMPI_EXPORT int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iallgather_at(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
	                     ICALL(request, REPORT_SITE()));
}

/* MPI_Iallgatherv as a graph, its blocks as the int form or the large-count
 * form (struct wide) gives them: COLL_NOT_TAKEN when the MPI's own is to
 * run it. The graph reads the blocks' arrays only here. */
static int iallgatherv_graph(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             struct coll_blocks recv, MPI_Comm comm, const struct call *c)
{
	int size = 0;
	if (comm == MPI_COMM_NULL ||
	    !USE_GRAPH(PMPI_COLL_IALLGATHER, comm, 0,
	               blocks_ok(comm, &recv) &&
	                       (sendbuf == MPI_IN_PLACE || ok(sendcount, sendtype)) &&
	                       PMPI_Comm_size(comm, &size) == MPI_SUCCESS))
		return COLL_NOT_TAKEN;
	GRAPH_BEGIN(c);
	GRAPH_BLOCKS(c, recv, size);
	int rc = coll_iallgather(sendbuf, sendcount,
	                         GRAPH_TYPE_IF(c, sendbuf != MPI_IN_PLACE, sendtype), recv, comm,
	                         c->request);
	GRAPH_END(c, comm, rc);
	if (rc == COLL_ENOTAGS)
		return COLL_NOT_TAKEN;
	return coll_report(REPORT_IALLGATHERV, -1, MPI_DATATYPE_NULL, rc, c);
}

static int iallgatherv_at(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                          const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                          MPI_Comm comm, const struct call *c)
{
	pmpi_ensure();
	int rc = iallgatherv_graph(sendbuf, sendcount, sendtype,
	                           varied(recvbuf, recvcounts, displs, recvtype), comm, c);
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return coll_report(REPORT_IALLGATHERV, -1, MPI_DATATYPE_NULL,
	                   NATIVE(c,
	                          PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf,
	                                           recvcounts, displs, recvtype, comm, c->request),
	                          Allgatherv_init,
	                          (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
	                           recvtype, comm, c->info, c->request)),
	                   c);
}

PMPI_EXPORT int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, const int recvcounts[], const int displs[],
                                MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iallgatherv_at(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
	                      comm, ICALL(request, REPORT_SITE()));
}

static int iallreduce_at(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm comm, const struct call *c)
{
	pmpi_ensure();
	if (USE_GRAPH(PMPI_COLL_IALLREDUCE, comm, 0,
	              ok(count, datatype) && op != MPI_OP_NULL && sendbuf != recvbuf &&
	                      op_holdable(op))) {
		GRAPH_BEGIN(c);
		int rc = coll_iallreduce(sendbuf, recvbuf, count, GRAPH_TYPE(c, datatype),
		                         GRAPH_OP(c, op), comm, pmpi_g.coll_segment, c->request);
		GRAPH_END(c, comm, rc);
		if (rc != COLL_ENOTAGS)
			return coll_report(REPORT_IALLREDUCE, count, datatype, rc, c);
	}
	return coll_report(REPORT_IALLREDUCE, count, datatype,
	                   NATIVE_REDUCTION(c, Iallreduce, Allreduce, sendbuf, recvbuf, count,
	                                    datatype, op, comm),
	                   c);
}

PMPI_EXPORT int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                               MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iallreduce_at(sendbuf, recvbuf, count, datatype, op, comm,
	                     ICALL(request, REPORT_SITE()));
}

static int ialltoall_at(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, const struct call *c)
{
	pmpi_ensure();
	if (USE_GRAPH(PMPI_COLL_IALLTOALL, comm, 0,
	              ok(recvcount, recvtype) &&
	                      (sendbuf == MPI_IN_PLACE || ok(sendcount, sendtype)))) {
		GRAPH_BEGIN(c);
		int rc = coll_ialltoall(uniform(sendbuf, sendcount,
		                                GRAPH_TYPE_IF(c, sendbuf != MPI_IN_PLACE,
		                                              sendtype)),
		                        uniform(recvbuf, recvcount, GRAPH_TYPE(c, recvtype)), comm,
		                        c->request);
		GRAPH_END(c, comm, rc);
		if (rc != COLL_ENOTAGS)
			return coll_report(REPORT_IALLTOALL, recvcount, recvtype, rc, c);
	}
	return coll_report(REPORT_IALLTOALL, recvcount, recvtype,
	                   NATIVE(c,
	                          PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount,
	                                         recvtype, comm, c->request),
	                          Alltoall_init,
	                          (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
	                           c->info, c->request)),
	                   c);
}

PMPI_EXPORT int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                              void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm,
                              MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ialltoall_at(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
	                    ICALL(request, REPORT_SITE()));
}

/* MPI_Ialltoallv and MPI_Ialltoallw (report kind `kind`) as a graph, their
 * blocks as the int forms or the large-count forms (struct wide) give them:
 * COLL_NOT_TAKEN when the MPI's own is to run it. In place, the send
 * blocks are ignored (the graph stages each block of recvbuf before it
 * goes out). The graph reads the blocks' arrays only here. */
static int ialltoall_blocks_graph(int kind, struct coll_blocks send, struct coll_blocks recv,
                                  MPI_Comm comm, const struct call *c)
{
	bool in_place = send.base == MPI_IN_PLACE;
	int size = 0;
	if (comm == MPI_COMM_NULL ||
	    !USE_GRAPH(PMPI_COLL_IALLTOALL, comm, 0,
	               (in_place || blocks_ok(comm, &send)) && blocks_ok(comm, &recv) &&
	                       PMPI_Comm_size(comm, &size) == MPI_SUCCESS))
		return COLL_NOT_TAKEN;
	GRAPH_BEGIN(c);
	if (!in_place)
		GRAPH_BLOCKS(c, send, size);
	GRAPH_BLOCKS(c, recv, size);
	int rc = coll_ialltoall(send, recv, comm, c->request);
	GRAPH_END(c, comm, rc);
	if (rc == COLL_ENOTAGS)
		return COLL_NOT_TAKEN;
	return coll_report(kind, -1, MPI_DATATYPE_NULL, rc, c);
}

static int ialltoallv_at(const void *sendbuf, const int sendcounts[], const int sdispls[],
                         MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                         const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                         const struct call *c)
{
	pmpi_ensure();
	int rc = ialltoall_blocks_graph(REPORT_IALLTOALLV,
	                                varied(sendbuf, sendcounts, sdispls, sendtype),
	                                varied(recvbuf, recvcounts, rdispls, recvtype), comm, c);
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return coll_report(REPORT_IALLTOALLV, -1, MPI_DATATYPE_NULL,
	                   NATIVE(c,
	                          PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf,
	                                          recvcounts, rdispls, recvtype, comm, c->request),
	                          Alltoallv_init,
	                          (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts,
	                           rdispls, recvtype, comm, c->info, c->request)),
	                   c);
}

PMPI_EXPORT int MPI_Ialltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                               const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                               MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ialltoallv_at(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
	                     recvtype, comm, ICALL(request, REPORT_SITE()));
}

/* MPI_Ialltoallw as a graph when PIANO_COLL takes it: returns
 * COLL_NOT_TAKEN when the MPI's own is to run it. */
static int ialltoallw_graph(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                            const struct call *c)
{
	/* typed() leaves a block list without datatypes invalid (blocks_ok). */
	return ialltoall_blocks_graph(REPORT_IALLTOALLW,
	                              typed(sendbuf, sendcounts, sdispls, sendtypes),
	                              typed(recvbuf, recvcounts, rdispls, recvtypes), comm, c);
}

static int ialltoallw_at(const void *sendbuf, const int sendcounts[], const int sdispls[],
                         const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                         const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                         const struct call *c)
{
	pmpi_ensure();
	int rc = ialltoallw_graph(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
	                          rdispls, recvtypes, comm, c);
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return coll_report(REPORT_IALLTOALLW, -1, MPI_DATATYPE_NULL,
	                   NATIVE(c,
	                          PMPI_Ialltoallw(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
	                                          recvcounts, rdispls, recvtypes, comm, c->request),
	                          Alltoallw_init,
	                          (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
	                           rdispls, recvtypes, comm, c->info, c->request)),
	                   c);
}

int pmpi_ialltoallw_graph(const void *sendbuf, const int sendcounts[], const int sdispls[],
                          const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                          const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                          const MPI_Info *init, MPI_Request *request, const void *site)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	return ialltoallw_graph(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
	                        rdispls, recvtypes, comm, FCALL(request, init, site));
}

PMPI_EXPORT int MPI_Ialltoallw(const void *sendbuf, const int sendcounts[], const int sdispls[],
                               const MPI_Datatype sendtypes[], void *recvbuf,
                               const int recvcounts[], const int rdispls[],
                               const MPI_Datatype recvtypes[], MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ialltoallw_at(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
	                     recvtypes, comm, ICALL(request, REPORT_SITE()));
}

static int ibarrier_at(MPI_Comm comm, const struct call *c)
{
	pmpi_ensure();
	if (USE_GRAPH(PMPI_COLL_IBARRIER, comm, 0, true)) {
		GRAPH_BEGIN(c);
		int rc = coll_ibarrier(comm, c->request);
		GRAPH_END(c, comm, rc);
		if (rc != COLL_ENOTAGS)
			return coll_report(REPORT_IBARRIER, 0, MPI_BYTE, rc, c);
	}
	return coll_report(REPORT_IBARRIER, 0, MPI_BYTE,
	                   NATIVE(c, PMPI_Ibarrier(comm, c->request), Barrier_init,
	                          (comm, c->info, c->request)),
	                   c);
}

PMPI_EXPORT int MPI_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ibarrier_at(comm, ICALL(request, REPORT_SITE()));
}

static int ibcast_at(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                     const struct call *c)
{
	pmpi_ensure();
	if (USE_GRAPH(PMPI_COLL_IBCAST, comm, root, ok(count, datatype))) {
		GRAPH_BEGIN(c);
		int rc = coll_ibcast(buffer, count, GRAPH_TYPE(c, datatype), root, comm,
		                     pmpi_g.coll_segment, c->request);
		GRAPH_END(c, comm, rc);
		if (rc != COLL_ENOTAGS)
			return coll_report(REPORT_IBCAST, count, datatype, rc, c);
	}
	return coll_report(REPORT_IBCAST, count, datatype,
	                   NATIVE(c, PMPI_Ibcast(buffer, count, datatype, root, comm, c->request),
	                          Bcast_init,
	                          (buffer, count, datatype, root, comm, c->info, c->request)),
	                   c);
}

PMPI_EXPORT int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                           MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ibcast_at(buffer, count, datatype, root, comm, ICALL(request, REPORT_SITE()));
}

static int iexscan_at(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Op op, MPI_Comm comm, const struct call *c)
{
	pmpi_ensure();
	if (USE_GRAPH(PMPI_COLL_IEXSCAN, comm, 0,
	              ok(count, datatype) && op != MPI_OP_NULL && sendbuf != recvbuf &&
	                      op_holdable(op))) {
		GRAPH_BEGIN(c);
		int rc = coll_iexscan(sendbuf, recvbuf, count, GRAPH_TYPE(c, datatype),
		                      GRAPH_OP(c, op), comm, pmpi_g.coll_segment, c->request);
		GRAPH_END(c, comm, rc);
		if (rc != COLL_ENOTAGS)
			return coll_report(REPORT_IEXSCAN, count, datatype, rc, c);
	}
	return coll_report(REPORT_IEXSCAN, count, datatype,
	                   NATIVE_REDUCTION(c, Iexscan, Exscan, sendbuf, recvbuf, count, datatype,
	                                    op, comm),
	                   c);
}

PMPI_EXPORT int MPI_Iexscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iexscan_at(sendbuf, recvbuf, count, datatype, op, comm,
	                  ICALL(request, REPORT_SITE()));
}

/* Whether this rank's buffers are valid where they are significant: the
 * root's `many` side (size blocks), everyone's `one` side (except the
 * root's when in place). */
static bool is_root(MPI_Comm comm, int root)
{
	int rank = -1;
	return PMPI_Comm_rank(comm, &rank) == MPI_SUCCESS && rank == root;
}

static bool rooted_ok(MPI_Comm comm, int root, bool in_place, const struct coll_blocks *many,
                      int one_count, MPI_Datatype one_type)
{
	int rank = -1;
	if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS)
		return false;
	if (rank == root)
		return blocks_ok(comm, many) && (in_place || ok(one_count, one_type));
	return ok(one_count, one_type);
}

static int igather_at(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                      const struct call *c)
{
	pmpi_ensure();
	struct coll_blocks recv = uniform(recvbuf, recvcount, recvtype);
	int count = sendbuf == MPI_IN_PLACE ? recvcount : sendcount;
	MPI_Datatype type = sendbuf == MPI_IN_PLACE ? recvtype : sendtype;
	if (comm != MPI_COMM_NULL &&
	    USE_GRAPH(PMPI_COLL_IGATHER, comm, root,
	              rooted_ok(comm, root, sendbuf == MPI_IN_PLACE, &recv, sendcount, sendtype))) {
		GRAPH_BEGIN(c);
		bool at_root = is_root(comm, root);
		recv.type = GRAPH_TYPE_IF(c, at_root, recvtype);
		int rc = coll_igather(sendbuf, sendcount,
		                      GRAPH_TYPE_IF(c, !at_root || sendbuf != MPI_IN_PLACE,
		                                    sendtype),
		                      recv, root, comm, c->request);
		GRAPH_END(c, comm, rc);
		if (rc != COLL_ENOTAGS)
			return coll_report(REPORT_IGATHER, count, type, rc, c);
	}
	return coll_report(REPORT_IGATHER, count, type,
	                   NATIVE(c,
	                          PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount,
	                                       recvtype, root, comm, c->request),
	                          Gather_init,
	                          (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
	                           comm, c->info, c->request)),
	                   c);
}

PMPI_EXPORT int MPI_Igather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                            MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return igather_at(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
	                  ICALL(request, REPORT_SITE()));
}

/* MPI_Igatherv as a graph, the root's blocks as the int form or the
 * large-count form (struct wide) gives them: COLL_NOT_TAKEN when the MPI's
 * own is to run it. The graph reads the blocks' arrays only here. */
static int igatherv_graph(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          struct coll_blocks recv, int root, MPI_Comm comm, const struct call *c)
{
	int size = 0;
	if (comm == MPI_COMM_NULL ||
	    !USE_GRAPH(PMPI_COLL_IGATHER, comm, root,
	               rooted_ok(comm, root, sendbuf == MPI_IN_PLACE, &recv, sendcount, sendtype) &&
	                       PMPI_Comm_size(comm, &size) == MPI_SUCCESS))
		return COLL_NOT_TAKEN;
	GRAPH_BEGIN(c);
	bool at_root = is_root(comm, root);
	if (at_root)
		GRAPH_BLOCKS(c, recv, size);
	int rc = coll_igather(sendbuf, sendcount,
	                      GRAPH_TYPE_IF(c, !at_root || sendbuf != MPI_IN_PLACE, sendtype), recv,
	                      root, comm, c->request);
	GRAPH_END(c, comm, rc);
	if (rc == COLL_ENOTAGS)
		return COLL_NOT_TAKEN;
	return coll_report(REPORT_IGATHERV, -1, MPI_DATATYPE_NULL, rc, c);
}

static int igatherv_at(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       const int recvcounts[], const int displs[], MPI_Datatype recvtype, int root,
                       MPI_Comm comm, const struct call *c)
{
	pmpi_ensure();
	int rc = igatherv_graph(sendbuf, sendcount, sendtype,
	                        varied(recvbuf, recvcounts, displs, recvtype), root, comm, c);
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return coll_report(REPORT_IGATHERV, -1, MPI_DATATYPE_NULL,
	                   NATIVE(c,
	                          PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts,
	                                        displs, recvtype, root, comm, c->request),
	                          Gatherv_init,
	                          (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
	                           recvtype, root, comm, c->info, c->request)),
	                   c);
}

PMPI_EXPORT int MPI_Igatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return igatherv_at(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
	                   root, comm, ICALL(request, REPORT_SITE()));
}

/* Whether a neighbourhood collective's buffers are valid for comm's
 * topology: `send` one block (allgather) or one per out-neighbour, recv one
 * per in-neighbour. */
static bool neighbor_blocks_ok(const struct coll_blocks *b, int n)
{
	if (!b->counts)
		return ok(b->count, b->type);
	if (b->types ? !b->bdispls : b->type == MPI_DATATYPE_NULL || !b->displs)
		return false;
	for (int i = 0; i < n; i++)
		if (!ok(b->counts[i], b->types ? b->types[i] : b->type))
			return false;
	return true;
}

static bool neighbor_ok(MPI_Comm comm, const struct coll_blocks *send, bool per_peer,
                        const struct coll_blocks *recv)
{
	int nin = 0, nout = 0;
	return comm != MPI_COMM_NULL && coll_neighbor_counts(comm, &nin, &nout) == MPI_SUCCESS &&
	       neighbor_blocks_ok(send, per_peer ? nout : 1) && neighbor_blocks_ok(recv, nin);
}

/* A neighbourhood collective as a graph (coll_ineighbor()): the call's
 * result, or COLL_ENOTAGS when the MPI's own must run it. */
static int neighbor_graph(bool alltoall, struct coll_blocks send, struct coll_blocks recv,
                          MPI_Comm comm, const struct call *c)
{
	/* A datatype per neighbour (alltoallw's, and the large-count forms'
	 * blocks: struct wide), or one for all (the counts succeeded in
	 * neighbor_ok()). */
	int nin = 0, nout = 0;
	if (send.types || recv.types)
		coll_neighbor_counts(comm, &nin, &nout);
	GRAPH_BEGIN(c);
	if (send.types) /* .type is unset */
		send.types = GRAPH_TYPES(c, send.types, nout);
	else
		send.type = GRAPH_TYPE(c, send.type);
	if (recv.types)
		recv.types = GRAPH_TYPES(c, recv.types, nin);
	else
		recv.type = GRAPH_TYPE(c, recv.type);
	int rc = coll_ineighbor(alltoall, send, recv, comm, c->request);
	GRAPH_END(c, comm, rc);
	return rc;
}

/* v: the allgatherv (recvcounts and displs), else recvcount. */
static int ineighbor_allgather_at(bool v, const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, const int *recvcounts, int recvcount,
                                  const int *displs, MPI_Datatype recvtype, MPI_Comm comm,
                                  const struct call *c)
{
	pmpi_ensure();
	struct coll_blocks send = uniform(sendbuf, sendcount, sendtype),
	                   recv = v ? varied(recvbuf, recvcounts, displs, recvtype)
	                            : uniform(recvbuf, recvcount, recvtype);
	if (USE_GRAPH(PMPI_COLL_INEIGHBOR_ALLGATHER, comm, 0,
	              (!v || recvcounts) && neighbor_ok(comm, &send, false, &recv))) {
		int rc = neighbor_graph(false, send, recv, comm, c);
		if (rc != COLL_ENOTAGS)
			return coll_report(REPORT_INEIGHBOR, -1, MPI_DATATYPE_NULL, rc, c);
	}
	int rc = v ? NATIVE(c,
	                    PMPI_Ineighbor_allgatherv(sendbuf, sendcount, sendtype, recvbuf,
	                                              recvcounts, displs, recvtype, comm,
	                                              c->request),
	                    Neighbor_allgatherv_init,
	                    (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
	                     comm, c->info, c->request))
	           : NATIVE(c,
	                    PMPI_Ineighbor_allgather(sendbuf, sendcount, sendtype, recvbuf,
	                                             recvcount, recvtype, comm, c->request),
	                    Neighbor_allgather_init,
	                    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
	                     c->info, c->request));
	return coll_report(REPORT_INEIGHBOR, -1, MPI_DATATYPE_NULL, rc, c);
}

PMPI_EXPORT int MPI_Ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                        void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                        MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ineighbor_allgather_at(false, sendbuf, sendcount, sendtype, recvbuf, NULL, recvcount,
	                              NULL, recvtype, comm, ICALL(request, REPORT_SITE()));
}

PMPI_EXPORT int MPI_Ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                         void *recvbuf, const int recvcounts[], const int displs[],
                                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ineighbor_allgather_at(true, sendbuf, sendcount, sendtype, recvbuf, recvcounts, 0,
	                              displs, recvtype, comm, ICALL(request, REPORT_SITE()));
}

/* v: the alltoallv (counts and displacements), else sendcount, recvcount. */
static int ineighbor_alltoall_at(bool v, const void *sendbuf, const int *sendcounts, int sendcount,
                                 const int *sdispls, MPI_Datatype sendtype, void *recvbuf,
                                 const int *recvcounts, int recvcount, const int *rdispls,
                                 MPI_Datatype recvtype, MPI_Comm comm, const struct call *c)
{
	pmpi_ensure();
	struct coll_blocks send = v ? varied(sendbuf, sendcounts, sdispls, sendtype)
	                            : uniform(sendbuf, sendcount, sendtype),
	                   recv = v ? varied(recvbuf, recvcounts, rdispls, recvtype)
	                            : uniform(recvbuf, recvcount, recvtype);
	if (USE_GRAPH(PMPI_COLL_INEIGHBOR_ALLTOALL, comm, 0,
	              (!v || (sendcounts && recvcounts)) &&
	                      neighbor_ok(comm, &send, true, &recv))) {
		int rc = neighbor_graph(true, send, recv, comm, c);
		if (rc != COLL_ENOTAGS)
			return coll_report(REPORT_INEIGHBOR, -1, MPI_DATATYPE_NULL, rc, c);
	}
	int rc = v ? NATIVE(c,
	                    PMPI_Ineighbor_alltoallv(sendbuf, sendcounts, sdispls, sendtype,
	                                             recvbuf, recvcounts, rdispls, recvtype, comm,
	                                             c->request),
	                    Neighbor_alltoallv_init,
	                    (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
	                     recvtype, comm, c->info, c->request))
	           : NATIVE(c,
	                    PMPI_Ineighbor_alltoall(sendbuf, sendcount, sendtype, recvbuf,
	                                            recvcount, recvtype, comm, c->request),
	                    Neighbor_alltoall_init,
	                    (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
	                     c->info, c->request));
	return coll_report(REPORT_INEIGHBOR, -1, MPI_DATATYPE_NULL, rc, c);
}

PMPI_EXPORT int MPI_Ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                       void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                       MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ineighbor_alltoall_at(false, sendbuf, NULL, sendcount, NULL, sendtype, recvbuf, NULL,
	                             recvcount, NULL, recvtype, comm,
	                             ICALL(request, REPORT_SITE()));
}

PMPI_EXPORT int MPI_Ineighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                                        const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                        const int recvcounts[], const int rdispls[],
                                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ineighbor_alltoall_at(true, sendbuf, sendcounts, 0, sdispls, sendtype, recvbuf,
	                             recvcounts, 0, rdispls, recvtype, comm,
	                             ICALL(request, REPORT_SITE()));
}

/* Each block its own datatype at a byte displacement (a persistent graph
 * holds a duplicate of each derived one). */
/* MPI_Ineighbor_alltoallw as a graph when PIANO_COLL takes it: returns
 * COLL_NOT_TAKEN when the MPI's own is to run it. */
static int ineighbor_alltoallw_graph(const void *sendbuf, const int sendcounts[],
                                     const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                     void *recvbuf, const int recvcounts[],
                                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                     MPI_Comm comm, const struct call *c)
{
	struct coll_blocks send = { .base = sendbuf,
		                    .counts = sendcounts,
		                    .types = sendtypes,
		                    .bdispls = sdispls },
	                   recv = { .base = recvbuf,
		                    .counts = recvcounts,
		                    .types = recvtypes,
		                    .bdispls = rdispls };
	if (USE_GRAPH(PMPI_COLL_INEIGHBOR_ALLTOALL, comm, 0,
	              sendcounts && recvcounts && sendtypes && recvtypes &&
	                      neighbor_ok(comm, &send, true, &recv))) {
		int rc = neighbor_graph(true, send, recv, comm, c);
		if (rc != COLL_ENOTAGS)
			return coll_report(REPORT_INEIGHBOR, -1, MPI_DATATYPE_NULL, rc, c);
	}
	return COLL_NOT_TAKEN;
}

static int ineighbor_alltoallw_at(const void *sendbuf, const int sendcounts[],
                                  const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                  void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                  const MPI_Datatype recvtypes[], MPI_Comm comm,
                                  const struct call *c)
{
	pmpi_ensure();
	int rc = ineighbor_alltoallw_graph(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
	                                   recvcounts, rdispls, recvtypes, comm, c);
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return coll_report(REPORT_INEIGHBOR, -1, MPI_DATATYPE_NULL,
	                   NATIVE(c,
	                          PMPI_Ineighbor_alltoallw(sendbuf, sendcounts, sdispls, sendtypes,
	                                                   recvbuf, recvcounts, rdispls, recvtypes,
	                                                   comm, c->request),
	                          Neighbor_alltoallw_init,
	                          (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
	                           rdispls, recvtypes, comm, c->info, c->request)),
	                   c);
}

int pmpi_ineighbor_alltoallw_graph(const void *sendbuf, const int sendcounts[],
                                   const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                   void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                   const MPI_Datatype recvtypes[], MPI_Comm comm,
                                   const MPI_Info *init, MPI_Request *request, const void *site)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	return ineighbor_alltoallw_graph(sendbuf, sendcounts, sdispls, sendtypes, recvbuf,
	                                 recvcounts, rdispls, recvtypes, comm,
	                                 FCALL(request, init, site));
}

int pmpi_neighbor_counts(MPI_Comm comm, int *nin, int *nout)
{
	return coll_neighbor_counts(comm, nin, nout);
}

PMPI_EXPORT int MPI_Ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                                        const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                        void *recvbuf, const int recvcounts[],
                                        const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                        MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ineighbor_alltoallw_at(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
	                              rdispls, recvtypes, comm, ICALL(request, REPORT_SITE()));
}

static int ireduce_at(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                      MPI_Op op, int root, MPI_Comm comm, const struct call *c)
{
	pmpi_ensure();
	if (USE_GRAPH(PMPI_COLL_IREDUCE, comm, root,
	              ok(count, datatype) && op != MPI_OP_NULL && op_holdable(op))) {
		GRAPH_BEGIN(c);
		int rc = coll_ireduce(sendbuf, recvbuf, count, GRAPH_TYPE(c, datatype),
		                      GRAPH_OP(c, op), root, comm, pmpi_g.coll_segment, c->request);
		GRAPH_END(c, comm, rc);
		if (rc != COLL_ENOTAGS)
			return coll_report(REPORT_IREDUCE, count, datatype, rc, c);
	}
	return coll_report(REPORT_IREDUCE, count, datatype,
	                   NATIVE_REDUCTION(c, Ireduce, Reduce, sendbuf, recvbuf, count, datatype,
	                                    op, root, comm),
	                   c);
}

PMPI_EXPORT int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                            MPI_Op op, int root, MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ireduce_at(sendbuf, recvbuf, count, datatype, op, root, comm,
	                  ICALL(request, REPORT_SITE()));
}

/*
 * Whether a reduce-scatter's blocks are valid and together fit an int (the
 * allreduce's count): `counts` the size counts, or NULL for size blocks of
 * `count`; their sum in *total. MPI requires the counts to be the same on
 * every rank.
 */
static bool scatter_total_ok(MPI_Comm comm, const int *counts, int count, int *total)
{
	int size = 0;
	if (comm == MPI_COMM_NULL || PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
		return false;
	if (!counts) {
		if (count < 0 || count > INT_MAX / size)
			return false;
		*total = count * size;
		return true;
	}
	*total = 0;
	for (int i = 0; i < size; i++) {
		if (counts[i] < 0 || counts[i] > INT_MAX - *total)
			return false;
		*total += counts[i];
	}
	return true;
}

/*
 * PIANO_COLL=auto's further conditions on a reduce-scatter of `total`
 * elements of `type` (docs/coll.md, "The default"): a commutative operation
 * (recursive halving; the pairwise exchange of the others loses to MPICH's
 * own on small vectors) and at least PIANO_COLL_AUTO_MIN bytes in all.
 * Values equal on every rank, so every rank takes the same path.
 */
static bool auto_ok(int total, MPI_Datatype type, MPI_Op op)
{
	if (!pmpi_g.coll_auto)
		return true;
	int commute = 0, tsize = 0;
	return PMPI_Op_commutative(op, &commute) == MPI_SUCCESS && commute &&
	       PMPI_Type_size(type, &tsize) == MPI_SUCCESS &&
	       (long long)total * tsize >= pmpi_g.coll_auto_min;
}

/* MPI_Ireduce_scatter as a graph when PIANO_COLL takes it: returns
 * COLL_NOT_TAKEN when the MPI's own is to run it. The graph reads
 * recvcounts only here. */
static int ireduce_scatter_graph(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                 const struct call *c)
{
	int total = 0;
	if (USE_GRAPH(PMPI_COLL_IREDUCE_SCATTER, comm, 0,
	              recvcounts && datatype != MPI_DATATYPE_NULL && op != MPI_OP_NULL &&
	                      sendbuf != recvbuf && scatter_total_ok(comm, recvcounts, 0, &total) &&
	                      op_holdable(op) && auto_ok(total, datatype, op))) {
		GRAPH_BEGIN(c);
		int rc = coll_ireduce_scatter(sendbuf, recvbuf, recvcounts, GRAPH_TYPE(c, datatype),
		                              GRAPH_OP(c, op), comm, pmpi_g.coll_segment,
		                              c->request);
		GRAPH_END(c, comm, rc);
		if (rc != COLL_ENOTAGS)
			return coll_report(REPORT_IREDUCE_SCATTER, -1, MPI_DATATYPE_NULL, rc, c);
	}
	return COLL_NOT_TAKEN;
}

static int ireduce_scatter_at(const void *sendbuf, void *recvbuf, const int recvcounts[],
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, const struct call *c)
{
	pmpi_ensure();
	int rc = ireduce_scatter_graph(sendbuf, recvbuf, recvcounts, datatype, op, comm, c);
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return coll_report(REPORT_IREDUCE_SCATTER, -1, MPI_DATATYPE_NULL,
	                   NATIVE(c,
	                          PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op,
	                                               comm, c->request),
	                          Reduce_scatter_init,
	                          (sendbuf, recvbuf, recvcounts, datatype, op, comm, c->info,
	                           c->request)),
	                   c);
}

PMPI_EXPORT int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                    MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ireduce_scatter_at(sendbuf, recvbuf, recvcounts, datatype, op, comm,
	                          ICALL(request, REPORT_SITE()));
}

static int ireduce_scatter_block_at(const void *sendbuf, void *recvbuf, int recvcount,
                                    MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                    const struct call *c)
{
	pmpi_ensure();
	int total = 0;
	if (USE_GRAPH(PMPI_COLL_IREDUCE_SCATTER_BLOCK, comm, 0,
	              ok(recvcount, datatype) && op != MPI_OP_NULL && sendbuf != recvbuf &&
	                      scatter_total_ok(comm, NULL, recvcount, &total) && op_holdable(op) &&
	                      auto_ok(total, datatype, op))) {
		GRAPH_BEGIN(c);
		int rc = coll_ireduce_scatter_block(sendbuf, recvbuf, recvcount,
		                                    GRAPH_TYPE(c, datatype), GRAPH_OP(c, op), comm,
		                                    pmpi_g.coll_segment, c->request);
		GRAPH_END(c, comm, rc);
		if (rc != COLL_ENOTAGS)
			return coll_report(REPORT_IREDUCE_SCATTER_BLOCK, recvcount, datatype, rc,
			                   c);
	}
	return coll_report(REPORT_IREDUCE_SCATTER_BLOCK, recvcount, datatype,
	                   NATIVE(c,
	                          PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype,
	                                                     op, comm, c->request),
	                          Reduce_scatter_block_init,
	                          (sendbuf, recvbuf, recvcount, datatype, op, comm, c->info,
	                           c->request)),
	                   c);
}

PMPI_EXPORT int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                          MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ireduce_scatter_block_at(sendbuf, recvbuf, recvcount, datatype, op, comm,
	                                ICALL(request, REPORT_SITE()));
}

static int iscan_at(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm, const struct call *c)
{
	pmpi_ensure();
	if (USE_GRAPH(PMPI_COLL_ISCAN, comm, 0,
	              ok(count, datatype) && op != MPI_OP_NULL && sendbuf != recvbuf &&
	                      op_holdable(op))) {
		GRAPH_BEGIN(c);
		int rc = coll_iscan(sendbuf, recvbuf, count, GRAPH_TYPE(c, datatype),
		                    GRAPH_OP(c, op), comm, pmpi_g.coll_segment, c->request);
		GRAPH_END(c, comm, rc);
		if (rc != COLL_ENOTAGS)
			return coll_report(REPORT_ISCAN, count, datatype, rc, c);
	}
	return coll_report(REPORT_ISCAN, count, datatype,
	                   NATIVE_REDUCTION(c, Iscan, Scan, sendbuf, recvbuf, count, datatype, op,
	                                    comm),
	                   c);
}

PMPI_EXPORT int MPI_Iscan(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                          MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iscan_at(sendbuf, recvbuf, count, datatype, op, comm, ICALL(request, REPORT_SITE()));
}

static int iscatter_at(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                       const struct call *c)
{
	pmpi_ensure();
	struct coll_blocks send = uniform(sendbuf, sendcount, sendtype);
	int count = recvbuf == MPI_IN_PLACE ? sendcount : recvcount;
	MPI_Datatype type = recvbuf == MPI_IN_PLACE ? sendtype : recvtype;
	if (comm != MPI_COMM_NULL &&
	    USE_GRAPH(PMPI_COLL_ISCATTER, comm, root,
	              rooted_ok(comm, root, recvbuf == MPI_IN_PLACE, &send, recvcount, recvtype))) {
		GRAPH_BEGIN(c);
		bool at_root = is_root(comm, root);
		send.type = GRAPH_TYPE_IF(c, at_root, sendtype);
		int rc = coll_iscatter(send, recvbuf, recvcount,
		                       GRAPH_TYPE_IF(c, !at_root || recvbuf != MPI_IN_PLACE,
		                                     recvtype),
		                       root, comm, c->request);
		GRAPH_END(c, comm, rc);
		if (rc != COLL_ENOTAGS)
			return coll_report(REPORT_ISCATTER, count, type, rc, c);
	}
	return coll_report(REPORT_ISCATTER, count, type,
	                   NATIVE(c,
	                          PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount,
	                                        recvtype, root, comm, c->request),
	                          Scatter_init,
	                          (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
	                           comm, c->info, c->request)),
	                   c);
}

PMPI_EXPORT int MPI_Iscatter(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, int recvcount, MPI_Datatype recvtype, int root,
                             MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iscatter_at(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
	                   ICALL(request, REPORT_SITE()));
}

/* MPI_Iscatterv as a graph, the root's blocks as the int form or the
 * large-count form (struct wide) gives them: COLL_NOT_TAKEN when the MPI's
 * own is to run it. The graph reads the blocks' arrays only here. */
static int iscatterv_graph(struct coll_blocks send, void *recvbuf, int recvcount,
                           MPI_Datatype recvtype, int root, MPI_Comm comm, const struct call *c)
{
	int size = 0;
	if (comm == MPI_COMM_NULL ||
	    !USE_GRAPH(PMPI_COLL_ISCATTER, comm, root,
	               rooted_ok(comm, root, recvbuf == MPI_IN_PLACE, &send, recvcount, recvtype) &&
	                       PMPI_Comm_size(comm, &size) == MPI_SUCCESS))
		return COLL_NOT_TAKEN;
	GRAPH_BEGIN(c);
	bool at_root = is_root(comm, root);
	if (at_root)
		GRAPH_BLOCKS(c, send, size);
	int rc = coll_iscatter(send, recvbuf, recvcount,
	                       GRAPH_TYPE_IF(c, !at_root || recvbuf != MPI_IN_PLACE, recvtype),
	                       root, comm, c->request);
	GRAPH_END(c, comm, rc);
	if (rc == COLL_ENOTAGS)
		return COLL_NOT_TAKEN;
	return coll_report(REPORT_ISCATTERV, -1, MPI_DATATYPE_NULL, rc, c);
}

static int iscatterv_at(const void *sendbuf, const int sendcounts[], const int displs[],
                        MPI_Datatype sendtype, void *recvbuf, int recvcount, MPI_Datatype recvtype,
                        int root, MPI_Comm comm, const struct call *c)
{
	pmpi_ensure();
	int rc = iscatterv_graph(varied(sendbuf, sendcounts, displs, sendtype), recvbuf, recvcount,
	                         recvtype, root, comm, c);
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return coll_report(REPORT_ISCATTERV, -1, MPI_DATATYPE_NULL,
	                   NATIVE(c,
	                          PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf,
	                                         recvcount, recvtype, root, comm, c->request),
	                          Scatterv_init,
	                          (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
	                           recvtype, root, comm, c->info, c->request)),
	                   c);
}

PMPI_EXPORT int MPI_Iscatterv(const void *sendbuf, const int sendcounts[], const int displs[],
                              MPI_Datatype sendtype, void *recvbuf, int recvcount,
                              MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iscatterv_at(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
	                    root, comm, ICALL(request, REPORT_SITE()));
}

#if PIANO_PCOLL
/*
 * Persistent collectives. Built as graphs the way their non-blocking forms
 * are (PIANO_COLL names the non-blocking form: graph:ibcast also runs
 * MPI_Bcast_init). The application may free its datatypes and its MPI_Op
 * while the request lives: each derived datatype the graph names,
 * alltoallw's arrays included, is duplicated at the init, and a
 * user-defined operation is held (op_hold.h); one the layer cannot hold
 * (created behind its back) leaves the collective to the MPI.
 */
PMPI_EXPORT int PCOLL_NAME(Allgather_init)(const void *sendbuf, int sendcount,
                                           MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                           MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                           MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iallgather_at(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
	                     PCALL(request, info));
}

PMPI_EXPORT int PCOLL_NAME(Allgatherv_init)(const void *sendbuf, int sendcount,
                                            MPI_Datatype sendtype, void *recvbuf,
                                            const int recvcounts[], const int displs[],
                                            MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                            MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iallgatherv_at(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
	                      comm, PCALL(request, info));
}

PMPI_EXPORT int PCOLL_NAME(Allreduce_init)(const void *sendbuf, void *recvbuf, int count,
                                           MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                           MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iallreduce_at(sendbuf, recvbuf, count, datatype, op, comm, PCALL(request, info));
}

PMPI_EXPORT int PCOLL_NAME(Alltoall_init)(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                          void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                          MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ialltoall_at(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
	                    PCALL(request, info));
}

PMPI_EXPORT int PCOLL_NAME(Alltoallv_init)(const void *sendbuf, const int sendcounts[],
                                           const int sdispls[], MPI_Datatype sendtype,
                                           void *recvbuf, const int recvcounts[],
                                           const int rdispls[], MPI_Datatype recvtype,
                                           MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ialltoallv_at(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
	                     recvtype, comm, PCALL(request, info));
}

PMPI_EXPORT int PCOLL_NAME(Barrier_init)(MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ibarrier_at(comm, PCALL(request, info));
}

PMPI_EXPORT int PCOLL_NAME(Bcast_init)(void *buffer, int count, MPI_Datatype datatype, int root,
                                       MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ibcast_at(buffer, count, datatype, root, comm, PCALL(request, info));
}

PMPI_EXPORT int PCOLL_NAME(Exscan_init)(const void *sendbuf, void *recvbuf, int count,
                                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                        MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iexscan_at(sendbuf, recvbuf, count, datatype, op, comm, PCALL(request, info));
}

PMPI_EXPORT int PCOLL_NAME(Gather_init)(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                        void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                        int root, MPI_Comm comm, MPI_Info info,
                                        MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return igather_at(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
	                  PCALL(request, info));
}

PMPI_EXPORT int PCOLL_NAME(Gatherv_init)(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                         void *recvbuf, const int recvcounts[], const int displs[],
                                         MPI_Datatype recvtype, int root, MPI_Comm comm,
                                         MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return igatherv_at(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
	                   root, comm, PCALL(request, info));
}

PMPI_EXPORT int PCOLL_NAME(Reduce_init)(const void *sendbuf, void *recvbuf, int count,
                                        MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                                        MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ireduce_at(sendbuf, recvbuf, count, datatype, op, root, comm, PCALL(request, info));
}

PMPI_EXPORT int PCOLL_NAME(Reduce_scatter_init)(const void *sendbuf, void *recvbuf,
                                                const int recvcounts[], MPI_Datatype datatype,
                                                MPI_Op op, MPI_Comm comm, MPI_Info info,
                                                MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ireduce_scatter_at(sendbuf, recvbuf, recvcounts, datatype, op, comm,
	                          PCALL(request, info));
}

PMPI_EXPORT int PCOLL_NAME(Reduce_scatter_block_init)(const void *sendbuf, void *recvbuf,
                                                      int recvcount, MPI_Datatype datatype,
                                                      MPI_Op op, MPI_Comm comm, MPI_Info info,
                                                      MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ireduce_scatter_block_at(sendbuf, recvbuf, recvcount, datatype, op, comm,
	                                PCALL(request, info));
}

PMPI_EXPORT int PCOLL_NAME(Scan_init)(const void *sendbuf, void *recvbuf, int count,
                                      MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                      MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iscan_at(sendbuf, recvbuf, count, datatype, op, comm, PCALL(request, info));
}

PMPI_EXPORT int PCOLL_NAME(Scatter_init)(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                         void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                         int root, MPI_Comm comm, MPI_Info info,
                                         MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iscatter_at(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm,
	                   PCALL(request, info));
}

PMPI_EXPORT int PCOLL_NAME(Neighbor_allgather_init)(const void *sendbuf, int sendcount,
                                                    MPI_Datatype sendtype, void *recvbuf,
                                                    int recvcount, MPI_Datatype recvtype,
                                                    MPI_Comm comm, MPI_Info info,
                                                    MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ineighbor_allgather_at(false, sendbuf, sendcount, sendtype, recvbuf, NULL, recvcount,
	                              NULL, recvtype, comm, PCALL(request, info));
}

PMPI_EXPORT int PCOLL_NAME(Neighbor_allgatherv_init)(const void *sendbuf, int sendcount,
                                                     MPI_Datatype sendtype, void *recvbuf,
                                                     const int recvcounts[], const int displs[],
                                                     MPI_Datatype recvtype, MPI_Comm comm,
                                                     MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ineighbor_allgather_at(true, sendbuf, sendcount, sendtype, recvbuf, recvcounts, 0,
	                              displs, recvtype, comm, PCALL(request, info));
}

PMPI_EXPORT int PCOLL_NAME(Neighbor_alltoall_init)(const void *sendbuf, int sendcount,
                                                   MPI_Datatype sendtype, void *recvbuf,
                                                   int recvcount, MPI_Datatype recvtype,
                                                   MPI_Comm comm, MPI_Info info,
                                                   MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ineighbor_alltoall_at(false, sendbuf, NULL, sendcount, NULL, sendtype, recvbuf, NULL,
	                             recvcount, NULL, recvtype, comm, PCALL(request, info));
}

PMPI_EXPORT int PCOLL_NAME(Neighbor_alltoallv_init)(const void *sendbuf, const int sendcounts[],
                                                    const int sdispls[], MPI_Datatype sendtype,
                                                    void *recvbuf, const int recvcounts[],
                                                    const int rdispls[], MPI_Datatype recvtype,
                                                    MPI_Comm comm, MPI_Info info,
                                                    MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ineighbor_alltoall_at(true, sendbuf, sendcounts, 0, sdispls, sendtype, recvbuf,
	                             recvcounts, 0, rdispls, recvtype, comm, PCALL(request, info));
}

PMPI_EXPORT int PCOLL_NAME(Scatterv_init)(const void *sendbuf, const int sendcounts[],
                                          const int displs[], MPI_Datatype sendtype, void *recvbuf,
                                          int recvcount, MPI_Datatype recvtype, int root,
                                          MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iscatterv_at(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
	                    root, comm, PCALL(request, info));
}

PMPI_EXPORT int PCOLL_NAME(Alltoallw_init)(const void *sendbuf, const int sendcounts[],
                                           const int sdispls[], const MPI_Datatype sendtypes[],
                                           void *recvbuf, const int recvcounts[],
                                           const int rdispls[], const MPI_Datatype recvtypes[],
                                           MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ialltoallw_at(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
	                     recvtypes, comm, PCALL(request, info));
}

PMPI_EXPORT int PCOLL_NAME(Neighbor_alltoallw_init)(const void *sendbuf, const int sendcounts[],
                                                    const MPI_Aint sdispls[],
                                                    const MPI_Datatype sendtypes[], void *recvbuf,
                                                    const int recvcounts[],
                                                    const MPI_Aint rdispls[],
                                                    const MPI_Datatype recvtypes[], MPI_Comm comm,
                                                    MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ineighbor_alltoallw_at(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts,
	                              rdispls, recvtypes, comm, PCALL(request, info));
}
#endif

#if MPI_VERSION >= 4
/*
 * MPI-4 large-count forms (name_c, MPI_Count counts and MPI_Aint
 * displacements). A rank may call one form while another calls the other
 * (the type signatures match, not the counts), so a call whose counts fit
 * an int takes the int form's path, graph included, and every collective
 * but the reductions takes it whatever its values where a graph may run it:
 * a count past INT_MAX as one element of a contiguous datatype (struct
 * wide). A reduction's count and datatype are the same on every rank, and
 * its operation applies element by element: MPI_Ireduce, MPI_Iallreduce,
 * MPI_Iscan and MPI_Iexscan take their MPI_Count as it is, and a graph past
 * INT_MAX is made of runs of at most INT_MAX elements (coll_reduce.c). The
 * reduce-scatters past INT_MAX (a block, or the counts' sum) run on the
 * MPI's schedule on every rank, and piano tracks the request; should
 * PIANO_COLL name that collective, it is said once.
 */
static bool fits(MPI_Count count) { return count >= 0 && count <= INT_MAX; }

static void large_on_mpi(unsigned bit, const char *name)
{
	static _Atomic unsigned warned;
	if (!(pmpi_g.coll_graph & bit) || !pmpi_g.threaded ||
	    (atomic_fetch_or_explicit(&warned, bit, memory_order_relaxed) & bit))
		return;
	pmpi_warn("%s: a reduce-scatter of counts past INT_MAX, or that sum past INT_MAX, runs "
	          "on the MPI's schedule, not as PIANO_COLL's graph",
	          name);
}

/* The MPI's own large-count form of `name` (MPI_<name>_c), reported as
 * `rep` with (cnt, type), in a wrapper whose request argument is `request`
 * and call site `site`. */
#define LARGE_ON_MPI(bit, name, rep, cnt, type, args)                           \
	(pmpi_ensure(), large_on_mpi(bit, "MPI_" #name "_c"),                   \
	 coll_report(rep, cnt, type, coll_track(PMPI_##name##_c args, request), \
	             ICALL(request, site)))

/*
 * A large-count call's blocks as the graph takes them, whatever their
 * values, so that every rank makes the int form's choice: n blocks of
 * counts[i] elements of types[i] (types NULL: `type` for every block) at
 * displs[i], in extents of `type` (in bytes with types), become blocks with
 * a datatype each and byte displacements, as MPI_Ialltoallw's; a count
 * past INT_MAX becomes one element of a contiguous datatype of that many,
 * of the same type signature, so the messages match whichever form the
 * peers called. wide_free() frees the arrays and the datatypes made here
 * once the graph's call returned: the graph reads the arrays only in the
 * call and holds duplicates of the datatypes.
 */
struct wide {
	int *counts;
	MPI_Aint *displs;
	MPI_Datatype *types, *made;
	int nmade, cap;
	bool raised; /* a datatype call of the MPI's failed: the MPI raised it */
};

static void wide_free(struct wide *w)
{
	for (int i = 0; i < w->nmade; i++)
		PMPI_Type_free(&w->made[i]);
	free(w->counts);
	free(w->displs);
	free(w->types);
	free(w->made);
	*w = (struct wide){ 0 };
}

/* count elements of type as an int count and a datatype; a negative count
 * stays invalid (-1) for the graph's checks to refuse, as does a null
 * datatype. */
static int wide_one(struct wide *w, MPI_Count count, MPI_Datatype type, int *n, MPI_Datatype *t)
{
	*t = type;
	if (count <= INT_MAX || type == MPI_DATATYPE_NULL) {
		*n = fits(count) ? (int)count : -1;
		return MPI_SUCCESS;
	}
	if (w->nmade == w->cap) {
		int cap = w->cap ? 2 * w->cap : 4;
		MPI_Datatype *m = realloc(w->made, sizeof(*m) * (size_t)cap);
		if (!m)
			return MPI_ERR_NO_MEM;
		w->made = m;
		w->cap = cap;
	}
	MPI_Datatype c;
	int rc = PMPI_Type_contiguous_c(count, type, &c);
	if (rc != MPI_SUCCESS) {
		w->raised = true;
		return rc;
	}
	rc = PMPI_Type_commit(&c);
	if (rc != MPI_SUCCESS) {
		w->raised = true;
		PMPI_Type_free(&c);
		return rc;
	}
	w->made[w->nmade++] = c;
	*n = 1;
	*t = c;
	return MPI_SUCCESS;
}

/* n blocks at base (see struct wide) in *out; missing arrays or datatype
 * leave *out invalid, for the graph's checks to refuse and the MPI to
 * report. */
static int wide_blocks(struct wide *w, int n, const void *base, const MPI_Count *counts,
                       const MPI_Aint *displs, MPI_Datatype type, const MPI_Datatype *types,
                       struct coll_blocks *out)
{
	*out = (struct coll_blocks){ .base = base, .count = -1, .type = MPI_DATATYPE_NULL };
	if (!counts || !displs || (!types && type == MPI_DATATYPE_NULL))
		return MPI_SUCCESS;
	size_t k = n > 0 ? (size_t)n : 1;
	w->counts = malloc(sizeof(*w->counts) * k);
	w->displs = malloc(sizeof(*w->displs) * k);
	w->types = malloc(sizeof(*w->types) * k);
	if (!w->counts || !w->displs || !w->types)
		return MPI_ERR_NO_MEM;
	MPI_Aint lb = 0, ext = 1;
	if (!types) {
		int rc = PMPI_Type_get_extent(type, &lb, &ext);
		if (rc != MPI_SUCCESS) {
			w->raised = true;
			return rc;
		}
	}
	for (int i = 0; i < n; i++) {
		int rc = wide_one(w, counts[i], types ? types[i] : type, &w->counts[i],
		                  &w->types[i]);
		if (rc != MPI_SUCCESS)
			return rc;
		w->displs[i] = types ? displs[i] : displs[i] * ext;
	}
	out->counts = w->counts;
	out->types = w->types;
	out->bdispls = w->displs;
	return MPI_SUCCESS;
}

/*
 * A conversion for the graph failed. piano's own failure (memory) is raised
 * as the graph's would be (graph_failed()); a datatype call of the MPI's
 * raised its error itself, where the MPI raises such errors, and a second
 * handler on comm would report one failure twice: only the request is
 * nulled there.
 */
static int conversion_failed(MPI_Comm comm, int rc, bool raised, const struct call *c)
{
	if (!raised)
		return graph_failed(comm, rc, c);
	*c->request = MPI_REQUEST_NULL;
	return rc;
}

/* The number of blocks of a large-count call on comm (its size), or false
 * where no graph may run it: PIANO_COLL leaves the collective to the MPI,
 * comm is null or an inter-communicator (its arrays have the remote group's
 * size), or it has no shadow to run on (graph_chosen()). Asked before
 * anything is converted, so that a conversion fails only where a graph was
 * to run and the MPI's own call, which needs none, runs otherwise. Every
 * rank answers alike. */
static bool wide_size(unsigned bit, MPI_Comm comm, int *size)
{
	return graph_may(bit, comm) && PMPI_Comm_size(comm, size) == MPI_SUCCESS &&
	       coll_shadow_allowed(comm, *size, pmpi_g.coll_auto);
}

/* The large-count `v` and `w` forms as graphs (COLL_NOT_TAKEN: the MPI's
 * own _c form is to run the call, with the application's arrays). */
static int iallgatherv_c_graph(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                               MPI_Datatype recvtype, MPI_Comm comm, const struct call *c)
{
	int size = 0, scount = 0;
	MPI_Datatype stype = sendtype;
	if (!wide_size(PMPI_COLL_IALLGATHER, comm, &size))
		return COLL_NOT_TAKEN;
	struct wide w = { 0 };
	struct coll_blocks recv;
	int rc = wide_blocks(&w, size, recvbuf, recvcounts, displs, recvtype, NULL, &recv);
	if (rc == MPI_SUCCESS && sendbuf != MPI_IN_PLACE)
		rc = wide_one(&w, sendcount, sendtype, &scount, &stype);
	rc = rc == MPI_SUCCESS ? iallgatherv_graph(sendbuf, scount, stype, recv, comm, c)
	                       : conversion_failed(comm, rc, w.raised, c);
	wide_free(&w);
	return rc;
}

/* Alltoallv (types NULL) and alltoallw (a datatype per block). */
static int ialltoall_c_graph(int kind, const void *sendbuf, const MPI_Count sendcounts[],
                             const MPI_Aint sdispls[], MPI_Datatype sendtype,
                             const MPI_Datatype sendtypes[], void *recvbuf,
                             const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                             MPI_Datatype recvtype, const MPI_Datatype recvtypes[], MPI_Comm comm,
                             const struct call *c)
{
	int size = 0;
	if (!wide_size(PMPI_COLL_IALLTOALL, comm, &size))
		return COLL_NOT_TAKEN;
	/* A missing array of datatypes leaves its blocks invalid, for the
	 * graph's checks to refuse and the MPI to report. */
	bool w_form = kind == REPORT_IALLTOALLW;
	struct wide ws = { 0 }, wr = { 0 };
	struct coll_blocks send = { .base = sendbuf, .type = MPI_DATATYPE_NULL },
	                   recv = { .base = recvbuf, .type = MPI_DATATYPE_NULL };
	int rc = MPI_SUCCESS;
	/* In place, the send arguments are ignored. */
	if (sendbuf != MPI_IN_PLACE && (!w_form || sendtypes))
		rc = wide_blocks(&ws, size, sendbuf, sendcounts, sdispls, sendtype, sendtypes,
		                 &send);
	if (rc == MPI_SUCCESS && (!w_form || recvtypes))
		rc = wide_blocks(&wr, size, recvbuf, recvcounts, rdispls, recvtype, recvtypes,
		                 &recv);
	rc = rc == MPI_SUCCESS ? ialltoall_blocks_graph(kind, send, recv, comm, c)
	                       : conversion_failed(comm, rc, ws.raised || wr.raised, c);
	wide_free(&ws);
	wide_free(&wr);
	return rc;
}

/* A gatherv's or scatterv's sides: the root's blocks in *many (ignored off
 * the root), and the rank's own count and datatype in *n, *t (ignored at the
 * root in place). */
static int wide_rooted(struct wide *w, int size, bool at_root, bool in_place, const void *base,
                       const MPI_Count *counts, const MPI_Aint *displs, MPI_Datatype type,
                       MPI_Count one, MPI_Datatype one_type, struct coll_blocks *many, int *n,
                       MPI_Datatype *t)
{
	*many = (struct coll_blocks){ .base = base, .type = MPI_DATATYPE_NULL };
	*n = 0;
	*t = one_type;
	int rc = at_root ? wide_blocks(w, size, base, counts, displs, type, NULL, many)
	                 : MPI_SUCCESS;
	if (rc == MPI_SUCCESS && !(at_root && in_place))
		rc = wide_one(w, one, one_type, n, t);
	return rc;
}

static int igatherv_c_graph(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                            MPI_Datatype recvtype, int root, MPI_Comm comm, const struct call *c)
{
	int size = 0, n;
	if (!wide_size(PMPI_COLL_IGATHER, comm, &size))
		return COLL_NOT_TAKEN;
	struct wide w = { 0 };
	struct coll_blocks recv;
	MPI_Datatype t;
	int rc = wide_rooted(&w, size, is_root(comm, root), sendbuf == MPI_IN_PLACE, recvbuf,
	                     recvcounts, displs, recvtype, sendcount, sendtype, &recv, &n, &t);
	rc = rc == MPI_SUCCESS ? igatherv_graph(sendbuf, n, t, recv, root, comm, c)
	                       : conversion_failed(comm, rc, w.raised, c);
	wide_free(&w);
	return rc;
}

static int iscatterv_c_graph(const void *sendbuf, const MPI_Count sendcounts[],
                             const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf,
                             MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                             const struct call *c)
{
	int size = 0, n;
	if (!wide_size(PMPI_COLL_ISCATTER, comm, &size))
		return COLL_NOT_TAKEN;
	struct wide w = { 0 };
	struct coll_blocks send;
	MPI_Datatype t;
	int rc = wide_rooted(&w, size, is_root(comm, root), recvbuf == MPI_IN_PLACE, sendbuf,
	                     sendcounts, displs, sendtype, recvcount, recvtype, &send, &n, &t);
	rc = rc == MPI_SUCCESS ? iscatterv_graph(send, recvbuf, n, t, root, comm, c)
	                       : conversion_failed(comm, rc, w.raised, c);
	wide_free(&w);
	return rc;
}

/* The large-count neighbourhood collectives as graphs: the allgather's
 * one block to send and the blocks of both sides (struct wide, sized by
 * the topology's in- and out-neighbours), whatever their values
 * (COLL_NOT_TAKEN: the MPI's own _c form is to run the call). */
static int ineighbor_c_graph(bool alltoall, const void *sendbuf, MPI_Count sendcount,
                             const MPI_Count sendcounts[], const MPI_Aint sdispls[],
                             MPI_Datatype sendtype, const MPI_Datatype sendtypes[], void *recvbuf,
                             const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                             MPI_Datatype recvtype, const MPI_Datatype recvtypes[], MPI_Comm comm,
                             const struct call *c)
{
	unsigned bit = alltoall ? PMPI_COLL_INEIGHBOR_ALLTOALL : PMPI_COLL_INEIGHBOR_ALLGATHER;
	int nin = 0, nout = 0, n = 0, size = 0;
	/* Without a topology the MPI reports the error, as natively. */
	if (!wide_size(bit, comm, &size) || coll_neighbor_counts(comm, &nin, &nout) != MPI_SUCCESS)
		return COLL_NOT_TAKEN;
	struct wide ws = { 0 }, wr = { 0 };
	struct coll_blocks send = { .base = sendbuf, .type = MPI_DATATYPE_NULL }, recv;
	MPI_Datatype t = sendtype;
	int rc = alltoall ? wide_blocks(&ws, nout, sendbuf, sendcounts, sdispls, sendtype,
	                                sendtypes, &send)
	                  : wide_one(&ws, sendcount, sendtype, &n, &t);
	if (!alltoall)
		send = uniform(sendbuf, n, t);
	if (rc == MPI_SUCCESS)
		rc = wide_blocks(&wr, nin, recvbuf, recvcounts, rdispls, recvtype, recvtypes,
		                 &recv);
	if (rc == MPI_SUCCESS) {
		rc = COLL_NOT_TAKEN;
		if (USE_GRAPH(bit, comm, 0, neighbor_ok(comm, &send, alltoall, &recv))) {
			rc = neighbor_graph(alltoall, send, recv, comm, c);
			rc = rc == COLL_ENOTAGS
			             ? COLL_NOT_TAKEN
			             : coll_report(REPORT_INEIGHBOR, -1, MPI_DATATYPE_NULL, rc, c);
		}
	} else {
		rc = conversion_failed(comm, rc, ws.raised || wr.raised, c);
	}
	wide_free(&ws);
	wide_free(&wr);
	return rc;
}

/*
 * A large-count call with one count per buffer, some past INT_MAX, as the
 * int form's path takes it wherever a graph may run the collective: each
 * count past INT_MAX becomes one element of a contiguous datatype
 * (wide_one()), so that every rank makes the int form's choice whatever
 * its counts and whichever form it called. An argument the call ignores
 * (used false: in place, a root's argument on another rank) is passed as
 * it is, its count 0 where it does not fit: the graph never reads it.
 */
struct wide_arg {
	MPI_Count count;
	MPI_Datatype type;
	bool used;
	int n;          /* out: the int count */
	MPI_Datatype t; /* out: its datatype */
};

static struct wide_arg arg_of(MPI_Count count, MPI_Datatype type, bool used)
{
	return (struct wide_arg){ .count = count, .type = type, .used = used };
}

static int wide_args(unsigned bit, MPI_Comm comm, struct wide *w, struct wide_arg *a, int na)
{
	pmpi_ensure();
	/* Where the graph is sure to be chosen (graph_chosen(), but for the
	 * tags running out): otherwise the int path would hand the datatype
	 * made here to the MPI's own collective, and MPICH 4.0.2's own
	 * MPI_Allgather_init releases such a datatype once too often. Every
	 * rank answers alike. */
	int size = 0;
	if (!wide_size(bit, comm, &size))
		return COLL_NOT_TAKEN;
	for (int i = 0; i < na; i++) {
		a[i].n = fits(a[i].count) ? (int)a[i].count : 0;
		a[i].t = a[i].type;
		int rc = a[i].used ? wide_one(w, a[i].count, a[i].type, &a[i].n, &a[i].t)
		                   : MPI_SUCCESS;
		if (rc != MPI_SUCCESS)
			return rc;
	}
	return MPI_SUCCESS;
}

/* In a wrapper: returns what `call` (the int form's path, reading the
 * array `args` of struct wide_arg) returned where wide_args() let a graph
 * run the collective; otherwise goes on, to the MPI's own. A conversion
 * that failed ends the call for c_ (conversion_failed()). The datatypes
 * made here are freed once `call` returned: the graph holds duplicates,
 * and the MPI's int form keeps what it needs of a freed one. */
#define WIDE_AT(bit, comm, args, c_, call)                                          \
	do {                                                                        \
		struct wide wide_ = { 0 };                                          \
		int wrc_ = wide_args((bit), (comm), &wide_, (args),                 \
		                     (int)(sizeof(args) / sizeof(*(args))));        \
		if (wrc_ == MPI_SUCCESS)                                            \
			wrc_ = (call);                                              \
		else if (wrc_ != COLL_NOT_TAKEN)                                    \
			wrc_ = conversion_failed((comm), wrc_, wide_.raised, (c_)); \
		wide_free(&wide_);                                                  \
		if (wrc_ != COLL_NOT_TAKEN)                                         \
			return wrc_;                                                \
	} while (0)

/* The MPI's own large-count form of `name` (MPI_<name>_c), without the
 * warning: every rank made the same choice. */
#define C_ON_MPI(name, rep, args)                                                          \
	coll_report(rep, -1, MPI_DATATYPE_NULL, coll_track(PMPI_##name##_c args, request), \
	            ICALL(request, site))
#define C_INIT_ON_MPI(name, rep, args)          \
	coll_report(rep, -1, MPI_DATATYPE_NULL, \
	            coll_track_init(PMPI_##name##_init_c args, request), PCALL(request, info))

/*
 * The forms with one count per buffer: the int form's path when the counts
 * fit, or wherever a graph may run the collective (WIDE_AT); otherwise the
 * MPI's own _c form, non-blocking or persistent as c says (NATIVE_C).
 */

static int ibcast_c_at(void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                       MPI_Comm comm, const struct call *c)
{
	if (fits(count))
		return ibcast_at(buffer, (int)count, datatype, root, comm, c);
	struct wide_arg a[] = { arg_of(count, datatype, true) };
	WIDE_AT(PMPI_COLL_IBCAST, comm, a, c, ibcast_at(buffer, a[0].n, a[0].t, root, comm, c));
	return coll_report(REPORT_IBCAST, count, datatype,
	                   NATIVE_C(c, Ibcast, (buffer, count, datatype, root, comm, c->request),
	                            Bcast,
	                            (buffer, count, datatype, root, comm, c->info, c->request)),
	                   c);
}

/* all: the allgather, else the all-to-all. */
static int iallgather_c_at(bool all, const void *sendbuf, MPI_Count sendcount,
                           MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                           MPI_Datatype recvtype, MPI_Comm comm, const struct call *c)
{
	int (*at)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm,
	          const struct call *) = all ? iallgather_at : ialltoall_at;
	if (fits(sendcount) && fits(recvcount))
		return at(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount, recvtype,
		          comm, c);
	struct wide_arg a[] = { arg_of(sendcount, sendtype, sendbuf != MPI_IN_PLACE),
		                arg_of(recvcount, recvtype, true) };
	WIDE_AT(all ? PMPI_COLL_IALLGATHER : PMPI_COLL_IALLTOALL, comm, a, c,
	        at(sendbuf, a[0].n, a[0].t, recvbuf, a[1].n, a[1].t, comm, c));
	int rc = all ? NATIVE_C(c, Iallgather,
	                        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
	                         c->request),
	                        Allgather,
	                        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
	                         c->info, c->request))
	             : NATIVE_C(c, Ialltoall,
	                        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
	                         c->request),
	                        Alltoall,
	                        (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
	                         c->info, c->request));
	return coll_report(all ? REPORT_IALLGATHER : REPORT_IALLTOALL, recvcount, recvtype, rc, c);
}

/* gather: the gather (the root receives), else the scatter. */
static int irooted_c_at(bool gather, const void *sendbuf, MPI_Count sendcount,
                        MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                        MPI_Datatype recvtype, int root, MPI_Comm comm, const struct call *c)
{
	int (*at)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, int, MPI_Comm,
	          const struct call *) = gather ? igather_at : iscatter_at;
	if (fits(sendcount) && fits(recvcount))
		return at(sendbuf, (int)sendcount, sendtype, recvbuf, (int)recvcount, recvtype,
		          root, comm, c);
	/* The root's side is ignored elsewhere, the rank's own at the root in
	 * place. */
	bool at_root = comm != MPI_COMM_NULL && is_root(comm, root);
	bool in_place = at_root && (gather ? sendbuf : recvbuf) == MPI_IN_PLACE;
	struct wide_arg a[] = { arg_of(sendcount, sendtype, gather ? !in_place : at_root),
		                arg_of(recvcount, recvtype, gather ? at_root : !in_place) };
	WIDE_AT(gather ? PMPI_COLL_IGATHER : PMPI_COLL_ISCATTER, comm, a, c,
	        at(sendbuf, a[0].n, a[0].t, recvbuf, a[1].n, a[1].t, root, comm, c));
	int rc = gather ? NATIVE_C(c, Igather,
	                           (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
	                            root, comm, c->request),
	                           Gather,
	                           (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
	                            root, comm, c->info, c->request))
	                : NATIVE_C(c, Iscatter,
	                           (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
	                            root, comm, c->request),
	                           Scatter,
	                           (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
	                            root, comm, c->info, c->request));
	/* The rank's own block: what it sends (gather) or receives (scatter),
	 * the root's block in place. */
	bool own_send = gather ? sendbuf != MPI_IN_PLACE : recvbuf == MPI_IN_PLACE;
	return coll_report(gather ? REPORT_IGATHER : REPORT_ISCATTER,
	                   own_send ? sendcount : recvcount, own_send ? sendtype : recvtype, rc, c);
}

/* alltoall: the neighbour all-to-all, else the allgather. */
static int ineighbor_c_at(bool alltoall, const void *sendbuf, MPI_Count sendcount,
                          MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm, const struct call *c)
{
	if (fits(sendcount) && fits(recvcount))
		return alltoall ? ineighbor_alltoall_at(false, sendbuf, NULL, (int)sendcount, NULL,
		                                        sendtype, recvbuf, NULL, (int)recvcount,
		                                        NULL, recvtype, comm, c)
		                : ineighbor_allgather_at(false, sendbuf, (int)sendcount, sendtype,
		                                         recvbuf, NULL, (int)recvcount, NULL,
		                                         recvtype, comm, c);
	struct wide_arg a[] = { arg_of(sendcount, sendtype, true),
		                arg_of(recvcount, recvtype, true) };
	WIDE_AT(alltoall ? PMPI_COLL_INEIGHBOR_ALLTOALL : PMPI_COLL_INEIGHBOR_ALLGATHER, comm, a, c,
	        alltoall ? ineighbor_alltoall_at(false, sendbuf, NULL, a[0].n, NULL, a[0].t,
	                                         recvbuf, NULL, a[1].n, NULL, a[1].t, comm, c)
	                 : ineighbor_allgather_at(false, sendbuf, a[0].n, a[0].t, recvbuf, NULL,
	                                          a[1].n, NULL, a[1].t, comm, c));
	int rc = alltoall ? NATIVE_C(c, Ineighbor_alltoall,
	                             (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
	                              comm, c->request),
	                             Neighbor_alltoall,
	                             (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
	                              comm, c->info, c->request))
	                  : NATIVE_C(c, Ineighbor_allgather,
	                             (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
	                              comm, c->request),
	                             Neighbor_allgather,
	                             (sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
	                              comm, c->info, c->request));
	return coll_report(REPORT_INEIGHBOR, -1, MPI_DATATYPE_NULL, rc, c);
}

PMPI_EXPORT int MPI_Ibcast_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                             MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ibcast_c_at(buffer, count, datatype, root, comm, ICALL(request, REPORT_SITE()));
}

PMPI_EXPORT int MPI_Iallgather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                 MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iallgather_c_at(true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
	                       comm, ICALL(request, REPORT_SITE()));
}

PMPI_EXPORT int MPI_Ialltoall_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iallgather_c_at(false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
	                       comm, ICALL(request, REPORT_SITE()));
}

PMPI_EXPORT int MPI_Igather_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                              void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                              MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return irooted_c_at(true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
	                    comm, ICALL(request, REPORT_SITE()));
}

PMPI_EXPORT int MPI_Iscatter_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype, int root,
                               MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return irooted_c_at(false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
	                    comm, ICALL(request, REPORT_SITE()));
}

PMPI_EXPORT int MPI_Ineighbor_allgather_c(const void *sendbuf, MPI_Count sendcount,
                                          MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                          MPI_Datatype recvtype, MPI_Comm comm,
                                          MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ineighbor_c_at(false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
	                      comm, ICALL(request, REPORT_SITE()));
}

PMPI_EXPORT int MPI_Ineighbor_alltoall_c(const void *sendbuf, MPI_Count sendcount,
                                         MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ineighbor_c_at(true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
	                      comm, ICALL(request, REPORT_SITE()));
}

PMPI_EXPORT int MPI_Bcast_init_c(void *buffer, MPI_Count count, MPI_Datatype datatype, int root,
                                 MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ibcast_c_at(buffer, count, datatype, root, comm, PCALL(request, info));
}

PMPI_EXPORT int MPI_Allgather_init_c(const void *sendbuf, MPI_Count sendcount,
                                     MPI_Datatype sendtype, void *recvbuf, MPI_Count recvcount,
                                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                     MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iallgather_c_at(true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
	                       comm, PCALL(request, info));
}

PMPI_EXPORT int MPI_Alltoall_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                    MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iallgather_c_at(false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
	                       comm, PCALL(request, info));
}

PMPI_EXPORT int MPI_Gather_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                  int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return irooted_c_at(true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
	                    comm, PCALL(request, info));
}

PMPI_EXPORT int MPI_Scatter_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                                   int root, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return irooted_c_at(false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root,
	                    comm, PCALL(request, info));
}

PMPI_EXPORT int MPI_Neighbor_allgather_init_c(const void *sendbuf, MPI_Count sendcount,
                                              MPI_Datatype sendtype, void *recvbuf,
                                              MPI_Count recvcount, MPI_Datatype recvtype,
                                              MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ineighbor_c_at(false, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
	                      comm, PCALL(request, info));
}

PMPI_EXPORT int MPI_Neighbor_alltoall_init_c(const void *sendbuf, MPI_Count sendcount,
                                             MPI_Datatype sendtype, void *recvbuf,
                                             MPI_Count recvcount, MPI_Datatype recvtype,
                                             MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ineighbor_c_at(true, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype,
	                      comm, PCALL(request, info));
}

PMPI_EXPORT int MPI_Iallgatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, const MPI_Count recvcounts[],
                                  const MPI_Aint displs[], MPI_Datatype recvtype, MPI_Comm comm,
                                  MPI_Request *request)
{
	PMPI_APP_SCOPE();
	const void *site = REPORT_SITE();
	pmpi_ensure();
	int rc = iallgatherv_c_graph(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
	                             recvtype, comm, ICALL(request, site));
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return C_ON_MPI(Iallgatherv, REPORT_IALLGATHERV,
	                (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
	                 request));
}

PMPI_EXPORT int MPI_Iallreduce_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                 MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iallreduce_at(sendbuf, recvbuf, count, datatype, op, comm,
	                     ICALL(request, REPORT_SITE()));
}

PMPI_EXPORT int MPI_Ialltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                                 const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                 const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                 MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	const void *site = REPORT_SITE();
	pmpi_ensure();
	int rc = ialltoall_c_graph(REPORT_IALLTOALLV, sendbuf, sendcounts, sdispls, sendtype, NULL,
	                           recvbuf, recvcounts, rdispls, recvtype, NULL, comm,
	                           ICALL(request, site));
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return C_ON_MPI(Ialltoallv, REPORT_IALLTOALLV,
	                (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
	                 recvtype, comm, request));
}

PMPI_EXPORT int MPI_Ialltoallw_c(const void *sendbuf, const MPI_Count sendcounts[],
                                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                 void *recvbuf, const MPI_Count recvcounts[],
                                 const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                 MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	const void *site = REPORT_SITE();
	pmpi_ensure();
	int rc = ialltoall_c_graph(REPORT_IALLTOALLW, sendbuf, sendcounts, sdispls,
	                           MPI_DATATYPE_NULL, sendtypes, recvbuf, recvcounts, rdispls,
	                           MPI_DATATYPE_NULL, recvtypes, comm, ICALL(request, site));
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return C_ON_MPI(Ialltoallw, REPORT_IALLTOALLW,
	                (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
	                 recvtypes, comm, request));
}

PMPI_EXPORT int MPI_Iexscan_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iexscan_at(sendbuf, recvbuf, count, datatype, op, comm,
	                  ICALL(request, REPORT_SITE()));
}

PMPI_EXPORT int MPI_Igatherv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                               void *recvbuf, const MPI_Count recvcounts[], const MPI_Aint displs[],
                               MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	const void *site = REPORT_SITE();
	pmpi_ensure();
	int rc = igatherv_c_graph(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
	                          recvtype, root, comm, ICALL(request, site));
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return C_ON_MPI(Igatherv, REPORT_IGATHERV,
	                (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root,
	                 comm, request));
}

PMPI_EXPORT int MPI_Ineighbor_allgatherv_c(const void *sendbuf, MPI_Count sendcount,
                                           MPI_Datatype sendtype, void *recvbuf,
                                           const MPI_Count recvcounts[], const MPI_Aint displs[],
                                           MPI_Datatype recvtype, MPI_Comm comm,
                                           MPI_Request *request)
{
	PMPI_APP_SCOPE();
	const void *site = REPORT_SITE();
	pmpi_ensure();
	int rc = ineighbor_c_graph(false, sendbuf, sendcount, NULL, NULL, sendtype, NULL, recvbuf,
	                           recvcounts, displs, recvtype, NULL, comm, ICALL(request, site));
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return C_ON_MPI(Ineighbor_allgatherv, REPORT_INEIGHBOR,
	                (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm,
	                 request));
}

PMPI_EXPORT int MPI_Ineighbor_alltoallv_c(const void *sendbuf, const MPI_Count sendcounts[],
                                          const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                          void *recvbuf, const MPI_Count recvcounts[],
                                          const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                          MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	const void *site = REPORT_SITE();
	pmpi_ensure();
	int rc = ineighbor_c_graph(true, sendbuf, 0, sendcounts, sdispls, sendtype, NULL, recvbuf,
	                           recvcounts, rdispls, recvtype, NULL, comm, ICALL(request, site));
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return C_ON_MPI(Ineighbor_alltoallv, REPORT_INEIGHBOR,
	                (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
	                 recvtype, comm, request));
}

PMPI_EXPORT int MPI_Ineighbor_alltoallw_c(const void *sendbuf, const MPI_Count sendcounts[],
                                          const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                          void *recvbuf, const MPI_Count recvcounts[],
                                          const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                          MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	const void *site = REPORT_SITE();
	pmpi_ensure();
	int rc = ineighbor_c_graph(true, sendbuf, 0, sendcounts, sdispls, MPI_DATATYPE_NULL,
	                           sendtypes, recvbuf, recvcounts, rdispls, MPI_DATATYPE_NULL,
	                           recvtypes, comm, ICALL(request, site));
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return C_ON_MPI(Ineighbor_alltoallw, REPORT_INEIGHBOR,
	                (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
	                 recvtypes, comm, request));
}

PMPI_EXPORT int MPI_Ireduce_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                              MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                              MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ireduce_at(sendbuf, recvbuf, count, datatype, op, root, comm,
	                  ICALL(request, REPORT_SITE()));
}

/*
 * A reduce-scatter's MPI_Count recvcounts as ints in *out (freed by the
 * caller); NULL when one count or their sum does not fit an int.
 * COLL_NOT_TAKEN where no graph may run it (wide_size()) or the counts are
 * missing (the MPI reports that): the MPI's own call runs, as for any
 * collective left to it. Every rank passes the same counts, so every rank
 * decides alike. MPI_ERR_NO_MEM when out of memory, said to the caller
 * rather than sending this rank alone to the MPI's schedule.
 */
static int redscat_counts(MPI_Comm comm, const MPI_Count *counts, int **out)
{
	*out = NULL;
	int size = 0;
	if (!counts || !wide_size(PMPI_COLL_IREDUCE_SCATTER, comm, &size))
		return COLL_NOT_TAKEN;
	MPI_Count total = 0;
	for (int i = 0; i < size; i++) {
		if (!fits(counts[i]) || (total += counts[i]) > INT_MAX)
			return MPI_SUCCESS;
	}
	int *c = malloc(sizeof(*c) * (size_t)size);
	if (!c)
		return MPI_ERR_NO_MEM;
	for (int i = 0; i < size; i++)
		c[i] = (int)counts[i];
	*out = c;
	return MPI_SUCCESS;
}

PMPI_EXPORT int MPI_Ireduce_scatter_c(const void *sendbuf, void *recvbuf,
                                      const MPI_Count recvcounts[], MPI_Datatype datatype,
                                      MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	const void *site = REPORT_SITE();
	pmpi_ensure();
	int *counts, rc = redscat_counts(comm, recvcounts, &counts);
	if (rc == MPI_SUCCESS && !counts)
		return LARGE_ON_MPI(PMPI_COLL_IREDUCE_SCATTER, Ireduce_scatter,
		                    REPORT_IREDUCE_SCATTER, -1, MPI_DATATYPE_NULL,
		                    (sendbuf, recvbuf, recvcounts, datatype, op, comm, request));
	if (rc != MPI_SUCCESS && rc != COLL_NOT_TAKEN)
		return graph_failed(comm, rc, ICALL(request, site));
	if (counts) {
		rc = ireduce_scatter_graph(sendbuf, recvbuf, counts, datatype, op, comm,
		                           ICALL(request, site));
		free(counts);
		if (rc != COLL_NOT_TAKEN)
			return rc;
	}
	/* The MPI's own, with the application's arrays, which it may read
	 * until the operation completes. */
	return coll_report(REPORT_IREDUCE_SCATTER, -1, MPI_DATATYPE_NULL,
	                   coll_track(PMPI_Ireduce_scatter_c(sendbuf, recvbuf, recvcounts, datatype,
	                                                     op, comm, request),
	                              request),
	                   ICALL(request, site));
}

PMPI_EXPORT int MPI_Ireduce_scatter_block_c(const void *sendbuf, void *recvbuf, MPI_Count recvcount,
                                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                                            MPI_Request *request)
{
	PMPI_APP_SCOPE();
	const void *site = REPORT_SITE();
	if (fits(recvcount))
		return ireduce_scatter_block_at(sendbuf, recvbuf, (int)recvcount, datatype, op,
		                                comm, ICALL(request, site));
	return LARGE_ON_MPI(PMPI_COLL_IREDUCE_SCATTER_BLOCK, Ireduce_scatter_block,
	                    REPORT_IREDUCE_SCATTER_BLOCK, recvcount, datatype,
	                    (sendbuf, recvbuf, recvcount, datatype, op, comm, request));
}

PMPI_EXPORT int MPI_Iscan_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iscan_at(sendbuf, recvbuf, count, datatype, op, comm, ICALL(request, REPORT_SITE()));
}

PMPI_EXPORT int MPI_Iscatterv_c(const void *sendbuf, const MPI_Count sendcounts[],
                                const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf,
                                MPI_Count recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm,
                                MPI_Request *request)
{
	PMPI_APP_SCOPE();
	const void *site = REPORT_SITE();
	pmpi_ensure();
	int rc = iscatterv_c_graph(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
	                           recvtype, root, comm, ICALL(request, site));
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return C_ON_MPI(Iscatterv, REPORT_ISCATTERV,
	                (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root,
	                 comm, request));
}

/*
 * The large-count persistent collectives, as their non-blocking forms
 * above: a call whose counts fit an int takes the int form's path (a rank
 * may call one form while another calls the other), as does every
 * collective but the reductions whatever its values where a graph may run
 * it; otherwise the MPI's own.
 */
#define PCOLL_C_NATIVE(bit, kind, count, type, name, call)                            \
	do {                                                                          \
		pmpi_ensure();                                                        \
		large_on_mpi(bit, name);                                              \
		return coll_report(kind, count, type, coll_track_init(call, request), \
		                   PCALL(request, info));                             \
	} while (0)

PMPI_EXPORT int MPI_Allgatherv_init_c(const void *sendbuf, MPI_Count sendcount,
                                      MPI_Datatype sendtype, void *recvbuf,
                                      const MPI_Count recvcounts[], const MPI_Aint displs[],
                                      MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                      MPI_Request *request)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	int rc = iallgatherv_c_graph(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
	                             recvtype, comm, PCALL(request, info));
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return C_INIT_ON_MPI(Allgatherv, REPORT_IALLGATHERV,
	                     (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
	                      comm, info, request));
}

PMPI_EXPORT int MPI_Allreduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                     MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iallreduce_at(sendbuf, recvbuf, count, datatype, op, comm, PCALL(request, info));
}

PMPI_EXPORT int MPI_Alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                     const MPI_Aint sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                     const MPI_Count recvcounts[], const MPI_Aint rdispls[],
                                     MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                                     MPI_Request *request)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	int rc = ialltoall_c_graph(REPORT_IALLTOALLV, sendbuf, sendcounts, sdispls, sendtype, NULL,
	                           recvbuf, recvcounts, rdispls, recvtype, NULL, comm,
	                           PCALL(request, info));
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return C_INIT_ON_MPI(Alltoallv, REPORT_IALLTOALLV,
	                     (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
	                      recvtype, comm, info, request));
}

PMPI_EXPORT int MPI_Exscan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iexscan_at(sendbuf, recvbuf, count, datatype, op, comm, PCALL(request, info));
}

PMPI_EXPORT int MPI_Gatherv_init_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, const MPI_Count recvcounts[],
                                   const MPI_Aint displs[], MPI_Datatype recvtype, int root,
                                   MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	int rc = igatherv_c_graph(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
	                          recvtype, root, comm, PCALL(request, info));
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return C_INIT_ON_MPI(Gatherv, REPORT_IGATHERV,
	                     (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
	                      root, comm, info, request));
}

PMPI_EXPORT int MPI_Reduce_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                                  MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                                  MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return ireduce_at(sendbuf, recvbuf, count, datatype, op, root, comm, PCALL(request, info));
}

PMPI_EXPORT int MPI_Reduce_scatter_init_c(const void *sendbuf, void *recvbuf,
                                          const MPI_Count recvcounts[], MPI_Datatype datatype,
                                          MPI_Op op, MPI_Comm comm, MPI_Info info,
                                          MPI_Request *request)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	int *counts, rc = redscat_counts(comm, recvcounts, &counts);
	if (rc == MPI_SUCCESS && !counts)
		PCOLL_C_NATIVE(PMPI_COLL_IREDUCE_SCATTER, REPORT_IREDUCE_SCATTER, -1,
		               MPI_DATATYPE_NULL, "MPI_Reduce_scatter_init_c",
		               PMPI_Reduce_scatter_init_c(sendbuf, recvbuf, recvcounts, datatype, op,
		                                          comm, info, request));
	if (rc != MPI_SUCCESS && rc != COLL_NOT_TAKEN)
		return graph_failed(comm, rc, PCALL(request, info));
	if (counts) {
		rc = ireduce_scatter_graph(sendbuf, recvbuf, counts, datatype, op, comm,
		                           PCALL(request, info));
		free(counts);
		if (rc != COLL_NOT_TAKEN)
			return rc;
	}
	return coll_report(REPORT_IREDUCE_SCATTER, -1, MPI_DATATYPE_NULL,
	                   coll_track_init(PMPI_Reduce_scatter_init_c(sendbuf, recvbuf, recvcounts,
	                                                              datatype, op, comm, info,
	                                                              request),
	                                   request),
	                   PCALL(request, info));
}

PMPI_EXPORT int MPI_Reduce_scatter_block_init_c(const void *sendbuf, void *recvbuf,
                                                MPI_Count recvcount, MPI_Datatype datatype,
                                                MPI_Op op, MPI_Comm comm, MPI_Info info,
                                                MPI_Request *request)
{
	PMPI_APP_SCOPE();
	if (fits(recvcount))
		return ireduce_scatter_block_at(sendbuf, recvbuf, (int)recvcount, datatype, op,
		                                comm, PCALL(request, info));
	PCOLL_C_NATIVE(PMPI_COLL_IREDUCE_SCATTER_BLOCK, REPORT_IREDUCE_SCATTER_BLOCK, recvcount,
	               datatype, "MPI_Reduce_scatter_block_init_c",
	               PMPI_Reduce_scatter_block_init_c(sendbuf, recvbuf, recvcount, datatype, op,
	                                                comm, info, request));
}

PMPI_EXPORT int MPI_Scan_init_c(const void *sendbuf, void *recvbuf, MPI_Count count,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                MPI_Request *request)
{
	PMPI_APP_SCOPE();
	return iscan_at(sendbuf, recvbuf, count, datatype, op, comm, PCALL(request, info));
}

PMPI_EXPORT int MPI_Scatterv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                    const MPI_Aint displs[], MPI_Datatype sendtype, void *recvbuf,
                                    MPI_Count recvcount, MPI_Datatype recvtype, int root,
                                    MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	int rc = iscatterv_c_graph(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount,
	                           recvtype, root, comm, PCALL(request, info));
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return C_INIT_ON_MPI(Scatterv, REPORT_ISCATTERV,
	                     (sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype,
	                      root, comm, info, request));
}

PMPI_EXPORT int MPI_Alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                     const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                     void *recvbuf, const MPI_Count recvcounts[],
                                     const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                     MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	int rc = ialltoall_c_graph(REPORT_IALLTOALLW, sendbuf, sendcounts, sdispls,
	                           MPI_DATATYPE_NULL, sendtypes, recvbuf, recvcounts, rdispls,
	                           MPI_DATATYPE_NULL, recvtypes, comm, PCALL(request, info));
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return C_INIT_ON_MPI(Alltoallw, REPORT_IALLTOALLW,
	                     (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
	                      recvtypes, comm, info, request));
}

PMPI_EXPORT int MPI_Neighbor_allgatherv_init_c(const void *sendbuf, MPI_Count sendcount,
                                               MPI_Datatype sendtype, void *recvbuf,
                                               const MPI_Count recvcounts[],
                                               const MPI_Aint displs[], MPI_Datatype recvtype,
                                               MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	int rc = ineighbor_c_graph(false, sendbuf, sendcount, NULL, NULL, sendtype, NULL, recvbuf,
	                           recvcounts, displs, recvtype, NULL, comm, PCALL(request, info));
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return C_INIT_ON_MPI(Neighbor_allgatherv, REPORT_INEIGHBOR,
	                     (sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
	                      comm, info, request));
}

PMPI_EXPORT int MPI_Neighbor_alltoallv_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                              const MPI_Aint sdispls[], MPI_Datatype sendtype,
                                              void *recvbuf, const MPI_Count recvcounts[],
                                              const MPI_Aint rdispls[], MPI_Datatype recvtype,
                                              MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	int rc = ineighbor_c_graph(true, sendbuf, 0, sendcounts, sdispls, sendtype, NULL, recvbuf,
	                           recvcounts, rdispls, recvtype, NULL, comm, PCALL(request, info));
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return C_INIT_ON_MPI(Neighbor_alltoallv, REPORT_INEIGHBOR,
	                     (sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
	                      recvtype, comm, info, request));
}

PMPI_EXPORT int MPI_Neighbor_alltoallw_init_c(const void *sendbuf, const MPI_Count sendcounts[],
                                              const MPI_Aint sdispls[],
                                              const MPI_Datatype sendtypes[], void *recvbuf,
                                              const MPI_Count recvcounts[],
                                              const MPI_Aint rdispls[],
                                              const MPI_Datatype recvtypes[], MPI_Comm comm,
                                              MPI_Info info, MPI_Request *request)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	int rc = ineighbor_c_graph(true, sendbuf, 0, sendcounts, sdispls, MPI_DATATYPE_NULL,
	                           sendtypes, recvbuf, recvcounts, rdispls, MPI_DATATYPE_NULL,
	                           recvtypes, comm, PCALL(request, info));
	if (rc != COLL_NOT_TAKEN)
		return rc;
	return C_INIT_ON_MPI(Neighbor_alltoallw, REPORT_INEIGHBOR,
	                     (sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
	                      recvtypes, comm, info, request));
}
#endif

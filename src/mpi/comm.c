/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Communicator creation. Since Open MPI's MPI_Comm_idup cannot make the
 * shadow of piano's graph collectives safely (coll_shadow.c), the
 * shadow is made here on both MPIs, by a blocking duplicate inside the application's
 * own blocking collective call that created the communicator: every rank
 * of the new communicator is in that call, so none waits for a rank that
 * waits for it. Only when PIANO_COLL lets graph collectives run and
 * piano's threads run; an intercommunicator gets none (graphs run on
 * intra-communicators only). Under `auto` only a communicator whose ranks
 * are all in MPI_COMM_WORLD gets one: `auto` was agreed on MPI_COMM_WORLD
 * (init.c), and a communicator joined with spawned or connected processes
 * may hold ranks whose piano decided otherwise, which would not duplicate
 * it. `auto` is on only in programs that import a reduce-scatter, so the
 * duplicate per creation is paid only by those (docs/coll.md, "The
 * default"), and on MPICH not even there: its idup is safe, and `auto`
 * makes the shadow at the first graph collective instead
 * (coll_shadow_lazy_safe()). A communicator made otherwise (MPI_Comm_idup,
 * or before piano's set-up) has no shadow, and its collectives stay the
 * MPI's on every rank alike (but for that lazy shadow).
 *
 * Each creation also frees the shadows of communicators freed since
 * (coll_shadow_reap()): they are freed outside the MPI's callbacks only,
 * and a program that creates and frees communicators in a loop, with no
 * graph collective between, ran MPICH out of context ids after 1,024.
 */
#include "base.h"
#include "coll_shadow.h"
#include "init.h"
#include "serial.h"

/* The shadow of a communicator the application's call just created, after
 * freeing those of communicators freed since (see the top). */
static int made(int rc, const MPI_Comm *newcomm)
{
	coll_shadow_reap();
	if (rc != MPI_SUCCESS || !newcomm || !pmpi_g.coll_graph || !pmpi_g.threaded ||
	    (pmpi_g.coll_auto && coll_shadow_lazy_safe()))
		return rc;
	int src = coll_shadow_make(*newcomm, pmpi_g.coll_auto);
	if (src != MPI_SUCCESS)
		pmpi_warn("cannot duplicate a new communicator for graph collectives (MPI error %d): "
		          "its collectives stay the MPI's",
		          src);
	return rc;
}

PMPI_EXPORT int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	return made(PMPI_Comm_dup(comm, newcomm), newcomm);
}

PMPI_EXPORT int MPI_Comm_dup_with_info(MPI_Comm comm, MPI_Info info, MPI_Comm *newcomm)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	return made(PMPI_Comm_dup_with_info(comm, info, newcomm), newcomm);
}

PMPI_EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	return made(PMPI_Comm_split(comm, color, key, newcomm), newcomm);
}

PMPI_EXPORT int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                                    MPI_Comm *newcomm)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	return made(PMPI_Comm_split_type(comm, split_type, key, info, newcomm), newcomm);
}

PMPI_EXPORT int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm *newcomm)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	return made(PMPI_Comm_create(comm, group, newcomm), newcomm);
}

PMPI_EXPORT int MPI_Comm_create_group(MPI_Comm comm, MPI_Group group, int tag, MPI_Comm *newcomm)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	return made(PMPI_Comm_create_group(comm, group, tag, newcomm), newcomm);
}

PMPI_EXPORT int MPI_Intercomm_merge(MPI_Comm intercomm, int high, MPI_Comm *newintracomm)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	return made(PMPI_Intercomm_merge(intercomm, high, newintracomm), newintracomm);
}

PMPI_EXPORT int MPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[],
                                const int periods[], int reorder, MPI_Comm *comm_cart)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	return made(PMPI_Cart_create(comm_old, ndims, dims, periods, reorder, comm_cart), comm_cart);
}

PMPI_EXPORT int MPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	return made(PMPI_Cart_sub(comm, remain_dims, newcomm), newcomm);
}

PMPI_EXPORT int MPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[],
                                 const int edges[], int reorder, MPI_Comm *comm_graph)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	return made(PMPI_Graph_create(comm_old, nnodes, index, edges, reorder, comm_graph),
	            comm_graph);
}

PMPI_EXPORT int MPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree,
                                               const int sources[], const int sourceweights[],
                                               int outdegree, const int destinations[],
                                               const int destweights[], MPI_Info info,
                                               int reorder, MPI_Comm *comm_dist_graph)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	return made(PMPI_Dist_graph_create_adjacent(comm_old, indegree, sources, sourceweights,
	                                            outdegree, destinations, destweights, info,
	                                            reorder, comm_dist_graph),
	            comm_dist_graph);
}

PMPI_EXPORT int MPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
                                      const int degrees[], const int destinations[],
                                      const int weights[], MPI_Info info, int reorder,
                                      MPI_Comm *comm_dist_graph)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	return made(PMPI_Dist_graph_create(comm_old, n, sources, degrees, destinations, weights,
	                                   info, reorder, comm_dist_graph),
	            comm_dist_graph);
}

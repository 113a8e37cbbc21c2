/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the Fortran bindings need of the collectives' C layer (coll.c).
 */
#ifndef PIANO_MPI_COLL_H
#define PIANO_MPI_COLL_H

#include <mpi.h>

/* Not an MPI error code (those are >= 0), nor COLL_ENOTAGS. */
enum { COLL_NOT_TAKEN = -2 };

/*
 * MPI_Ialltoallw as a graph, when PIANO_COLL takes it (as MPI_Ialltoallw
 * would): returns its MPI error code. COLL_NOT_TAKEN otherwise, with
 * nothing started: the MPI's own is to run it. A graph keeps nothing of the
 * arrays once this returns (each node holds its own count, displacement and
 * datatype), so the caller may pass arrays it converted and frees at once;
 * the MPI's own may read them until the request completes (Open MPI's
 * Fortran procedure keeps its conversion alive that long, fortran_ompi.c).
 * `init`: NULL for MPI_Ialltoallw; the info of MPI_Alltoallw_init (Open
 * MPI's MPIX_) for the persistent form, whose graph is started by
 * MPI_Start. `site`: the call site for the overlap report.
 */
int pmpi_ialltoallw_graph(const void *sendbuf, const int sendcounts[], const int sdispls[],
                          const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                          const int rdispls[], const MPI_Datatype recvtypes[], MPI_Comm comm,
                          const MPI_Info *init, MPI_Request *request, const void *site);

/* The same for MPI_Ineighbor_alltoallw (and MPI_Neighbor_alltoallw_init):
 * arrays of the communicator's out-degree (send) and in-degree (recv),
 * pmpi_neighbor_counts(). */
int pmpi_ineighbor_alltoallw_graph(const void *sendbuf, const int sendcounts[],
                                   const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                   void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                   const MPI_Datatype recvtypes[], MPI_Comm comm,
                                   const MPI_Info *init, MPI_Request *request, const void *site);
int pmpi_neighbor_counts(MPI_Comm comm, int *nin, int *nout);

#endif

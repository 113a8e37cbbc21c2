/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Persistent collectives as graphs (coll_persist.c): MPI-4's
 * MPI_<coll>_init (Open MPI's MPIX_<coll>_init) built once, started by
 * every MPI_Start, freed by MPI_Request_free.
 *
 * The application's handle is a persistent receive of an empty message on
 * a private duplicate of MPI_COMM_SELF, under a tag no other persistent
 * collective of the process holds: MPI_Start starts the receive and the
 * graph, the graph's end sends the empty message, and the MPI completes the
 * handle like any persistent request, in every completion call, alone or
 * in arrays, inactive afterwards until the next start. A generalized
 * request cannot be started again; this costs one empty message to self
 * per run.
 *
 * A collective's messages keep the tag range coll_shadow_ptag() gave it at
 * initialization for every run. Two runs cannot mix: a rank starts the next
 * run only once its previous one completed, and MPI's non-overtaking rule
 * matches each message to the receive of its own run.
 *
 * Building one: the MPI layer brackets the builder call (coll_algo.h) with
 *
 *   struct coll_persist p;
 *   coll_persist_begin(&p, true);
 *   type = coll_persist_type(&p, type);      (each datatype argument)
 *   op = coll_persist_op(&p, op);            (a reduction's operation)
 *   types = coll_persist_types(&p, types, n); (each array of them)
 *   rc = coll_ibcast(..., request);          (builds, does not start)
 *   rc = coll_persist_end(&p, rc, request);  (the handle)
 *
 * and then rc is an MPI error code, or COLL_ENOTAGS: every range kept for
 * persistent collectives on that communicator is taken, and the MPI's own
 * MPI_<coll>_init must run the collective (every rank gets the same answer).
 *
 * A non-blocking collective's call is bracketed the same way with
 * coll_persist_begin(&p, false): its operation, started by the builder,
 * holds the duplicates and the operation until it is destroyed, since the
 * application may free its own as soon as the call returned, while the
 * graph posts some of its messages and reductions later.
 */
#ifndef PIANO_COLL_PERSIST_H
#define PIANO_COLL_PERSIST_H

#include "hidden.h"
#include <mpi.h>
#include <stdatomic.h>
#include <stdbool.h>

#include "coll_op.h"

/* The bracket for the builders this thread calls until coll_persist_end():
 * persistent mode, or (not `persistent`) a non-blocking call's, whose
 * operation holds the duplicates and the operation as well. */
void coll_persist_begin(struct coll_persist *p, bool persistent);
/* The datatype the graph is to use for t: t itself when predefined, else a
 * duplicate the operation owns (t, and p->err set, when that fails). */
MPI_Datatype coll_persist_type(struct coll_persist *p, MPI_Datatype t);
/* The operation the graph is to reduce with: op itself, held (op_hold.h)
 * for the operation's life when user-defined, so that the application may
 * free it after the init; p->err set when it cannot be held (the caller
 * checked op_holdable()). At most one per operation. */
MPI_Op coll_persist_op(struct coll_persist *p, MPI_Op op);
/* The same for an array of n datatypes (alltoallw's): an array valid until
 * coll_persist_end() (types itself, and p->err set, on failure). At most
 * two per operation. */
const MPI_Datatype *coll_persist_types(struct coll_persist *p, const MPI_Datatype *types, int n);
/* Ends persistent mode: the handle of the operation the builder committed
 * in *request; returns rc (the builder's), or the error that kept the
 * handle from being made. */
int coll_persist_end(struct coll_persist *p, int rc, MPI_Request *request);

/* MPI_Start: whether *req is a persistent graph collective's handle; if so
 * starts it and sets *rc. */
bool coll_persist_start(MPI_Request *req, int *rc);
/* Whether one of reqs is such a handle: MPI_Startall then starts them one
 * by one (coll_persist_start() or the MPI's MPI_Start), a completion call
 * drives the graphs (as for coll_op_among()). Inline, as coll_op_among():
 * every completion call asks, and most processes hold no such handle (out
 * of line, the call and its frame were 20 instructions of every
 * MPI_Test). */
bool coll_persist_among_slow(const MPI_Request *reqs, int n);
extern PIANO_HIDDEN _Atomic long coll_persist_nhandles;
static inline bool coll_persist_among(const MPI_Request *reqs, int n)
{
	return atomic_load_explicit(&coll_persist_nhandles, memory_order_relaxed) &&
	       coll_persist_among_slow(reqs, n);
}
/* MPI_Request_free: whether *req is such a handle; if so frees it (the
 * operation once its run, if any, ended) and sets *rc. */
bool coll_persist_free(MPI_Request *req, int *rc);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A collective operation run as a graph (coll_op.c): the graph on the
 * communicator's shadow, its scratch memory, and the MPI_Request the
 * application gets, a generalized request the graph's end completes.
 *
 * A builder (coll_bcast.c, ...) begins an operation, adds the nodes of its
 * algorithm with tags op->tag .. op->tag + op->ntags - 1, and starts it:
 *
 *   struct coll_op *op;
 *   rc = coll_op_begin(comm, &key, &op);    MPI error code
 *   if (coll_op_reused(op))                 built by an earlier call: start it
 *           return coll_op_start(op, request);
 *   ... piano_graph_add_*(op->g, ...) ...
 *   rc = coll_op_start(op, request);        MPI error code; op is gone either way
 *
 * or coll_op_abandon(op) on an error before the start.
 *
 * Reuse: a collective called again with the arguments of one that has
 * finished (a time step's MPI_Iallreduce of the same vector, every
 * MPI_Ibarrier) would build the same graph. When the application frees a
 * finished operation's request, the operation is kept (at most
 * PIANO_COLL_CACHE of them in the process) with its committed graph and
 * scratch memory, and coll_op_begin() hands it to the next call with an
 * equal key on the same communicator, its messages moved to the new call's
 * tags. Only keys whose datatypes and operation are predefined: a user's
 * type or operation freed and made again may come back under the same
 * handle with another layout or commutativity, which the graph's shape
 * depends on.
 *
 * Why a generalized request: it is an MPI_Request like any other,
 * accepted by every completion call alone or in arrays with the
 * application's requests, with a status the MPI fills from query_fn; its
 * cost is one MPI_Grequest_start per operation and the completion calls
 * that drive graphs (wait.c).
 */
#ifndef PIANO_COLL_OP_H
#define PIANO_COLL_OP_H

#include "hidden.h"
#include "coll_algo.h"

#include <mpi.h>
#include <piano/graph.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>

struct coll_shadow;

/* What decides a collective's graph besides its communicator: the builder
 * and the call's arguments (unused ones zero). */
enum coll_kind {
	COLL_NONE = 0, /* not kept for reuse (the `v` forms: counts in arrays) */
	COLL_IBARRIER,
	COLL_IBCAST,
	COLL_IREDUCE,
	COLL_IALLREDUCE,
	COLL_IALLTOALL,
	COLL_IALLGATHER,
	COLL_IGATHER,
	COLL_ISCATTER,
	COLL_IREDUCE_SCATTER_BLOCK,
	COLL_ISCAN,
	COLL_IEXSCAN,
};
struct coll_key {
	enum coll_kind kind;
	const void *sbuf, *rbuf;
	int scount, rcount, root;
	MPI_Datatype stype, rtype;
	MPI_Op op;
	long segment;
};

struct coll_op {
	piano_graph_t *g;
	struct coll_shadow *sh;
	int rank, size; /* in the communicator */
	int tag, ntags; /* the operation's tags: tag .. tag + ntags - 1 */
	/* Tags per pipeline segment: segment j's messages use tags tag + j *
	 * seg_tags ... (0: not cut in segments); coll_op_start() bounds the
	 * segments in flight by PIANO_COLL_WINDOW from it. Set by the
	 * builder. */
	int seg_tags;
	void **scratch; /* coll_op_scratch(): nscratch buffers of cap_scratch */
	bool one_node;  /* every rank on this node (coll_op_segment()) */
	int nscratch, cap_scratch;
	size_t scratch_bytes;
	MPI_Request req;
	/* Reuse (coll_op.c): the key it was built for (kind COLL_NONE: not
	 * kept), the communicator, and whether coll_op_begin() took it from
	 * the cache (built already). */
	struct coll_key key;
	MPI_Comm comm;
	bool reused;
	struct coll_op *next_dead; /* a list of operations to destroy (coll_op.c) */
	/* Persistent (coll_persist.h): req is the application's handle, a
	 * persistent receive of tag ptag; running and free_pending under that
	 * file's lock; own: duplicates of the caller's datatypes the graph
	 * names (an array on the heap), freed with the operation; held: the
	 * user-defined operation the graph reduces with, held (op_hold.h)
	 * until the operation is destroyed. */
	bool persistent, running, free_pending;
	int ptag;
	MPI_Datatype *own;
	int nown;
	bool op_held;
	MPI_Op held;
};

/*
 * A builder's call bracket (coll_persist.h), set for the calling thread
 * around every call the MPI layer makes: coll_op_begin() takes the
 * duplicated datatypes and the held operation into the new operation, which
 * keeps them until it is destroyed, since the application may free its
 * handles as soon as the call returned (MPI-4.0 §2.5.1: pending operations
 * complete normally). In persistent mode (not `transient`) coll_op_begin()
 * makes a new operation with tags of its own for its whole life (or fails
 * with COLL_ENOTAGS), and coll_op_start() commits it without starting and
 * leaves it in `op` for coll_persist_end().
 */
enum { COLL_ENOTAGS = -1 };
struct coll_persist {
	bool transient;    /* a non-blocking call's: started, no persistent handle */
	MPI_Datatype *own; /* duplicates of the caller's derived datatypes (heap) */
	int nown, cap;
	MPI_Datatype *lists[2]; /* coll_persist_types()'s arrays, freed at the end */
	int nlists;
	bool op_held; /* held: the user-defined operation held (op_hold.h) */
	MPI_Op held;
	int err;            /* a duplicate or a hold that failed */
	struct coll_op *op; /* committed by the builder */
	struct coll_persist *outer;
};
extern _Thread_local struct coll_persist *coll_op_persist;

/* An operation on comm for the call described by key (NULL: never reused):
 * one kept from an earlier call with an equal key (coll_op_reused()), or a
 * new one with an empty graph. In persistent mode (coll_persist.h) always
 * a new one, or COLL_ENOTAGS. */
int coll_op_begin(MPI_Comm comm, const struct coll_key *key, struct coll_op **out);
static inline bool coll_op_reused(const struct coll_op *op) { return op->reused; }
/* The pipeline segment of op: the node's when every rank of its
 * communicator is on this node (a value every rank computes alike: its
 * world on one node and the communicator within its world), else
 * `segment`. */
static inline long coll_op_segment(const struct coll_op *op, long segment)
{
	return op->one_node && coll_node_segment > 0 ? coll_node_segment : segment;
}
/* Memory for the operation's lifetime (not zeroed), NULL when out of
 * memory. */
void *coll_op_scratch(struct coll_op *op, size_t bytes);
int coll_op_start(struct coll_op *op, MPI_Request *request);
/* Destroys an operation that is not running. */
void coll_op_abandon(struct coll_op *op);
/* Destroys the finished operations whose datatype duplicates or operation
 * hold could not be released inside the MPI's completion call (coll_op.c);
 * called from the application's calls, and at MPI_Finalize once no graph
 * runs. */
void coll_op_reap(void);

/* PIANO_E* of a graph call as an MPI error code, for the builders. */
int coll_mpi_error(int piano_rc);
/* A builder's step: the graph call made while `rc` (an MPI code in the
 * caller's scope) is still MPI_SUCCESS, its error kept otherwise, so a
 * builder checks once at the end. */
#define COLL_ADD(call)                             \
	do {                                       \
		if (rc == MPI_SUCCESS)             \
			rc = coll_mpi_error(call); \
	} while (0)

/* Whether one of the n handles is the request of a running or unwaited
 * graph collective (for the completion calls, which then drive graphs
 * from the caller's thread); false at once when there is none. */
bool coll_op_among_slow(const MPI_Request *reqs, int n);
extern PIANO_HIDDEN _Atomic long coll_op_nlive;
/* Inline: every completion call of the application asks, and most
 * processes have no graph collective running. Relaxed: a hint; a request
 * the caller holds was registered before the caller got it. */
static inline bool coll_op_among(const MPI_Request *reqs, int n)
{
	return atomic_load_explicit(&coll_op_nlive, memory_order_relaxed) &&
	       coll_op_among_slow(reqs, n);
}

#endif

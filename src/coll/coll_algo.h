/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * piano's non-blocking collectives as graphs (docs/coll.md, "Collectives"):
 * one builder per collective, each building its algorithm's graph on an
 * operation (coll_op.h) and starting it. Arguments are the MPI call's,
 * already checked by the caller (coll.c) as the MPI would; `segment` is
 * the pipeline's segment in bytes (PIANO_COLL_SEGMENT). Return an MPI error
 * code; *request is the operation's request on success.
 */
#ifndef PIANO_COLL_ALGO_H
#define PIANO_COLL_ALGO_H

#include "hidden.h"
#include <mpi.h>
#include <stdbool.h>
#include <stddef.h>

int coll_ibarrier(MPI_Comm comm, MPI_Request *request);
int coll_ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, long segment,
                MPI_Request *request);
/* The reductions take counts past INT_MAX (MPI-4's large-count calls):
 * the vector in runs of at most INT_MAX elements, one graph
 * (coll_reduce.c). */
int coll_ireduce(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                 int root, MPI_Comm comm, long segment, MPI_Request *request);
/*
 * size blocks in one buffer, as the exchanges take them: block i holds
 * counts[i] elements of type at displs[i] extents from base; counts and
 * displs NULL: every block `count` elements, block i at i * count; types
 * not NULL (alltoallw): block i's elements are of types[i] and displs[i]
 * is in bytes.
 */
struct coll_blocks {
	const void *base;
	int count;
	const int *counts, *displs;
	MPI_Datatype type;
	const MPI_Datatype *types;
	const MPI_Aint *bdispls; /* with types: byte displacements as MPI_Aint
	                          * (MPI_Ineighbor_alltoallw, the large-count
	                          * forms) instead of displs */
};

/* Uniform blocks of `count` elements of `type`, block j at base + j *
 * stride; `dense`: each block's bytes are contiguous at its address +
 * shift (no gap inside or between elements: size == extent == true
 * extent), so it is copied with memcpy, not MPI_Pack. */
struct coll_block_layout {
	const void *base;
	int count;
	MPI_Datatype type;
	size_t stride;
	bool dense;
	MPI_Aint shift;
};
/* The layout of uniform blocks (count elements of type each) at base. */
struct coll_block_layout coll_block_layout_of(const void *base, int count, MPI_Datatype type);
/* MPI_Ialltoall as Bruck's exchange (coll_bruck.c) on op, blocks of
 * `block` packed bytes each, after node `after` (-1: none); chosen when
 * PIANO_COLL_BRUCK_MAX and PIANO_COLL_BRUCK_MIN_RANKS say so. */
struct coll_op;
int coll_bruck_alltoall(struct coll_op *op, const struct coll_block_layout *send,
                        const struct coll_block_layout *recv, size_t block, int after);
/* MPI_Iallgather as Bruck's concatenation (coll_bruck.c): `mine` this
 * rank's block (one block of the layout), recv the size blocks of
 * `block` packed bytes each; chosen as for the all-to-all. */
int coll_bruck_allgather(struct coll_op *op, const struct coll_block_layout *mine,
                         const struct coll_block_layout *recv, size_t block);
/* PIANO_COLL_BRUCK_MAX (bytes per block, 0: never) and
 * PIANO_COLL_BRUCK_MIN_RANKS (coll_tune()). */
extern PIANO_HIDDEN long coll_bruck_max;
extern PIANO_HIDDEN int coll_bruck_min_ranks;

/* send.base MPI_IN_PLACE (with uniform blocks only): the blocks are recv's. */
int coll_ialltoall(struct coll_blocks send, struct coll_blocks recv, MPI_Comm comm,
                   MPI_Request *request);
int coll_iallgather(const void *sendbuf, int scount, MPI_Datatype stype, struct coll_blocks recv,
                    MPI_Comm comm, MPI_Request *request);
/* MPI_Ineighbor_allgather(v) (send: one block, count x type at base, for
 * every out-neighbour) and MPI_Ineighbor_alltoall(v) (`alltoall`: block i
 * for out-neighbour i); recv: block i from in-neighbour i. COLL_ENOTAGS
 * (coll_op.h) when a Cartesian topology has more dimensions than the
 * operation has tags for: the MPI's own must run it. */
int coll_ineighbor(bool alltoall, struct coll_blocks send, struct coll_blocks recv, MPI_Comm comm,
                   MPI_Request *request);
/* comm's in- and out-neighbours (MPI error code, MPI_ERR_TOPOLOGY without
 * a topology). */
int coll_neighbor_counts(MPI_Comm comm, int *nin, int *nout);
int coll_igather(const void *sendbuf, int scount, MPI_Datatype stype, struct coll_blocks recv,
                 int root, MPI_Comm comm, MPI_Request *request);
int coll_iscatter(struct coll_blocks send, void *recvbuf, int rcount, MPI_Datatype rtype, int root,
                  MPI_Comm comm, MPI_Request *request);
int coll_ireduce_scatter_block(const void *sendbuf, void *recvbuf, int rcount, MPI_Datatype type,
                               MPI_Op op, MPI_Comm comm, long segment, MPI_Request *request);
/* rcounts: size counts whose sum fits an int. */
int coll_ireduce_scatter(const void *sendbuf, void *recvbuf, const int *rcounts, MPI_Datatype type,
                         MPI_Op op, MPI_Comm comm, long segment, MPI_Request *request);
int coll_iscan(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
               MPI_Comm comm, long segment, MPI_Request *request);
int coll_iexscan(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op op,
                 MPI_Comm comm, long segment, MPI_Request *request);
int coll_iallreduce(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type,
                    MPI_Op op, MPI_Comm comm, long segment, MPI_Request *request);
/* Tuning, set once before any collective (init.c), each value from the
 * setting named beside it (docs/configuration.md). */
struct coll_tuning {
	/* The smallest vector, in bytes, that MPI_Iallreduce (and the
	 * reduce-scatters built on it) cut into a reduce-scatter and an
	 * allgather instead of recursive doubling (PIANO_COLL_REDSCAT_MIN). */
	long redscat_min;
	/* The segment on a communicator whose ranks all share this node
	 * (PIANO_COLL_SEGMENT_NODE; 0: the builders' `segment` argument
	 * everywhere); world_one_node: every rank of MPI_COMM_WORLD is on
	 * this node. */
	long node_segment;
	bool world_one_node;
	int cache_max;       /* finished operations kept for reuse (PIANO_COLL_CACHE, coll_op.h) */
	int window;          /* PIANO_COLL_WINDOW */
	long bruck_max;      /* PIANO_COLL_BRUCK_MAX */
	int bruck_min_ranks; /* PIANO_COLL_BRUCK_MIN_RANKS */
	/* MPI_Ibcast by scatter + ring allgather from this many bytes on at
	 * least this many ranks (PIANO_COLL_BCAST_SCATTER_MIN, _MIN_RANKS);
	 * on communicators whose ranks all share this node only when
	 * bcast_scatter_node (the user set PIANO_COLL_BCAST_SCATTER_MIN). */
	long bcast_scatter_min;
	int bcast_scatter_min_ranks;
	bool bcast_scatter_node;
};
void coll_tune(const struct coll_tuning *t);
/* coll_tune()'s values (coll_tree.c): read-only once a collective ran. */
extern PIANO_HIDDEN long coll_redscat_min, coll_node_segment;
extern PIANO_HIDDEN bool coll_world_one_node;
extern PIANO_HIDDEN int coll_cache_max;
/* Segments (exchange steps, for the all-to-all) in flight per role and
 * peer (PIANO_COLL_WINDOW; 0: no bound). */
extern PIANO_HIDDEN int coll_window;
extern PIANO_HIDDEN long coll_bcast_scatter_min;
extern PIANO_HIDDEN int coll_bcast_scatter_min_ranks;
extern PIANO_HIDDEN bool coll_bcast_scatter_node;

/* Binomial tree of `size` ranks rooted at virtual rank 0 (coll_tree.c):
 * vr's parent (-1 for the root) and its children, the largest subtree
 * first; returns the number of children (at most 31). */
int coll_tree(int vr, int size, int *parent, int children[32]);

/* Segments of count elements of at most `segment` bytes each (at least one
 * element a segment, at most `max` segments; 1 for count 0). */
int coll_segments(int count, MPI_Datatype type, long segment, int max, int *seg_count);

/* The bytes of count elements of type, past INT_MAX too (-1: the MPI
 * cannot say). */
long coll_bytes(int count, MPI_Datatype type);

/* Whether t is a named datatype (its combiner MPI_COMBINER_NAMED or one of
 * the F90 ones, whose types are predefined too: MPI-4.0 §19.1.9); false
 * where the MPI cannot say. */
bool coll_type_named(MPI_Datatype t);

/* Whether elements of t are their bytes, in the order of t's type map,
 * from *shift (t's true lower bound) on, with no gap within or between
 * them: a named type without gaps (not the pair types), or contiguous
 * types and duplicates of one. Other layouts whose sizes look the same may
 * hold their data in another order (a vector of negative stride, a struct
 * whose displacements go down) or repeat it: they are packed. */
bool coll_type_dense(MPI_Datatype t, MPI_Aint *shift);

#endif

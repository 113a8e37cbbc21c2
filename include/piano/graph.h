/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * piano — dependency graphs of MPI operations (libpiano-mpi).
 *
 * A graph belongs to a communicator and holds nodes (SEND, RECV, CALC,
 * REDUCE, COPY) joined by edges: a node runs once every predecessor has
 * finished; nodes without predecessors run at start (receives are posted at
 * once). A started graph advances in the background: piano's progress task
 * tests its requests from idle threads and the timer while the application
 * computes without calling MPI (docs/coll.md). Build, commit once, then
 * start/test/wait as often as needed (persistent), and free.
 *
 * Conventions as in <piano/piano.h>: every call returns 0 or a negative
 * PIANO_E* code, outputs are written only on success, no call aborts.
 * Node indices are returned by the add calls, 0, 1, 2... in order.
 *
 * Tags: the caller chooses them, and the graph's messages travel on the
 * caller's communicator; keeping them apart from the application's own
 * traffic is the caller's job (a communicator of its own for the graph).
 * (piano's own collectives, PIANO_COLL, run on a duplicate of theirs:
 * docs/coll.md, "Collectives".)
 */
#ifndef PIANO_GRAPH_H
#define PIANO_GRAPH_H

#include <mpi.h>
#include <piano/piano.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct piano_graph piano_graph_t;

/*
 * A CALC node's callback: runs on whichever thread advances the graph (the
 * application's in test/wait, or one of piano's), never two of one graph at
 * once. Returns 0, or non-zero to fail the graph (piano_graph_wait() then
 * returns PIANO_ECANCELED and piano_graph_error() gives the value).
 * It must not call piano_graph_* on its own graph, nor block.
 */
typedef int (*piano_graph_fn)(void *arg);

/* An empty graph on `comm` (which must outlive it). MPI must be initialised
 * (PIANO_ESTATE otherwise), and not in piano's serialized mode: a program
 * that calls these functions gets MPI_THREAD_MULTIPLE from piano by default;
 * one that loads them with dlopen() after MPI_Init may not (PIANO_ESTATE,
 * said on stderr; docs/mpi.md, "Serialized mode"). */
PIANO_API int piano_graph_create(MPI_Comm comm, piano_graph_t **out);

/* Nodes. Buffers, datatypes and operations must stay valid while the graph
 * runs (the graph names the caller's handles; piano's own collectives hold
 * duplicates instead, docs/coll.md). `node` may be NULL. */
PIANO_API int piano_graph_add_send(piano_graph_t *g, const void *buf, int count, MPI_Datatype type,
                                   int peer, int tag, int *node);
PIANO_API int piano_graph_add_recv(piano_graph_t *g, void *buf, int count, MPI_Datatype type,
                                   int peer, int tag, int *node);
PIANO_API int piano_graph_add_calc(piano_graph_t *g, piano_graph_fn fn, void *arg, int *node);
/* inout = in op inout, MPI_Reduce_local's order (any op, any datatype). */
PIANO_API int piano_graph_add_reduce(piano_graph_t *g, const void *in, void *inout, int count,
                                     MPI_Datatype type, MPI_Op op, int *node);
/* Local copy with type conversion of layouts (same type signature): one
 * memmove when both layouts are dense (no gap inside or between elements,
 * as every predefined type but the pair types); one MPI_Pack straight into
 * a dense destination, or one MPI_Unpack straight from a dense source;
 * otherwise, or where the two layouts overlap, MPI_Pack into a buffer of
 * the graph and MPI_Unpack. Source and destination may overlap. Sizes past
 * INT_MAX bytes are taken (MPI-4's large-count calls); before MPI-4,
 * PIANO_ERANGE for a layout past INT_MAX bytes that is not dense on both
 * sides. */
PIANO_API int piano_graph_add_copy(piano_graph_t *g, const void *src, int scount,
                                   MPI_Datatype stype, void *dst, int dcount, MPI_Datatype dtype,
                                   int *node);
/* `to` runs only after `from` has finished. PIANO_ERANGE for a node that
 * does not exist, PIANO_EINVAL for an edge from a node to itself. */
PIANO_API int piano_graph_add_edge(piano_graph_t *g, int from, int to);

/*
 * Ends the build: PIANO_EINVAL if the edges make a cycle (the graph stays
 * buildable: nothing is committed), PIANO_ESTATE if already committed,
 * PIANO_ENOMEM. No node or edge may be added afterwards (PIANO_ESTATE).
 */
PIANO_API int piano_graph_commit(piano_graph_t *g);

/* Starts a committed graph that is not running (PIANO_ESTATE otherwise):
 * runs the nodes without predecessors and hands the graph to the engine. */
PIANO_API int piano_graph_start(piano_graph_t *g);

/*
 * Advances the graph once from the calling thread. *flag = 1 when every
 * node has finished; returns 0 then or while it runs, the graph's error
 * once it failed (see piano_graph_wait()). PIANO_ESTATE if never started.
 */
PIANO_API int piano_graph_test(piano_graph_t *g, int *flag);

/*
 * Until every node has finished: 0; PIANO_ESYS when an MPI call of a node
 * failed, PIANO_ECANCELED when a CALC callback did (piano_graph_error()
 * gives the code). A failed graph is not running: it may be started again.
 * PIANO_ESTATE if never started. The caller advances the graph itself;
 * a thread that called it while another thread already waited (on a graph
 * or in an MPI call) sleeps after 1 ms until the run ends, once piano's
 * threads drive the graphs (docs/coll.md, "How it runs").
 */
PIANO_API int piano_graph_wait(piano_graph_t *g);

/* The MPI error code, or the CALC callback's value, of the last run's
 * failure (0 if it did not fail) and the node that failed (-1 if none, or
 * if PMPI_Testsome itself failed). Either may be NULL. PIANO_EBUSY while
 * the graph runs. */
PIANO_API int piano_graph_error(const piano_graph_t *g, int *code, int *node);

/* Frees a graph that is not running (PIANO_EBUSY if it runs). */
PIANO_API int piano_graph_free(piano_graph_t *g);

#ifdef __cplusplus
}
#endif

#endif /* PIANO_GRAPH_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal interface of the graph engine (src/coll, docs/coll.md): the
 * graph object, the execution of its nodes (graph_step.c, graph_run.c) and the list of
 * running graphs that piano's progress task advances (graph_list.c).
 *
 * Ownership. The build fields (nodes' arguments, edges, the CSR arrays) are
 * written only by the application before piano_graph_commit() and are
 * read-only afterwards. The run fields (reqs, stack, share, ndone, nactive, err_*)
 * belong to whoever holds `lock`: the application's thread in start, test
 * and wait, or piano's progress task (which only ever trylocks it, so it
 * never waits for the application). `state` is written under `lock` and
 * read lock-free (acquire) by test/wait/free; it pairs with the release
 * store in graph_finish(). `listed` and the list links are protected by the
 * list's lock (graph_list.c).
 */
#ifndef PIANO_COLL_GRAPH_INTERNAL_H
#define PIANO_COLL_GRAPH_INTERNAL_H

#include <piano/graph.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

enum graph_state {
	GRAPH_BUILD = 0, /* nodes and edges may be added */
	GRAPH_READY,     /* committed, never started */
	GRAPH_RUNNING,   /* started, not finished */
	GRAPH_DONE,      /* every node finished */
	GRAPH_FAILED,    /* a node failed; its error is in err_code/err_node */
};

enum node_kind { NODE_SEND, NODE_RECV, NODE_CALC, NODE_REDUCE, NODE_COPY, NODE_POLL };

/* A POLL node's condition (graph_add_poll()): 1 when met, 0 not yet (asked
 * again at each step), or an MPI error code made negative to fail the
 * graph. Runs under the graph's lock, must not block. */
typedef int (*graph_poll_fn)(void *arg);

/* Called once per run by the thread that ended it, after the graph is off
 * the running list, its final state published and every lock of the engine
 * released: it may call the MPI (MPI_Grequest_complete: MPICH runs it under
 * its global lock, which a thread about to free the graph may hold). */
typedef void (*graph_ended_fn)(void *arg);

struct graph_node {
	enum node_kind kind;
	union {
		struct {
			void *buf;
			int count, peer, tag;
			MPI_Datatype type;
			int slot; /* index in reqs[] */
		} p2p;
		struct {
			int (*fn)(void *arg); /* piano_graph_fn, or graph_poll_fn */
			void *arg;
		} calc; /* CALC and POLL nodes */
		struct {
			const void *in;
			void *inout;
			int count;
			MPI_Datatype type;
			MPI_Op op;
			int size;        /* bytes of one element (0: not shared) */
			MPI_Aint extent; /* stride of the elements */
		} red;
		struct {
			const void *src;
			void *dst;
			int scount, dcount;
			MPI_Datatype stype, dtype;
			/* How the node moves its bytes. A dense layout (no gap
			 * inside or between elements) is its `bytes` at buf +
			 * shift (the type's true lower bound), as MPI_Pack lays
			 * them out:
			 * COPY_MOVE   both dense: one memmove;
			 * COPY_PACK   the destination dense: MPI_Pack straight
			 *             into it;
			 * COPY_UNPACK the source dense: MPI_Unpack straight
			 *             from it;
			 * COPY_STAGE  neither, or layouts that overlap (MPI_Pack
			 *             and MPI_Unpack take disjoint buffers):
			 *             through the graph's staging buffer. */
			enum { COPY_MOVE, COPY_PACK, COPY_UNPACK, COPY_STAGE } how;
			MPI_Aint sshift, dshift;
			size_t bytes;
		} copy;
	} u;
	int npred;             /* predecessors (set by commit) */
	int succ_first, nsucc; /* successors: succ[succ_first .. +nsucc) */
	/* Predecessors not finished yet in the current run. Reset (relaxed)
	 * under the graph's lock by start; decremented with acq_rel by the
	 * thread that finishes a predecessor: the release publishes what the
	 * predecessor wrote (a received buffer, a reduction) and the acquire of
	 * the decrement that reaches 0 makes all of it visible to the thread
	 * that then runs the node. */
	_Atomic int pending;
};

struct piano_graph {
	MPI_Comm comm;
	int comm_size;
	pthread_mutex_t lock;
	_Atomic int state; /* enum graph_state */

	/* build */
	struct graph_node *nodes;
	int nnodes, cap_nodes;
	int *edge_from, *edge_to;
	int nedges, cap_edges;
	int nreq; /* SEND and RECV nodes */

	/* set by commit */
	int *succ;            /* nedges successor indices (CSR) */
	MPI_Request *reqs;    /* nreq, MPI_REQUEST_NULL when not in flight */
	int *req_node;        /* nreq: slot -> node */
	int *idx;             /* nreq: PMPI_Testsome's output */
	MPI_Status *statuses; /* nreq */
	int *stack;           /* nnodes: nodes ready to run */
	void *pack;           /* COPY nodes' staging buffer */
	MPI_Count pack_size;  /* past INT_MAX on MPI-4 (the _c pack calls) */
	int *polls;           /* npoll: POLL nodes whose condition is not met yet */
	int npoll;

	/* set before start by the graph's maker (src/coll/coll_op.c) */
	graph_ended_fn ended_fn;
	void *ended_arg;

	/* run (under lock) */
	int nstack, ndone, nactive, npolling;
	int err_code, err_node;
	/* Ready reductions and copies that idle threads help with
	 * (graph_share.h); NULL between them and when the run ends. */
	struct graph_share *share;
	int ending; /* final state once the run has ended, 0 before */
	/* A waiter asleep on its own cond (graph_run.c), signalled by the
	 * thread that ends the run once every lock is released */
	piano_cond_t *sleeper;

	/* graph_list.c */
	struct piano_graph *next, *prev;
	bool listed;
};

/* graph_step.c, all under g->lock. graph_arm() readies a run (counts
 * reset, roots pushed, state RUNNING); graph_advance() tests the graph's
 * requests and runs the nodes they release, returns the nodes finished;
 * once graph_ended(), the caller takes g off the running list, then
 * graph_publish()es the final state. */
void graph_arm(piano_graph_t *g);
/* Internal node kind: finished once fn(arg) says its condition is met. */
int graph_add_poll(piano_graph_t *g, graph_poll_fn fn, void *arg, int *node);

/* The maker's hook of a run that ended, and its sleeping waiter, read under
 * g->lock before the final state is published (after that the graph may be
 * freed by its owner) and called once every lock is released; fn NULL for
 * none. */
struct graph_end {
	graph_ended_fn fn;
	void *arg;
	piano_cond_t *sleeper;
};
/* Takes the sleeper off the graph: it is signalled once, by whoever ends
 * the run. */
static inline struct graph_end graph_end_of(piano_graph_t *g)
{
	struct graph_end e = { g->ended_fn, g->ended_arg, g->sleeper };
	g->sleeper = NULL;
	return e;
}
/* The hook, then the sleeper: its cond lives on the sleeping thread's stack
 * and that thread may free the graph once woken; the signal is the last
 * access to either. */
static inline void graph_end_call(struct graph_end e)
{
	if (e.fn)
		e.fn(e.arg);
	if (e.sleeper)
		piano_cond_signal(e.sleeper, 1);
}
unsigned graph_advance(piano_graph_t *g);
/* graph_build.c: moves every SEND and RECV node's tag by delta, for the
 * maker of a committed graph that is not running (its next run uses new
 * tags, coll_op.c); the nodes are read by nobody else until the start.
 * PIANO_ESTATE while it runs or before the commit. */
int graph_retag(piano_graph_t *g, int delta);
/* graph_build.c, before the commit: bounds a pipeline's segments in flight.
 * Each SEND or RECV node of tag t >= tag0 + window * tags_per_seg waits
 * for the node of the same kind and peer with tag t - window *
 * tags_per_seg, its counterpart `window` segments earlier (the builders
 * give segment j the tags tag0 + j * tags_per_seg ...). Cannot deadlock
 * when each segment's nodes depend only on nodes of its own or earlier
 * segments: by induction, the segments before j complete, which releases
 * j's window edges on both sides of each of its messages. *added: the
 * edges added. */
int graph_window(piano_graph_t *g, int tag0, int tags_per_seg, int window, int *added);
bool graph_ended(const piano_graph_t *g);
void graph_publish(piano_graph_t *g);

#endif

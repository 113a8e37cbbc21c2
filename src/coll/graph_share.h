/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Sharing a graph's ready reductions and copies with idle cores
 * (graph_share.c, docs/coll.md "Shared reductions"). The thread stepping a
 * graph moves the REDUCE and dense COPY nodes it finds ready into a share
 * when they hold PIANO_COLL_SHARE bytes or more, cut in pieces of 64 KiB;
 * piano's idle threads take pieces
 * from it through an ltask while the stepping thread takes them too, so a
 * large reduction runs on every idle core at once instead of on the one
 * thread that holds the graph's lock.
 *
 * Protocol. The stepping thread writes the pieces before
 * piano_ltask_submit(), whose queue push publishes them to the helpers.
 * A piece is claimed by one fetch_add on `next` (relaxed: the pieces are
 * read-only once published, and the claim only picks an index), run, then
 * counted by a release fetch_add on `finished`; the stepping thread, under
 * the graph's lock, reads `finished` with acquire, so once it sees every
 * piece finished it sees every write of the helpers, and only then finishes
 * the shared nodes (node_done() in graph_step.c, whose acq_rel chain passes
 * those writes on to the successors). Helpers never touch the graph: a
 * piece holds copies of its node's arguments, and the share is freed by
 * whoever drops its last reference (the graph's, and one per helper task).
 */
#ifndef PIANO_COLL_GRAPH_SHARE_H
#define PIANO_COLL_GRAPH_SHARE_H

#include "graph_internal.h"

#include <stdbool.h>

struct poker;

/* What the share asks of the MPI layer's idle-thread rules (starve.h),
 * given at set-up so that the graph engine's lowest files call nothing
 * above them (docs/mpi.md, "Layers"): an idle thread's raise and marks
 * around its pieces, and a waiter's relief of a preempted helper. */
struct graph_share_hooks {
	bool (*raise)(void);
	void (*lower)(bool raised);
	struct poker *(*begin)(void);
	void (*end)(struct poker *p);
	void (*relieve)(void);
};

/* PIANO_COLL_SHARE: the smallest total shared, 0 for no sharing; and the
 * hooks (copied). Set once at set-up, before any graph runs. */
void graph_share_setup(long min_total, const struct graph_share_hooks *hooks);

/* An application thread whose graph waits only for pieces other threads
 * run: gives a helper preempted at SCHED_IDLE the CPU (hooks.relieve). */
void graph_share_relieve(void);

/* PIANO_COLL_SHARE (0: never): a step sums the ready nodes' bytes and asks
 * for a share only from this total. */
long graph_share_min(void);

/* Bytes a ready local node would put in a share, 0 when it cannot be
 * shared (a CALC, a copy through the staging buffer or between overlapping
 * layouts, a node too small to be worth it). */
size_t graph_share_bytes(const struct graph_node *n);

/* A share of the nodes `nodes[0..n)` of g (each with graph_share_bytes()
 * > 0), when together they hold PIANO_COLL_SHARE bytes and two pieces at
 * least, and idle threads exist; NULL otherwise or
 * when out of memory (the caller then runs them itself). Helpers are
 * asked for at once. */
struct graph_share *graph_share_make(const piano_graph_t *g, const int *nodes, int n);

/* Runs unclaimed pieces on the calling thread until none is left; returns
 * how many it ran. */
unsigned graph_share_work(struct graph_share *s);

/* Every piece finished (acquire, see above). */
bool graph_share_done(struct graph_share *s);

/* Once done: the shared nodes, and the MPI error of the first piece that
 * failed (0: none) with its node in *err_node. */
int graph_share_result(const struct graph_share *s, const int **nodes, int *n, int *err_node);

/* Some piece is claimed by another thread and not finished. */
bool graph_share_behind(struct graph_share *s);

/* Stops further claims and waits for the pieces already claimed (a graph
 * that fails: its buffers must be left alone once it reports the end). */
void graph_share_drain(struct graph_share *s);

/* Drops the graph's reference. */
void graph_share_put(struct graph_share *s);

#endif

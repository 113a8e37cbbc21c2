/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * One step of a running graph: test its requests and run the nodes they
 * release, from the application's test/wait or from piano's progress task,
 * whoever holds the graph's lock. It calls only the MPI: listing and
 * unlisting the graph is its callers' (graph_list.c, graph_run.c), which
 * publish the end of a run once the graph is off the list.
 *
 * A node whose pending count reaches 0 is pushed on the graph's stack; the
 * step pops and runs nodes until the stack is empty, so a chain of local
 * nodes (CALC, REDUCE, COPY) is released iteratively, never by recursion.
 * SEND and RECV nodes post their request and finish when PMPI_Testsome
 * reports it; the others finish as soon as they ran, except the large
 * reductions and copies, which go to a share that idle threads help with
 * (graph_share.h) and finish once all its pieces are done.
 */
#include "graph_internal.h"
#include "graph_hold.h"
#include "graph_list.h"
#include "graph_share.h"

#include <string.h>

/* graph_posts(): this thread's own count, no sharing. */
static _Thread_local unsigned long posts_tl;

unsigned long graph_posts(void) { return posts_tl; }

static void graph_push(piano_graph_t *g, int node)
{
	g->stack[g->nstack++] = node; /* each node is pushed once per run */
}

/* `node` finished: its successors lose one pending predecessor each. */
static void node_done(piano_graph_t *g, int node)
{
	const struct graph_node *n = &g->nodes[node];
	g->ndone++;
	for (int e = 0; e < n->nsucc; e++) {
		int s = g->succ[n->succ_first + e];
		/* Pairs with itself in the other predecessors of s (see the
		 * comment of `pending`). */
		if (atomic_fetch_sub_explicit(&g->nodes[s].pending, 1, memory_order_acq_rel) == 1)
			graph_push(g, s);
	}
}

/* The run has ended: the final state is kept in `ending` until the caller
 * has unlinked the graph from the running list and publishes it
 * (graph_publish()). */
static void graph_finish(piano_graph_t *g, int state) { g->ending = state; }

/* A node failed: nothing more runs. The requests still in flight are
 * cancelled and freed (their buffers may still be written by the MPI until
 * the cancellation is complete: docs/coll.md). */
static void graph_fail(piano_graph_t *g, int node, int code)
{
	g->err_node = node;
	g->err_code = code;
	if (g->share) {
		graph_share_drain(g->share);
		graph_share_put(g->share);
		g->share = NULL;
	}
	for (int i = 0; i < g->nreq; i++) {
		if (g->reqs[i] == MPI_REQUEST_NULL)
			continue;
		PMPI_Cancel(&g->reqs[i]);
		PMPI_Request_free(&g->reqs[i]);
		g->reqs[i] = MPI_REQUEST_NULL;
	}
	g->nactive = 0;
	g->nstack = 0;
	g->npolling = 0;
	graph_finish(g, GRAPH_FAILED);
}

/* Runs one node. Returns 0, or the MPI error (or the callback's value) that
 * fails the graph. */
/* A COPY node (its `how`, graph_internal.h). */
static int copy_run(piano_graph_t *g, const struct graph_node *n)
{
	char *dst = (char *)n->u.copy.dst;
	const char *src = (const char *)n->u.copy.src;
	if (n->u.copy.how == COPY_MOVE) {
		/* memmove: an in-place collective may hand overlapping layouts;
		 * the bytes are those pack and unpack would move. */
		memmove(dst + n->u.copy.dshift, src + n->u.copy.sshift, n->u.copy.bytes);
		return MPI_SUCCESS;
	}
	/* Nothing to copy: Open MPI's MPI_Pack rejects a NULL buffer even for
	 * 0 elements (a graph whose COPY nodes pack to 0 bytes has no staging
	 * buffer). */
	if (!n->u.copy.bytes)
		return MPI_SUCCESS;
#if MPI_VERSION >= 4
	typedef MPI_Count pos_t;
#define PACK PMPI_Pack_c
#define UNPACK PMPI_Unpack_c
#else
	/* Below INT_MAX bytes (piano_graph_add_copy()). */
	typedef int pos_t;
#define PACK PMPI_Pack
#define UNPACK PMPI_Unpack
#endif
	pos_t pos = 0, upos = 0, bytes = (pos_t)n->u.copy.bytes;
	int rc;
	switch (n->u.copy.how) {
	case COPY_PACK:
		rc = PACK(src, n->u.copy.scount, n->u.copy.stype, dst + n->u.copy.dshift, bytes,
		          &pos, MPI_COMM_SELF);
		break;
	case COPY_UNPACK:
		rc = UNPACK(src + n->u.copy.sshift, bytes, &upos, dst, n->u.copy.dcount,
		            n->u.copy.dtype, MPI_COMM_SELF);
		break;
	default:
		rc = PACK(src, n->u.copy.scount, n->u.copy.stype, g->pack, (pos_t)g->pack_size,
		          &pos, MPI_COMM_SELF);
		if (rc == MPI_SUCCESS)
			rc = UNPACK(g->pack, pos, &upos, dst, n->u.copy.dcount, n->u.copy.dtype,
			            MPI_COMM_SELF);
	}
#undef PACK
#undef UNPACK
	return rc;
}

static int node_run(piano_graph_t *g, int node)
{
	struct graph_node *n = &g->nodes[node];
	int rc;
	switch (n->kind) {
	case NODE_SEND:
		rc = PMPI_Isend(n->u.p2p.buf, n->u.p2p.count, n->u.p2p.type, n->u.p2p.peer,
		                n->u.p2p.tag, g->comm, &g->reqs[n->u.p2p.slot]);
		if (rc == MPI_SUCCESS) {
			g->nactive++;
			posts_tl++;
		}
		return rc;
	case NODE_RECV:
		rc = PMPI_Irecv(n->u.p2p.buf, n->u.p2p.count, n->u.p2p.type, n->u.p2p.peer,
		                n->u.p2p.tag, g->comm, &g->reqs[n->u.p2p.slot]);
		if (rc == MPI_SUCCESS) {
			g->nactive++;
			posts_tl++;
		}
		return rc;
	case NODE_CALC: rc = n->u.calc.fn(n->u.calc.arg); break;
	case NODE_POLL:
		rc = n->u.calc.fn(n->u.calc.arg);
		if (rc == 0) {
			g->polls[g->npolling++] = node; /* asked again at each step */
			return 0;
		}
		rc = rc > 0 ? 0 : -rc;
		break;
	case NODE_REDUCE:
		/* MPI_Reduce_local of zero elements is valid; a zero-count node
		 * still orders its neighbours. */
		rc = PMPI_Reduce_local(n->u.red.in, n->u.red.inout, n->u.red.count, n->u.red.type,
		                       n->u.red.op);
		break;
	case NODE_COPY: rc = copy_run(g, n); break;
	default: rc = MPI_ERR_INTERN;
	}
	if (rc == 0)
		node_done(g, node);
	return rc;
}

/* Moves the ready nodes worth sharing from the stack into a share, when
 * they make at least two pieces together. */
static void share_ready(piano_graph_t *g)
{
	/* Partition: the others to the bottom, in their order, the ones to
	 * share above them (the share keeps its own copy of the list). */
	int keep = 0;
	size_t total = 0;
	for (int i = 0; i < g->nstack; i++) {
		int node = g->stack[i];
		size_t b = graph_share_bytes(&g->nodes[node]);
		total += b;
		if (b)
			continue;
		g->stack[i] = g->stack[keep];
		g->stack[keep++] = node;
	}
	/* Below the threshold (the usual case): no share is asked for. */
	if (keep == g->nstack || total < (size_t)graph_share_min())
		return;
	g->share = graph_share_make(g, &g->stack[keep], g->nstack - keep);
	if (g->share)
		g->nstack = keep;
}

/* The share's pieces all finished: its nodes finish. Returns false if a
 * piece failed (the graph then failed). */
static bool share_collect(piano_graph_t *g, unsigned *work)
{
	const int *nodes;
	int n, err_node;
	int err = graph_share_result(g->share, &nodes, &n, &err_node);
	if (!err)
		for (int i = 0; i < n; i++) {
			node_done(g, nodes[i]);
			(*work)++;
		}
	graph_share_put(g->share);
	g->share = NULL;
	if (err) {
		graph_fail(g, err_node, err);
		return false;
	}
	return true;
}

/* Bytes the ready reductions and copies move (the CALC nodes' callbacks
 * are not counted: their cost is unknown). */
static size_t ready_bytes(const piano_graph_t *g)
{
	size_t b = 0;
	for (int i = 0; i < g->nstack; i++) {
		const struct graph_node *n = &g->nodes[g->stack[i]];
		if (n->kind == NODE_REDUCE)
			b += (size_t)n->u.red.count * (size_t)n->u.red.size;
		else if (n->kind == NODE_COPY)
			b += n->u.copy.bytes;
	}
	return b;
}

static bool run_ready_nodes(piano_graph_t *g, unsigned *work);

/* Runs the ready nodes until none is left (run_ready_nodes()). When they
 * move GRAPH_ASIDE_MIN bytes or more, the graph is set aside from the
 * timer's hold meanwhile (graph_hold.h): this thread holds the graph's
 * lock throughout, so a tick could only take the core from the work. A
 * single 16-32 MiB reduction started on one rank took 1.06-1.15 times
 * MPI_Reduce_local with the timer's ticks, 0.99-1.06 without a timer
 * (docs/performance.md, "Shared reductions"). Returns false if a node
 * failed. */
static bool run_ready(piano_graph_t *g, unsigned *work)
{
	bool aside = ready_bytes(g) >= GRAPH_ASIDE_MIN;
	if (aside)
		graph_hold_aside_begin();
	bool ok = run_ready_nodes(g, work);
	if (aside)
		graph_hold_aside_end();
	return ok;
}

/* Runs the ready nodes until none is left, sharing the large reductions
 * and copies: the other nodes first (they post transfers), then this
 * thread's part of the share. A share whose pieces other threads still run
 * stays for a later pass. Returns false if a node failed. */
static bool run_ready_nodes(piano_graph_t *g, unsigned *work)
{
	for (;;) {
		if (g->share && graph_share_done(g->share) && !share_collect(g, work))
			return false;
		if (!g->share && g->nstack)
			share_ready(g);
		while (g->nstack) {
			int node = g->stack[--g->nstack];
			int rc = node_run(g, node);
			if (rc) {
				graph_fail(g, node, rc);
				return false;
			}
			(*work)++;
		}
		if (!g->share)
			return true;
		*work += graph_share_work(g->share);
		if (!graph_share_done(g->share))
			return true;
	}
}

/* Asks the waiting POLL nodes again. Returns false if one failed. */
static bool poll_waiting(piano_graph_t *g, unsigned *work)
{
	for (int i = 0; i < g->npolling;) {
		int node = g->polls[i];
		int rc = g->nodes[node].u.calc.fn(g->nodes[node].u.calc.arg);
		if (rc == 0) {
			i++;
			continue;
		}
		if (rc < 0) {
			graph_fail(g, node, -rc);
			return false;
		}
		g->polls[i] = g->polls[--g->npolling];
		node_done(g, node);
		(*work)++;
	}
	return true;
}

/* One pass: the POLL nodes, one PMPI_Testsome, the nodes released. */
static unsigned advance_once(piano_graph_t *g)
{
	unsigned work = 0;
	if (g->npolling && !poll_waiting(g, &work))
		return work;
	if (g->nactive) {
		int out = 0;
		int rc = PMPI_Testsome(g->nreq, g->reqs, &out, g->idx, g->statuses);
		if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS) {
			graph_fail(g, -1, rc);
			return work;
		}
		for (int i = 0; out != MPI_UNDEFINED && i < out; i++) {
			int node = g->req_node[g->idx[i]];
			int err = rc == MPI_ERR_IN_STATUS ? g->statuses[i].MPI_ERROR : MPI_SUCCESS;
			g->nactive--;
			if (err != MPI_SUCCESS) {
				graph_fail(g, node, err);
				return work;
			}
			node_done(g, node);
			work++;
		}
	}
	if (!run_ready(g, &work))
		return work;
	if (g->ndone == g->nnodes)
		graph_finish(g, GRAPH_DONE);
	return work;
}

unsigned graph_advance(piano_graph_t *g)
{
	/* Passes while the last one finished nodes: the MPI moves a bounded
	 * amount of data per call (MPICH's shared-memory rendezvous a chunk per
	 * progress call), and the nodes just released post new requests; so a
	 * step goes as far as it can without waiting, as a loop of MPI_Test
	 * over the arrived receives does (a single pass left the chained
	 * broadcast of bench_pipeline 1.8-2.6x slower than that loop on
	 * MPICH). Each pass that did work finished a node, and at most one
	 * check pass (below) follows each: at most 2 nnodes + 2 passes. */
	unsigned work = 0, w;
	bool checked = false; /* the last pass was the check below */
	for (;;) {
		if (atomic_load_explicit(&g->state, memory_order_relaxed) != GRAPH_RUNNING ||
		    g->ending)
			break;
		w = advance_once(g);
		work += w;
		if (w) {
			checked = false;
			continue;
		}
		/* One more pass after the first that finished nothing: Open
		 * MPI's Testsome checks the requests first and, finding none
		 * complete, progresses and returns without checking again, so a
		 * receive that its progress call completed is seen only by the
		 * next Testsome. Without this pass that next one waited for the
		 * next step, which the socket watcher gives only on a new socket
		 * event: the peer, waiting for the send this receive releases,
		 * sent none, and the graph stood still until the timer's tick
		 * (test graph_progress_sockets, 1 run in ~25 with both ranks on
		 * one core). */
		if (checked || !g->nactive) {
			/* Held up by a piece that an idle thread, preempted at
			 * SCHED_IDLE, still runs: an application thread gives
			 * it the CPU (the MPI layer's rule for an idle thread's
			 * MPI call, starve.c). Engine threads do not: the timer
			 * runs on a computing core. */
			if (!work && g->share && graph_share_behind(g->share) &&
			    piano_point_current() < 0)
				graph_share_relieve();
			break;
		}
		checked = true;
	}
	return work;
}

void graph_arm(piano_graph_t *g)
{
	g->ndone = g->nactive = g->nstack = g->npolling = 0;
	g->share = NULL; /* every run ends with none (collected or drained) */
	g->ending = 0;
	g->err_code = 0;
	g->err_node = -1;
	/* Roots pushed last to first: they run in the order they were added
	 * (receives posted before the sends that may answer them). */
	for (int i = g->nnodes - 1; i >= 0; i--) {
		atomic_store_explicit(&g->nodes[i].pending, g->nodes[i].npred,
		                      memory_order_relaxed);
		if (!g->nodes[i].npred)
			graph_push(g, i);
	}
	atomic_store_explicit(&g->state, GRAPH_RUNNING, memory_order_relaxed);
}

bool graph_ended(const piano_graph_t *g) { return g->ending != 0; }

void graph_publish(piano_graph_t *g)
{
	/* Release, partner: the acquire loads of test/wait/error/free. The
	 * caller has unlinked g from the running list: a thread that sees the
	 * final state knows the progress task can no longer reach it. */
	atomic_store_explicit(&g->state, g->ending, memory_order_release);
}

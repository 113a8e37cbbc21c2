/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A graph's ready reductions and copies, cut in pieces that idle threads
 * run beside the thread stepping the graph (graph_share.h for the
 * protocol; docs/coll.md, "Shared reductions").
 *
 * Helpers are NOWAIT ltasks on the machine's queue, which every idle thread
 * polls. A helper runs at idle threads and explicit polls only: the timer
 * ticks on a core where the application computes, and taking a piece there
 * would take that time from it (the stepping thread runs what no idle core
 * takes). An idle thread raises itself to SCHED_OTHER for its pieces where
 * it may (starve_raise(), as for its MPI calls), and marks each piece as a
 * call in progress (starve_begin()), so that a waiter that finds the graph
 * held up by a piece of a preempted SCHED_IDLE thread relieves it
 * (starve_relieve()) instead of waiting for its core to be idle again;
 * those come as hooks from set-up (graph_share.h). Idle threads paused for
 * good (retired, docs/mpi.md) still count: their helper task is completed
 * by the next poll after the stepping thread has claimed every piece.
 */
#include "graph_share.h"
#include "base.h"
#include "sys.h"

#include <stdlib.h>
#include <string.h>

/* Nodes smaller than this are left to the stepping thread: a piece costs a
 * claim, a count and, for a helper, a cache miss on every line. */
#define SHARE_NODE_MIN 4096
/* Bytes per piece: a claim per 64 KiB is noise beside the reduction's
 * 3-10 us, and 256 pieces of a 16 MiB total keep the cores' shares even.
 * 256 KiB pieces did the same (bench_share at 4-64 MiB). */
#define SHARE_PIECE 65536L

/* PIANO_COLL_SHARE: the smallest total shared, 0 for never. Written once
 * at set-up, before any graph runs. On this 2-core VM, a sum of doubles
 * (bench_share, one rank, the other core idle) took 0.6-0.8x the time
 * shared from 16 MiB, and 1.0-1.3x at 2-8 MiB, where both vectors still fit
 * in the caches. */
static long share_min;
static struct graph_share_hooks hooks; /* written once at set-up */

struct share_piece {
	int node;
	bool reduce;
	const char *in; /* reduce: in; copy: source, at its true lower bound */
	char *out;      /* reduce: inout; copy: destination, likewise */
	size_t bytes;   /* copy */
	int count;      /* reduce */
	MPI_Datatype type;
	MPI_Op op;
};

struct graph_share {
	_Atomic int refs;
	_Atomic int next;     /* next piece to claim (may pass npieces) */
	_Atomic int finished; /* pieces run (release by each runner) */
	_Atomic int err;      /* MPI error of the first piece that failed */
	_Atomic int err_node;
	int npieces, nnodes;
	int *nodes;
	struct share_piece pieces[];
};

void graph_share_setup(long min_total, const struct graph_share_hooks *h)
{
	share_min = min_total;
	hooks = *h;
}

long graph_share_min(void) { return share_min; }

void graph_share_relieve(void)
{
	if (hooks.relieve)
		hooks.relieve();
}

static bool overlap(const char *a, const char *b, size_t n) { return a < b + n && b < a + n; }

size_t graph_share_bytes(const struct graph_node *n)
{
	size_t b = 0;
	if (!share_min)
		return 0;
	if (n->kind == NODE_REDUCE && n->u.red.size > 0)
		b = (size_t)n->u.red.count * (size_t)n->u.red.size;
	else if (n->kind == NODE_COPY && n->u.copy.how == COPY_MOVE &&
	         /* Pieces of one memmove between overlapping layouts (an
	          * in-place collective) would read what another piece wrote. */
	         !overlap((const char *)n->u.copy.src + n->u.copy.sshift,
	                  (const char *)n->u.copy.dst + n->u.copy.dshift, n->u.copy.bytes))
		b = n->u.copy.bytes;
	return b >= SHARE_NODE_MIN ? b : 0;
}

/* Elements (reduce) or bytes (copy) per piece of node n, and its pieces. */
static int node_pieces(const struct graph_node *n, long *per)
{
	long total;
	if (n->kind == NODE_REDUCE) {
		*per = SHARE_PIECE / n->u.red.size;
		total = n->u.red.count;
	} else {
		*per = SHARE_PIECE;
		total = (long)n->u.copy.bytes;
	}
	if (*per < 1)
		*per = 1;
	return (int)((total + *per - 1) / *per);
}

static int piece_run(const struct share_piece *p)
{
	if (p->reduce)
		return PMPI_Reduce_local(p->in, p->out, p->count, p->type, p->op);
	memcpy(p->out, p->in, p->bytes); /* layouts checked apart: graph_share_bytes() */
	return MPI_SUCCESS;
}

/* Claims and runs pieces until none is left. `mark`: each piece is marked
 * as a call a waiter may relieve (an idle thread's). */
static unsigned claim_run(struct graph_share *s, bool mark)
{
	unsigned n = 0;
	for (;;) {
		int i = atomic_fetch_add_explicit(&s->next, 1, memory_order_relaxed);
		if (i >= s->npieces)
			break;
		struct poker *p = mark && hooks.begin ? hooks.begin() : NULL;
		int rc = piece_run(&s->pieces[i]);
		if (p)
			hooks.end(p);
		int none = 0;
		if (rc != MPI_SUCCESS &&
		    atomic_compare_exchange_strong_explicit(&s->err, &none, rc,
		                                            memory_order_relaxed,
		                                            memory_order_relaxed))
			atomic_store_explicit(&s->err_node, s->pieces[i].node,
			                      memory_order_relaxed);
		/* Release: the piece's writes (and the error above) before the
		 * count the stepping thread reads with acquire. */
		atomic_fetch_add_explicit(&s->finished, 1, memory_order_release);
		n++;
	}
	return n;
}

static void share_unref(void *arg)
{
	struct graph_share *s = arg;
	/* acq_rel: the last one to drop sees every other's accesses done. */
	if (atomic_fetch_sub_explicit(&s->refs, 1, memory_order_acq_rel) == 1) {
		free(s->nodes);
		free(s);
	}
}

static unsigned helper_run(void *arg)
{
	struct graph_share *s = arg;
	unsigned n = 0;
	int point = piano_point_current();
	if (atomic_load_explicit(&s->next, memory_order_relaxed) < s->npieces &&
	    (point == PIANO_POINT_IDLE || point == PIANO_POINT_EXPLICIT)) {
		bool raised = hooks.raise && hooks.raise();
		n = claim_run(s, true);
		if (raised)
			hooks.lower(raised);
		if (n)
			atomic_fetch_add_explicit(&pmpi_g.graph_pieces_helped, n,
			                          memory_order_relaxed);
	}
	/* Every piece claimed: nothing is left for a helper (the stepping
	 * thread claims all it finds, so this comes soon). */
	if (atomic_load_explicit(&s->next, memory_order_relaxed) >= s->npieces)
		piano_ltask_complete(piano_ltask_current());
	return n;
}

/* One helper task on the machine's queue; false if it could not be made. */
static bool helper_submit(struct graph_share *s)
{
	piano_ltask_t *t = NULL;
	if (piano_ltask_create(helper_run, s, PIANO_LTASK_NOWAIT, &t))
		return false;
	if (piano_ltask_set_dtor(t, share_unref) || piano_ltask_bind_queue(t, 0) ||
	    piano_ltask_set_name(t, "piano-share"))
		goto destroy_task;
	atomic_fetch_add_explicit(&s->refs, 1, memory_order_relaxed);
	if (piano_ltask_submit(t)) {
		atomic_fetch_sub_explicit(&s->refs, 1, memory_order_relaxed);
		goto destroy_task;
	}
	return true;
destroy_task:
	piano_ltask_destroy(t);
	return false;
}

struct graph_share *graph_share_make(const piano_graph_t *g, const int *nodes, int n)
{
	int idle = 0;
	if (!share_min || !pmpi_g.threaded || piano_thread_count(PIANO_POINT_IDLE, &idle) ||
	    idle < 1)
		return NULL;
	long per;
	long total = 0;
	size_t bytes = 0;
	for (int i = 0; i < n; i++) {
		total += node_pieces(&g->nodes[nodes[i]], &per);
		bytes += graph_share_bytes(&g->nodes[nodes[i]]);
	}
	if (total < 2 || bytes < (size_t)share_min || total > 1 << 20)
		return NULL;
	struct graph_share *s = malloc(sizeof(*s) + (size_t)total * sizeof(s->pieces[0]));
	if (!s)
		return NULL;
	s->nodes = malloc((size_t)n * sizeof(int));
	if (!s->nodes) {
		free(s);
		return NULL;
	}
	memcpy(s->nodes, nodes, (size_t)n * sizeof(int));
	s->nnodes = n;
	s->npieces = (int)total;
	atomic_init(&s->refs, 1);
	atomic_init(&s->next, 0);
	atomic_init(&s->finished, 0);
	atomic_init(&s->err, 0);
	atomic_init(&s->err_node, -1);
	int k = 0;
	for (int i = 0; i < n; i++) {
		const struct graph_node *nd = &g->nodes[nodes[i]];
		int m = node_pieces(nd, &per);
		for (int j = 0; j < m; j++) {
			struct share_piece *p = &s->pieces[k++];
			memset(p, 0, sizeof(*p));
			p->node = nodes[i];
			long a = (long)j * per;
			if (nd->kind == NODE_REDUCE) {
				/* Element a is a * extent bytes on, whatever the
				 * type: MPI lays count elements out that way. */
				MPI_Aint at = (MPI_Aint)a * nd->u.red.extent;
				p->reduce = true;
				p->in = (const char *)nd->u.red.in + at;
				p->out = (char *)nd->u.red.inout + at;
				p->count = (int)(nd->u.red.count - a < per ? nd->u.red.count - a
				                                           : per);
				p->type = nd->u.red.type;
				p->op = nd->u.red.op;
			} else {
				p->in = (const char *)nd->u.copy.src + nd->u.copy.sshift + a;
				p->out = (char *)nd->u.copy.dst + nd->u.copy.dshift + a;
				p->bytes = (size_t)((long)nd->u.copy.bytes - a < per
				                            ? (long)nd->u.copy.bytes - a
				                            : per);
			}
		}
	}
	atomic_fetch_add_explicit(&pmpi_g.graph_shares, 1, memory_order_relaxed);
	int want = s->npieces - 1 < idle ? s->npieces - 1 : idle;
	for (int i = 0; i < want; i++)
		if (!helper_submit(s))
			break; /* the stepping thread runs what is left */
	return s;
}

unsigned graph_share_work(struct graph_share *s) { return claim_run(s, false); }

bool graph_share_done(struct graph_share *s)
{
	return atomic_load_explicit(&s->finished, memory_order_acquire) == s->npieces;
}

int graph_share_result(const struct graph_share *s, const int **nodes, int *n, int *err_node)
{
	*nodes = s->nodes;
	*n = s->nnodes;
	*err_node = atomic_load_explicit(&s->err_node, memory_order_relaxed);
	return atomic_load_explicit(&s->err, memory_order_relaxed);
}

bool graph_share_behind(struct graph_share *s)
{
	int claimed = atomic_load_explicit(&s->next, memory_order_relaxed);
	if (claimed > s->npieces)
		claimed = s->npieces;
	return atomic_load_explicit(&s->finished, memory_order_relaxed) < claimed;
}

void graph_share_drain(struct graph_share *s)
{
	int claimed = atomic_exchange_explicit(&s->next, s->npieces, memory_order_relaxed);
	if (claimed > s->npieces)
		claimed = s->npieces;
	/* Acquire: the helpers' writes are done before the graph reports its
	 * end and its owner may reuse the buffers. */
	while (atomic_load_explicit(&s->finished, memory_order_acquire) < claimed) {
		graph_share_relieve();
		sys_yield();
	}
}

void graph_share_put(struct graph_share *s) { share_unref(s); }

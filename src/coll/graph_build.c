/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Building a graph: nodes, edges, and the commit that checks them (cycles)
 * and lays them out flat for the run (successor lists in one array, the
 * request array of the SEND and RECV nodes).
 */
#include "base.h"
#include "coll_algo.h"
#include "graph_internal.h"
#include "init.h"

#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int piano_graph_create(MPI_Comm comm, piano_graph_t **out)
{
	int init = 0, fin = 0;
	if (!out || comm == MPI_COMM_NULL)
		return PIANO_EINVAL;
	PMPI_Initialized(&init);
	PMPI_Finalized(&fin);
	if (!init || fin)
		return PIANO_ESTATE;
	pmpi_ensure();
	if (pmpi_g.serial) {
		/* Only calls through the gate are serialized with the
		 * application's, and a graph's steps must run while it blocks in
		 * the MPI. A program that imports the API at MPI_Init never gets
		 * here (serial_wanted, init.c): one that opened it later does. */
		static _Atomic int told;
		if (!atomic_exchange(&told, 1))
			pmpi_warn("piano_graph_create: graphs need the MPI at MPI_THREAD_MULTIPLE, "
			          "and this process runs in serialized mode (docs/mpi.md, "
			          "\"Serialized mode\"); ask for MPI_THREAD_MULTIPLE or set "
			          "PIANO_MPI_THREAD_LEVEL=multiple");
		return PIANO_ESTATE;
	}
	int size;
	if (PMPI_Comm_size(comm, &size) != MPI_SUCCESS)
		return PIANO_EINVAL;
	piano_graph_t *g = calloc(1, sizeof(*g));
	if (!g)
		return PIANO_ENOMEM;
	if (pthread_mutex_init(&g->lock, NULL)) {
		free(g);
		return PIANO_ESYS;
	}
	g->comm = comm;
	g->comm_size = size;
	g->err_node = -1;
	atomic_init(&g->state, GRAPH_BUILD);
	*out = g;
	return 0;
}

static bool building(const piano_graph_t *g)
{
	return atomic_load_explicit(&g->state, memory_order_relaxed) == GRAPH_BUILD;
}

/* A new node of `kind` (NULL when out of memory). */
static struct graph_node *node_new(piano_graph_t *g, enum node_kind kind)
{
	if (g->nnodes == g->cap_nodes) {
		int ncap = g->cap_nodes ? 2 * g->cap_nodes : 16;
		struct graph_node *n = realloc(g->nodes, (size_t)ncap * sizeof(*n));
		if (!n)
			return NULL;
		g->nodes = n;
		g->cap_nodes = ncap;
	}
	struct graph_node *n = &g->nodes[g->nnodes];
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	return n;
}

static int node_added(piano_graph_t *g, int *node)
{
	if (node)
		*node = g->nnodes;
	g->nnodes++;
	return 0;
}

static bool type_ok(MPI_Datatype type, int count)
{
	return count >= 0 && type != MPI_DATATYPE_NULL;
}

static int add_p2p(piano_graph_t *g, enum node_kind kind, void *buf, int count, MPI_Datatype type,
                   int peer, int tag, int *node)
{
	if (!g || !type_ok(type, count))
		return PIANO_EINVAL;
	if (!building(g))
		return PIANO_ESTATE;
	bool any = kind == NODE_RECV;
	if (peer != MPI_PROC_NULL && !(any && peer == MPI_ANY_SOURCE) &&
	    (peer < 0 || peer >= g->comm_size))
		return PIANO_ERANGE;
	if (tag < 0 && !(any && tag == MPI_ANY_TAG))
		return PIANO_EINVAL;
	struct graph_node *n = node_new(g, kind);
	if (!n)
		return PIANO_ENOMEM;
	n->u.p2p.buf = buf;
	n->u.p2p.count = count;
	n->u.p2p.type = type;
	n->u.p2p.peer = peer;
	n->u.p2p.tag = tag;
	n->u.p2p.slot = g->nreq++;
	return node_added(g, node);
}

int piano_graph_add_send(piano_graph_t *g, const void *buf, int count, MPI_Datatype type, int peer,
                         int tag, int *node)
{
	/* The buffer is only ever passed to PMPI_Isend, which takes it const. */
	return add_p2p(g, NODE_SEND, (void *)(uintptr_t)buf, count, type, peer, tag, node);
}

int piano_graph_add_recv(piano_graph_t *g, void *buf, int count, MPI_Datatype type, int peer,
                         int tag, int *node)
{
	return add_p2p(g, NODE_RECV, buf, count, type, peer, tag, node);
}

/* A CALC or POLL node: a function of the graph's maker and its argument. */
static int add_fn(piano_graph_t *g, enum node_kind kind, int (*fn)(void *), void *arg, int *node)
{
	if (!g || !fn)
		return PIANO_EINVAL;
	if (!building(g))
		return PIANO_ESTATE;
	struct graph_node *n = node_new(g, kind);
	if (!n)
		return PIANO_ENOMEM;
	n->u.calc.fn = fn;
	n->u.calc.arg = arg;
	if (kind == NODE_POLL)
		g->npoll++;
	return node_added(g, node);
}

int piano_graph_add_calc(piano_graph_t *g, piano_graph_fn fn, void *arg, int *node)
{
	return add_fn(g, NODE_CALC, fn, arg, node);
}

int graph_add_poll(piano_graph_t *g, graph_poll_fn fn, void *arg, int *node)
{
	return add_fn(g, NODE_POLL, fn, arg, node);
}

int piano_graph_add_reduce(piano_graph_t *g, const void *in, void *inout, int count,
                           MPI_Datatype type, MPI_Op op, int *node)
{
	if (!g || !type_ok(type, count) || op == MPI_OP_NULL)
		return PIANO_EINVAL;
	if (!building(g))
		return PIANO_ESTATE;
	struct graph_node *n = node_new(g, NODE_REDUCE);
	if (!n)
		return PIANO_ENOMEM;
	n->u.red.in = in;
	n->u.red.inout = inout;
	n->u.red.count = count;
	n->u.red.type = type;
	n->u.red.op = op;
	/* For cutting it in pieces (graph_share.c); a type whose size or
	 * extent the MPI does not give is never shared. */
	MPI_Aint lb, ext;
	int size;
	if (PMPI_Type_size(type, &size) == MPI_SUCCESS &&
	    PMPI_Type_get_extent(type, &lb, &ext) == MPI_SUCCESS && ext > 0) {
		n->u.red.size = size;
		n->u.red.extent = ext;
	}
	return node_added(g, node);
}

/* The bytes of one element of t, past INT_MAX too (a block of the
 * large-count collectives is one element of a contiguous type of its
 * count: MPICH's int MPI_Type_size says MPI_UNDEFINED for it). */
static int type_size(MPI_Datatype t, MPI_Count *size)
{
#if MPI_VERSION >= 4
	return PMPI_Type_size_c(t, size);
#else
	return PMPI_Type_size_x(t, size);
#endif
}

/* The memory count elements of t at buf may touch: from the lowest true
 * lower bound of an element to the highest true upper bound. Unknown
 * (false) if the MPI does not say. */
static bool span_of(const void *buf, int count, MPI_Datatype t, uintptr_t *lo, uintptr_t *hi)
{
	MPI_Aint lb, ext, tlb, text;
	if (PMPI_Type_get_extent(t, &lb, &ext) != MPI_SUCCESS ||
	    PMPI_Type_get_true_extent(t, &tlb, &text) != MPI_SUCCESS)
		return false;
	MPI_Aint last = (MPI_Aint)(count - 1) * ext;
	*lo = (uintptr_t)buf + (uintptr_t)(tlb + (last < 0 ? last : 0));
	*hi = (uintptr_t)buf + (uintptr_t)(tlb + text + (last > 0 ? last : 0));
	return true;
}

/* Whether the two layouts may share memory (an in-place collective may
 * hand a copy onto itself); true where the MPI does not tell. */
static bool spans_overlap(const void *src, int scount, MPI_Datatype stype, const void *dst,
                          int dcount, MPI_Datatype dtype)
{
	uintptr_t slo, shi, dlo, dhi;
	if (scount <= 0 || dcount <= 0)
		return false;
	if (!span_of(src, scount, stype, &slo, &shi) || !span_of(dst, dcount, dtype, &dlo, &dhi))
		return true;
	return slo < dhi && dlo < shi;
}

int piano_graph_add_copy(piano_graph_t *g, const void *src, int scount, MPI_Datatype stype,
                         void *dst, int dcount, MPI_Datatype dtype, int *node)
{
	if (!g || !type_ok(stype, scount) || !type_ok(dtype, dcount))
		return PIANO_EINVAL;
	if (!building(g))
		return PIANO_ESTATE;
	MPI_Count ssize, dsize;
	if (type_size(stype, &ssize) != MPI_SUCCESS || type_size(dtype, &dsize) != MPI_SUCCESS ||
	    ssize < 0 || dsize < 0 || ssize * scount != dsize * dcount)
		return PIANO_EINVAL;
	struct graph_node *n = node_new(g, NODE_COPY);
	if (!n)
		return PIANO_ENOMEM;
	n->u.copy.src = src;
	n->u.copy.scount = scount;
	n->u.copy.stype = stype;
	n->u.copy.dst = dst;
	n->u.copy.dcount = dcount;
	n->u.copy.dtype = dtype;
	/* A side that is its bytes in type-map order (coll_type_dense()) is
	 * what MPI_Pack makes of the other: the copy packs into it or unpacks
	 * from it directly, with no staging buffer and one pass over the
	 * data, unless the two overlap. */
	bool sdense = coll_type_dense(stype, &n->u.copy.sshift);
	bool ddense = coll_type_dense(dtype, &n->u.copy.dshift);
	n->u.copy.bytes = (size_t)ssize * (size_t)scount;
	if (sdense && ddense)
		n->u.copy.how = COPY_MOVE;
	else if (spans_overlap(src, scount, stype, dst, dcount, dtype))
		n->u.copy.how = COPY_STAGE;
	else
		n->u.copy.how = ddense ? COPY_PACK : sdense ? COPY_UNPACK : COPY_STAGE;
#if MPI_VERSION < 4
	/* MPI-3's MPI_Pack counts its positions in int. */
	if (n->u.copy.how != COPY_MOVE && n->u.copy.bytes > INT_MAX)
		return PIANO_ERANGE; /* not added: node_added() counts it */
#endif
	return node_added(g, node);
}

int piano_graph_add_edge(piano_graph_t *g, int from, int to)
{
	if (!g)
		return PIANO_EINVAL;
	if (!building(g))
		return PIANO_ESTATE;
	if (from < 0 || from >= g->nnodes || to < 0 || to >= g->nnodes)
		return PIANO_ERANGE;
	if (from == to)
		return PIANO_EINVAL;
	if (g->nedges == g->cap_edges) {
		int ncap = g->cap_edges ? 2 * g->cap_edges : 16;
		int *f = realloc(g->edge_from, (size_t)ncap * sizeof(*f));
		if (!f)
			return PIANO_ENOMEM;
		g->edge_from = f;
		int *t = realloc(g->edge_to, (size_t)ncap * sizeof(*t));
		if (!t)
			return PIANO_ENOMEM;
		g->edge_to = t;
		g->cap_edges = ncap;
	}
	g->edge_from[g->nedges] = from;
	g->edge_to[g->nedges] = to;
	g->nedges++;
	return 0;
}

static void commit_undo(piano_graph_t *g)
{
	free(g->succ);
	free(g->reqs);
	free(g->req_node);
	free(g->idx);
	free(g->statuses);
	free(g->stack);
	free(g->pack);
	free(g->polls);
	g->succ = g->req_node = g->idx = g->stack = g->polls = NULL;
	g->reqs = NULL;
	g->statuses = NULL;
	g->pack = NULL;
}

/* Kahn's algorithm over the CSR: every node is removed once its
 * predecessors are, unless a cycle holds some back. Uses g->stack. */
static bool acyclic(piano_graph_t *g, int *left)
{
	int top = 0, seen = 0;
	for (int i = 0; i < g->nnodes; i++) {
		left[i] = g->nodes[i].npred;
		if (!left[i])
			g->stack[top++] = i;
	}
	while (top) {
		const struct graph_node *n = &g->nodes[g->stack[--top]];
		seen++;
		for (int e = 0; e < n->nsucc; e++) {
			int s = g->succ[n->succ_first + e];
			if (--left[s] == 0)
				g->stack[top++] = s;
		}
	}
	return seen == g->nnodes;
}

int piano_graph_commit(piano_graph_t *g)
{
	if (!g)
		return PIANO_EINVAL;
	if (!building(g))
		return PIANO_ESTATE;
	size_t nn = (size_t)g->nnodes, nr = (size_t)g->nreq;
	g->succ = malloc((g->nedges ? (size_t)g->nedges : 1) * sizeof(int));
	g->stack = malloc((nn ? nn : 1) * sizeof(int));
	g->reqs = malloc((nr ? nr : 1) * sizeof(MPI_Request));
	g->req_node = malloc((nr ? nr : 1) * sizeof(int));
	g->idx = malloc((nr ? nr : 1) * sizeof(int));
	g->statuses = malloc((nr ? nr : 1) * sizeof(MPI_Status));
	g->polls = malloc((g->npoll ? (size_t)g->npoll : 1) * sizeof(int));
	int *left = malloc((nn ? nn : 1) * sizeof(int));
	int rc = PIANO_ENOMEM;
	if (!g->succ || !g->stack || !g->reqs || !g->req_node || !g->idx || !g->statuses ||
	    !g->polls || !left)
		goto err_arrays;

	/* Successor lists, flat: count, prefix sums, fill. */
	for (int i = 0; i < g->nnodes; i++)
		g->nodes[i].npred = g->nodes[i].nsucc = 0;
	for (int e = 0; e < g->nedges; e++) {
		g->nodes[g->edge_from[e]].nsucc++;
		g->nodes[g->edge_to[e]].npred++;
	}
	int first = 0;
	for (int i = 0; i < g->nnodes; i++) {
		g->nodes[i].succ_first = first;
		first += g->nodes[i].nsucc;
		left[i] = 0;
	}
	for (int e = 0; e < g->nedges; e++) {
		const struct graph_node *n = &g->nodes[g->edge_from[e]];
		g->succ[n->succ_first + left[g->edge_from[e]]++] = g->edge_to[e];
	}
	rc = PIANO_EINVAL;
	if (!acyclic(g, left))
		goto err_arrays;

	/* Requests, and the staging buffer of the COPY nodes. */
	MPI_Count pack = 0;
	for (int i = 0; i < g->nnodes; i++) {
		struct graph_node *n = &g->nodes[i];
		if (n->kind == NODE_SEND || n->kind == NODE_RECV) {
			g->reqs[n->u.p2p.slot] = MPI_REQUEST_NULL;
			g->req_node[n->u.p2p.slot] = i;
		} else if (n->kind == NODE_COPY && n->u.copy.how == COPY_STAGE) {
			rc = PIANO_EINVAL;
#if MPI_VERSION >= 4
			MPI_Count sz;
			if (PMPI_Pack_size_c(n->u.copy.scount, n->u.copy.stype, MPI_COMM_SELF,
			                     &sz) != MPI_SUCCESS)
				goto err_arrays;
#else
			int sz;
			if (PMPI_Pack_size(n->u.copy.scount, n->u.copy.stype, MPI_COMM_SELF, &sz) !=
			    MPI_SUCCESS)
				goto err_arrays;
#endif
			if (sz > pack)
				pack = sz;
		}
	}
	if (pack) {
		rc = PIANO_ENOMEM;
		g->pack = malloc((size_t)pack);
		if (!g->pack)
			goto err_arrays;
		g->pack_size = pack;
	}
	free(left);
	/* The build fields are read-only from now on; the state is read
	 * lock-free by the other calls of the application's threads. */
	atomic_store_explicit(&g->state, GRAPH_READY, memory_order_release);
	return 0;

err_arrays:
	free(left);
	commit_undo(g);
	return rc;
}

int graph_retag(piano_graph_t *g, int delta)
{
	int st = atomic_load_explicit(&g->state, memory_order_acquire);
	if (st == GRAPH_BUILD || st == GRAPH_RUNNING)
		return PIANO_ESTATE;
	for (int i = 0; i < g->nnodes; i++) {
		struct graph_node *n = &g->nodes[i];
		if ((n->kind == NODE_SEND || n->kind == NODE_RECV) && n->u.p2p.tag != MPI_ANY_TAG)
			n->u.p2p.tag += delta;
	}
	return 0;
}

/* Slot of the SEND or RECV node (kind, peer, tag) in graph_window()'s
 * table, or of the empty slot where it would go. */
static size_t window_find(const piano_graph_t *g, const int *table, size_t mask,
                          enum node_kind kind, int peer, int tag)
{
	size_t h = ((size_t)(unsigned)tag * 2654435761u) ^ ((size_t)(unsigned)peer * 40503u) ^
	           (size_t)kind;
	for (;; h++) {
		int i = table[h & mask];
		if (i < 0)
			return h & mask;
		const struct graph_node *n = &g->nodes[i];
		if (n->kind == kind && n->u.p2p.peer == peer && n->u.p2p.tag == tag)
			return h & mask;
	}
}

int graph_window(piano_graph_t *g, int tag0, int tags_per_seg, int window, int *added)
{
	*added = 0;
	if (tags_per_seg <= 0 || window <= 0)
		return 0;
	if (!building(g))
		return PIANO_ESTATE;
	size_t cap = 16;
	while (cap < 2 * (size_t)g->nnodes)
		cap <<= 1;
	int *table = malloc(cap * sizeof(*table));
	if (!table)
		return PIANO_ENOMEM;
	for (size_t s = 0; s < cap; s++)
		table[s] = -1;
	for (int i = 0; i < g->nnodes; i++) {
		const struct graph_node *n = &g->nodes[i];
		if (n->kind != NODE_SEND && n->kind != NODE_RECV)
			continue;
		size_t s = window_find(g, table, cap - 1, n->kind, n->u.p2p.peer, n->u.p2p.tag);
		if (table[s] < 0)
			table[s] = i; /* the first of equal ones stands for them */
	}
	/* The distance in tags between a node and its counterpart `window`
	 * segments earlier; no overflow: tags stay below MPI_TAG_UB. */
	long back = (long)window * tags_per_seg;
	int rc = 0;
	for (int i = 0; i < g->nnodes && !rc; i++) {
		const struct graph_node *n = &g->nodes[i];
		if ((n->kind != NODE_SEND && n->kind != NODE_RECV) ||
		    n->u.p2p.tag - (long)tag0 < back)
			continue;
		int m = table[window_find(g, table, cap - 1, n->kind, n->u.p2p.peer,
		                          (int)(n->u.p2p.tag - back))];
		if (m < 0)
			continue;
		rc = piano_graph_add_edge(g, m, i);
		if (!rc)
			++*added;
	}
	free(table);
	return rc;
}

int piano_graph_error(const piano_graph_t *g, int *code, int *node)
{
	if (!g)
		return PIANO_EINVAL;
	int st = atomic_load_explicit(&g->state, memory_order_acquire);
	if (st == GRAPH_RUNNING)
		return PIANO_EBUSY;
	if (code)
		*code = st == GRAPH_FAILED ? g->err_code : 0;
	if (node)
		*node = st == GRAPH_FAILED ? g->err_node : -1;
	return 0;
}

int piano_graph_free(piano_graph_t *g)
{
	if (!g)
		return PIANO_EINVAL;
	if (atomic_load_explicit(&g->state, memory_order_acquire) == GRAPH_RUNNING)
		return PIANO_EBUSY;
	/* The thread that finished the graph may still be leaving its lock
	 * (graph_finish() publishes the state before the unlock). */
	pthread_mutex_lock(&g->lock);
	pthread_mutex_unlock(&g->lock);
	pthread_mutex_destroy(&g->lock);
	commit_undo(g);
	free(g->nodes);
	free(g->edge_from);
	free(g->edge_to);
	free(g);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The block exchanges as graphs: MPI_Ialltoall, MPI_Iallgather,
 * MPI_Igather, MPI_Iscatter, their `v` forms, MPI_Ialltoallw, and the
 * neighbourhood allgather and all-to-all. Each is direct: every block goes straight from
 * the rank that has it to the rank that needs it, every receive and every
 * send posted at start (one tag: one message per pair of ranks), so the
 * whole exchange moves with no step waiting for another: size - 1
 * messages per rank (per root for gather and scatter), which suits the
 * communicator sizes of a node or a few; the all-to-alls' exchanges go in
 * pairwise order, at most PIANO_COLL_WINDOW in flight (docs/coll.md,
 * "Window"). A rank's own block is a COPY; in place, the blocks to send
 * are copied first (stage_in_place, stage_blocks).
 */
#include "base.h"
#include "coll_algo.h"
#include "coll_op.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* The key of an exchange (coll_op.h): uniform blocks only, the `v` and `w`
 * forms' counts live in the application's arrays. */
static struct coll_key exchange_key(enum coll_kind kind, const void *sbuf, int scount,
                                    MPI_Datatype stype, const struct coll_blocks *b, int root)
{
	if (b->counts || b->types)
		return (struct coll_key){ .kind = COLL_NONE };
	return (struct coll_key){ .kind = kind,
		                  .sbuf = sbuf,
		                  .scount = scount,
		                  .stype = stype,
		                  .rbuf = b->base,
		                  .rcount = b->count,
		                  .rtype = b->type,
		                  .root = root };
}

static int finish(struct coll_op *op, int rc, MPI_Request *request)
{
	if (rc != MPI_SUCCESS) {
		coll_op_abandon(op);
		return rc;
	}
	return coll_op_start(op, request);
}

/* In place, the blocks to send are the receive buffer's, which the
 * receives overwrite: they go out of a copy made first, in the operation's
 * scratch memory with recvbuf's layout (the receives and sends wait for
 * the COPY node, *node). */
static int stage_in_place(struct coll_op *op, void *recvbuf, int rcount, MPI_Datatype rtype,
                          char **copy, int *node)
{
	/* The caller stages block by block where size * rcount is past
	 * INT_MAX (stage_blocks()). */
	MPI_Aint lb, ext, tlb, text;
	PMPI_Type_get_extent(rtype, &lb, &ext);
	PMPI_Type_get_true_extent(rtype, &tlb, &text);
	int n = op->size * rcount;
	MPI_Aint span = n > 0 ? text + (MPI_Aint)(n - 1) * ext : 0;
	char *base = coll_op_scratch(op, (size_t)span);
	if (!base)
		return MPI_ERR_NO_MEM;
	*copy = base - tlb;
	return coll_mpi_error(
	        piano_graph_add_copy(op->g, recvbuf, n, rtype, *copy, n, rtype, node));
}

/* Block i: its address, its count in *n and its type in *type. */
static char *block_at(const struct coll_blocks *b, int i, int *n, MPI_Datatype *type)
{
	*n = b->counts ? b->counts[i] : b->count;
	*type = b->types ? b->types[i] : b->type;
	if (b->types)
		return (char *)(uintptr_t)b->base + (b->bdispls ? b->bdispls[i] : b->displs[i]);
	MPI_Aint lb, ext;
	PMPI_Type_get_extent(b->type, &lb, &ext);
	MPI_Aint d = b->displs ? b->displs[i] : (MPI_Aint)i * b->count;
	return (char *)(uintptr_t)b->base + d * ext;
}

/* The bytes n elements of type span from their first byte: the true
 * extent of one, then the extent of each further one. *shift: the true
 * lower bound (where the first byte lies from the elements' address). */
static size_t elements_span(int n, MPI_Datatype type, MPI_Aint *shift)
{
	MPI_Aint lb, ext, tlb, text;
	PMPI_Type_get_extent(type, &lb, &ext);
	PMPI_Type_get_true_extent(type, &tlb, &text);
	*shift = tlb;
	return n > 0 ? (size_t)(text + (MPI_Aint)(n - 1) * ext) : 0;
}

/* In place with blocks of varied counts or types (MPI_Ialltoallv,
 * MPI_Ialltoallw), or more elements in all than an int counts: each block but the rank's own is copied to the scratch
 * memory before it goes out, since the receive from the same peer
 * overwrites it; base[j] is block j's copy (its count and type are
 * recv's), node[j] the COPY node that block j's send and receive wait for
 * (-1: an empty block, nothing to wait for). Each block waits for its own
 * copy only, so the first exchanges start while later blocks are copied. */
static int stage_blocks(struct coll_op *op, const struct coll_blocks *recv, char **base, int *node)
{
	enum { ALIGN = 16 };
	size_t *at = malloc(sizeof(*at) * (size_t)op->size), total = 0;
	if (!at)
		return MPI_ERR_NO_MEM;
	for (int j = 0; j < op->size; j++) {
		int n;
		MPI_Datatype t;
		MPI_Aint shift;
		block_at(recv, j, &n, &t);
		at[j] = total;
		if (j != op->rank)
			total += (elements_span(n, t, &shift) + ALIGN - 1) / ALIGN * ALIGN;
	}
	char *scratch = coll_op_scratch(op, total);
	int rc = scratch ? MPI_SUCCESS : MPI_ERR_NO_MEM;
	for (int j = 0; j < op->size && rc == MPI_SUCCESS; j++) {
		int n;
		MPI_Datatype t;
		MPI_Aint shift;
		char *b = block_at(recv, j, &n, &t);
		node[j] = -1;
		if (j == op->rank)
			continue;
		size_t span = elements_span(n, t, &shift);
		base[j] = scratch + at[j] - shift;
		if (span > 0)
			rc = coll_mpi_error(
			        piano_graph_add_copy(op->g, b, n, t, base[j], n, t, &node[j]));
	}
	free(at);
	return rc;
}

struct coll_block_layout coll_block_layout_of(const void *base, int count, MPI_Datatype type)
{
	MPI_Aint lb, ext, tlb, text, shift;
	PMPI_Type_get_extent(type, &lb, &ext);
	PMPI_Type_get_true_extent(type, &tlb, &text);
	return (struct coll_block_layout){ .base = base,
		                           .count = count,
		                           .type = type,
		                           .stride = (size_t)count * (size_t)ext,
		                           .dense = coll_type_dense(type, &shift) && tlb == lb,
		                           .shift = tlb };
}

/* Whether this all-to-all goes by Bruck's exchange: small uniform blocks on
 * a large enough communicator. Only values every rank has alike decide
 * (the block's bytes, the communicator's size), never the datatypes, which
 * may differ between ranks with the same signature. */
static bool use_bruck(const struct coll_blocks *recv, int size, size_t *block)
{
	int tsize = 0;
	if (recv->counts || recv->types || coll_bruck_max <= 0 || size < coll_bruck_min_ranks)
		return false;
	PMPI_Type_size(recv->type, &tsize);
	size_t b = (size_t)recv->count * (size_t)tsize;
	if (b == 0 || b > (size_t)coll_bruck_max)
		return false;
	*block = b;
	return true;
}

int coll_ialltoall(struct coll_blocks send, struct coll_blocks recv, MPI_Comm comm,
                   MPI_Request *request)
{
	struct coll_op *op;
	struct coll_key key = send.counts || send.types
	                              ? (struct coll_key){ .kind = COLL_NONE }
	                              : exchange_key(COLL_IALLTOALL, send.base, send.count,
	                                             send.type, &recv, 0);
	int rc = coll_op_begin(comm, &key, &op);
	if (rc != MPI_SUCCESS)
		return rc;
	if (coll_op_reused(op))
		return coll_op_start(op, request);
	int staged = -1, in_place = send.base == MPI_IN_PLACE;
	char **copies = NULL; /* in place, staged by block: stage_blocks() */
	int *copied = NULL;
	/* One COPY node takes the whole buffer when its element count fits
	 * an int; past that, one per block. */
	if (in_place && (recv.counts || recv.types ||
	                 (long long)op->size * recv.count > INT_MAX)) {
		copies = calloc((size_t)op->size, sizeof(*copies) + sizeof(*copied));
		copied = copies ? (int *)(copies + op->size) : NULL;
		rc = copies ? stage_blocks(op, &recv, copies, copied) : MPI_ERR_NO_MEM;
		if (rc == MPI_SUCCESS)
			atomic_fetch_add_explicit(&pmpi_g.graph_staged_blocks, 1,
			                          memory_order_relaxed);
		send = recv;
	} else if (in_place) {
		char *copy = NULL;
		rc = stage_in_place(op, (void *)(uintptr_t)recv.base, recv.count, recv.type, &copy,
		                    &staged);
		send = recv;
		send.base = copy;
	}
	size_t block;
	if (rc == MPI_SUCCESS && !copies && !send.counts && !send.types &&
	    use_bruck(&recv, op->size, &block)) {
		struct coll_block_layout sl = coll_block_layout_of(send.base, send.count,
		                                                   send.type),
		                         rl = coll_block_layout_of(recv.base, recv.count,
		                                                   recv.type);
		rc = coll_bruck_alltoall(op, &sl, &rl, block, staged);
		return finish(op, rc, request);
	}
	/* Exchange i: with the ranks at distance i, receive from me - i and
	 * send to me + i (every rank's exchange i matches its peers' exchange
	 * i). With a window of w, exchange i's receive and send wait for those
	 * of exchange i - w: at most w of each in flight, whatever the
	 * communicator's size; exchanges 1..w start at once, and by induction
	 * every exchange's both sides are released. The last w exchanges'
	 * nodes, in a ring. */
	int me = op->rank, w = coll_window > 0 && coll_window < op->size - 1 ? coll_window : 0;
	int *ring = w ? malloc(2 * (size_t)w * sizeof(*ring)) : NULL;
	if (w && !ring)
		rc = MPI_ERR_NO_MEM;
	for (int i = 1; i < op->size && rc == MPI_SUCCESS; i++) {
		int from = (me - i + op->size) % op->size, to = (me + i) % op->size, r = -1, s = -1;
		int rn, sn;
		MPI_Datatype rt, st;
		char *rb = block_at(&recv, from, &rn, &rt), *sb = block_at(&send, to, &sn, &st);
		if (copies)
			sb = copies[to];
		COLL_ADD(piano_graph_add_recv(op->g, rb, rn, rt, from, op->tag, &r));
		COLL_ADD(piano_graph_add_send(op->g, sb, sn, st, to, op->tag, &s));
		if (staged >= 0) {
			COLL_ADD(piano_graph_add_edge(op->g, staged, r));
			COLL_ADD(piano_graph_add_edge(op->g, staged, s));
		}
		if (copies && copied[from] >= 0)
			COLL_ADD(piano_graph_add_edge(op->g, copied[from], r));
		if (copies && copied[to] >= 0)
			COLL_ADD(piano_graph_add_edge(op->g, copied[to], s));
		if (w && rc == MPI_SUCCESS) {
			int *slot = &ring[2 * ((i - 1) % w)];
			if (i > w) {
				COLL_ADD(piano_graph_add_edge(op->g, slot[0], r));
				COLL_ADD(piano_graph_add_edge(op->g, slot[1], s));
				if (rc == MPI_SUCCESS)
					atomic_fetch_add_explicit(&pmpi_g.graph_window_edges, 2,
					                          memory_order_relaxed);
			}
			slot[0] = r;
			slot[1] = s;
		}
	}
	free(ring);
	free(copies);
	if (!in_place) {
		int rn, sn;
		MPI_Datatype rt, st;
		char *rb = block_at(&recv, me, &rn, &rt), *sb = block_at(&send, me, &sn, &st);
		COLL_ADD(piano_graph_add_copy(op->g, sb, sn, st, rb, rn, rt, NULL));
	}
	return finish(op, rc, request);
}

int coll_iallgather(const void *sendbuf, int scount, MPI_Datatype stype, struct coll_blocks recv,
                    MPI_Comm comm, MPI_Request *request)
{
	struct coll_op *op;
	struct coll_key key = exchange_key(COLL_IALLGATHER, sendbuf, scount, stype, &recv, 0);
	int rc = coll_op_begin(comm, &key, &op);
	if (rc != MPI_SUCCESS)
		return rc;
	if (coll_op_reused(op))
		return coll_op_start(op, request);
	int me = op->rank, mn;
	MPI_Datatype rt, mt; /* mine's: a block may have a datatype of its own */
	char *mine = block_at(&recv, me, &mn, &mt);
	if (sendbuf == MPI_IN_PLACE) {
		sendbuf = mine;
		scount = mn;
		stype = mt;
	}
	size_t block;
	if (!recv.counts && use_bruck(&recv, op->size, &block)) {
		struct coll_block_layout ml = coll_block_layout_of(sendbuf, scount, stype),
		                         rl = coll_block_layout_of(recv.base, recv.count,
		                                                   recv.type);
		op->seg_tags = 0;
		return finish(op, coll_bruck_allgather(op, &ml, &rl, block), request);
	}
	for (int i = 1; i < op->size && rc == MPI_SUCCESS; i++) {
		int from = (me - i + op->size) % op->size, to = (me + i) % op->size, rn;
		char *rb = block_at(&recv, from, &rn, &rt);
		COLL_ADD(piano_graph_add_recv(op->g, rb, rn, rt, from, op->tag, NULL));
		COLL_ADD(piano_graph_add_send(op->g, sendbuf, scount, stype, to, op->tag, NULL));
	}
	if (sendbuf != mine)
		COLL_ADD(piano_graph_add_copy(op->g, sendbuf, scount, stype, mine, mn, mt, NULL));
	return finish(op, rc, request);
}

/* Gather (blocks to the root) and scatter (blocks from it): the root
 * exchanges a block with every other rank and copies its own between
 * `mine` (count x type, MPI_IN_PLACE: already there) and its block. */
static int rooted(bool gather, const void *mine, int count, MPI_Datatype type,
                  struct coll_blocks blocks, int root, MPI_Comm comm, MPI_Request *request)
{
	struct coll_op *op;
	struct coll_key key = exchange_key(gather ? COLL_IGATHER : COLL_ISCATTER, mine, count, type,
	                                   &blocks, root);
	int rc = coll_op_begin(comm, &key, &op);
	if (rc != MPI_SUCCESS)
		return rc;
	if (coll_op_reused(op))
		return coll_op_start(op, request);
	if (op->rank != root) {
		if (gather)
			COLL_ADD(piano_graph_add_send(op->g, mine, count, type, root, op->tag,
			                              NULL));
		else
			COLL_ADD(piano_graph_add_recv(op->g, (void *)(uintptr_t)mine, count, type,
			                              root, op->tag, NULL));
		return finish(op, rc, request);
	}
	for (int i = 0; i < op->size && rc == MPI_SUCCESS; i++) {
		if (i == root)
			continue;
		int n;
		MPI_Datatype bt;
		char *block = block_at(&blocks, i, &n, &bt);
		if (gather)
			COLL_ADD(piano_graph_add_recv(op->g, block, n, bt, i, op->tag, NULL));
		else
			COLL_ADD(piano_graph_add_send(op->g, block, n, bt, i, op->tag, NULL));
	}
	int n;
	MPI_Datatype bt;
	char *own = block_at(&blocks, root, &n, &bt);
	if (mine != MPI_IN_PLACE) {
		if (gather)
			COLL_ADD(piano_graph_add_copy(op->g, mine, count, type, own, n, bt, NULL));
		else
			COLL_ADD(piano_graph_add_copy(op->g, own, n, bt, (void *)(uintptr_t)mine,
			                              count, type, NULL));
	}
	return finish(op, rc, request);
}

int coll_igather(const void *sendbuf, int scount, MPI_Datatype stype, struct coll_blocks recv,
                 int root, MPI_Comm comm, MPI_Request *request)
{
	return rooted(true, sendbuf, scount, stype, recv, root, comm, request);
}

int coll_iscatter(struct coll_blocks send, void *recvbuf, int rcount, MPI_Datatype rtype, int root,
                  MPI_Comm comm, MPI_Request *request)
{
	return rooted(false, recvbuf, rcount, rtype, send, root, comm, request);
}

/*
 * A topology's neighbours as the neighbourhood collectives order their
 * blocks (MPI-4.0 §8.6): in[i] the rank block i of the receive buffer
 * comes from, out[i] the rank block i of the send buffer goes to
 * (MPI_PROC_NULL: none), with the tag offset each message uses. A
 * Cartesian topology lists, per dimension, the neighbour at -1 then at +1,
 * and the two may be the same rank (a periodic dimension of 1 or 2): the
 * message sent towards +1 lands in the receiver's block for its -1
 * neighbour, so each direction has its own tag, 2d for the message going
 * up dimension d, 2d + 1 going down. The other topologies' messages between
 * two ranks match in the order of their adjacency lists (one tag, MPI's
 * non-overtaking rule).
 */
struct neighbours {
	int nin, nout;
	int *in, *out, *in_tag, *out_tag; /* one allocation, `in` first */
};

static int neighbours_of(MPI_Comm comm, int rank, struct neighbours *n)
{
	int topo = MPI_UNDEFINED, rc = PMPI_Topo_test(comm, &topo), nd = 0, w = 0;
	*n = (struct neighbours){ 0 };
	if (rc == MPI_SUCCESS && topo == MPI_CART)
		rc = PMPI_Cartdim_get(comm, &nd), n->nin = n->nout = 2 * nd;
	else if (rc == MPI_SUCCESS && topo == MPI_GRAPH)
		rc = PMPI_Graph_neighbors_count(comm, rank, &n->nin), n->nout = n->nin;
	else if (rc == MPI_SUCCESS && topo == MPI_DIST_GRAPH)
		rc = PMPI_Dist_graph_neighbors_count(comm, &n->nin, &n->nout, &w);
	else if (rc == MPI_SUCCESS)
		rc = MPI_ERR_TOPOLOGY;
	if (rc != MPI_SUCCESS)
		return rc;
	/* in, out, their tags, and the weights the query may write. */
	size_t m = 2 * ((size_t)n->nin + (size_t)n->nout) + (size_t)n->nin + (size_t)n->nout + 1;
	n->in = calloc(m, sizeof(int));
	if (!n->in)
		return MPI_ERR_NO_MEM;
	n->out = n->in + n->nin;
	n->in_tag = n->out + n->nout;
	n->out_tag = n->in_tag + n->nin;
	int *weights = n->out_tag + n->nout;
	if (topo == MPI_CART) {
		for (int d = 0; d < nd && rc == MPI_SUCCESS; d++) {
			int lo, hi;
			rc = PMPI_Cart_shift(comm, d, 1, &lo, &hi);
			n->in[2 * d] = n->out[2 * d] = lo;
			n->in[2 * d + 1] = n->out[2 * d + 1] = hi;
			n->in_tag[2 * d] = n->out_tag[2 * d + 1] = 2 * d;
			n->in_tag[2 * d + 1] = n->out_tag[2 * d] = 2 * d + 1;
		}
	} else if (topo == MPI_GRAPH) {
		rc = PMPI_Graph_neighbors(comm, rank, n->nin, n->in);
		for (int i = 0; i < n->nin; i++)
			n->out[i] = n->in[i];
	} else {
		rc = PMPI_Dist_graph_neighbors(comm, n->nin, n->in, w ? weights : MPI_UNWEIGHTED,
		                               n->nout, n->out,
		                               w ? weights + n->nin : MPI_UNWEIGHTED);
	}
	if (rc != MPI_SUCCESS)
		free(n->in);
	return rc;
}

int coll_neighbor_counts(MPI_Comm comm, int *nin, int *nout)
{
	int rank = 0;
	struct neighbours n;
	int rc = PMPI_Comm_rank(comm, &rank);
	if (rc == MPI_SUCCESS)
		rc = neighbours_of(comm, rank, &n);
	if (rc != MPI_SUCCESS)
		return rc;
	*nin = n.nin;
	*nout = n.nout;
	free(n.in);
	return MPI_SUCCESS;
}

int coll_ineighbor(bool alltoall, struct coll_blocks send, struct coll_blocks recv, MPI_Comm comm,
                   MPI_Request *request)
{
	struct coll_op *op;
	int rc = coll_op_begin(comm, NULL, &op);
	if (rc != MPI_SUCCESS)
		return rc;
	struct neighbours n;
	rc = neighbours_of(comm, op->rank, &n);
	if (rc != MPI_SUCCESS) {
		coll_op_abandon(op);
		return rc;
	}
	int ntags = n.nin && n.in_tag[n.nin - 1] ? n.in_tag[n.nin - 1] + 1 : 1;
	if (ntags > op->ntags) { /* 2 x the dimensions, alike on every rank */
		free(n.in);
		coll_op_abandon(op);
		return COLL_ENOTAGS;
	}
	for (int i = 0; i < n.nin && rc == MPI_SUCCESS; i++) {
		if (n.in[i] == MPI_PROC_NULL)
			continue;
		int bn;
		MPI_Datatype bt;
		char *b = block_at(&recv, i, &bn, &bt);
		COLL_ADD(piano_graph_add_recv(op->g, b, bn, bt, n.in[i], op->tag + n.in_tag[i],
		                              NULL));
	}
	for (int i = 0; i < n.nout && rc == MPI_SUCCESS; i++) {
		if (n.out[i] == MPI_PROC_NULL)
			continue;
		int bn = send.count;
		MPI_Datatype bt = send.type;
		const char *b = alltoall ? block_at(&send, i, &bn, &bt) : send.base;
		COLL_ADD(piano_graph_add_send(op->g, b, bn, bt, n.out[i], op->tag + n.out_tag[i],
		                              NULL));
	}
	free(n.in);
	return finish(op, rc, request);
}

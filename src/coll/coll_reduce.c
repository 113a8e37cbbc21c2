/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reductions as graphs, pipelined in segments. MPI_Ireduce: a reduction up
 * a binomial tree to rank 0, which passes the result to the root.
 * MPI_Iallreduce: recursive doubling on a power of two of ranks, otherwise
 * the same reduction up the tree, then a broadcast down it. Each segment
 * moves on its own: segment j is sent up as soon as its children's parts
 * are reduced, and down as soon as it arrived, while other segments are
 * still on the way up.
 *
 * Order of operands (non-commutative operations): rank r's subtree is the
 * ranks [r, r + low); its children are taken in increasing distance, each
 * covering the ranks right after those already reduced, and each
 * reduction computes acc op child (MPI_Reduce_local(acc, child) leaves it
 * in the child's buffer, which then holds the accumulated value): the
 * result is the operation over the ranks in increasing order, as MPI
 * requires. Buffers: one scratch buffer per child, the full count each.
 */
#include "base.h"
#include "coll_algo.h"
#include "coll_op.h"
#include "graph_internal.h"

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>

/* count elements of a datatype in scratch memory: span bytes, from the
 * lowest byte any element touches to past the highest; element 0 at
 * scratch + shift (element k at + k * extent, downwards for a negative
 * extent). */
struct layout {
	MPI_Aint extent, span, shift;
};

static struct layout layout_of(MPI_Datatype type, int count)
{
	struct layout l;
	MPI_Aint lb, tlb, text;
	PMPI_Type_get_extent(type, &lb, &l.extent);
	PMPI_Type_get_true_extent(type, &tlb, &text);
	MPI_Aint last = count > 0 ? (MPI_Aint)(count - 1) * l.extent : 0;
	MPI_Aint lo = tlb + (last < 0 ? last : 0), hi = tlb + text + (last > 0 ? last : 0);
	l.span = count > 0 ? hi - lo : 0;
	l.shift = -lo;
	/* Elements of no bytes (an empty derived type) still get a scratch
	 * slot each: MPI_Reduce_local refuses one buffer as both operands. */
	if (count > 0 && l.span < 1)
		l.span = 1;
	return l;
}

/*
 * The up phase of segment j (n elements at byte offset off): this rank's
 * operand `mine` combined with its children's parts, received into their
 * scratch buffers (tmp, one span each), in increasing distance. Returns
 * the buffer that holds the combined value and sets *node to the node
 * that wrote it (-1: `mine` itself, nothing to wait for).
 */
static const char *tree_up(struct coll_op *op, const char *mine, char *tmp, struct layout l,
                           const int *children, int nchild, MPI_Aint off, int n, MPI_Datatype type,
                           MPI_Op mop, int tag, int *node, int *rcp)
{
	int rc = *rcp;
	const char *acc = mine + off;
	int acc_node = -1;
	for (int c = nchild - 1; c >= 0 && rc == MPI_SUCCESS; c--) {
		char *t = tmp + (size_t)l.span * (size_t)c + l.shift + off;
		int r = -1, red = -1;
		COLL_ADD(piano_graph_add_recv(op->g, t, n, type, children[c], tag, &r));
		COLL_ADD(piano_graph_add_reduce(op->g, acc, t, n, type, mop, &red));
		COLL_ADD(piano_graph_add_edge(op->g, r, red));
		if (acc_node >= 0)
			COLL_ADD(piano_graph_add_edge(op->g, acc_node, red));
		acc = t;
		acc_node = red;
	}
	*node = acc_node;
	*rcp = rc;
	return acc;
}

/* Scratch for the children's parts: a span each (NULL: out of memory). */
static char *tree_scratch(struct coll_op *op, struct layout l, int nchild, int *rc)
{
	if (nchild == 0)
		return NULL;
	char *tmp = coll_op_scratch(op, (size_t)l.span * (size_t)nchild);
	if (!tmp)
		*rc = MPI_ERR_NO_MEM;
	return tmp;
}

/* What both tree reductions share: this rank's operand, its place in the
 * tree rooted at rank 0, its children's scratch, the segments. */
struct tree {
	struct layout l;
	const char *mine;
	int parent, children[32], nchild;
	char *tmp;
	int seg, nseg;
};

static int tree_init(struct coll_op *op, struct tree *t, const void *sendbuf, void *recvbuf,
                     int count, MPI_Datatype type, long segment)
{
	int rc = MPI_SUCCESS;
	t->l = layout_of(type, count);
	t->mine = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
	t->nchild = coll_tree(op->rank, op->size, &t->parent, t->children);
	t->tmp = tree_scratch(op, t->l, t->nchild, &rc);
	t->nseg = coll_segments(count, type, coll_op_segment(op, segment), op->ntags / 2, &t->seg);
	return rc;
}

/* Segment j of count elements cut in segments of seg: its byte offset, and
 * its element count in *n. */
static MPI_Aint segment_at(int j, int seg, int count, MPI_Aint extent, int *n)
{
	*n = count - j * seg < seg ? count - j * seg : seg;
	return (MPI_Aint)j * seg * extent;
}

static MPI_Aint tree_segment(const struct tree *t, int j, int count, int *n)
{
	return segment_at(j, t->seg, count, t->l.extent, n);
}

/* Steps of recursive doubling over size ranks: ceil(log2(size)). */
static int doubling_steps(int size)
{
	int k = 0;
	while ((1 << k) < size)
		k++;
	return k;
}

/* Reduction up the tree, broadcast down (any number of ranks). */
static int tree_allreduce(struct coll_op *op, const void *sendbuf, void *recvbuf, int count,
                          MPI_Datatype type, MPI_Op mop, long segment)
{
	struct tree t;
	int rc = tree_init(op, &t, sendbuf, recvbuf, count, type, segment);
	int in_place = sendbuf == MPI_IN_PLACE, parent = t.parent, nchild = t.nchild;
	const int *children = t.children;
	op->seg_tags = 2;
	for (int j = 0; rc == MPI_SUCCESS && j < t.nseg; j++) {
		int n;
		MPI_Aint off = tree_segment(&t, j, count, &n);
		int up = op->tag + 2 * j, down = up + 1;
		int acc_node = -1;
		const char *acc = tree_up(op, t.mine, t.tmp, t.l, children, nchild, off, n, type,
		                          mop, up, &acc_node, &rc);
		/* The segment's result in recvbuf: received from the parent, or
		 * (at rank 0) copied from acc. `have` is the node after which
		 * recvbuf's segment holds it (-1: from the start). */
		char *res = (char *)recvbuf + off;
		int have = -1;
		if (parent >= 0) {
			int s = -1;
			COLL_ADD(piano_graph_add_send(op->g, acc, n, type, parent, up, &s));
			if (acc_node >= 0)
				COLL_ADD(piano_graph_add_edge(op->g, acc_node, s));
			COLL_ADD(piano_graph_add_recv(op->g, res, n, type, parent, down, &have));
			/* In place, recvbuf is this rank's operand: the result may
			 * land there only once the segment went up. */
			if (in_place)
				COLL_ADD(piano_graph_add_edge(op->g, s, have));
		} else if (acc != res) {
			COLL_ADD(piano_graph_add_copy(op->g, acc, n, type, res, n, type, &have));
			if (acc_node >= 0)
				COLL_ADD(piano_graph_add_edge(op->g, acc_node, have));
		} else {
			have = acc_node;
		}
		for (int c = 0; c < nchild && rc == MPI_SUCCESS; c++) {
			int s = -1;
			COLL_ADD(piano_graph_add_send(op->g, res, n, type, children[c], down, &s));
			if (have >= 0)
				COLL_ADD(piano_graph_add_edge(op->g, have, s));
		}
	}
	return rc;
}

/*
 * Recursive doubling (a power of two of ranks): in step k each rank
 * exchanges its running value with rank ^ 2^k and combines, so after
 * log2(size) steps every rank holds the whole reduction: one message
 * latency per step and no second phase. The running value lives in
 * recvbuf (sendbuf is copied there first). Order of operands: the partner
 * below covers the ranks before this one's, so the result is partner op
 * mine, which MPI_Reduce_local(partner, recvbuf) leaves in recvbuf; with
 * the partner above it is mine op partner, left in the partner's scratch
 * buffer by MPI_Reduce_local(recvbuf, scratch) and copied back (a
 * commutative operation takes the first form in both cases). recvbuf is
 * written only once this step's send of it has completed.
 */
static int doubling_allreduce(struct coll_op *op, const void *sendbuf, void *recvbuf, int count,
                              MPI_Datatype type, MPI_Op mop, long segment)
{
	int rc = MPI_SUCCESS, commute = 0;
	PMPI_Op_commutative(mop, &commute);
	struct layout l = layout_of(type, count);
	int nsteps = doubling_steps(op->size);
	char *tmp = NULL;
	if (nsteps > 0) {
		tmp = coll_op_scratch(op, (size_t)l.span * (size_t)nsteps);
		if (!tmp)
			return MPI_ERR_NO_MEM;
	}
	int seg = 0;
	int nseg = coll_segments(count, type, coll_op_segment(op, segment),
	                         op->ntags / (nsteps ? nsteps : 1), &seg);
	op->seg_tags = nsteps;
	for (int j = 0; rc == MPI_SUCCESS && j < nseg; j++) {
		int n;
		MPI_Aint off = segment_at(j, seg, count, l.extent, &n);
		char *res = (char *)recvbuf + off;
		int last = -1; /* the node that last wrote res */
		if (sendbuf != MPI_IN_PLACE)
			COLL_ADD(piano_graph_add_copy(op->g, (const char *)sendbuf + off, n, type,
			                              res, n, type, &last));
		for (int k = 0; k < nsteps && rc == MPI_SUCCESS; k++) {
			int partner = op->rank ^ (1 << k), tag = op->tag + j * nsteps + k;
			char *t = tmp + (size_t)l.span * (size_t)k + l.shift + off;
			int r = -1, s = -1, red = -1, wrote = -1;
			COLL_ADD(piano_graph_add_recv(op->g, t, n, type, partner, tag, &r));
			COLL_ADD(piano_graph_add_send(op->g, res, n, type, partner, tag, &s));
			if (last >= 0)
				COLL_ADD(piano_graph_add_edge(op->g, last, s));
			if (commute || partner < op->rank) {
				COLL_ADD(piano_graph_add_reduce(op->g, t, res, n, type, mop, &red));
				wrote = red;
			} else {
				COLL_ADD(piano_graph_add_reduce(op->g, res, t, n, type, mop, &red));
				COLL_ADD(piano_graph_add_copy(op->g, t, n, type, res, n, type,
				                              &wrote));
				COLL_ADD(piano_graph_add_edge(op->g, red, wrote));
			}
			COLL_ADD(piano_graph_add_edge(op->g, r, red));
			if (last >= 0)
				COLL_ADD(piano_graph_add_edge(op->g, last, red));
			COLL_ADD(piano_graph_add_edge(op->g, s, wrote));
			last = wrote;
		}
	}
	return rc;
}

/* The key of a reduction (coll_op.h): the buffers, count, type, operation,
 * root (0 where there is none) and segment decide its graph. */
static struct coll_key reduce_key(enum coll_kind kind, const void *sendbuf, void *recvbuf,
                                  int count, MPI_Datatype type, MPI_Op mop, int root, long segment)
{
	return (struct coll_key){ .kind = kind,
		                  .sbuf = sendbuf,
		                  .rbuf = recvbuf,
		                  .rcount = count,
		                  .rtype = type,
		                  .op = mop,
		                  .root = root,
		                  .segment = segment };
}

/*
 * MPI_Ireduce: the up phase of the allreduce's tree, rooted at rank 0 so
 * that the operands stay in rank order whatever the root; rank 0 then
 * sends each segment to the root (or copies it there when it is the root).
 */
static int reduce_build(struct coll_op *op, const void *sendbuf, void *recvbuf, int count,
                        MPI_Datatype type, MPI_Op mop, int root, long segment)
{
	struct tree t;
	int rc = tree_init(op, &t, sendbuf, recvbuf, count, type, segment);
	op->seg_tags = 2;
	for (int j = 0; rc == MPI_SUCCESS && j < t.nseg; j++) {
		int n;
		MPI_Aint off = tree_segment(&t, j, count, &n);
		int up = op->tag + 2 * j, out = up + 1;
		int acc_node = -1, s = -1;
		const char *acc = tree_up(op, t.mine, t.tmp, t.l, t.children, t.nchild, off, n,
		                          type, mop, up, &acc_node, &rc);
		if (t.parent >= 0)
			COLL_ADD(piano_graph_add_send(op->g, acc, n, type, t.parent, up, &s));
		else if (root != 0)
			COLL_ADD(piano_graph_add_send(op->g, acc, n, type, root, out, &s));
		else if (acc != (char *)recvbuf + off)
			COLL_ADD(piano_graph_add_copy(op->g, acc, n, type, (char *)recvbuf + off, n,
			                              type, &s));
		if (s >= 0 && acc_node >= 0)
			COLL_ADD(piano_graph_add_edge(op->g, acc_node, s));
		/* The root's result from rank 0; in place, recvbuf is the root's
		 * operand: overwritten only once its segment went up. */
		if (op->rank == root && root != 0) {
			int r = -1;
			COLL_ADD(piano_graph_add_recv(op->g, (char *)recvbuf + off, n, type, 0, out,
			                              &r));
			int sent = s; /* the root's own send up, if any */
			if (sendbuf == MPI_IN_PLACE && sent >= 0)
				COLL_ADD(piano_graph_add_edge(op->g, sent, r));
		}
	}
	return rc;
}

/* First element of block b of n elements cut in `size` blocks (balanced:
 * block sizes differ by at most one, some empty when n < size). */
static int block_start(int b, int n, int size) { return (int)((long)b * n / size); }

/*
 * Reduce-scatter by recursive halving, then allgather by recursive
 * doubling (Rabenseifner's algorithm; a power of two of ranks and a
 * commutative operation): each rank reduces 1/size of the vector instead
 * of all of it, and sends 2 (size - 1) / size of it instead of log2(size)
 * times all of it; twice the steps of recursive doubling, so it is for
 * long vectors (coll_redscat_min). Per segment of n elements, cut in size
 * blocks: in reduce-scatter step k (mask size >> (k + 1)) a rank holding
 * blocks [lo, hi) keeps the half that holds its own block, sends the other
 * half to rank ^ mask, receives the partner's part of its half into the
 * step's scratch and reduces it into recvbuf; after the last step it holds
 * its own block, complete. Allgather step k (in reverse) sends what it
 * holds to rank ^ mask and receives the same width beside it, which is
 * the half reduce-scatter step k sent away (the receive waits for that
 * send). Each block is reduced on one rank only, so every rank ends with
 * the same bits. The running value lives in recvbuf, sendbuf copied first.
 *
 * On other than a power of two of ranks, as Rabenseifner does: with pof2
 * the largest power of two below size and rem = size - pof2, the first
 * 2 rem ranks pair up; each even one sends its segment to the odd one
 * after it, which reduces it into its own (commutative: the pair combines
 * out of rank order), and waits for the result. The odd ones (virtual rank
 * rank / 2) and the ranks from 2 rem on (rank - rem) run the algorithm
 * above as pof2 ranks, and each odd one sends the result back. Every
 * other rank moves 2 (pof2 - 1) / pof2 of the vector plus, for the pairs,
 * one vector each way, where the tree's reduction and broadcast move the
 * whole vector once per level up and once per level down.
 */
static int real_rank(int v, int rem) { return v < rem ? 2 * v + 1 : v + rem; }

/* Step k of recursive halving over pof2 virtual blocks at virtual rank me,
 * which covers blocks [*lo, *hi): it keeps the half that holds block me
 * (the new [*lo, *hi)) and sends [*slo, *shi) to the real rank returned. */
static int halving_step(int me, int k, int pof2, int rem, int *lo, int *hi, int *slo, int *shi)
{
	int mask = pof2 >> (k + 1), mid = (*lo + *hi) / 2;
	if (me & mask) {
		*slo = *lo;
		*shi = mid;
		*lo = mid;
	} else {
		*slo = mid;
		*shi = *hi;
		*hi = mid;
	}
	return real_rank(me ^ mask, rem);
}

static int redscat_allreduce(struct coll_op *op, const void *sendbuf, void *recvbuf, int count,
                             MPI_Datatype type, MPI_Op mop, long segment)
{
	int rc = MPI_SUCCESS;
	struct layout l = layout_of(type, count);
	int pof2 = 1;
	while (pof2 <= op->size / 2)
		pof2 *= 2;
	int rem = op->size - pof2;
	bool paired = op->rank < 2 * rem, extra = paired && op->rank % 2 == 0;
	int me = paired ? op->rank / 2 : op->rank - rem; /* the virtual rank */
	int nsteps = doubling_steps(pof2);
	/* A span per step, and one for the partner's segment of a pair. */
	char *tmp = coll_op_scratch(op, (size_t)l.span * (size_t)(nsteps + 1));
	if (!tmp)
		return MPI_ERR_NO_MEM;
	atomic_fetch_add_explicit(&pmpi_g.graph_redscat, 1, memory_order_relaxed);
	int seg = 0, seg_tags = 2 * nsteps + 2; /* the steps', the pair's two */
	int nseg = coll_segments(count, type, coll_op_segment(op, segment), op->ntags / seg_tags,
	                         &seg);
	op->seg_tags = seg_tags;
	for (int j = 0; rc == MPI_SUCCESS && j < nseg; j++) {
		int n;
		MPI_Aint off = segment_at(j, seg, count, l.extent, &n);
		char *res = (char *)recvbuf + off;
		int tag = op->tag + j * seg_tags, pair_tag = tag + 2 * nsteps;
		int last = -1;         /* the node that last wrote the half kept */
		int sent[32];          /* reduce-scatter step k's send */
		int wrote[33], nw = 0; /* the nodes that wrote what the rank holds */
		if (sendbuf != MPI_IN_PLACE)
			COLL_ADD(piano_graph_add_copy(op->g, (const char *)sendbuf + off, n, type,
			                              res, n, type, &last));
		if (extra) { /* its segment to rank + 1, the result back */
			int s = -1, r = -1;
			COLL_ADD(piano_graph_add_send(op->g, res, n, type, op->rank + 1, pair_tag,
			                              &s));
			if (last >= 0)
				COLL_ADD(piano_graph_add_edge(op->g, last, s));
			COLL_ADD(piano_graph_add_recv(op->g, res, n, type, op->rank + 1,
			                              pair_tag + 1, &r));
			COLL_ADD(piano_graph_add_edge(op->g, s, r));
			continue;
		}
		if (paired) { /* rank - 1's segment reduced into its own */
			char *t = tmp + (size_t)l.span * (size_t)nsteps + l.shift + off;
			int r = -1, red = -1;
			COLL_ADD(piano_graph_add_recv(op->g, t, n, type, op->rank - 1, pair_tag,
			                              &r));
			COLL_ADD(piano_graph_add_reduce(op->g, t, res, n, type, mop, &red));
			COLL_ADD(piano_graph_add_edge(op->g, r, red));
			if (last >= 0)
				COLL_ADD(piano_graph_add_edge(op->g, last, red));
			last = red;
		}
		int lo = 0, hi = pof2;
		for (int k = 0; k < nsteps && rc == MPI_SUCCESS; k++) {
			int slo, shi,
			        partner = halving_step(me, k, pof2, rem, &lo, &hi, &slo, &shi);
			int k0 = block_start(lo, n, pof2), k1 = block_start(hi, n, pof2);
			int s0 = block_start(slo, n, pof2), s1 = block_start(shi, n, pof2);
			char *t = tmp + (size_t)l.span * (size_t)k + l.shift + off + k0 * l.extent;
			int r = -1, s = -1, red = -1;
			COLL_ADD(piano_graph_add_recv(op->g, t, k1 - k0, type, partner, tag + k,
			                              &r));
			COLL_ADD(piano_graph_add_send(op->g, res + s0 * l.extent, s1 - s0, type,
			                              partner, tag + k, &s));
			COLL_ADD(piano_graph_add_reduce(op->g, t, res + k0 * l.extent, k1 - k0,
			                                type, mop, &red));
			COLL_ADD(piano_graph_add_edge(op->g, r, red));
			if (last >= 0) {
				COLL_ADD(piano_graph_add_edge(op->g, last, s));
				COLL_ADD(piano_graph_add_edge(op->g, last, red));
			}
			sent[k] = s;
			last = red;
		}
		wrote[nw++] = last;
		for (int k = nsteps - 1; k >= 0 && rc == MPI_SUCCESS; k--) {
			int mask = pof2 >> (k + 1), partner = real_rank(me ^ mask, rem);
			int w = hi - lo, plo = (me & mask) ? lo - w : hi, phi = plo + w;
			int h0 = block_start(lo, n, pof2), h1 = block_start(hi, n, pof2);
			int p0 = block_start(plo, n, pof2), p1 = block_start(phi, n, pof2);
			int s = -1, r = -1;
			COLL_ADD(piano_graph_add_send(op->g, res + h0 * l.extent, h1 - h0, type,
			                              partner, tag + nsteps + k, &s));
			for (int i = 0; i < nw; i++)
				COLL_ADD(piano_graph_add_edge(op->g, wrote[i], s));
			COLL_ADD(piano_graph_add_recv(op->g, res + p0 * l.extent, p1 - p0, type,
			                              partner, tag + nsteps + k, &r));
			COLL_ADD(piano_graph_add_edge(op->g, sent[k], r));
			wrote[nw++] = r;
			lo = plo < lo ? plo : lo;
			hi = phi > hi ? phi : hi;
		}
		if (paired) { /* the result to rank - 1, once all of it is here */
			int s = -1;
			COLL_ADD(piano_graph_add_send(op->g, res, n, type, op->rank - 1,
			                              pair_tag + 1, &s));
			for (int i = 0; i < nw; i++)
				COLL_ADD(piano_graph_add_edge(op->g, wrote[i], s));
		}
	}
	return rc;
}

/* The allreduce's algorithm; the choice depends on values that are the
 * same on every rank (size, count and type signature, the operation). */
static int allreduce(struct coll_op *op, const void *sendbuf, void *recvbuf, int count,
                     MPI_Datatype type, MPI_Op mop, long segment)
{
	int commute = 0, tsize = 0;
	PMPI_Op_commutative(mop, &commute);
	PMPI_Type_size(type, &tsize);
	if (op->size > 1 && commute && count >= op->size && (long)count * tsize >= coll_redscat_min)
		return redscat_allreduce(op, sendbuf, recvbuf, count, type, mop, segment);
	if ((op->size & (op->size - 1)) != 0)
		return tree_allreduce(op, sendbuf, recvbuf, count, type, mop, segment);
	return doubling_allreduce(op, sendbuf, recvbuf, count, type, mop, segment);
}

static int finish(struct coll_op *op, int rc, MPI_Request *request)
{
	if (rc != MPI_SUCCESS) {
		coll_op_abandon(op);
		return rc;
	}
	return coll_op_start(op, request);
}

/* Edges from every node that has no successor yet to `node`: it runs last. */
static int after_all(struct coll_op *op, int node)
{
	piano_graph_t *g = op->g;
	char *has_succ = calloc((size_t)(g->nnodes ? g->nnodes : 1), 1);
	if (!has_succ)
		return MPI_ERR_NO_MEM;
	for (int e = 0; e < g->nedges; e++)
		has_succ[g->edge_from[e]] = 1;
	int rc = MPI_SUCCESS;
	for (int i = 0; i < g->nnodes && rc == MPI_SUCCESS; i++)
		if (i != node && !has_succ[i])
			rc = coll_mpi_error(piano_graph_add_edge(g, i, node));
	free(has_succ);
	return rc;
}

/*
 * MPI_Ireduce_scatter and MPI_Ireduce_scatter_block with a commutative
 * operation: recursive halving over the blocks themselves, so each rank
 * reduces and receives only what ends in the blocks it still covers (in
 * step k half of them), instead of the whole allreduce and a copy: on
 * size ranks a rank moves (size - 1) / size of the vector, not 2 (size -
 * 1) / size plus the allgather's steps. Block i of the vector is rank i's
 * (elements first[i] .. first[i + 1] - 1). As for the allreduce
 * (redscat_allreduce), beyond a power of two pof2 the first 2 rem ranks
 * pair up: the even one sends its whole vector to the odd one, which
 * reduces it into its own and, as virtual rank rank / 2, covers both
 * ranks' blocks in the halving; at the end it sends the even one its
 * block. Virtual block v is real block 2v and 2v + 1 for v < rem, real
 * block v + rem after: contiguous in the vector either way.
 *
 * Each exchange (the pair's, and step k's half sent and half received) is
 * cut in chunks of whole elements of about `segment` bytes, chunk c with
 * tag tag + c * seg_tags + k, so the window (PIANO_COLL_WINDOW) bounds each
 * step's chunks and a chunk's reduction runs as soon as that chunk
 * arrived. The running value: the input until the first reduction, then
 * the scratch buffer that reduction wrote (received part op input,
 * commutative), then reduced into in place; a node that reads or writes a
 * range of it waits for the reductions of the previous step that wrote
 * any of that range (`writers`, sorted by offset).
 */
struct chunk {
	int lo, hi, node; /* elements [lo, hi) written by node */
};

struct halving {
	struct coll_op *op;
	MPI_Datatype type;
	MPI_Op mop;
	MPI_Aint extent;
	int seg, seg_tags;
	const char *input; /* the running value while it is the input */
	char *cur;         /* the running value once a reduction wrote it */
	struct chunk *writers, *next;
	int nwriters, nnext;
};

/* Edges to `node` from the chunks of list (sorted by offset, disjoint)
 * that overlap elements [lo, hi). */
static int after_overlap(struct coll_op *op, const struct chunk *list, int n, int lo, int hi,
                         int node)
{
	int a = 0, b = n; /* the first chunk ending after lo */
	while (a < b) {
		int m = a + (b - a) / 2;
		if (list[m].hi <= lo)
			a = m + 1;
		else
			b = m;
	}
	int rc = MPI_SUCCESS;
	for (int i = a; i < n && list[i].lo < hi && rc == MPI_SUCCESS; i++)
		rc = coll_mpi_error(piano_graph_add_edge(op->g, list[i].node, node));
	return rc;
}

/* The running value's elements [lo, hi) sent to peer in chunks (tag index
 * k); the send nodes go to *sent (in order) when it is not NULL. */
static int halving_send(struct halving *h, int lo, int hi, int peer, int k, struct chunk *sent,
                        int *nsent)
{
	int rc = MPI_SUCCESS;
	const char *base = h->cur ? h->cur : h->input;
	for (int a = lo, c = 0; a < hi && rc == MPI_SUCCESS; a += h->seg, c++) {
		int b = hi - a < h->seg ? hi : a + h->seg, s = -1;
		COLL_ADD(piano_graph_add_send(h->op->g, base + (MPI_Aint)a * h->extent, b - a,
		                              h->type, peer, h->op->tag + c * h->seg_tags + k, &s));
		if (rc == MPI_SUCCESS && h->cur)
			rc = after_overlap(h->op, h->writers, h->nwriters, a, b, s);
		if (sent)
			sent[(*nsent)++] = (struct chunk){ a, b, s };
	}
	return rc;
}

/* Elements [lo, hi) from peer in chunks (tag index k) into the scratch
 * buffer tmp (element 0 at tmp), each reduced with the running value as it
 * arrives; the reductions become the writers of the next step. */
static int halving_recv(struct halving *h, char *tmp, int lo, int hi, int peer, int k)
{
	int rc = MPI_SUCCESS;
	h->nnext = 0;
	for (int a = lo, c = 0; a < hi && rc == MPI_SUCCESS; a += h->seg, c++) {
		int b = hi - a < h->seg ? hi : a + h->seg, r = -1, red = -1;
		MPI_Aint at = (MPI_Aint)a * h->extent;
		COLL_ADD(piano_graph_add_recv(h->op->g, tmp + at, b - a, h->type, peer,
		                              h->op->tag + c * h->seg_tags + k, &r));
		if (h->cur)
			COLL_ADD(piano_graph_add_reduce(h->op->g, tmp + at, h->cur + at, b - a,
			                                h->type, h->mop, &red));
		else
			COLL_ADD(piano_graph_add_reduce(h->op->g, h->input + at, tmp + at, b - a,
			                                h->type, h->mop, &red));
		COLL_ADD(piano_graph_add_edge(h->op->g, r, red));
		if (rc == MPI_SUCCESS && h->cur)
			rc = after_overlap(h->op, h->writers, h->nwriters, a, b, red);
		h->next[h->nnext++] = (struct chunk){ a, b, red };
	}
	if (!h->cur)
		h->cur = tmp;
	struct chunk *t = h->writers;
	h->writers = h->next;
	h->nwriters = h->nnext;
	h->next = t;
	return rc;
}

/* The elements of virtual block v (v == pof2: the end of the vector). */
static int vblock_start(int v, int rem, const int *first)
{
	return first[v < rem ? 2 * v : v + rem];
}

static int halving_reduce_scatter(struct coll_op *op, const void *sendbuf, void *recvbuf,
                                  const int *first, MPI_Datatype type, MPI_Op mop, long segment)
{
	int rc = MPI_SUCCESS, size = op->size, rank = op->rank, count = first[size];
	struct layout l = layout_of(type, count);
	int pof2 = 1;
	while (pof2 <= size / 2)
		pof2 *= 2;
	int rem = size - pof2, nsteps = doubling_steps(pof2);
	bool paired = rank < 2 * rem, extra = paired && rank % 2 == 0;
	int me = paired ? rank / 2 : rank - rem;
	struct halving h = { .op = op, .type = type, .mop = mop, .extent = l.extent };
	h.input = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
	h.seg_tags = nsteps + 2; /* the steps', the pair's two */
	int nseg = coll_segments(count, type, coll_op_segment(op, segment), op->ntags / h.seg_tags,
	                         &h.seg);
	if (h.seg < 1)
		h.seg = 1;
	op->seg_tags = h.seg_tags;
	atomic_fetch_add_explicit(&pmpi_g.graph_halving, 1, memory_order_relaxed);
	/* Scratch: a span per step and one for the pair's vector; the chunk
	 * lists (the pair's sends need one too). */
	char *tmp = NULL;
	if (count > 0 && (nsteps > 0 || paired)) {
		tmp = coll_op_scratch(op, (size_t)l.span * (size_t)(nsteps + 1));
		if (!tmp)
			return MPI_ERR_NO_MEM;
		tmp += l.shift;
	}
	h.writers = malloc(sizeof(struct chunk) * (size_t)nseg);
	h.next = malloc(sizeof(struct chunk) * (size_t)nseg);
	if (!h.writers || !h.next) {
		rc = MPI_ERR_NO_MEM;
		goto free_lists;
	}
	int mine0 = first[rank], mine1 = first[rank + 1];
	if (extra) { /* its vector to rank + 1, its block back from it */
		struct chunk *sent = h.next;
		int nsent = 0;
		rc = halving_send(&h, 0, count, rank + 1, nsteps, sent, &nsent);
		for (int a = mine0, c = 0; a < mine1 && rc == MPI_SUCCESS; a += h.seg, c++) {
			int b = mine1 - a < h.seg ? mine1 : a + h.seg, r = -1;
			COLL_ADD(piano_graph_add_recv(
			        op->g, (char *)recvbuf + (MPI_Aint)(a - mine0) * l.extent, b - a,
			        type, rank + 1, op->tag + c * h.seg_tags + nsteps + 1, &r));
			/* In place, the block lands on the input still being sent. */
			if (rc == MPI_SUCCESS && sendbuf == MPI_IN_PLACE)
				rc = after_overlap(op, sent, nsent, a - mine0, b - mine0, r);
		}
		goto free_lists;
	}
	if (paired && rc == MPI_SUCCESS)
		rc = halving_recv(&h, tmp + (size_t)l.span * (size_t)nsteps, 0, count, rank - 1,
		                  nsteps);
	int lo = 0, hi = pof2;
	for (int k = 0; k < nsteps && rc == MPI_SUCCESS; k++) {
		int slo, shi, partner = halving_step(me, k, pof2, rem, &lo, &hi, &slo, &shi);
		rc = halving_send(&h, vblock_start(slo, rem, first), vblock_start(shi, rem, first),
		                  partner, k, NULL, NULL);
		if (rc == MPI_SUCCESS)
			rc = halving_recv(&h, tmp + (size_t)l.span * (size_t)k,
			                  vblock_start(lo, rem, first),
			                  vblock_start(hi, rem, first), partner, k);
	}
	if (paired && rc == MPI_SUCCESS) /* rank - 1's block */
		rc = halving_send(&h, first[rank - 1], first[rank], rank - 1, nsteps + 1, NULL,
		                  NULL);
	/* Its own block out; in place, only once everything that reads the
	 * input has run. */
	const char *res = h.cur ? h.cur : h.input;
	if (rc == MPI_SUCCESS && mine1 > mine0 &&
	    res + (MPI_Aint)mine0 * l.extent != (const char *)recvbuf) {
		int copy = -1;
		COLL_ADD(piano_graph_add_copy(op->g, res + (MPI_Aint)mine0 * l.extent,
		                              mine1 - mine0, type, recvbuf, mine1 - mine0, type,
		                              &copy));
		if (rc == MPI_SUCCESS && h.cur)
			rc = after_overlap(op, h.writers, h.nwriters, mine0, mine1, copy);
		if (rc == MPI_SUCCESS && sendbuf == MPI_IN_PLACE)
			rc = after_all(op, copy);
	}
free_lists:
	free(h.writers);
	free(h.next);
	return rc;
}

/*
 * MPI_Ireduce_scatter(_block) with a non-commutative operation: every rank
 * sends block j of its input straight to rank j and folds the size parts
 * of its own block in rank order from the right, acc = part(size - 1),
 * then acc = part(r) op acc for r = size - 2 .. 0 (MPI_Reduce_local(part,
 * acc)), so the result is part(0) op part(1) op ... as MPI requires; its
 * own part is its input, the others are received into scratch (the one
 * from rank size - 1 straight into acc). A rank moves (size - 1) / size of
 * the vector each way, where the allreduce moved all of it and reduced
 * all of it. Each message in chunks of about the segment (tag tag + c, one
 * stream per pair of ranks, the window bounding each), the fold per chunk.
 * acc is recvbuf, or in place a scratch buffer copied to recvbuf once
 * everything that reads the input has run. The messages go out in
 * pairwise order, to rank + i and from rank - i for i = 1, 2, ..., and
 * with a window of w < size - 1 (PIANO_COLL_WINDOW), as the all-to-all's,
 * every chunk to rank + i waits for the last chunk to rank + i - w, every
 * chunk from rank - i for the last from rank - i + w: at most w peers per
 * direction in flight, whatever the communicator's size. The edges join
 * sends to sends and receives to receives of smaller distances only, so
 * by induction on i both sides of every message are released.
 */
static int pairwise_reduce_scatter(struct coll_op *op, const void *sendbuf, void *recvbuf,
                                   const int *first, MPI_Datatype type, MPI_Op mop, long segment)
{
	int rc = MPI_SUCCESS, size = op->size, rank = op->rank;
	int mine0 = first[rank], n = first[rank + 1] - mine0, maxblock = 0;
	bool in_place = sendbuf == MPI_IN_PLACE;
	const char *input = in_place ? recvbuf : sendbuf;
	if (in_place && size == 1)
		return MPI_SUCCESS; /* the block is in recvbuf already */
	for (int j = 0; j < size; j++)
		if (first[j + 1] - first[j] > maxblock)
			maxblock = first[j + 1] - first[j];
	int seg = 0;
	coll_segments(maxblock, type, coll_op_segment(op, segment), op->ntags, &seg);
	if (seg < 1)
		seg = 1;
	op->seg_tags = 1;
	atomic_fetch_add_explicit(&pmpi_g.graph_pairwise, 1, memory_order_relaxed);
	struct layout l = layout_of(type, n);
	/* Scratch: a slot per rank below size - 1 but this one (slot r, or
	 * r - 1 above this rank; size - 1's part goes to acc), and acc itself
	 * in place (slot size - 1). */
	int nslots = size - 1 + (in_place ? 1 : 0);
	char *tmp = NULL;
	if (n > 0 && nslots > 0) {
		tmp = coll_op_scratch(op, (size_t)l.span * (size_t)nslots);
		if (!tmp)
			return MPI_ERR_NO_MEM;
		tmp += l.shift;
	}
	char *acc = in_place ? tmp + (size_t)l.span * (size_t)(size - 1) : recvbuf;
	int w = coll_window > 0 && coll_window < size - 1 ? coll_window : 0;
	int nch = n > 0 ? (n + seg - 1) / seg : 0;
	/* With a window: per slot i % w, the last send of exchange i (or
	 * what it waited for, when its block is empty); each receive's node
	 * by peer and chunk. */
	int *sslot = NULL, *rnode = NULL;
	long edges = 0;
	if (w) {
		sslot = malloc(sizeof(int) * (size_t)w);
		rnode = malloc(sizeof(int) * (size_t)size * (size_t)(nch > 0 ? nch : 1));
		if (!sslot || !rnode) {
			rc = MPI_ERR_NO_MEM;
			goto free_window;
		}
		for (int k = 0; k < w; k++)
			sslot[k] = -1;
	}
	for (int i = 1; i < size && rc == MPI_SUCCESS; i++) {
		int j = (rank + i) % size, dep = w ? sslot[(i - 1) % w] : -1, s = -1;
		for (int a = first[j], c = 0; a < first[j + 1] && rc == MPI_SUCCESS;
		     a += seg, c++) {
			int b = first[j + 1] - a < seg ? first[j + 1] : a + seg;
			COLL_ADD(piano_graph_add_send(op->g, input + (MPI_Aint)a * l.extent, b - a,
			                              type, j, op->tag + c, &s));
			if (dep >= 0 && i > w) {
				COLL_ADD(piano_graph_add_edge(op->g, dep, s));
				edges++;
			}
		}
		if (w && s >= 0)
			sslot[(i - 1) % w] = s;
	}
	for (int a = 0, c = 0; a < n && rc == MPI_SUCCESS; a += seg, c++) {
		int b = n - a < seg ? n : a + seg, last = -1;
		MPI_Aint at = (MPI_Aint)a * l.extent;
		if (rank == size - 1)
			COLL_ADD(piano_graph_add_copy(op->g,
			                              input + (MPI_Aint)mine0 * l.extent + at,
			                              b - a, type, acc + at, b - a, type, &last));
		else
			COLL_ADD(piano_graph_add_recv(op->g, acc + at, b - a, type, size - 1,
			                              op->tag + c, &last));
		if (w && rank != size - 1)
			rnode[(size_t)(size - 1) * (size_t)nch + (size_t)c] = last;
		for (int r = size - 2; r >= 0 && rc == MPI_SUCCESS; r--) {
			const char *part = input + (MPI_Aint)mine0 * l.extent + at;
			int got = -1, red = -1;
			if (r != rank) {
				char *t = tmp + (size_t)l.span * (size_t)(r < rank ? r : r - 1) +
				          at;
				COLL_ADD(piano_graph_add_recv(op->g, t, b - a, type, r, op->tag + c,
				                              &got));
				if (w)
					rnode[(size_t)r * (size_t)nch + (size_t)c] = got;
				part = t;
			}
			COLL_ADD(piano_graph_add_reduce(op->g, part, acc + at, b - a, type, mop,
			                                &red));
			COLL_ADD(piano_graph_add_edge(op->g, last, red));
			if (got >= 0)
				COLL_ADD(piano_graph_add_edge(op->g, got, red));
			last = red;
		}
	}
	/* Every receive has its node now (the fold added them by chunk). */
	for (int i = w + 1; w && i < size && rc == MPI_SUCCESS; i++) {
		int r = (rank - i + size) % size, p = (rank - i + w + size) % size;
		for (int c = 0; c < nch && rc == MPI_SUCCESS; c++) {
			COLL_ADD(piano_graph_add_edge(
			        op->g, rnode[(size_t)p * (size_t)nch + (size_t)nch - 1],
			        rnode[(size_t)r * (size_t)nch + (size_t)c]));
			edges++;
		}
	}
	if (rc == MPI_SUCCESS && edges)
		atomic_fetch_add_explicit(&pmpi_g.graph_window_edges, (uint64_t)edges,
		                          memory_order_relaxed);
	if (rc == MPI_SUCCESS && in_place && n > 0) {
		int copy = -1;
		COLL_ADD(piano_graph_add_copy(op->g, acc, n, type, recvbuf, n, type, &copy));
		if (rc == MPI_SUCCESS)
			rc = after_all(op, copy);
	}
free_window:
	free(sslot);
	free(rnode);
	return rc;
}

/*
 * MPI_Ireduce_scatter and MPI_Ireduce_scatter_block, rank i's block being
 * elements first[i] .. first[i + 1] - 1 of the vector: by recursive halving
 * with a commutative operation, by pairwise messages and a fold in rank
 * order otherwise.
 */
static int reduce_scatter(const void *sendbuf, void *recvbuf, const int *first, MPI_Datatype type,
                          MPI_Op mop, struct coll_op *op, long segment, MPI_Request *request)
{
	int commute = 0, rc;
	PMPI_Op_commutative(mop, &commute);
	if (commute)
		rc = halving_reduce_scatter(op, sendbuf, recvbuf, first, type, mop, segment);
	else
		rc = pairwise_reduce_scatter(op, sendbuf, recvbuf, first, type, mop, segment);
	return finish(op, rc, request);
}

/* The blocks' first elements, size + 1 of them (the last: the total);
 * NULL when out of memory. rcounts NULL: rcount each. The total fits an
 * int (coll.c). */
static int *block_firsts(int size, const int *rcounts, int rcount)
{
	int *first = malloc(sizeof(int) * ((size_t)size + 1));
	if (!first)
		return NULL;
	first[0] = 0;
	for (int i = 0; i < size; i++)
		first[i + 1] = first[i] + (rcounts ? rcounts[i] : rcount);
	return first;
}

int coll_ireduce_scatter_block(const void *sendbuf, void *recvbuf, int rcount, MPI_Datatype type,
                               MPI_Op mop, MPI_Comm comm, long segment, MPI_Request *request)
{
	struct coll_op *op;
	const struct coll_key key = reduce_key(COLL_IREDUCE_SCATTER_BLOCK, sendbuf, recvbuf, rcount,
	                                       type, mop, 0, segment);
	int rc = coll_op_begin(comm, &key, &op);
	if (rc != MPI_SUCCESS)
		return rc;
	if (coll_op_reused(op))
		return coll_op_start(op, request);
	int *first = block_firsts(op->size, NULL, rcount);
	if (!first)
		return finish(op, MPI_ERR_NO_MEM, request);
	rc = reduce_scatter(sendbuf, recvbuf, first, type, mop, op, segment, request);
	free(first);
	return rc;
}

int coll_ireduce_scatter(const void *sendbuf, void *recvbuf, const int *rcounts, MPI_Datatype type,
                         MPI_Op mop, MPI_Comm comm, long segment, MPI_Request *request)
{
	struct coll_op *op;
	int rc = coll_op_begin(comm, NULL, &op);
	if (rc != MPI_SUCCESS)
		return rc;
	int *first = block_firsts(op->size, rcounts, 0);
	if (!first)
		return finish(op, MPI_ERR_NO_MEM, request);
	rc = reduce_scatter(sendbuf, recvbuf, first, type, mop, op, segment, request);
	free(first);
	return rc;
}

/*
 * MPI_Iscan and MPI_Iexscan: prefix reductions by recursive doubling
 * (Hillis-Steele). In step k rank r sends its inclusive partial to r + 2^k
 * and combines the one of r - 2^k, which covers the ranks right below those
 * its own partial covers: received op partial keeps the ranks' order. The
 * scan's partial is recvbuf itself; the exclusive scan keeps the partial in
 * scratch and builds its result in recvbuf from the received partials only
 * (rank 0's recvbuf is left alone, as MPI leaves it undefined). A partial
 * is overwritten only once this step's send of it has completed.
 */
static int scan_build(struct coll_op *op, bool exclusive, const void *sendbuf, void *recvbuf,
                      int count, MPI_Datatype type, MPI_Op mop, long segment)
{
	int rc = MPI_SUCCESS;
	struct layout l = layout_of(type, count);
	int nsteps = doubling_steps(op->size);
	char *tmp = nsteps ? coll_op_scratch(op, (size_t)l.span * (size_t)nsteps) : NULL;
	char *part = exclusive ? coll_op_scratch(op, (size_t)l.span) : NULL;
	if ((nsteps && !tmp) || (exclusive && !part))
		return MPI_ERR_NO_MEM;
	const char *mine = sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf;
	int seg = 0;
	int nseg = coll_segments(count, type, coll_op_segment(op, segment),
	                         op->ntags / (nsteps ? nsteps : 1), &seg);
	op->seg_tags = nsteps;
	for (int j = 0; rc == MPI_SUCCESS && j < nseg; j++) {
		int n;
		MPI_Aint off = segment_at(j, seg, count, l.extent, &n);
		char *res = (char *)recvbuf + off;
		char *p = exclusive ? part + l.shift + off : res;
		/* last_p: the node that last wrote the partial; last_r: the
		 * result (exclusive scan), -1 for none. */
		int last_p = -1, last_r = -1;
		if (exclusive || sendbuf != MPI_IN_PLACE)
			COLL_ADD(piano_graph_add_copy(op->g, mine + off, n, type, p, n, type,
			                              &last_p));
		/* In place, recvbuf is the input the partial was copied from. */
		if (exclusive && sendbuf == MPI_IN_PLACE)
			last_r = last_p;
		for (int k = 0; k < nsteps && rc == MPI_SUCCESS; k++) {
			int d = 1 << k, tag = op->tag + j * nsteps + k, s = -1;
			if (op->rank + d < op->size) {
				COLL_ADD(piano_graph_add_send(op->g, p, n, type, op->rank + d, tag,
				                              &s));
				if (last_p >= 0)
					COLL_ADD(piano_graph_add_edge(op->g, last_p, s));
			}
			if (op->rank - d < 0)
				continue;
			char *t = tmp + (size_t)l.span * (size_t)k + l.shift + off;
			int r = -1, red = -1;
			COLL_ADD(piano_graph_add_recv(op->g, t, n, type, op->rank - d, tag, &r));
			if (exclusive) {
				int w = -1;
				if (k == 0)
					COLL_ADD(piano_graph_add_copy(op->g, t, n, type, res, n,
					                              type, &w));
				else
					COLL_ADD(piano_graph_add_reduce(op->g, t, res, n, type, mop,
					                                &w));
				COLL_ADD(piano_graph_add_edge(op->g, r, w));
				if (last_r >= 0)
					COLL_ADD(piano_graph_add_edge(op->g, last_r, w));
				last_r = w;
				if (op->rank + 2 * d >= op->size)
					continue; /* the partial is not sent again */
			}
			COLL_ADD(piano_graph_add_reduce(op->g, t, p, n, type, mop, &red));
			COLL_ADD(piano_graph_add_edge(op->g, r, red));
			if (last_p >= 0)
				COLL_ADD(piano_graph_add_edge(op->g, last_p, red));
			if (s >= 0)
				COLL_ADD(piano_graph_add_edge(op->g, s, red));
			last_p = red;
		}
	}
	return rc;
}

/* A reduction as the four entry points below take it. */
struct reduction {
	enum coll_kind kind; /* COLL_IREDUCE, COLL_IALLREDUCE, COLL_ISCAN, COLL_IEXSCAN */
	MPI_Datatype type;
	MPI_Op mop;
	int root;
	long segment;
};

static int reduction_build(struct coll_op *op, const struct reduction *r, const void *sendbuf,
                           void *recvbuf, int count)
{
	switch (r->kind) {
	case COLL_IREDUCE:
		return reduce_build(op, sendbuf, recvbuf, count, r->type, r->mop, r->root,
		                    r->segment);
	case COLL_IALLREDUCE:
		return allreduce(op, sendbuf, recvbuf, count, r->type, r->mop, r->segment);
	default:
		return scan_build(op, r->kind == COLL_IEXSCAN, sendbuf, recvbuf, count, r->type,
		                  r->mop, r->segment);
	}
}

/* buf + elements extents, for a buffer the call may ignore too (a root's
 * receive buffer elsewhere: never read there, possibly NULL). */
static const void *at_element(const void *buf, MPI_Count elements, MPI_Aint extent)
{
	if (buf == MPI_IN_PLACE)
		return buf;
	return (const void *)((uintptr_t)buf + (uintptr_t)(elements * extent));
}

/*
 * A reduction past INT_MAX elements (MPI-4's large-count calls; the count
 * and the datatype are the same on every rank, so every rank cuts alike):
 * the vector in `parts` runs of at most INT_MAX elements, balanced, each
 * built by the int algorithm into the same graph on a slice of the
 * operation's tags. The slices are whole multiples of the first run's tags
 * per segment, so that the window (coll_op_start()) sees one pipeline of
 * the runs' segments end to end. COLL_ENOTAGS (the MPI's own, on every
 * rank) when the tags do not hold the runs.
 */
static int reduction_parts(struct coll_op *op, const struct reduction *r, const void *sendbuf,
                           void *recvbuf, MPI_Count count)
{
	MPI_Aint lb, extent;
	if (PMPI_Type_get_extent(r->type, &lb, &extent) != MPI_SUCCESS)
		return MPI_ERR_TYPE;
	MPI_Count nparts = (count - 1) / INT_MAX + 1;
	/* A run needs a segment's tags at least (2 log2(size) + 2 at most). */
	if (nparts > op->ntags / 64)
		return COLL_ENOTAGS;
	int parts = (int)nparts, base = op->tag, all = op->ntags, slice = all / parts;
	int seg_tags = 0;
	bool alike = true;
	MPI_Count per = count / parts, extra = count % parts, first = 0;
	int rc = MPI_SUCCESS;
	for (int p = 0; rc == MPI_SUCCESS && p < parts; p++) {
		MPI_Count n = per + (p < extra);
		op->tag = base + p * slice;
		op->ntags = slice;
		rc = reduction_build(op, r, at_element(sendbuf, first, extent),
		                     (void *)at_element(recvbuf, first, extent), (int)n);
		if (p == 0) {
			seg_tags = op->seg_tags;
			if (seg_tags > 0)
				slice -= slice % seg_tags;
		} else if (op->seg_tags != seg_tags) {
			alike = false; /* runs of different algorithms: no window */
		}
		first += n;
	}
	op->tag = base;
	op->ntags = all;
	op->seg_tags = alike ? seg_tags : 0;
	return rc;
}

static int reduction(const struct reduction *r, const void *sendbuf, void *recvbuf, MPI_Count count,
                     MPI_Comm comm, MPI_Request *request)
{
	struct coll_op *op;
	/* Past INT_MAX: not kept for reuse (built once per call; the build is
	 * nothing beside the gigabytes it reduces). */
	const struct coll_key key = count <= INT_MAX
	                                    ? reduce_key(r->kind, sendbuf, recvbuf, (int)count,
	                                                 r->type, r->mop, r->root, r->segment)
	                                    : (struct coll_key){ .kind = COLL_NONE };
	int rc = coll_op_begin(comm, &key, &op);
	if (rc != MPI_SUCCESS)
		return rc;
	if (coll_op_reused(op))
		return coll_op_start(op, request);
	rc = count <= INT_MAX ? reduction_build(op, r, sendbuf, recvbuf, (int)count)
	                      : reduction_parts(op, r, sendbuf, recvbuf, count);
	return finish(op, rc, request);
}

int coll_ireduce(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op mop,
                 int root, MPI_Comm comm, long segment, MPI_Request *request)
{
	const struct reduction r = { COLL_IREDUCE, type, mop, root, segment };
	return reduction(&r, sendbuf, recvbuf, count, comm, request);
}

int coll_iallreduce(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type,
                    MPI_Op mop, MPI_Comm comm, long segment, MPI_Request *request)
{
	const struct reduction r = { COLL_IALLREDUCE, type, mop, 0, segment };
	return reduction(&r, sendbuf, recvbuf, count, comm, request);
}

int coll_iscan(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op mop,
               MPI_Comm comm, long segment, MPI_Request *request)
{
	const struct reduction r = { COLL_ISCAN, type, mop, 0, segment };
	return reduction(&r, sendbuf, recvbuf, count, comm, request);
}

int coll_iexscan(const void *sendbuf, void *recvbuf, MPI_Count count, MPI_Datatype type, MPI_Op mop,
                 MPI_Comm comm, long segment, MPI_Request *request)
{
	const struct reduction r = { COLL_IEXSCAN, type, mop, 0, segment };
	return reduction(&r, sendbuf, recvbuf, count, comm, request);
}

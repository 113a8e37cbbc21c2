/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Ibcast as a graph: a binomial tree, pipelined in segments. Every
 * receive from the parent is posted at start (a tag per segment); the
 * moment segment j arrives, its sends to the children start, whatever the
 * other segments do: no round waits for the whole previous one.
 *
 * On large communicators and messages, a scatter down the same tree then
 * a ring allgather (van de Geijn's broadcast, MPICH's for these sizes):
 * the tree's root sends the whole message once per child, log2(size)
 * times in all, where here every rank sends about twice the message.
 */
#include "base.h"
#include "coll_algo.h"
#include "coll_op.h"

#include <limits.h>
#include <stdlib.h>

/*
 * The message as bytes, so that every rank cuts it alike whatever its
 * datatype (MPI requires equal type signatures, not equal datatypes): a
 * dense datatype's elements are their bytes in place; any other is packed
 * into scratch memory at the root before its first send (node `pack`) and
 * unpacked from it elsewhere once every receive is done (the nodes in
 * `recvs`, collected while the graph is built).
 */
struct as_bytes {
	int pack;     /* the root's COPY node, or -1 */
	bool unpack;  /* a rank other than the root, packed */
	char *packed; /* the scratch memory, nbytes long */
	int nbytes;
	int *recvs, nrecv, cap;
};

/* After a send node `to` that waits for no receive (the root's). */
static int after_pack(struct coll_op *op, const struct as_bytes *ab, int to)
{
	return ab->pack >= 0 ? coll_mpi_error(piano_graph_add_edge(op->g, ab->pack, to))
	                     : MPI_SUCCESS;
}

/* A receive node the unpacking waits for. */
static int unpack_after(struct as_bytes *ab, int from)
{
	if (!ab->unpack)
		return MPI_SUCCESS;
	if (ab->nrecv == ab->cap) {
		int cap = ab->cap ? 2 * ab->cap : 16;
		int *r = realloc(ab->recvs, sizeof(*r) * (size_t)cap);
		if (!r)
			return MPI_ERR_NO_MEM;
		ab->recvs = r;
		ab->cap = cap;
	}
	ab->recvs[ab->nrecv++] = from;
	return MPI_SUCCESS;
}

/*
 * Whether the MPI sends a message of a non-contiguous datatype about as
 * fast as piano's pack, send and unpack of it: the same on every rank of a
 * job (one MPI). A vector of 2 doubles in 3, 1 MiB, broadcast on 2 ranks
 * on shared memory (median of 200 MPI_Ibcast + MPI_Wait): Open MPI 4.1.4,
 * whose convertor packs while it sends, 116-138 us natively, 106-124 us
 * as a graph that sends the datatype, 271-367 us packed; MPICH 4.0.2
 * 1.4-3.4 ms natively, 741-763 us sending the datatype, 227-287 us packed.
 */
static bool mpi_moves_layouts(void)
{
#if defined(OPEN_MPI)
	return true;
#else
	return false;
#endif
}

/* The scatter + ring allgather broadcast's plan, in virtual ranks (the
 * root is 0): chunk c, elements [first(c), first(c + 1)) of the buffer,
 * is virtual rank c's share; each chunk is cut into `nseg` units of at
 * most `seg` elements, unit (c, s) travelling under tag tag0 + c * nseg +
 * s. */
struct scatter_plan {
	int size, q, r; /* count = q * size + r: chunk c has q + (c < r) elements */
	int nseg, seg;
};

static long chunk_first(const struct scatter_plan *p, int c)
{
	return (long)c * p->q + (c < p->r ? c : p->r);
}

/* The end of virtual rank v's subtree in the binomial tree (coll_tree()):
 * v holds chunks [v, subtree_end(v)) once the scatter is done. */
static int subtree_end(int v, int size)
{
	if (v == 0)
		return size;
	unsigned low = (unsigned)v & (0u - (unsigned)v);
	return (unsigned)v + low < (unsigned)size ? v + (int)low : size;
}

static bool holds(int v, int c, int size) { return c >= v && c < subtree_end(v, size); }

/*
 * Unit by unit: a rank that holds chunk c after the scatter receives each
 * of its units from its parent (the root has them) and forwards it to the
 * child whose subtree holds c; a rank that does not receives it from its
 * ring predecessor. Either way it then sends it on to its ring successor
 * unless that one holds c, so each unit goes down the ring from c's owner
 * until it reaches a rank that has it, and every rank receives each unit
 * exactly once: no buffer region is written twice or written while a
 * send reads it. The chains run side by side, each unit moving the moment
 * it arrived; the window (PIANO_COLL_WINDOW) bounds the units in flight
 * per peer, by tag.
 */
static int bcast_scatter_ring(struct coll_op *op, char *buf, int count, MPI_Datatype type, int root,
                              MPI_Aint extent, long segment, struct as_bytes *ab)
{
	struct scatter_plan p = { .size = op->size, .q = count / op->size, .r = count % op->size };
	int maxc = p.q + (p.r > 0);
	p.nseg = coll_segments(maxc, type, segment, op->ntags / op->size, &p.seg);
	int size = op->size, me = (op->rank - root + size) % size;
	int parent, children[32];
	int nchild = coll_tree(me, size, &parent, children);
	int next = (me + 1) % size, prev = (me + size - 1) % size;
	int rc = MPI_SUCCESS;
	for (int c = 0; c < size && rc == MPI_SUCCESS; c++) {
		long end = chunk_first(&p, c + 1);
		for (int s = 0; s < p.nseg && rc == MPI_SUCCESS; s++) {
			long a = chunk_first(&p, c) + (long)s * p.seg;
			long b = a + p.seg < end ? a + p.seg : end;
			if (a >= b)
				break;
			char *at = buf + a * extent;
			int n = (int)(b - a), tag = op->tag + c * p.nseg + s;
			int from = -1, to;
			bool mine = holds(me, c, size);
			if (mine && parent >= 0)
				rc = coll_mpi_error(piano_graph_add_recv(op->g, at, n, type,
				                                         (parent + root) % size,
				                                         tag, &from));
			else if (!mine)
				rc = coll_mpi_error(piano_graph_add_recv(op->g, at, n, type,
				                                         (prev + root) % size, tag,
				                                         &from));
			if (rc == MPI_SUCCESS && from >= 0)
				rc = unpack_after(ab, from);
			for (int k = 0; mine && k < nchild && rc == MPI_SUCCESS; k++) {
				if (!holds(children[k], c, size))
					continue;
				rc = coll_mpi_error(piano_graph_add_send(
				        op->g, at, n, type, (children[k] + root) % size, tag, &to));
				if (rc == MPI_SUCCESS)
					rc = from >= 0 ? coll_mpi_error(piano_graph_add_edge(op->g,
					                                                     from,
					                                                     to))
					               : after_pack(op, ab, to);
			}
			if (rc == MPI_SUCCESS && !holds(next, c, size)) {
				rc = coll_mpi_error(piano_graph_add_send(op->g, at, n, type,
				                                         (next + root) % size, tag,
				                                         &to));
				if (rc == MPI_SUCCESS && from < 0)
					rc = after_pack(op, ab, to);
				else if (rc == MPI_SUCCESS)
					rc = coll_mpi_error(piano_graph_add_edge(op->g, from, to));
			}
		}
	}
	return rc;
}

/* The graph's end: where the message was packed, its unpacking into the
 * caller's (ucount x utype at ubuf) once every receive is done; then the
 * start, or on an error the operation abandoned. */
static int finish(struct coll_op *op, int rc, struct as_bytes *ab, void *ubuf, int ucount,
                  MPI_Datatype utype, MPI_Request *request)
{
	if (rc == MPI_SUCCESS && ab->unpack) {
		int node = -1;
		rc = coll_mpi_error(piano_graph_add_copy(op->g, ab->packed, ab->nbytes, MPI_BYTE,
		                                         ubuf, ucount, utype, &node));
		for (int i = 0; rc == MPI_SUCCESS && i < ab->nrecv; i++)
			rc = coll_mpi_error(piano_graph_add_edge(op->g, ab->recvs[i], node));
	}
	free(ab->recvs);
	if (rc != MPI_SUCCESS) {
		coll_op_abandon(op);
		return rc;
	}
	return coll_op_start(op, request);
}

int coll_ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, long segment,
                MPI_Request *request)
{
	struct coll_op *op;
	const struct coll_key key = { .kind = COLL_IBCAST,
		                      .rbuf = buf,
		                      .rcount = count,
		                      .rtype = type,
		                      .root = root,
		                      .segment = segment };
	int rc = coll_op_begin(comm, &key, &op);
	if (rc != MPI_SUCCESS)
		return rc;
	if (coll_op_reused(op))
		return coll_op_start(op, request);
	MPI_Aint lb, extent;
	PMPI_Type_get_extent(type, &lb, &extent);
	long bytes = coll_bytes(count, type), seg_bytes = coll_op_segment(op, segment);
	bool big = bytes > INT_MAX;
	/* Alike on every rank: the communicator's size and the message's
	 * bytes (MPI requires equal type signatures), whether its ranks share
	 * one node (coll_op_segment()), and the operation's tags, whose count
	 * depends on MPI_TAG_UB only (one unit per chunk at least). On one
	 * node only when asked for: there the receivers' copies are the work,
	 * the same whatever the shape, and the scatter's extra messages cost
	 * (docs/coll.md). */
	bool scatter = !big && op->size >= coll_bcast_scatter_min_ranks && op->size > 1 &&
	               (!op->one_node || coll_bcast_scatter_node) &&
	               bytes >= coll_bcast_scatter_min && op->ntags / op->size >= 1;
	/* One message per edge of the tree: with two ranks, where nobody
	 * forwards and there is nothing to pipeline, or a message of one
	 * segment at most. whole: each rank with its own datatype (the MPI
	 * matches type signatures, not datatypes), past INT_MAX bytes, where a
	 * large-count call passes one element of a contiguous type of its
	 * count and an int one more elements of another, and for one message
	 * where the MPI moves any layout itself (mpi_moves_layouts()).
	 * Otherwise the message is bytes (struct as_bytes), cut alike on every
	 * rank. */
	bool one_message = !scatter && (op->size <= 2 || bytes <= seg_bytes);
	bool whole = big || (one_message && mpi_moves_layouts());
	struct as_bytes ab = { .pack = -1 };
	void *ubuf = buf; /* the caller's, for the unpacking */
	int ucount = count;
	MPI_Datatype utype = type;
	if (!whole && bytes >= 0 && op->size > 1) {
		MPI_Aint shift = 0;
		bool dense = coll_type_dense(type, &shift);
		char *b = (char *)buf + shift;
		if (!dense) {
			b = coll_op_scratch(op, (size_t)bytes);
			ab.packed = b;
			ab.nbytes = (int)bytes;
			ab.unpack = op->rank != root && bytes > 0;
			if (!b)
				rc = MPI_ERR_NO_MEM;
			else if (op->rank == root && bytes > 0)
				rc = coll_mpi_error(piano_graph_add_copy(op->g, buf, count, type, b,
				                                         (int)bytes, MPI_BYTE,
				                                         &ab.pack));
		}
		buf = b;
		count = (int)bytes;
		type = MPI_BYTE;
		extent = 1;
	}
	if (rc == MPI_SUCCESS && scatter) {
		op->seg_tags = 1;
		atomic_fetch_add_explicit(&pmpi_g.graph_bcast_scatter, 1, memory_order_relaxed);
		rc = bcast_scatter_ring(op, buf, count, type, root, extent, seg_bytes, &ab);
		return finish(op, rc, &ab, ubuf, ucount, utype, request);
	}
	int vr = (op->rank - root + op->size) % op->size;
	int parent, children[32];
	int nchild = coll_tree(vr, op->size, &parent, children);
	int seg = 0;
	int nseg = coll_segments(count, type, whole || one_message ? LONG_MAX : seg_bytes,
	                         op->ntags, &seg);
	op->seg_tags = 1;
	for (int j = 0; rc == MPI_SUCCESS && j < nseg && op->size > 1; j++) {
		char *b = (char *)buf + (MPI_Aint)j * seg * extent;
		int n = count - j * seg < seg ? count - j * seg : seg;
		int from = -1;
		if (parent >= 0)
			rc = coll_mpi_error(piano_graph_add_recv(op->g, b, n, type,
			                                         (parent + root) % op->size,
			                                         op->tag + j, &from));
		if (rc == MPI_SUCCESS && from >= 0)
			rc = unpack_after(&ab, from);
		for (int c = 0; rc == MPI_SUCCESS && c < nchild; c++) {
			int to;
			rc = coll_mpi_error(piano_graph_add_send(op->g, b, n, type,
			                                         (children[c] + root) % op->size,
			                                         op->tag + j, &to));
			if (rc == MPI_SUCCESS)
				rc = from >= 0
				             ? coll_mpi_error(piano_graph_add_edge(op->g, from, to))
				             : after_pack(op, &ab, to);
		}
	}
	return finish(op, rc, &ab, ubuf, ucount, utype, request);
}

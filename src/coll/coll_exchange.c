/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The block exchanges as graphs: MPI_Ialltoall, MPI_Iallgather,
 * MPI_Igather, MPI_Iscatter. Each is direct: every block goes straight from
 * the rank that has it to the rank that needs it, every receive and every
 * send posted at start (one tag: one message per pair of ranks), so the
 * whole exchange moves with no step waiting for another: size - 1
 * messages per rank (per root for gather and scatter), which suits the
 * communicator sizes of a node or a few; a window bounding the messages in
 * flight is still to come (docs/coll.md). A rank's own block is a COPY.
 */
#include "coll_algo.h"
#include "coll_op.h"

#include <stdbool.h>
#include <stdint.h>

#define ADD(call)                                  \
	do {                                       \
		if (rc == MPI_SUCCESS)             \
			rc = coll_mpi_error(call); \
	} while (0)

static MPI_Aint extent_of(MPI_Datatype type)
{
	MPI_Aint lb, extent;
	PMPI_Type_get_extent(type, &lb, &extent);
	return extent;
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

int coll_ialltoall(const void *sendbuf, int scount, MPI_Datatype stype, void *recvbuf, int rcount,
                   MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request)
{
	struct coll_op *op;
	int rc = coll_op_begin(comm, &op);
	if (rc != MPI_SUCCESS)
		return rc;
	MPI_Aint rext = extent_of(rtype), sext;
	const char *src = sendbuf;
	int staged = -1;
	if (sendbuf == MPI_IN_PLACE) {
		char *copy = NULL;
		rc = stage_in_place(op, recvbuf, rcount, rtype, &copy, &staged);
		src = copy;
		scount = rcount;
		stype = rtype;
	}
	sext = extent_of(stype);
	int me = op->rank;
	for (int i = 1; i < op->size && rc == MPI_SUCCESS; i++) {
		int from = (me - i + op->size) % op->size, to = (me + i) % op->size, r = -1, s = -1;
		ADD(piano_graph_add_recv(op->g, (char *)recvbuf + (MPI_Aint)from * rcount * rext,
		                         rcount, rtype, from, op->tag, &r));
		ADD(piano_graph_add_send(op->g, src + (MPI_Aint)to * scount * sext, scount, stype,
		                         to, op->tag, &s));
		if (staged >= 0) {
			ADD(piano_graph_add_edge(op->g, staged, r));
			ADD(piano_graph_add_edge(op->g, staged, s));
		}
	}
	if (sendbuf != MPI_IN_PLACE)
		ADD(piano_graph_add_copy(op->g, src + (MPI_Aint)me * scount * sext, scount, stype,
		                         (char *)recvbuf + (MPI_Aint)me * rcount * rext, rcount,
		                         rtype, NULL));
	return finish(op, rc, request);
}

int coll_iallgather(const void *sendbuf, int scount, MPI_Datatype stype, void *recvbuf, int rcount,
                    MPI_Datatype rtype, MPI_Comm comm, MPI_Request *request)
{
	struct coll_op *op;
	int rc = coll_op_begin(comm, &op);
	if (rc != MPI_SUCCESS)
		return rc;
	MPI_Aint rext = extent_of(rtype);
	int me = op->rank;
	char *mine = (char *)recvbuf + (MPI_Aint)me * rcount * rext;
	for (int i = 1; i < op->size && rc == MPI_SUCCESS; i++) {
		int from = (me - i + op->size) % op->size, to = (me + i) % op->size;
		ADD(piano_graph_add_recv(op->g, (char *)recvbuf + (MPI_Aint)from * rcount * rext,
		                         rcount, rtype, from, op->tag, NULL));
		if (sendbuf == MPI_IN_PLACE)
			ADD(piano_graph_add_send(op->g, mine, rcount, rtype, to, op->tag, NULL));
		else
			ADD(piano_graph_add_send(op->g, sendbuf, scount, stype, to, op->tag, NULL));
	}
	if (sendbuf != MPI_IN_PLACE)
		ADD(piano_graph_add_copy(op->g, sendbuf, scount, stype, mine, rcount, rtype, NULL));
	return finish(op, rc, request);
}

/* Gather (blocks to the root) and scatter (blocks from it): the root
 * exchanges a block with every other rank and copies its own between
 * `mine` (count x type, MPI_IN_PLACE: already there) and its block of
 * `blocks` (size x bcount x btype). */
static int rooted(bool gather, const void *mine, int count, MPI_Datatype type, const void *blocks,
                  int bcount, MPI_Datatype btype, int root, MPI_Comm comm, MPI_Request *request)
{
	struct coll_op *op;
	int rc = coll_op_begin(comm, &op);
	if (rc != MPI_SUCCESS)
		return rc;
	if (op->rank != root) {
		if (gather)
			ADD(piano_graph_add_send(op->g, mine, count, type, root, op->tag, NULL));
		else
			ADD(piano_graph_add_recv(op->g, (void *)(uintptr_t)mine, count, type, root,
			                         op->tag, NULL));
		return finish(op, rc, request);
	}
	char *b = (char *)(uintptr_t)blocks;
	MPI_Aint ext = extent_of(btype);
	for (int i = 0; i < op->size && rc == MPI_SUCCESS; i++) {
		if (i == root)
			continue;
		char *block = b + (MPI_Aint)i * bcount * ext;
		if (gather)
			ADD(piano_graph_add_recv(op->g, block, bcount, btype, i, op->tag, NULL));
		else
			ADD(piano_graph_add_send(op->g, block, bcount, btype, i, op->tag, NULL));
	}
	char *own = b + (MPI_Aint)root * bcount * ext;
	if (mine != MPI_IN_PLACE) {
		if (gather)
			ADD(piano_graph_add_copy(op->g, mine, count, type, own, bcount, btype,
			                         NULL));
		else
			ADD(piano_graph_add_copy(op->g, own, bcount, btype, (void *)(uintptr_t)mine,
			                         count, type, NULL));
	}
	return finish(op, rc, request);
}

int coll_igather(const void *sendbuf, int scount, MPI_Datatype stype, void *recvbuf, int rcount,
                 MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *request)
{
	return rooted(true, sendbuf, scount, stype, recvbuf, rcount, rtype, root, comm, request);
}

int coll_iscatter(const void *sendbuf, int scount, MPI_Datatype stype, void *recvbuf, int rcount,
                  MPI_Datatype rtype, int root, MPI_Comm comm, MPI_Request *request)
{
	return rooted(false, recvbuf, rcount, rtype, sendbuf, scount, stype, root, comm, request);
}

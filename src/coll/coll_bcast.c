/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Ibcast as a graph: a binomial tree, pipelined in segments. Every
 * receive from the parent is posted at start (a tag per segment); the
 * moment segment j arrives, its sends to the children start, whatever the
 * other segments do: no round waits for the whole previous one.
 */
#include "coll_algo.h"
#include "coll_op.h"

#include <limits.h>

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
	int vr = (op->rank - root + op->size) % op->size;
	int parent, children[32];
	int nchild = coll_tree(vr, op->size, &parent, children);
	/* With two ranks nobody forwards, so there is nothing to pipeline and
	 * segments only cut one message into many (1 MiB on shared memory,
	 * Open MPI: 76-79 us in 64 KiB segments, 56-58 us whole, the MPI's own
	 * 55-59). */
	if (op->size <= 2)
		segment = LONG_MAX;
	int seg = 0;
	int nseg = coll_segments(count, type, coll_op_segment(op, segment), op->ntags, &seg);
	op->seg_tags = 1;
	for (int j = 0; rc == MPI_SUCCESS && j < nseg && op->size > 1; j++) {
		char *b = (char *)buf + (MPI_Aint)j * seg * extent;
		int n = count - j * seg < seg ? count - j * seg : seg;
		int from = -1;
		if (parent >= 0)
			rc = coll_mpi_error(piano_graph_add_recv(op->g, b, n, type,
			                                         (parent + root) % op->size,
			                                         op->tag + j, &from));
		for (int c = 0; rc == MPI_SUCCESS && c < nchild; c++) {
			int to;
			rc = coll_mpi_error(piano_graph_add_send(op->g, b, n, type,
			                                         (children[c] + root) % op->size,
			                                         op->tag + j, &to));
			if (rc == MPI_SUCCESS && from >= 0)
				rc = coll_mpi_error(piano_graph_add_edge(op->g, from, to));
		}
	}
	if (rc != MPI_SUCCESS) {
		coll_op_abandon(op);
		return rc;
	}
	return coll_op_start(op, request);
}

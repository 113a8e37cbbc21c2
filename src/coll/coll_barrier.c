/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Ibarrier as a graph: dissemination. In round k each rank sends to
 * rank + 2^k and receives from rank - 2^k; a round's send waits for the
 * previous round's receive, and every receive is posted at start. After
 * ceil(log2 size) rounds every rank has heard, directly or not, from all.
 */
#include "coll_algo.h"
#include "coll_op.h"

int coll_ibarrier(MPI_Comm comm, MPI_Request *request)
{
	struct coll_op *op;
	const struct coll_key key = { .kind = COLL_IBARRIER };
	int rc = coll_op_begin(comm, &key, &op);
	if (rc != MPI_SUCCESS)
		return rc;
	if (coll_op_reused(op))
		return coll_op_start(op, request);
	int prev = -1;
	for (int k = 0, d = 1; rc == MPI_SUCCESS && d < op->size; k++, d <<= 1) {
		int s = -1, r = -1;
		rc = coll_mpi_error(piano_graph_add_send(op->g, NULL, 0, MPI_BYTE,
		                                         (op->rank + d) % op->size, op->tag + k,
		                                         &s));
		if (rc == MPI_SUCCESS)
			rc = coll_mpi_error(
			        piano_graph_add_recv(op->g, NULL, 0, MPI_BYTE,
			                             (op->rank - d + op->size) % op->size,
			                             op->tag + k, &r));
		if (rc == MPI_SUCCESS && prev >= 0)
			rc = coll_mpi_error(piano_graph_add_edge(op->g, prev, s));
		prev = r;
	}
	if (rc != MPI_SUCCESS) {
		coll_op_abandon(op);
		return rc;
	}
	return coll_op_start(op, request);
}

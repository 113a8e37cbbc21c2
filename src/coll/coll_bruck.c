/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Ialltoall and MPI_Iallgather of small blocks on a larger
 * communicator as Bruck's exchanges: ceil(log2(size)) messages per rank
 * instead of size - 1, for a latency-bound exchange.
 *
 * All-to-all:
 * Blocks of B bytes (contiguous predefined types only, so a block is its
 * bytes). tmp[i] starts as this rank's block for rank (rank + i) % size
 * (a rotation); in phase k (d = 2^k) the blocks whose index has bit k set
 * go to rank + d, packed in index order, and the same indices come back
 * from rank - d, unpacked in their place; afterwards tmp[i] holds the block
 * that rank (rank - i) % size sent here, copied out in the final rotation.
 * Every phase's receive is posted at start (its own staging buffer and
 * tag); a phase's pack waits for the previous phase's unpack, its unpack
 * for its receive and its pack (the blocks it overwrites were sent from
 * the packed copy). The local work is four CALC nodes of memcpy loops.
 *
 * Allgather: tmp[0] starts as this rank's block; in phase k (d = 2^k) the
 * first min(d, size - d) blocks of tmp go to rank - d and as many come
 * from rank + d into tmp[d...]; afterwards tmp[i] holds rank (rank + i) %
 * size's block, copied out in the final rotation. Messages go straight
 * from and into tmp (the ranges are contiguous and disjoint), every
 * receive posted at start; phase k's send waits for every earlier phase's
 * receive (its blocks), the rotation out for all of them.
 */
#include "coll_algo.h"
#include "coll_op.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* What a CALC node of the exchange does. */
enum bruck_step { BRUCK_ROTATE, BRUCK_PACK, BRUCK_UNPACK, BRUCK_OUT };

struct bruck_calc {
	enum bruck_step step;
	int size, rank, d; /* d: the phase's distance (PACK, UNPACK) */
	int sign;          /* OUT: tmp[i] is block (rank + sign * i) % size */
	size_t block;      /* bytes per block */
	char *tmp;         /* size blocks */
	char *stage;       /* the phase's packed blocks (PACK, UNPACK) */
	/* ROTATE and OUT: the application's blocks, `count` elements of
	 * `type` at base + j * stride; `dense`: a block is its bytes (one
	 * memcpy), else MPI_Pack / MPI_Unpack to and from them. */
	const struct coll_block_layout *app;
};

static int bruck_run(void *arg)
{
	const struct bruck_calc *c = arg;
	const struct coll_block_layout *a = c->app;
	size_t b = c->block;
	int p = c->size, j = 0, pos, rc = MPI_SUCCESS;
	switch (c->step) {
	case BRUCK_ROTATE:
		for (int i = 0; i < p && rc == MPI_SUCCESS; i++) {
			const char *src = (const char *)a->base + (size_t)((c->rank + i) % p) * a->stride;
			if (a->dense) {
				memcpy(c->tmp + (size_t)i * b, src + a->shift, b);
				continue;
			}
			pos = 0;
			rc = PMPI_Pack(src, a->count, a->type, c->tmp + (size_t)i * b, (int)b, &pos,
			               MPI_COMM_SELF);
		}
		break;
	case BRUCK_PACK:
		for (int i = 0; i < p; i++)
			if (i & c->d)
				memcpy(c->stage + (size_t)j++ * b, c->tmp + (size_t)i * b, b);
		break;
	case BRUCK_UNPACK:
		for (int i = 0; i < p; i++)
			if (i & c->d)
				memcpy(c->tmp + (size_t)i * b, c->stage + (size_t)j++ * b, b);
		break;
	case BRUCK_OUT:
		for (int i = 0; i < p && rc == MPI_SUCCESS; i++) {
			char *dst = (char *)a->base +
			            (size_t)((c->rank + c->sign * i + p) % p) * a->stride;
			if (a->dense) {
				memcpy(dst + a->shift, c->tmp + (size_t)i * b, b);
				continue;
			}
			pos = 0;
			rc = PMPI_Unpack(c->tmp + (size_t)i * b, (int)b, &pos, dst, a->count, a->type,
			                 MPI_COMM_SELF);
		}
		break;
	}
	return rc;
}

/* Blocks of 0..size-1 whose index has bit d set. */
static int blocks_with(int size, int d)
{
	int m = 0;
	for (int i = 0; i < size; i++)
		m += (i & d) != 0;
	return m;
}

int coll_bruck_alltoall(struct coll_op *op, const struct coll_block_layout *send,
                        const struct coll_block_layout *recv, size_t block, int after)
{
	int p = op->size, nphases = 0;
	for (int d = 1; d < p; d <<= 1)
		nphases++;
	/* One scratch area: the calc records (aligned first), tmp, then each
	 * phase's send and receive staging. */
	size_t ncalc = 2 + 2 * (size_t)nphases;
	size_t head = ncalc * sizeof(struct bruck_calc) + 2 * sizeof(struct coll_block_layout);
	size_t bytes = head + (size_t)p * block;
	for (int d = 1; d < p; d <<= 1)
		bytes += 2 * (size_t)blocks_with(p, d) * block;
	char *area = coll_op_scratch(op, bytes);
	if (!area)
		return MPI_ERR_NO_MEM;
	struct bruck_calc *calc = (struct bruck_calc *)(void *)area;
	/* The layouts live as long as the graph (reuse runs it again). */
	struct coll_block_layout *lay = (struct coll_block_layout *)(void *)(calc + ncalc);
	lay[0] = *send;
	lay[1] = *recv;
	char *tmp = area + head, *next = tmp + (size_t)p * block;
	int rc = MPI_SUCCESS, node = -1, prev = -1, k = 0;
	calc[0] = (struct bruck_calc){ .step = BRUCK_ROTATE,
		                       .size = p,
		                       .rank = op->rank,
		                       .block = block,
		                       .tmp = tmp,
		                       .app = &lay[0] };
	COLL_ADD(piano_graph_add_calc(op->g, bruck_run, &calc[0], &prev));
	if (after >= 0)
		COLL_ADD(piano_graph_add_edge(op->g, after, prev));
	for (int d = 1; d < p && rc == MPI_SUCCESS; d <<= 1, k++) {
		int m = blocks_with(p, d), s = -1, r = -1, pack = -1, unpack = -1;
		char *sst = next, *rst = next + (size_t)m * block;
		next = rst + (size_t)m * block;
		struct bruck_calc *cp = &calc[1 + 2 * k], *cu = &calc[2 + 2 * k];
		*cp = (struct bruck_calc){
			.step = BRUCK_PACK, .size = p, .d = d, .block = block, .tmp = tmp, .stage = sst
		};
		*cu = (struct bruck_calc){
			.step = BRUCK_UNPACK, .size = p, .d = d, .block = block, .tmp = tmp, .stage = rst
		};
		/* Bytes of at most INT_MAX: the caller takes this path for small
		 * blocks only. */
		int nbytes = (int)((size_t)m * block);
		COLL_ADD(piano_graph_add_recv(op->g, rst, nbytes, MPI_BYTE, (op->rank - d + p) % p,
		                              op->tag + k, &r));
		COLL_ADD(piano_graph_add_calc(op->g, bruck_run, cp, &pack));
		COLL_ADD(piano_graph_add_send(op->g, sst, nbytes, MPI_BYTE, (op->rank + d) % p,
		                              op->tag + k, &s));
		COLL_ADD(piano_graph_add_calc(op->g, bruck_run, cu, &unpack));
		COLL_ADD(piano_graph_add_edge(op->g, prev, pack));
		COLL_ADD(piano_graph_add_edge(op->g, pack, s));
		COLL_ADD(piano_graph_add_edge(op->g, pack, unpack));
		COLL_ADD(piano_graph_add_edge(op->g, r, unpack));
		prev = unpack;
	}
	struct bruck_calc *co = &calc[1 + 2 * nphases];
	*co = (struct bruck_calc){ .step = BRUCK_OUT,
		                   .size = p,
		                   .rank = op->rank,
		                   .sign = -1,
		                   .block = block,
		                   .tmp = tmp,
		                   .app = &lay[1] };
	COLL_ADD(piano_graph_add_calc(op->g, bruck_run, co, &node));
	COLL_ADD(piano_graph_add_edge(op->g, prev, node));
	return rc;
}

int coll_bruck_allgather(struct coll_op *op, const struct coll_block_layout *mine,
                         const struct coll_block_layout *recv, size_t block)
{
	int p = op->size, nphases = 0;
	for (int d = 1; d < p; d <<= 1)
		nphases++;
	/* The two calc records and layouts, then tmp. */
	size_t head = 2 * sizeof(struct bruck_calc) + 2 * sizeof(struct coll_block_layout);
	char *area = coll_op_scratch(op, head + (size_t)p * block);
	int *recvs = malloc((size_t)(nphases ? nphases : 1) * sizeof(*recvs));
	if (!area || !recvs) {
		free(recvs);
		return MPI_ERR_NO_MEM;
	}
	struct bruck_calc *calc = (struct bruck_calc *)(void *)area;
	struct coll_block_layout *lay = (struct coll_block_layout *)(void *)(calc + 2);
	lay[0] = *mine;
	lay[1] = *recv;
	char *tmp = area + head;
	int rc = MPI_SUCCESS, own = -1, out = -1, k = 0;
	/* The own block into tmp[0]: a rotation of one block. */
	calc[0] = (struct bruck_calc){
		.step = BRUCK_ROTATE, .size = 1, .block = block, .tmp = tmp, .app = &lay[0]
	};
	calc[1] = (struct bruck_calc){ .step = BRUCK_OUT,
		                       .size = p,
		                       .rank = op->rank,
		                       .sign = 1,
		                       .block = block,
		                       .tmp = tmp,
		                       .app = &lay[1] };
	COLL_ADD(piano_graph_add_calc(op->g, bruck_run, &calc[0], &own));
	COLL_ADD(piano_graph_add_calc(op->g, bruck_run, &calc[1], &out));
	COLL_ADD(piano_graph_add_edge(op->g, own, out));
	for (int d = 1; d < p && rc == MPI_SUCCESS; d <<= 1, k++) {
		/* Bytes of at most INT_MAX: small blocks only (the caller). */
		int n = (int)((size_t)(d < p - d ? d : p - d) * block), s = -1;
		COLL_ADD(piano_graph_add_recv(op->g, tmp + (size_t)d * block, n, MPI_BYTE,
		                              (op->rank + d) % p, op->tag + k, &recvs[k]));
		COLL_ADD(piano_graph_add_send(op->g, tmp, n, MPI_BYTE, (op->rank - d + p) % p,
		                              op->tag + k, &s));
		COLL_ADD(piano_graph_add_edge(op->g, own, s));
		for (int j = 0; j < k; j++)
			COLL_ADD(piano_graph_add_edge(op->g, recvs[j], s));
		COLL_ADD(piano_graph_add_edge(op->g, recvs[k], out));
	}
	free(recvs);
	return rc;
}

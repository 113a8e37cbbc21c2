/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Graph engine: a pipelined chain broadcast of 1 MiB in 16 segments built by
 * hand with the graph API, for every root, compared with MPI_Bcast of the
 * same data; two runs per graph (persistent). Per segment: the root COPYs
 * it from its source into the buffer, the others RECV it from the previous
 * rank of the chain; the SEND to the next rank and a COPY into the output
 * buffer depend on that node only, so segments move down the chain
 * independently and every rank's output depends on edges being released.
 * Any number of ranks.
 */
#include "mpitest.h"

#include <piano/graph.h>
#include <string.h>

#define LEN (1 << 20)
#define SEG (64 << 10)
#define NSEG (LEN / SEG)

/* The broadcast of src (at root) into out as a graph on comm; buf is the
 * staging buffer that travels. */
static piano_graph_t *bcast_graph(const char *src, char *buf, char *out, int root, MPI_Comm comm)
{
	int rank, size;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	int vr = (rank - root + size) % size;
	int prev = vr > 0 ? (rank - 1 + size) % size : -1;
	int next = vr + 1 < size ? (rank + 1) % size : -1;

	piano_graph_t *g;
	CHECK(piano_graph_create(comm, &g) == 0);
	for (int s = 0; s < NSEG; s++) {
		size_t o = (size_t)s * SEG;
		int arrive, send, copy;
		if (prev < 0)
			CHECK(piano_graph_add_copy(g, src + o, SEG, MPI_CHAR, buf + o, SEG,
			                           MPI_CHAR, &arrive) == 0);
		else
			CHECK(piano_graph_add_recv(g, buf + o, SEG, MPI_CHAR, prev, s, &arrive) ==
			      0);
		if (next >= 0) {
			CHECK(piano_graph_add_send(g, buf + o, SEG, MPI_CHAR, next, s, &send) == 0);
			CHECK(piano_graph_add_edge(g, arrive, send) == 0);
		}
		CHECK(piano_graph_add_copy(g, buf + o, SEG, MPI_CHAR, out + o, SEG, MPI_CHAR,
		                           &copy) == 0);
		CHECK(piano_graph_add_edge(g, arrive, copy) == 0);
	}
	CHECK(piano_graph_commit(g) == 0);
	return g;
}

static void fill(char *buf, int root, int run)
{
	for (long i = 0; i < LEN; i++)
		buf[i] = (char)(i * 7 + root * 13 + run * 31);
}

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	char *src = malloc(LEN), *buf = malloc(LEN), *out = malloc(LEN), *ref = malloc(LEN);
	CHECK(src && buf && out && ref);
	for (int root = 0; root < size; root++) {
		piano_graph_t *g = bcast_graph(src, buf, out, root, MPI_COMM_WORLD);
		for (int run = 0; run < 2; run++) {
			memset(buf, 0, LEN);
			memset(out, 0, LEN);
			memset(ref, 0, LEN);
			if (rank == root) {
				fill(src, root, run);
				fill(ref, root, run);
			}
			CHECK(piano_graph_start(g) == 0);
			CHECK(piano_graph_wait(g) == 0);
			CHECK_MPI(MPI_Bcast(ref, LEN, MPI_CHAR, root, MPI_COMM_WORLD));
			CHECK(memcmp(out, ref, LEN) == 0);
		}
		CHECK(piano_graph_free(g) == 0);
	}
	if (rank == 0)
		printf("graph bcast: %d ranks, every root, 1 MiB chain in %d segments: as "
		       "MPI_Bcast\n",
		       size, NSEG);
	free(src);
	free(buf);
	free(out);
	free(ref);
	MPI_Finalize();
	return 0;
}

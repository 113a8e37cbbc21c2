/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Neighbourhood collectives (MPI_Ineighbor_allgather(v),
 * MPI_Ineighbor_alltoall(v,w) and, where the MPI has them, the persistent
 * forms) on four topologies, every block compared with what MPI-4.0 §8.6
 * says it holds: a periodic ring (on 1 or 2 ranks the same rank is both
 * neighbours: the block for the -1 neighbour holds what that rank sent
 * towards +1, and the other way round), a 2-D grid periodic in one
 * dimension (MPI_PROC_NULL neighbours: their blocks untouched), a ring as
 * a graph topology, and a weighted distributed graph
 * (messages between two ranks matched in the order of the adjacency
 * lists). The expected blocks are computed here, not taken from the MPI's
 * blocking forms: on a periodic ring of 1 or 2 ranks Open MPI 4.1.4's
 * MPI_Ineighbor_alltoall(v) and MPICH 4.0.2's MPI_(I)neighbor_alltoallv
 * swap the two directions (their own MPI_Neighbor_alltoall does not), and
 * on a 2x2 grid periodic in one dimension as well. Run with
 * PIANO_COLL=graph (the ctest entry checks that graphs ran) and natively
 * on 3 ranks, where no dimension has 2 ranks.
 */
#include "mpitest.h"

#include <stdbool.h>
#include <string.h>

enum { N = 1000, MAXNB = 16, POISON = -7 };

static int rank, size;

static int value(int who, int slot, int i, int k) { return who * 100003 + slot * 1009 + i * 3 + k; }

/* Blocks of N ints, one per neighbour, with gaps for the v forms. */
struct bufs {
	int send[MAXNB * N], got[MAXNB * N], want[MAXNB * N];
};

static void fill(struct bufs *b, int k)
{
	for (int s = 0; s < MAXNB; s++)
		for (int i = 0; i < N; i++)
			b->send[s * N + i] = value(rank, s, i, k);
	for (int i = 0; i < MAXNB * N; i++)
		b->got[i] = b->want[i] = POISON;
}

/* In-block j comes from rank src[j] (MPI_PROC_NULL: none), out of that
 * rank's send block sslot[j]. */
struct sources {
	int n, src[MAXNB], sslot[MAXNB];
};

/* rank's out-neighbours in order. */
static int outs_of(MPI_Comm comm, int topo, int who, int *out)
{
	int n = 0;
	if (topo == MPI_GRAPH) {
		CHECK_MPI(MPI_Graph_neighbors_count(comm, who, &n));
		CHECK_MPI(MPI_Graph_neighbors(comm, who, n, out));
	} else { /* the distributed graph of main() */
		for (n = 0; n < 3; n++)
			out[n] = (who + n + 1) % size;
	}
	return n;
}

static void sources_of(MPI_Comm comm, struct sources *s)
{
	int topo;
	CHECK_MPI(MPI_Topo_test(comm, &topo));
	if (topo == MPI_CART) {
		int nd;
		CHECK_MPI(MPI_Cartdim_get(comm, &nd));
		s->n = 2 * nd;
		for (int d = 0; d < nd; d++) {
			CHECK_MPI(MPI_Cart_shift(comm, d, 1, &s->src[2 * d], &s->src[2 * d + 1]));
			s->sslot[2 * d] = 2 * d + 1; /* the -1 neighbour sent towards +1 */
			s->sslot[2 * d + 1] = 2 * d;
		}
		return;
	}
	int in[MAXNB], out[MAXNB];
	if (topo == MPI_GRAPH) {
		s->n = outs_of(comm, topo, rank, in);
	} else {
		s->n = 3;
		for (int i = 0; i < 3; i++)
			in[i] = (rank - i - 1 + 3 * size) % size;
	}
	for (int j = 0; j < s->n; j++) {
		/* The m-th message from in[j] here is its m-th send to this rank. */
		int m = 0;
		for (int i = 0; i < j; i++)
			m += in[i] == in[j];
		int no = outs_of(comm, topo, in[j], out), slot = -1;
		for (int i = 0; i < no && slot < 0; i++)
			if (out[i] == rank && m-- == 0)
				slot = i;
		CHECK(slot >= 0);
		s->src[j] = in[j];
		s->sslot[j] = slot;
	}
}

/* The receive buffer MPI-4.0 defines: block j (counts[j] ints at j * N)
 * from src[j]'s send block sslot[j] (slot 0 for an allgather). */
static void expect(int *want, const struct sources *s, bool alltoall, const int *counts, int k)
{
	for (int i = 0; i < MAXNB * N; i++)
		want[i] = POISON;
	for (int j = 0; j < s->n; j++)
		if (s->src[j] != MPI_PROC_NULL)
			for (int i = 0; i < counts[j]; i++)
				want[j * N + i] = value(s->src[j], alltoall ? s->sslot[j] : 0, i,
				                        k);
}

static void compare(const int *got, const int *want, const char *what, const char *topo)
{
	if (memcmp(got, want, sizeof(int) * MAXNB * N)) {
		fprintf(stderr, "rank %d: %s on %s differs from MPI-4.0 §8.6\n", rank, what, topo);
		CHECK(0);
	}
}

static void run(MPI_Comm comm, const char *topo)
{
	static struct bufs b;
	struct sources s;
	sources_of(comm, &s);
	int full[MAXNB], half[MAXNB], displs[MAXNB];
	MPI_Aint bdispls[MAXNB]; /* alltoallw: in bytes */
	MPI_Datatype types[MAXNB];
	for (int i = 0; i < MAXNB; i++) {
		full[i] = N;
		half[i] = N / 2; /* the v and w forms: gaps between the blocks */
		displs[i] = i * N;
		bdispls[i] = (MPI_Aint)i * N * (MPI_Aint)sizeof(int);
		types[i] = MPI_INT;
	}
	for (int k = 0; k < 3; k++) {
		MPI_Request r;
		fill(&b, k);
		CHECK_MPI(MPI_Ineighbor_allgather(b.send, N, MPI_INT, b.got, N, MPI_INT, comm, &r));
		CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
		expect(b.want, &s, false, full, k);
		compare(b.got, b.want, "MPI_Ineighbor_allgather", topo);

		fill(&b, k);
		CHECK_MPI(MPI_Ineighbor_allgatherv(b.send, N / 2, MPI_INT, b.got, half, displs,
		                                   MPI_INT, comm, &r));
		for (int flag = 0; !flag;)
			CHECK_MPI(MPI_Test(&r, &flag, MPI_STATUS_IGNORE));
		expect(b.want, &s, false, half, k);
		compare(b.got, b.want, "MPI_Ineighbor_allgatherv", topo);

		fill(&b, k);
		CHECK_MPI(MPI_Ineighbor_alltoall(b.send, N, MPI_INT, b.got, N, MPI_INT, comm, &r));
		CHECK_MPI(MPI_Waitall(1, &r, MPI_STATUSES_IGNORE));
		expect(b.want, &s, true, full, k);
		compare(b.got, b.want, "MPI_Ineighbor_alltoall", topo);

		fill(&b, k);
		CHECK_MPI(MPI_Ineighbor_alltoallv(b.send, half, displs, MPI_INT, b.got, half,
		                                  displs, MPI_INT, comm, &r));
		CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
		expect(b.want, &s, true, half, k);
		compare(b.got, b.want, "MPI_Ineighbor_alltoallv", topo);

		fill(&b, k);
		CHECK_MPI(MPI_Ineighbor_alltoallw(b.send, half, bdispls, types, b.got, half,
		                                  bdispls, types, comm, &r));
		CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
		expect(b.want, &s, true, half, k);
		compare(b.got, b.want, "MPI_Ineighbor_alltoallw", topo);
	}
#ifdef PCOLL
	/* Persistent: initialized once, started with new data each time. */
	MPI_Request pr[2];
	static int pg[MAXNB * N], pa[MAXNB * N];
	CHECK_MPI(PCOLL(Neighbor_allgather_init)(b.send, N, MPI_INT, pg, N, MPI_INT, comm,
	                                         MPI_INFO_NULL, &pr[0]));
	CHECK_MPI(PCOLL(Neighbor_alltoall_init)(b.send, N, MPI_INT, pa, N, MPI_INT, comm,
	                                        MPI_INFO_NULL, &pr[1]));
	for (int k = 3; k < 6; k++) {
		fill(&b, k);
		for (int i = 0; i < MAXNB * N; i++)
			pg[i] = pa[i] = POISON;
		CHECK_MPI(MPI_Startall(2, pr));
		CHECK_MPI(MPI_Waitall(2, pr, MPI_STATUSES_IGNORE));
		expect(b.want, &s, false, full, k);
		compare(pg, b.want, "the persistent neighbour allgather", topo);
		expect(b.want, &s, true, full, k);
		compare(pa, b.want, "the persistent neighbour alltoall", topo);
	}
	CHECK_MPI(MPI_Request_free(&pr[0]));
	CHECK_MPI(MPI_Request_free(&pr[1]));
#endif
}

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm c;

	int periodic = 1;
	CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 1, &size, &periodic, 0, &c));
	run(c, "a periodic ring");
	CHECK_MPI(MPI_Comm_free(&c));

	int dims[2] = { 0, 0 }, periods[2] = { 1, 0 };
	CHECK_MPI(MPI_Dims_create(size, 2, dims));
	CHECK_MPI(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &c));
	run(c, "a 2-D grid");
	CHECK_MPI(MPI_Comm_free(&c));

	/* Every node i: i+1, i-1 (on 1 or 2 ranks the same rank twice). */
	int *index = malloc(sizeof(int) * (size_t)size),
	    *edges = malloc(sizeof(int) * 2 * (size_t)size);
	CHECK(index && edges);
	for (int i = 0; i < size; i++) {
		index[i] = 2 * (i + 1);
		edges[2 * i] = (i + 1) % size;
		edges[2 * i + 1] = (i - 1 + size) % size;
	}
	CHECK_MPI(MPI_Graph_create(MPI_COMM_WORLD, size, index, edges, 0, &c));
	run(c, "a graph topology");
	CHECK_MPI(MPI_Comm_free(&c));
	free(index);
	free(edges);

	/* From r - 1, r - 2, r - 3 to r + 1, r + 2, r + 3: on 1 to 3 ranks
	 * some are the same rank, or this one, matched in list order. */
	int src[3] = { (rank - 1 + size) % size, (rank - 2 + 2 * size) % size,
		       (rank - 3 + 3 * size) % size };
	int dst[3] = { (rank + 1) % size, (rank + 2) % size, (rank + 3) % size };
	int weights[3] = { 3, 2, 1 }; /* weighted: the neighbour query returns them too */
	CHECK_MPI(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 3, src, weights, 3, dst, weights,
	                                         MPI_INFO_NULL, 0, &c));
	run(c, "a distributed graph");
	CHECK_MPI(MPI_Comm_free(&c));

	MPI_Finalize();
	if (rank == 0)
		printf("coll neighbor: all checks passed (%d ranks)\n", size);
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Persistent collectives (MPI-4's MPI_<coll>_init, Open MPI's
 * MPIX_<coll>_init): nineteen of them initialized once and started RUNS
 * times with new data, each run's results compared with the MPI's blocking
 * collectives. Started one by one (MPI_Start + MPI_Wait, or MPI_Test until
 * done) and all at once with a persistent send and receive among them
 * (MPI_Startall + MPI_Waitall, or MPI_Testall); a broadcast of a derived
 * type (with the argument `free-type` freed by the application right after
 * the init: piano's graph holds its own duplicate, Open MPI 4.1.4's own
 * persistent broadcast then crashes); an allreduce with a non-commutative
 * user-defined operation (with `free-type` freed right after the init too:
 * piano's graph holds it); an all-to-all with a
 * datatype per peer (MPI_Alltoallw_init: contiguous ints for even peers, a
 * strided vector for odd ones, freed after the init like the broadcast's)
 * and a neighbourhood one on a distributed-graph ring
 * (MPI_Neighbor_alltoallw_init, the same datatypes); on MPI-4 a broadcast,
 * an allreduce and a reduce-scatter (its counts an array of MPI_Count)
 * whose rank 0 calls the large-count inits (MPI_Bcast_init_c) and the
 * others the int ones. Under PIANO_COLL=graph
 * the ctest entry also asks PIANO_STATS to show the graphs made. Skipped
 * (77) on an MPI without persistent collectives.
 */
#include "mpitest.h"

#include <stdbool.h>
#include <string.h>

#ifdef PCOLL

enum {
	N = 1500, /* ints per block: several pipeline segments at 4 KiB */
	RUNS = 6,
	NCOLL = 19,
	NP2P = NCOLL + 2, /* and a persistent send and receive */
#if MPI_VERSION >= 4
	NREQ = NP2P + 3, /* and a broadcast, an allreduce and a reduce-scatter whose rank 0
	                  * calls the _c forms */
#else
	NREQ = NP2P,
#endif
};

static int rank, size;

static int value(int who, int i, int run) { return who * 1000003 + i * 7 + run * 31 + 1; }

/* a (x) b = 2a + b: not commutative, associative only as a left fold; the
 * MPI applies it in rank order. Ints wrap: only equality is checked. */
static void twice_plus(void *in, void *inout, int *len, MPI_Datatype *type)
{
	(void)type;
	unsigned *a = in, *b = inout;
	for (int i = 0; i < *len; i++)
		b[i] = 2u * a[i] + b[i];
}

struct bufs {
	int *send, *recv, *want;
};

static struct bufs bufs_new(size_t n)
{
	struct bufs b = { calloc(n, sizeof(int)), calloc(n, sizeof(int)), calloc(n, sizeof(int)) };
	CHECK(b.send && b.recv && b.want);
	return b;
}

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	MPI_Comm comm;
	/* A communicator of its own: the graphs' shadow is made on it. */
	CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
	const int root = size - 1, nall = N * size;
	MPI_Info info = MPI_INFO_NULL;

	/* Per collective k: its buffers (size blocks of N ints). */
	struct bufs b[NCOLL];
	for (int k = 0; k < NCOLL; k++)
		b[k] = bufs_new((size_t)nall);
	/* Uneven blocks with gaps between them: rank i's block has vcounts[i]
	 * elements (in the all-to-all, what rank i sends to everyone). */
	int *vcounts = malloc(sizeof(int) * (size_t)size), *vdispls = malloc(sizeof(int) * (size_t)size);
	int *mine = malloc(sizeof(int) * (size_t)size);
	CHECK(vcounts && vdispls && mine);
	for (int i = 0; i < size; i++) {
		vcounts[i] = N - 3 * i;
		vdispls[i] = i * N;
	}
	for (int i = 0; i < size; i++)
		mine[i] = vcounts[rank];
	MPI_Datatype every_other;
	CHECK_MPI(MPI_Type_vector(N / 2, 1, 2, MPI_INT, &every_other));
	CHECK_MPI(MPI_Type_commit(&every_other));
	/* The init's operation (which `free-type` frees after the init) and
	 * the blocking reference's. */
	MPI_Op twice, twice_ref;
	CHECK_MPI(MPI_Op_create(twice_plus, 0, &twice));
	CHECK_MPI(MPI_Op_create(twice_plus, 0, &twice_ref));
	/* Alltoallw's blocks: M ints from/to each peer, contiguous for even
	 * peers, every other int of the block for odd ones (one vector). Two
	 * copies of the vector: the init's may be freed right after it. */
	enum { M = N / 2 };
	MPI_Datatype strided[2];
	for (int k = 0; k < 2; k++) {
		CHECK_MPI(MPI_Type_vector(M, 1, 2, MPI_INT, &strided[k]));
		CHECK_MPI(MPI_Type_commit(&strided[k]));
	}
	int *wcounts = malloc(sizeof(int) * (size_t)size),
	    *wdispls = malloc(sizeof(int) * (size_t)size);
	MPI_Datatype *wtypes = malloc(sizeof(MPI_Datatype) * (size_t)size),
	             *wcheck = malloc(sizeof(MPI_Datatype) * (size_t)size);
	CHECK(wcounts && wdispls && wtypes && wcheck);
	for (int i = 0; i < size; i++) {
		wcounts[i] = i % 2 ? 1 : M;
		wdispls[i] = i * N * (int)sizeof(int);
		wtypes[i] = i % 2 ? strided[0] : MPI_INT;
		wcheck[i] = i % 2 ? strided[1] : MPI_INT;
	}
	/* The ring as a distributed graph: one neighbour each way (Cartesian
	 * rings of 1-2 ranks are where the MPIs disagree on directions). */
	int left = (rank + size - 1) % size, right = (rank + 1) % size;
	MPI_Comm ring;
	int weight = 1; /* MPI_UNWEIGHTED's size-0 object trips gcc's overread check */
	CHECK_MPI(MPI_Dist_graph_create_adjacent(comm, 1, &left, &weight, 1, &right, &weight,
	                                         MPI_INFO_NULL, 0, &ring));
	int ncount_out = 1, ncount_in = M;
	MPI_Aint nzero = 0;
	MPI_Datatype ntype_out = strided[0], ntype_in = MPI_INT, ncheck_out = strided[1];

	MPI_Request r[NREQ];
	CHECK_MPI(PCOLL(Bcast_init)(b[0].recv, N, MPI_INT, root, comm, info, &r[0]));
	CHECK_MPI(PCOLL(Allreduce_init)(b[1].send, b[1].recv, N, MPI_INT, MPI_SUM, comm, info,
	                                &r[1]));
	CHECK_MPI(PCOLL(Reduce_init)(b[2].send, b[2].recv, N, MPI_INT, MPI_MAX, root, comm, info,
	                             &r[2]));
	CHECK_MPI(PCOLL(Alltoall_init)(b[3].send, N, MPI_INT, b[3].recv, N, MPI_INT, comm, info,
	                               &r[3]));
	CHECK_MPI(PCOLL(Allgather_init)(b[4].send, N, MPI_INT, b[4].recv, N, MPI_INT, comm, info,
	                                &r[4]));
	CHECK_MPI(PCOLL(Gather_init)(b[5].send, N, MPI_INT, b[5].recv, N, MPI_INT, root, comm, info,
	                             &r[5]));
	CHECK_MPI(PCOLL(Scatter_init)(b[6].send, N, MPI_INT, b[6].recv, N, MPI_INT, root, comm,
	                              info, &r[6]));
	CHECK_MPI(PCOLL(Reduce_scatter_block_init)(b[7].send, b[7].recv, N, MPI_INT, MPI_SUM, comm,
	                                           info, &r[7]));
	CHECK_MPI(PCOLL(Scan_init)(b[8].send, b[8].recv, N, MPI_INT, MPI_SUM, comm, info, &r[8]));
	CHECK_MPI(PCOLL(Exscan_init)(b[9].send, b[9].recv, N, MPI_INT, MPI_SUM, comm, info, &r[9]));
	CHECK_MPI(PCOLL(Barrier_init)(comm, info, &r[10]));
	CHECK_MPI(PCOLL(Allgatherv_init)(b[11].send, vcounts[rank], MPI_INT, b[11].recv, vcounts,
	                                 vdispls, MPI_INT, comm, info, &r[11]));
	CHECK_MPI(PCOLL(Alltoallv_init)(b[12].send, mine, vdispls, MPI_INT, b[12].recv, vcounts,
	                                vdispls, MPI_INT, comm, info, &r[12]));
	CHECK_MPI(PCOLL(Gatherv_init)(b[13].send, vcounts[rank], MPI_INT, b[13].recv, vcounts,
	                              vdispls, MPI_INT, root, comm, info, &r[13]));
	CHECK_MPI(PCOLL(Scatterv_init)(b[14].send, vcounts, vdispls, MPI_INT, b[14].recv,
	                               vcounts[rank], MPI_INT, root, comm, info, &r[14]));
	CHECK_MPI(PCOLL(Bcast_init)(b[15].recv, 1, every_other, 0, comm, info, &r[15]));
	CHECK_MPI(PCOLL(Alltoallw_init)(b[17].send, wcounts, wdispls, wtypes, b[17].recv, wcounts,
	                                wdispls, wtypes, comm, info, &r[17]));
	CHECK_MPI(PCOLL(Neighbor_alltoallw_init)(b[18].send, &ncount_out, &nzero, &ntype_out,
	                                         b[18].recv, &ncount_in, &nzero, &ntype_in, ring,
	                                         info, &r[18]));
	bool free_type = argc > 1 && !strcmp(argv[1], "free-type");
	if (free_type) { /* the request must hold what it needs */
		CHECK_MPI(MPI_Type_free(&every_other));
		CHECK_MPI(MPI_Type_free(&strided[0]));
	}
	CHECK_MPI(PCOLL(Allreduce_init)(b[16].send, b[16].recv, N, MPI_INT, twice, comm, info,
	                                &r[16]));
	if (free_type) {
		CHECK_MPI(MPI_Op_free(&twice));
		CHECK(twice == MPI_OP_NULL);
	}
	int ring_out[4], ring_in[4];
	CHECK_MPI(MPI_Send_init(ring_out, 4, MPI_INT, (rank + 1) % size, 5, comm, &r[NCOLL]));
	CHECK_MPI(MPI_Recv_init(ring_in, 4, MPI_INT, (rank + size - 1) % size, 5, comm,
	                        &r[NCOLL + 1]));
#if MPI_VERSION >= 4
	/* A rank may call the large-count form while the others call the int
	 * form: both must take the same path. */
	static int cbuf[N], cin[N], cout[N];
	int *rs_counts = malloc(sizeof(int) * (size_t)size), rs_total = 0;
	MPI_Count *rs_ccounts = malloc(sizeof(MPI_Count) * (size_t)size);
	CHECK(rs_counts && rs_ccounts);
	for (int i = 0; i < size; i++) {
		rs_ccounts[i] = rs_counts[i] = N / 2 + 3 * i;
		rs_total += rs_counts[i];
	}
	int *rs_in = malloc(sizeof(int) * (size_t)rs_total),
	    *rs_out = malloc(sizeof(int) * (size_t)rs_counts[rank]),
	    *rs_want = malloc(sizeof(int) * (size_t)rs_counts[rank]);
	CHECK(rs_in && rs_out && rs_want);
	if (rank == 0) {
		CHECK_MPI(MPI_Bcast_init_c(cbuf, N, MPI_INT, root, comm, info, &r[NP2P]));
		CHECK_MPI(MPI_Allreduce_init_c(cin, cout, N, MPI_INT, MPI_SUM, comm, info,
		                               &r[NP2P + 1]));
		CHECK_MPI(MPI_Reduce_scatter_init_c(rs_in, rs_out, rs_ccounts, MPI_INT, MPI_SUM,
		                                    comm, info, &r[NP2P + 2]));
	} else {
		CHECK_MPI(MPI_Bcast_init(cbuf, N, MPI_INT, root, comm, info, &r[NP2P]));
		CHECK_MPI(MPI_Allreduce_init(cin, cout, N, MPI_INT, MPI_SUM, comm, info,
		                             &r[NP2P + 1]));
		CHECK_MPI(MPI_Reduce_scatter_init(rs_in, rs_out, rs_counts, MPI_INT, MPI_SUM, comm,
		                                  info, &r[NP2P + 2]));
	}
#endif

	for (int run = 0; run < RUNS; run++) {
		/* New inputs, receive buffers poisoned. */
		for (int k = 0; k < NCOLL; k++)
			for (int i = 0; i < nall; i++) {
				b[k].send[i] = value(rank, i, run + k);
				b[k].recv[i] = -7;
			}
		if (rank == root)
			for (int i = 0; i < N; i++)
				b[0].recv[i] = value(rank, i, run);
		if (rank == 0)
			for (int i = 0; i < N; i++)
				b[15].recv[i] = value(0, i, run);
		for (int i = 0; i < 4; i++)
			ring_out[i] = value(rank, i, run);
#if MPI_VERSION >= 4
		for (int i = 0; i < N; i++) {
			cbuf[i] = rank == root ? value(root, i, run) : -7;
			cin[i] = value(rank, i, run);
		}
		for (int i = 0; i < rs_total; i++)
			rs_in[i] = value(rank, i, run + 5);
		for (int i = 0; i < rs_counts[rank]; i++)
			rs_out[i] = -7;
#endif

		switch (run % 3) {
		case 0:
			CHECK_MPI(MPI_Startall(NREQ, r));
			CHECK_MPI(MPI_Waitall(NREQ, r, MPI_STATUSES_IGNORE));
			break;
		case 1:
			/* MPICH 4.0.2's MPI_Testall aborts on its own persistent
			 * collectives (the user-defined operation's, 16): tested
			 * apart. */
			CHECK_MPI(MPI_Startall(NREQ, r));
			for (int flag = 0; !flag;)
				CHECK_MPI(MPI_Testall(16, r, &flag, MPI_STATUSES_IGNORE));
			CHECK_MPI(MPI_Waitall(NREQ - 16, r + 16, MPI_STATUSES_IGNORE));
			break;
		default:
			for (int k = 0; k < NREQ; k += 2) {
				int n = k + 1 < NREQ ? 2 : 1;
				CHECK_MPI(MPI_Start(&r[k]));
				if (n == 2)
					CHECK_MPI(MPI_Start(&r[k + 1]));
				CHECK_MPI(MPI_Wait(&r[k], MPI_STATUS_IGNORE));
				if (n == 2)
					for (int flag = 0; !flag;)
						CHECK_MPI(MPI_Test(&r[k + 1], &flag, MPI_STATUS_IGNORE));
			}
			break;
		}
		/* Completed persistent requests stay allocated and inactive: a
		 * wait on them returns at once. */
		CHECK(r[0] != MPI_REQUEST_NULL && r[10] != MPI_REQUEST_NULL);
		CHECK_MPI(MPI_Waitall(NREQ, r, MPI_STATUSES_IGNORE));

		/* The MPI's blocking collectives on the same inputs. */
		for (int i = 0; i < N; i++)
			CHECK(b[0].recv[i] == value(root, i, run));
		CHECK_MPI(MPI_Allreduce(b[1].send, b[1].want, N, MPI_INT, MPI_SUM, comm));
		CHECK(!memcmp(b[1].want, b[1].recv, sizeof(int) * N));
		CHECK_MPI(MPI_Reduce(b[2].send, b[2].want, N, MPI_INT, MPI_MAX, root, comm));
		if (rank == root)
			CHECK(!memcmp(b[2].want, b[2].recv, sizeof(int) * N));
		CHECK_MPI(MPI_Alltoall(b[3].send, N, MPI_INT, b[3].want, N, MPI_INT, comm));
		CHECK(!memcmp(b[3].want, b[3].recv, sizeof(int) * (size_t)nall));
		CHECK_MPI(MPI_Allgather(b[4].send, N, MPI_INT, b[4].want, N, MPI_INT, comm));
		CHECK(!memcmp(b[4].want, b[4].recv, sizeof(int) * (size_t)nall));
		CHECK_MPI(MPI_Gather(b[5].send, N, MPI_INT, b[5].want, N, MPI_INT, root, comm));
		if (rank == root)
			CHECK(!memcmp(b[5].want, b[5].recv, sizeof(int) * (size_t)nall));
		CHECK_MPI(MPI_Scatter(b[6].send, N, MPI_INT, b[6].want, N, MPI_INT, root, comm));
		CHECK(!memcmp(b[6].want, b[6].recv, sizeof(int) * N));
		CHECK_MPI(MPI_Reduce_scatter_block(b[7].send, b[7].want, N, MPI_INT, MPI_SUM, comm));
		CHECK(!memcmp(b[7].want, b[7].recv, sizeof(int) * N));
		CHECK_MPI(MPI_Scan(b[8].send, b[8].want, N, MPI_INT, MPI_SUM, comm));
		CHECK(!memcmp(b[8].want, b[8].recv, sizeof(int) * N));
		CHECK_MPI(MPI_Exscan(b[9].send, b[9].want, N, MPI_INT, MPI_SUM, comm));
		if (rank > 0)
			CHECK(!memcmp(b[9].want, b[9].recv, sizeof(int) * N));
		for (int k = 11; k <= 14; k++)
			for (int i = 0; i < nall; i++)
				b[k].want[i] = -7;
		CHECK_MPI(MPI_Allgatherv(b[11].send, vcounts[rank], MPI_INT, b[11].want, vcounts,
		                         vdispls, MPI_INT, comm));
		CHECK(!memcmp(b[11].want, b[11].recv, sizeof(int) * (size_t)nall));
		CHECK_MPI(MPI_Alltoallv(b[12].send, mine, vdispls, MPI_INT, b[12].want, vcounts,
		                        vdispls, MPI_INT, comm));
		CHECK(!memcmp(b[12].want, b[12].recv, sizeof(int) * (size_t)nall));
		CHECK_MPI(MPI_Gatherv(b[13].send, vcounts[rank], MPI_INT, b[13].want, vcounts, vdispls,
		                      MPI_INT, root, comm));
		if (rank == root)
			CHECK(!memcmp(b[13].want, b[13].recv, sizeof(int) * (size_t)nall));
		CHECK_MPI(MPI_Scatterv(b[14].send, vcounts, vdispls, MPI_INT, b[14].want,
		                       vcounts[rank], MPI_INT, root, comm));
		CHECK(!memcmp(b[14].want, b[14].recv, sizeof(int) * (size_t)vcounts[rank]));
		for (int i = 0; i < N; i++) /* even elements broadcast, odd ones untouched */
			CHECK(b[15].recv[i] == (i % 2 == 0 || rank == 0 ? value(0, i, run) : -7));
		CHECK_MPI(MPI_Allreduce(b[16].send, b[16].want, N, MPI_INT, twice_ref, comm));
		CHECK(!memcmp(b[16].want, b[16].recv, sizeof(int) * N));
		for (int i = 0; i < nall; i++)
			b[17].want[i] = b[18].want[i] = -7;
		CHECK_MPI(MPI_Alltoallw(b[17].send, wcounts, wdispls, wcheck, b[17].want, wcounts,
		                        wdispls, wcheck, comm));
		CHECK(!memcmp(b[17].want, b[17].recv, sizeof(int) * (size_t)nall));
		CHECK_MPI(MPI_Neighbor_alltoallw(b[18].send, &ncount_out, &nzero, &ncheck_out,
		                                 b[18].want, &ncount_in, &nzero, &ntype_in, ring));
		CHECK(!memcmp(b[18].want, b[18].recv, sizeof(int) * (size_t)nall));
		for (int i = 0; i < 4; i++)
			CHECK(ring_in[i] == value((rank + size - 1) % size, i, run));
#if MPI_VERSION >= 4
		for (int i = 0; i < N; i++) {
			long sum = 0;
			for (int k = 0; k < size; k++)
				sum += value(k, i, run);
			CHECK(cbuf[i] == value(root, i, run) && cout[i] == (int)sum);
		}
		CHECK_MPI(MPI_Reduce_scatter(rs_in, rs_want, rs_counts, MPI_INT, MPI_SUM, comm));
		CHECK(!memcmp(rs_want, rs_out, sizeof(int) * (size_t)rs_counts[rank]));
#endif
	}
	for (int k = 0; k < NREQ; k++) {
		CHECK_MPI(MPI_Request_free(&r[k]));
		CHECK(r[k] == MPI_REQUEST_NULL);
	}
	/* The communicator's collectives still match after the frees. */
	int one = 1, total = 0;
	CHECK_MPI(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, comm));
	CHECK(total == size);
	CHECK_MPI(MPI_Op_free(&twice_ref));
	if (!free_type) {
		CHECK_MPI(MPI_Op_free(&twice));
		CHECK_MPI(MPI_Type_free(&every_other));
		CHECK_MPI(MPI_Type_free(&strided[0]));
	}
	CHECK_MPI(MPI_Type_free(&strided[1]));
	CHECK_MPI(MPI_Comm_free(&ring));
#if MPI_VERSION >= 4
	free(rs_counts);
	free(rs_ccounts);
	free(rs_in);
	free(rs_out);
	free(rs_want);
#endif
	free(wcounts);
	free(wdispls);
	free(wtypes);
	free(wcheck);
	CHECK_MPI(MPI_Comm_free(&comm));
	for (int k = 0; k < NCOLL; k++) {
		free(b[k].send);
		free(b[k].recv);
		free(b[k].want);
	}
	free(vcounts);
	free(vdispls);
	free(mine);
	MPI_Finalize();
	if (rank == 0)
		printf("pcoll graph: all checks passed (%d ranks, %d runs)\n", size, RUNS);
	return 0;
}

#else

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	MPI_Finalize();
	printf("this MPI has no persistent collectives: skipped\n");
	return 77;
}

#endif

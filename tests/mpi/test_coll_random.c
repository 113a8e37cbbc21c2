/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Graph collectives against the MPI's blocking ones, at random
 * (PIANO_COLL=graph, docs/coll.md): each step draws a collective (Ibarrier,
 * Ibcast, Ireduce, Iallreduce, Ialltoall, Iallgather, Igather, Iscatter,
 * Ireduce_scatter_block, Iscan, Iexscan), a communicator (the world, a
 * duplicate, halves of the world by rank parity with their ranks in reverse
 * order), a count (0, 1, 2, 7, fewer than the ranks, 1,000 or 20,000: many
 * segments), a datatype (int, long long, a vector of ints with holes,
 * which must stay untouched), an operation (sum, max, bxor; reductions on
 * the predefined types only), a root, in place where MPI allows it, and a
 * completion call (wait, a test loop, waitall with a point-to-point
 * exchange beside it; the reference never runs in place). One step in three repeats the previous one's
 * arguments with new data (the same buffers: reuse of finished graphs).
 * Every rank draws the same sequence (a shared seed); the data depend on
 * the rank and the step. The result, holes included, must equal the
 * blocking collective's on the same input.
 *
 * Arguments: [steps] [threads] [seed]. With threads > 1, each thread runs
 * its own sequence on its own duplicates of the communicators, at the same
 * time as the others. Prints "coll random: N steps passed" on rank 0.
 */
#include "mpitest.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#define MAXCOUNT 20000
#define SENTINEL 0x5a

enum coll {
	C_BARRIER,
	C_BCAST,
	C_REDUCE,
	C_ALLREDUCE,
	C_ALLTOALL,
	C_ALLGATHER,
	C_GATHER,
	C_SCATTER,
	C_REDSCAT,
	C_SCAN,
	C_EXSCAN,
	NCOLL
};
static const char *coll_name[NCOLL] = { "ibarrier",   "ibcast",    "ireduce",
	                                "iallreduce", "ialltoall", "iallgather",
	                                "igather",    "iscatter",  "ireduce_scatter_block",
	                                "iscan",      "iexscan" };

struct step {
	enum coll c;
	int comm, count, type, op, root, in_place, how;
};

struct ctx {
	int id;        /* thread index */
	uint64_t seed; /* the sequence, the same on every rank */
	long steps;
	MPI_Comm comms[3];
	MPI_Datatype vec;
	char *in, *out, *ref; /* each `span` bytes */
	size_t span;
};

static int wrank, wsize;

static uint64_t next(uint64_t *s)
{
	/* splitmix64: the same sequence on every rank from the same seed. */
	uint64_t z = (*s += 0x9e3779b97f4a7c15u);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

static int pick(uint64_t *s, int n) { return (int)(next(s) % (uint64_t)n); }

static MPI_Datatype type_of(const struct ctx *x, int t)
{
	return t == 0 ? MPI_INT : t == 1 ? MPI_LONG_LONG : x->vec;
}

static MPI_Op op_of(int o) { return o == 0 ? MPI_SUM : o == 1 ? MPI_MAX : MPI_BXOR; }

static void draw(struct ctx *x, struct step *st, int csize)
{
	static const int counts[] = { 0, 1, 2, 7, -1, 1000, MAXCOUNT };
	st->c = (enum coll)pick(&x->seed, NCOLL);
	st->count = counts[pick(&x->seed, 7)];
	if (st->count < 0)
		st->count = csize > 1 ? csize - 1 : 1;
	bool reduction = st->c == C_REDUCE || st->c == C_ALLREDUCE || st->c == C_REDSCAT ||
	                 st->c == C_SCAN || st->c == C_EXSCAN;
	st->type = pick(&x->seed, reduction ? 2 : 3);
	st->op = pick(&x->seed, 3);
	st->root = pick(&x->seed, 64);
	st->in_place = pick(&x->seed, 2);
	st->how = pick(&x->seed, 3);
	/* The exchanges move count elements per rank: keep the buffers
	 * bounded. */
	if ((st->c == C_ALLTOALL || st->c == C_ALLGATHER || st->c == C_GATHER ||
	     st->c == C_SCATTER || st->c == C_REDSCAT) &&
	    st->count * csize > MAXCOUNT)
		st->count = MAXCOUNT / csize;
}

/* Input: bytes depending on the rank, the thread and the step. */
static void fill_input(struct ctx *x, long k)
{
	uint64_t s = (uint64_t)k * 1315423911u + (uint64_t)wrank * 2654435761u + (uint64_t)x->id;
	for (size_t i = 0; i < x->span; i += 8) {
		uint64_t v = next(&s);
		memcpy(x->in + i, &v, x->span - i < 8 ? x->span - i : 8);
	}
}

static void complete(MPI_Request *r, int how, MPI_Comm comm)
{
	if (how == 0) {
		CHECK_MPI(MPI_Wait(r, MPI_STATUS_IGNORE));
	} else if (how == 1) {
		int flag = 0;
		while (!flag)
			CHECK_MPI(MPI_Test(r, &flag, MPI_STATUS_IGNORE));
	} else {
		/* A point-to-point exchange with the next rank rides along. */
		int rank, size, sv = 7, rv = 0;
		MPI_Comm_rank(comm, &rank);
		MPI_Comm_size(comm, &size);
		MPI_Request q[3];
		q[0] = *r;
		CHECK_MPI(MPI_Irecv(&rv, 1, MPI_INT, (rank + size - 1) % size, 999, comm, &q[1]));
		CHECK_MPI(MPI_Isend(&sv, 1, MPI_INT, (rank + 1) % size, 999, comm, &q[2]));
		CHECK_MPI(MPI_Waitall(3, q, MPI_STATUSES_IGNORE));
		CHECK(rv == 7);
		*r = MPI_REQUEST_NULL;
	}
}

/* Runs the step, non-blocking into x->out or blocking into x->ref (the
 * output buffer starts as a copy of the input, for the in-place forms). */
static void run(struct ctx *x, const struct step *st, bool blocking)
{
	MPI_Comm comm = x->comms[st->comm];
	int rank, size;
	MPI_Comm_rank(comm, &rank);
	MPI_Comm_size(comm, &size);
	char *out = blocking ? x->ref : x->out;
	memset(out, SENTINEL, x->span);
	MPI_Datatype t = type_of(x, st->type);
	MPI_Op op = op_of(st->op);
	int n = st->count, root = st->root % size;
	/* The reference never runs in place: its output buffer is prepared
	 * as the in-place call's (holes included), and its input is the
	 * input's copy (MPICH 4.0.2's MPI_Reduce in place at a root other than
	 * 0 crashes natively from about 1,000 ints on 2 ranks). An in-place
	 * scatter leaves the root's buffer as it was. */
	bool ip = st->in_place;
	const void *inplace = blocking ? x->in : MPI_IN_PLACE;
	if (blocking && st->in_place && st->c == C_SCATTER && rank == root) {
		memcpy(out, x->in, x->span);
		CHECK_MPI(MPI_Scatter(x->in, n, t, MPI_IN_PLACE, n, t, root, comm));
		return;
	}
	const void *in = x->in;
	MPI_Request r = MPI_REQUEST_NULL;
	int rc = MPI_SUCCESS;
	MPI_Aint lb, ext;
	MPI_Type_get_extent(t, &lb, &ext);
	switch (st->c) {
	case C_BARRIER: rc = blocking ? MPI_Barrier(comm) : MPI_Ibarrier(comm, &r); break;
	case C_BCAST:
		if (rank == root)
			memcpy(out, x->in, x->span);
		rc = blocking ? MPI_Bcast(out, n, t, root, comm)
		              : MPI_Ibcast(out, n, t, root, comm, &r);
		break;
	case C_REDUCE:
		if (ip && rank == root) {
			memcpy(out, x->in, x->span);
			in = inplace;
		}
		rc = blocking ? MPI_Reduce(in, out, n, t, op, root, comm)
		              : MPI_Ireduce(in, out, n, t, op, root, comm, &r);
		break;
	case C_ALLREDUCE:
	case C_SCAN:
	case C_EXSCAN:
		if (ip) {
			memcpy(out, x->in, x->span);
			in = inplace;
		}
		if (st->c == C_ALLREDUCE)
			rc = blocking ? MPI_Allreduce(in, out, n, t, op, comm)
			              : MPI_Iallreduce(in, out, n, t, op, comm, &r);
		else if (st->c == C_SCAN)
			rc = blocking ? MPI_Scan(in, out, n, t, op, comm)
			              : MPI_Iscan(in, out, n, t, op, comm, &r);
		else
			rc = blocking ? MPI_Exscan(in, out, n, t, op, comm)
			              : MPI_Iexscan(in, out, n, t, op, comm, &r);
		break;
	case C_REDSCAT:
		if (ip) {
			memcpy(out, x->in, x->span);
			in = inplace;
		}
		rc = blocking ? MPI_Reduce_scatter_block(in, out, n, t, op, comm)
		              : MPI_Ireduce_scatter_block(in, out, n, t, op, comm, &r);
		break;
	case C_ALLTOALL:
		if (ip) {
			memcpy(out, x->in, x->span);
			rc = blocking ? MPI_Alltoall(x->in, n, t, out, n, t, comm)
			              : MPI_Ialltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, n, t,
			                              comm, &r);
		} else {
			rc = blocking ? MPI_Alltoall(in, n, t, out, n, t, comm)
			              : MPI_Ialltoall(in, n, t, out, n, t, comm, &r);
		}
		break;
	case C_ALLGATHER:
		if (ip) {
			memcpy(out + (size_t)rank * (size_t)n * (size_t)ext, x->in,
			       (size_t)n * (size_t)ext);
			rc = blocking ? MPI_Allgather(x->in, n, t, out, n, t, comm)
			              : MPI_Iallgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, n,
			                               t, comm, &r);
		} else {
			rc = blocking ? MPI_Allgather(in, n, t, out, n, t, comm)
			              : MPI_Iallgather(in, n, t, out, n, t, comm, &r);
		}
		break;
	case C_GATHER:
		if (ip && rank == root) {
			memcpy(out + (size_t)rank * (size_t)n * (size_t)ext, x->in,
			       (size_t)n * (size_t)ext);
			in = inplace;
		}
		rc = blocking ? MPI_Gather(in, n, t, out, n, t, root, comm)
		              : MPI_Igather(in, n, t, out, n, t, root, comm, &r);
		break;
	case C_SCATTER:
		if (ip && rank == root) {
			/* The root keeps its block in place in the send buffer. */
			memcpy(out, x->in, x->span);
			rc = blocking ? MPI_Scatter(out, n, t, MPI_IN_PLACE, n, t, root, comm)
			              : MPI_Iscatter(out, n, t, MPI_IN_PLACE, n, t, root, comm, &r);
		} else {
			rc = blocking ? MPI_Scatter(in, n, t, out, n, t, root, comm)
			              : MPI_Iscatter(in, n, t, out, n, t, root, comm, &r);
		}
		break;
	default: break;
	}
	CHECK(rc == MPI_SUCCESS);
	if (!blocking)
		complete(&r, st->how, comm);
}

/* What of the output MPI defines, to compare: everything, except the
 * exclusive scan's rank 0 result and a non-root's receive buffer of the
 * rooted reductions. */
static bool defined(const struct step *st, int rank, int root)
{
	if (st->c == C_EXSCAN && rank == 0)
		return false;
	if (st->c == C_REDUCE && rank != root)
		return false;
	return true;
}

static void *sequence(void *arg)
{
	struct ctx *x = arg;
	struct step st = { 0 }, prev = { 0 };
	for (long k = 0; k < x->steps; k++) {
		int which = pick(&x->seed, 3);
		if (k > 0 && pick(&x->seed, 3) == 0) {
			st = prev; /* the same arguments, new data */
		} else {
			int csize;
			MPI_Comm_size(x->comms[which], &csize);
			draw(x, &st, csize);
			st.comm = which;
		}
		prev = st;
		fill_input(x, k);
		run(x, &st, false);
		run(x, &st, true);
		int rank, size;
		MPI_Comm_rank(x->comms[st.comm], &rank);
		MPI_Comm_size(x->comms[st.comm], &size);
		if (defined(&st, rank, st.root % size) && memcmp(x->out, x->ref, x->span)) {
			size_t i = 0;
			while (x->out[i] == x->ref[i])
				i++;
			fprintf(stderr,
			        "rank %d thread %d: step %ld: %s count %d type %d op %d root %d "
			        "in place %d comm %d: byte %zu differs from the blocking "
			        "collective's\n",
			        wrank, x->id, k, coll_name[st.c], st.count, st.type, st.op,
			        st.root % size, st.in_place, st.comm, i);
			MPI_Abort(MPI_COMM_WORLD, 1);
		}
	}
	return NULL;
}

static void ctx_init(struct ctx *x, int id, uint64_t seed, long steps)
{
	memset(x, 0, sizeof *x);
	x->id = id;
	x->seed = seed + 1000003u * (uint64_t)id;
	x->steps = steps;
	CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &x->comms[0]));
	CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &x->comms[1]));
	/* Halves by parity, ranks reversed: a group unlike the world's. */
	CHECK_MPI(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &x->comms[2]));
	CHECK_MPI(MPI_Type_vector(1, 1, 3, MPI_INT, &x->vec));
	MPI_Datatype r;
	CHECK_MPI(MPI_Type_create_resized(x->vec, 0, 3 * sizeof(int), &r));
	CHECK_MPI(MPI_Type_free(&x->vec));
	x->vec = r;
	CHECK_MPI(MPI_Type_commit(&x->vec));
	/* The largest buffer: MAXCOUNT elements of the widest extent (12 B,
	 * the vector) for every step's layout. */
	x->span = (size_t)MAXCOUNT * 12 + 64;
	x->in = malloc(x->span);
	x->out = malloc(x->span);
	x->ref = malloc(x->span);
	CHECK(x->in && x->out && x->ref);
}

static void ctx_free(struct ctx *x)
{
	for (int c = 0; c < 3; c++)
		CHECK_MPI(MPI_Comm_free(&x->comms[c]));
	CHECK_MPI(MPI_Type_free(&x->vec));
	free(x->in);
	free(x->out);
	free(x->ref);
}

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
	MPI_Comm_size(MPI_COMM_WORLD, &wsize);
	long steps = argc > 1 ? atol(argv[1]) : 300;
	int nthreads = argc > 2 ? atoi(argv[2]) : 1;
	uint64_t seed = argc > 3 ? strtoull(argv[3], NULL, 0) : 20261126u;
	if (nthreads < 1 || nthreads > 8 || (nthreads > 1 && provided < MPI_THREAD_MULTIPLE)) {
		if (wrank == 0)
			fprintf(stderr, "coll random: %d threads need MPI_THREAD_MULTIPLE\n",
			        nthreads);
		MPI_Finalize();
		return 77;
	}
	struct ctx x[8];
	/* Communicators made in the same order on every rank, before any
	 * thread starts. */
	for (int i = 0; i < nthreads; i++)
		ctx_init(&x[i], i, seed, steps);
	pthread_t tid[8];
	for (int i = 1; i < nthreads; i++)
		CHECK(pthread_create(&tid[i], NULL, sequence, &x[i]) == 0);
	sequence(&x[0]);
	for (int i = 1; i < nthreads; i++)
		pthread_join(tid[i], NULL);
	for (int i = 0; i < nthreads; i++)
		ctx_free(&x[i]);
	CHECK_MPI(MPI_Barrier(MPI_COMM_WORLD));
	if (wrank == 0)
		printf("coll random: %ld steps passed (seed %llu, %d threads)\n", steps * nthreads,
		       (unsigned long long)seed, nthreads);
	MPI_Finalize();
	return 0;
}

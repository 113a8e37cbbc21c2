/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A graph collective that fails in the call itself reports the error as an
 * MPI call does: through the communicator's error handler, then as the
 * call's return code, with a null request; the communicator stays usable.
 * The failure is memory: an MPI_Iallreduce of one element of a datatype
 * whose two ints lie about the whole address space apart (one in a page
 * mapped at a low fixed address, one on the stack), so
 * that the scratch for the partner's element cannot be had on any rank.
 * The communicator (a duplicate of MPI_COMM_WORLD) carries a handler that
 * counts its calls and returns. Under PIANO_COLL=graph; skipped (77) where
 * no low page can be mapped. Prints "coll errhandler: all checks passed"
 * on rank 0.
 */
#include "mpitest.h"

#include <stdint.h>
#include <string.h>
#include <sys/mman.h>

#ifndef MAP_FIXED_NOREPLACE /* glibc before 2.28; kernels before 4.17 take it as a hint */
#define MAP_FIXED_NOREPLACE 0x100000
#endif

static int handled, handled_code;

static void count_error(MPI_Comm *comm, int *code, ...)
{
	(void)comm;
	handled++;
	handled_code = *code;
}

/* Never runs: the call fails before any element is combined. */
static void unused_sum(void *in, void *inout, int *len, MPI_Datatype *type)
{
	(void)in;
	(void)inout;
	(void)len;
	(void)type;
	abort();
}

/* A page at a low address, or NULL. */
static int *low_page(void)
{
	for (uintptr_t a = 0x10000000; a <= 0x40000000; a += 0x10000000) {
		void *p = mmap((void *)a, 4096, PROT_READ | PROT_WRITE,
		               MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p == (void *)a)
			return p;
		if (p != MAP_FAILED)
			munmap(p, 4096);
	}
	return NULL;
}

int main(int argc, char **argv)
{
	int provided, rank;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int *lo = low_page(), ok = lo != NULL, all = 0;
	MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	if (!all) {
		if (rank == 0)
			printf("no page at a low address: skipped\n");
		MPI_Finalize();
		return 77;
	}
	volatile int hi[4] = { 0 }; /* on the stack, near the top of the address space */
	MPI_Comm comm;
	MPI_Errhandler eh;
	CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &comm));
	CHECK_MPI(MPI_Comm_create_errhandler(count_error, &eh));
	CHECK_MPI(MPI_Comm_set_errhandler(comm, eh));

	/* Blocks at lo[i] and hi[i] for i = 0 (send) and 2 (receive). */
	int lens[2] = { 1, 1 };
	MPI_Aint displs[2] = { 0, (MPI_Aint)((uintptr_t)hi - (uintptr_t)lo) };
	MPI_Datatype apart;
	CHECK_MPI(MPI_Type_create_hindexed(2, lens, displs, MPI_INT, &apart));
	CHECK_MPI(MPI_Type_commit(&apart));
	MPI_Op op;
	CHECK_MPI(MPI_Op_create(unused_sum, 1, &op));
	MPI_Request req;
	memset(&req, 0x5A, sizeof(req)); /* must come back null */
	int rc = MPI_Iallreduce(&lo[0], &lo[2], 1, apart, op, comm, &req);
	if (rc == MPI_SUCCESS || handled != 1 || handled_code != rc || req != MPI_REQUEST_NULL) {
		fprintf(stderr,
		        "rank %d: MPI_Iallreduce returned %d, the handler ran %d times (code %d), "
		        "request %s null\n",
		        rank, rc, handled, handled_code, req == MPI_REQUEST_NULL ? "" : "not");
		CHECK(0);
	}
	int cls = 0;
	MPI_Error_class(rc, &cls);
	CHECK(cls == MPI_ERR_NO_MEM || cls == MPI_ERR_INTERN || cls == MPI_ERR_OTHER);

	/* The communicator goes on: a graph collective on it. */
	int one = 1, sum = 0, size;
	MPI_Comm_size(comm, &size);
	CHECK_MPI(MPI_Iallreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm, &req));
	CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
	CHECK(sum == size && handled == 1);

	MPI_Op_free(&op);
	MPI_Type_free(&apart);
	MPI_Errhandler_free(&eh);
	MPI_Comm_free(&comm);
	munmap(lo, 4096);
	(void)hi[0];
	if (rank == 0)
		printf("coll errhandler: all checks passed\n");
	MPI_Finalize();
	return 0;
}

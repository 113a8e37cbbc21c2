/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Thread levels: the application gets the level it asked for (bounded by
 * what the MPI gives), MPI_Query_thread agrees with it, and traffic works
 * afterwards. usage: test_init init|single|funneled|serialized|multiple
 * [allreduce]; with `allreduce` the program's first call after MPI_Init is
 * a blocking MPI_Allreduce of two ints (MPI_MIN), the signature of piano's
 * own agreement in MPI_Init (tests/mpi/mpmd.sh).
 */
#include "mpitest.h"

#include <string.h>

#define LEN (1 << 20)

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "init";
	int levels[] = { MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED,
	                 MPI_THREAD_MULTIPLE };
	const char *names[] = { "single", "funneled", "serialized", "multiple" };
	int required = -1, provided = -1, q = -2, rank;
	for (int i = 0; i < 4; i++)
		if (strcmp(mode, names[i]) == 0)
			required = levels[i];
	if (required < 0) {
		MPI_Init(&argc, &argv);
	} else {
		MPI_Init_thread(&argc, &argv, required, &provided);
		/* Debian's Open MPI and MPICH both support MULTIPLE, so the
		 * application must get exactly the level it asked for. */
		if (provided != required) {
			fprintf(stderr, "asked %d, got %d\n", required, provided);
			return 1;
		}
	}
	if (argc > 2 && strcmp(argv[2], "allreduce") == 0) {
		/* Not checked: in mpmd.sh's job this meets piano's agreement. */
		int in[2] = { 1, 2 }, out[2];
		CHECK_MPI(MPI_Allreduce(in, out, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
	}
	MPI_Query_thread(&q);
	if (required >= 0)
		CHECK(q == provided);
	else
		CHECK(q >= MPI_THREAD_SINGLE && q <= MPI_THREAD_MULTIPLE);
	int flag = 0;
	MPI_Is_thread_main(&flag);
	CHECK(flag);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	char *buf = malloc(LEN);
	CHECK(buf);
	memset(buf, rank ? 0 : 'z', LEN);
	MPI_Request r;
	if (rank == 0)
		MPI_Isend(buf, LEN, MPI_CHAR, 1, 1, MPI_COMM_WORLD, &r);
	else
		MPI_Irecv(buf, LEN, MPI_CHAR, 0, 1, MPI_COMM_WORLD, &r);
	CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
	if (rank == 1)
		CHECK(buf[0] == 'z' && buf[LEN - 1] == 'z');
	free(buf);
	MPI_Finalize();
	return 0;
}

/* Helpers shared by the MPI tests: checks that name the rank and line. */
#ifndef PIANO_MPITEST_H
#define PIANO_MPITEST_H

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                     \
	do {                                                                            \
		if (!(cond)) {                                                          \
			int r_ = -1;                                                    \
			MPI_Comm_rank(MPI_COMM_WORLD, &r_);                             \
			fprintf(stderr, "rank %d: %s:%d: check failed: %s\n", r_, __FILE__, \
			        __LINE__, #cond);                                       \
			MPI_Abort(MPI_COMM_WORLD, 1);                                   \
		}                                                                       \
	} while (0)

#define CHECK_MPI(call) CHECK((call) == MPI_SUCCESS)

#endif

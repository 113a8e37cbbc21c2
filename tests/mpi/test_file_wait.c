/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A non-blocking file request completes in MPI_Wait while another thread is
 * waiting at the same time (a wait piano would otherwise hand to its
 * engine, whose checks never complete a ROMIO request on MPICH). Two ranks;
 * rank 0 satisfies rank 1's other waiter after the file write. The file
 * lives in a directory made with mkdtemp.
 */
#include "mpitest.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int rank, token = 0;
	if ((rank = init_pair_multiple(&argc, &argv)) < 0)
		return 77;
	char dir[] = "/tmp/piano-file-wait-XXXXXX", path[64];
	if (rank == 0)
		CHECK(mkdtemp(dir) != NULL);
	MPI_Bcast(dir, sizeof(dir), MPI_CHAR, 0, MPI_COMM_WORLD);
	snprintf(path, sizeof(path), "%s/data", dir);
	MPI_File fh;
	CHECK_MPI(MPI_File_open(MPI_COMM_SELF, path, MPI_MODE_CREATE | MPI_MODE_RDWR,
	                        MPI_INFO_NULL, &fh));
	if (rank == 0) {
		MPI_Barrier(MPI_COMM_WORLD);
		sleep_ms(300);
		CHECK_MPI(MPI_Send(&token, 1, MPI_INT, 1, 0, MPI_COMM_WORLD));
	} else {
		MPI_Request other, w;
		pthread_t t;
		CHECK_MPI(MPI_Irecv(&token, 1, MPI_INT, 0, 0, MPI_COMM_WORLD, &other));
		CHECK(pthread_create(&t, NULL, wait_other, &other) == 0);
		sleep_ms(20); /* the other thread waits first */
		int data[1024];
		for (int i = 0; i < 1024; i++)
			data[i] = i;
		CHECK_MPI(MPI_File_iwrite_at(fh, 0, data, 1024, MPI_INT, &w));
		CHECK_MPI(MPI_Wait(&w, MPI_STATUS_IGNORE));
		MPI_Barrier(MPI_COMM_WORLD);
		pthread_join(t, NULL);
	}
	CHECK_MPI(MPI_File_close(&fh));
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		unlink(path);
		rmdir(dir);
		printf("file_wait: the file request completed beside a waiting thread\n");
	}
	MPI_Finalize();
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * piano's MPI_Init leaves no non-blocking collective behind it in the MPI.
 * On Open MPI one libnbc collective on a communicator registers libnbc's
 * progress callback until that communicator is freed, and every progress
 * call of the job then calls it (5 % of a blocking ring's samples when
 * piano's PIANO_COLL=auto agreement was an MPI_Iallreduce on
 * MPI_COMM_WORLD). The callback is seen through Open MPI's own progress
 * registry: opal_progress_unregister() succeeds only for a registered
 * callback (re-registered at once). After MPI_Init and a blocking
 * exchange it must not be registered; after an MPI_Ibarrier of the test's
 * own it must be, or the test cannot see it and fails. MPICH removes its
 * schedule hook when no schedule is pending: skipped there.
 */
#include "mpitest.h"

#include <dlfcn.h>
#include <link.h>
#include <string.h>

#if defined(OPEN_MPI) && OPEN_MPI
static const char *libnbc_path;

static int find_libnbc(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	(void)data;
	if (info->dlpi_name && strstr(info->dlpi_name, "mca_coll_libnbc.so")) {
		libnbc_path = info->dlpi_name;
		return 1;
	}
	return 0;
}

typedef int (*progress_cb)(void);
typedef int (*progress_reg)(progress_cb);

/* 1 if cb is in Open MPI's progress registry (left registered), 0 if not. */
static int registered(progress_cb cb)
{
	progress_reg unreg = (progress_reg)dlsym(RTLD_DEFAULT, "opal_progress_unregister");
	progress_reg reg = (progress_reg)dlsym(RTLD_DEFAULT, "opal_progress_register");
	CHECK(unreg && reg);
	if (unreg(cb) != 0)
		return 0;
	CHECK(reg(cb) == 0);
	return 1;
}
#endif

int main(int argc, char **argv)
{
	int rank, size;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
#if defined(OPEN_MPI) && OPEN_MPI
	dl_iterate_phdr(find_libnbc, NULL);
	if (!mpitest_all(libnbc_path != NULL)) {
		if (rank == 0)
			printf("nbc quiet: Open MPI's libnbc is not loaded on some rank: "
			       "skipped\n");
		MPI_Finalize();
		return 77;
	}
	void *h = dlopen(libnbc_path, RTLD_LAZY | RTLD_NOLOAD);
	CHECK(h);
	progress_cb cb = (progress_cb)dlsym(h, "ompi_coll_libnbc_progress");
	CHECK(cb);
	/* A blocking exchange: no non-blocking collective of the program's. */
	int token = rank, sum = 0;
	CHECK_MPI(MPI_Allreduce(&token, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD));
	CHECK(sum == size * (size - 1) / 2);
	int after_init = registered(cb);
	if (after_init)
		fprintf(stderr,
		        "rank %d: libnbc's progress callback is registered after MPI_Init: a "
		        "non-blocking collective was run in it\n",
		        rank);
	MPI_Request req;
	CHECK_MPI(MPI_Ibarrier(MPI_COMM_WORLD, &req));
	CHECK_MPI(MPI_Wait(&req, MPI_STATUS_IGNORE));
	int after_own = registered(cb);
	if (!after_own)
		fprintf(stderr,
		        "rank %d: libnbc's progress callback is not seen after an "
		        "MPI_Ibarrier: the test cannot observe it\n",
		        rank);
	int ok = !after_init && after_own, all = 0;
	CHECK_MPI(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
	dlclose(h);
	if (rank == 0)
		printf("nbc quiet: %s\n", all ? "passed" : "FAILED");
	MPI_Finalize();
	return all ? 0 : 1;
#else
	if (rank == 0)
		printf("nbc quiet: MPICH keeps no schedule hook while none is pending: skipped\n");
	(void)size;
	MPI_Finalize();
	return 77;
#endif
}

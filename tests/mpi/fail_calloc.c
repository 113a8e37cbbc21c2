/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Preloaded by the test mpi.<mpi>.report_oom: on rank 0 of a 2-rank job,
 * once libpiano-mpi has duplicated a communicator with PMPI_Comm_dup (the
 * first thing report_finish() does in MPI_Finalize; piano duplicates none
 * before it in this test), calloc(2, sizeof(int)) called from libpiano-mpi
 * fails, as rank 0's tables for gathering the overlap report's parts would
 * under memory pressure; every other calloc works.
 */
#include <mpi.h>
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

typedef void *calloc_fn(size_t, size_t);

/* dlsym may itself call calloc: served from here meanwhile. */
static char early[4096];
static size_t early_used;
static int resolving;
static int armed;

static int from_piano(void *addr)
{
	Dl_info info;
	return dladdr(addr, &info) && info.dli_fname && strstr(info.dli_fname, "libpiano-mpi");
}

typedef int dup_fn(MPI_Comm, MPI_Comm *);

__attribute__((visibility("default"))) int PMPI_Comm_dup(MPI_Comm comm, MPI_Comm *out)
{
	static dup_fn *real;
	if (!real)
		real = (dup_fn *)dlsym(RTLD_NEXT, "PMPI_Comm_dup");
	if (from_piano(__builtin_return_address(0)))
		armed = 1;
	return real ? real(comm, out) : MPI_ERR_INTERN;
}

static int rank_zero(void)
{
	const char *r = getenv("OMPI_COMM_WORLD_RANK");
	if (!r)
		r = getenv("PMI_RANK");
	return r && strcmp(r, "0") == 0;
}

__attribute__((visibility("default"))) void *calloc(size_t n, size_t size)
{
	static calloc_fn *real;
	if (!real) {
		if (resolving) {
			size_t want = (n * size + 15) & ~(size_t)15;
			if (early_used + want > sizeof(early))
				return NULL;
			void *p = early + early_used;
			early_used += want;
			return p; /* static storage: already zero */
		}
		resolving = 1;
		real = (calloc_fn *)dlsym(RTLD_NEXT, "calloc");
		resolving = 0;
	}
	if (armed && n == 2 && size == sizeof(int) && rank_zero() &&
	    from_piano(__builtin_return_address(0)))
		return NULL;
	return real ? real(n, size) : NULL;
}

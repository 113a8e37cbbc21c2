/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The eager limit piano detects at MPI_Init (docs/mpi.md, "Eager limit")
 * is the one the MPI's control variables give, derived here
 * independently through MPI_T: the smallest of the BTL eager limits on Open
 * MPI; on MPICH over UCX, UCX's rendezvous threshold (UCX_RNDV_THRESH, else
 * 8192) when it is smaller than every MPI_T limit. piano's value is read
 * from its PIANO_STATS line, which MPI_Finalize writes to stderr: the test
 * sends its stderr to a temporary file first.
 *
 * On Open MPI piano reads its registry instead of opening an MPI_T session
 * (MPI_T_init_thread costs 0.21 s there): before the test opens its own,
 * MPI_T_finalize must find none.
 *
 * Usage (under piano-run, PIANO_STATS=1): mpi_eager
 */
#include "mpitest.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

static const char *const names[] = {
	"btl_vader_eager_limit", "btl_sm_eager_limit", "btl_tcp_eager_limit",
	"btl_openib_eager_limit", "btl_uct_eager_limit", "btl_ofi_eager_limit",
	"MPIR_CVAR_CH4_OFI_EAGER_MAX_MSG_SIZE",
};

static long mpit_min(void)
{
	int provided, n = 0;
	long best = -1;
	CHECK_MPI(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
	CHECK_MPI(MPI_T_cvar_get_num(&n));
	for (int i = 0; i < n; i++) {
		char name[256], desc[8];
		int nlen = sizeof(name), dlen = sizeof(desc), verb, bind, scope, cnt;
		MPI_Datatype dt;
		MPI_T_enum en;
		if (MPI_T_cvar_get_info(i, name, &nlen, &verb, &dt, &en, desc, &dlen, &bind,
		                        &scope) != MPI_SUCCESS || bind != MPI_T_BIND_NO_OBJECT)
			continue;
		for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++) {
			if (strcmp(name, names[k]))
				continue;
			MPI_T_cvar_handle h;
			unsigned long long v = 0;
			CHECK_MPI(MPI_T_cvar_handle_alloc(i, NULL, &h, &cnt));
			CHECK(cnt == 1);
			CHECK_MPI(MPI_T_cvar_read(h, &v));
			MPI_T_cvar_handle_free(&h);
			if (dt == MPI_INT || dt == MPI_UNSIGNED)
				v &= 0xffffffffu;
			if (v > 0 && (best < 0 || (long)v < best))
				best = (long)v;
		}
	}
	MPI_T_finalize();
	return best;
}

static long ucx_threshold(void)
{
	char ver[MPI_MAX_LIBRARY_VERSION_STRING];
	int len = 0;
	CHECK_MPI(MPI_Get_library_version(ver, &len));
	if (!strstr(ver, "ucx"))
		return -1;
	const char *env = getenv("UCX_RNDV_THRESH");
	return env && *env ? strtol(env, NULL, 10) : 8192;
}

int main(int argc, char **argv)
{
	const char *tmpdir = getenv("TMPDIR");
	char tpath[512];
	snprintf(tpath, sizeof(tpath), "%s/piano-eager-XXXXXX", tmpdir && *tmpdir ? tmpdir : "/tmp");
	int fd = mkstemp(tpath);
	if (fd < 0) {
		fprintf(stderr, "mkstemp %s: %s\n", tpath, strerror(errno));
		return 1;
	}
	unlink(tpath); /* read back through fd; nothing left behind */
	int saved = dup(2);
	MPI_Init(&argc, &argv);
	if (!getenv("PIANO_STATS")) {
		fprintf(stderr, "needs PIANO_STATS=1\n");
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
#if defined(OPEN_MPI)
	/* No session of piano's: the first MPI_T_finalize finds none. */
	CHECK(MPI_T_finalize() == MPI_T_ERR_NOT_INITIALIZED);
#endif
	long want = mpit_min();
	long ucx = ucx_threshold();
	if (ucx > 0 && (want < 0 || ucx < want))
		want = ucx;
	CHECK(want > 0);
	CHECK(dup2(fd, 2) == 2);
	MPI_Finalize();
	fflush(stderr);
	if (dup2(saved, 2) != 2)
		return 1;
	char buf[8192];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0) {
		fprintf(stderr, "no PIANO_STATS output\n");
		return 1;
	}
	buf[n] = '\0';
	const char *p = strstr(buf, "eager limit ");
	long got = p ? strtol(p + strlen("eager limit "), NULL, 10) : -1;
	printf("eager limit: piano %ld, MPI_T %ld\n", got, want);
	if (got != want) {
		fprintf(stderr, "piano's eager limit %ld, the MPI's %ld; piano said:\n%s", got, want,
		        buf);
		return 1;
	}
	return 0;
}

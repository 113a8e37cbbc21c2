/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Eager limit detection: messages up to this size complete without the
 * receiver's help, so sends of that size are not tracked. Sources, in
 * order: PIANO_EAGER_LIMIT; the MPI's control variables through MPI_T
 * (Open MPI's BTL eager limits, MPICH's CH4 OFI limit); UCX's rendezvous
 * threshold for MPICH over UCX (UCX_RNDV_THRESH, or UCX's shared-memory
 * default). The smallest limit wins: tracking too much only costs a table
 * insert, tracking too little loses overlap.
 */
#include "eager.h"
#include "base.h"
#include "cvar.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const cvar_names[] = {
	"btl_vader_eager_limit", "btl_sm_eager_limit", "btl_tcp_eager_limit",
	"btl_openib_eager_limit", "btl_uct_eager_limit", "btl_ofi_eager_limit",
	"MPIR_CVAR_CH4_OFI_EAGER_MAX_MSG_SIZE",
};

/* UCX's rendezvous threshold for intra-node transports when "auto". */
#define UCX_DEFAULT_RNDV_THRESH 8192L

static long cvar_min(char *src, size_t srclen)
{
	int n = 0;
	long best = -1;
	if (!cvar_available())
		return -1;
	MPI_T_cvar_get_num(&n);
	for (int i = 0; i < n; i++) {
		char name[256], desc[8];
		int nlen = sizeof(name), dlen = sizeof(desc), verb, bind, scope;
		MPI_Datatype dt;
		MPI_T_enum en;
		if (MPI_T_cvar_get_info(i, name, &nlen, &verb, &dt, &en, desc, &dlen, &bind,
		                        &scope) != MPI_SUCCESS || bind != MPI_T_BIND_NO_OBJECT)
			continue;
		for (size_t k = 0; k < sizeof(cvar_names) / sizeof(cvar_names[0]); k++) {
			long v;
			if (strcmp(name, cvar_names[k]) || cvar_read(i, dt, &v) || v <= 0)
				continue;
			if (best < 0 || v < best) {
				best = v;
				snprintf(src, srclen, "MPI_T %.200s", name);
			}
		}
	}
	return best;
}

static int mpi_uses_ucx(void)
{
	char ver[MPI_MAX_LIBRARY_VERSION_STRING];
	int len = 0;
	if (PMPI_Get_library_version(ver, &len) != MPI_SUCCESS)
		return 0;
	return strstr(ver, "ucx") != NULL;
}

static long ucx_threshold(char *src, size_t srclen)
{
	const char *env = getenv("UCX_RNDV_THRESH");
	char *end;
	if (env && *env) {
		errno = 0;
		long v = strtol(env, &end, 10);
		if (!errno && end != env && v > 0 && (*end == '\0' || *end == 'b' || *end == 'B')) {
			snprintf(src, srclen, "UCX_RNDV_THRESH");
			return v;
		}
	}
	snprintf(src, srclen, "UCX default rendezvous threshold");
	return UCX_DEFAULT_RNDV_THRESH;
}

long eager_detect(const char **source)
{
	static char src[300];
	int from = PIANO_SOURCE_DEFAULT;
	long limit = pmpi_setting("PIANO_EAGER_LIMIT", &from);
	if (from != PIANO_SOURCE_DEFAULT) {
		*source = "PIANO_EAGER_LIMIT";
		return limit;
	}
	long best = cvar_min(src, sizeof(src));
	if (mpi_uses_ucx()) {
		char usrc[64];
		long u = ucx_threshold(usrc, sizeof(usrc));
		if (best < 0 || u < best) {
			best = u;
			snprintf(src, sizeof(src), "%s", usrc);
		}
	}
	if (best < 0) {
		snprintf(src, sizeof(src), "unknown: every message tracked");
		best = 0;
	}
	*source = src;
	return best;
}

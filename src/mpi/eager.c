/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Eager limit detection: messages up to this size complete without the
 * receiver's help, so sends of that size are not tracked. Sources, in
 * order: PIANO_EAGER_LIMIT; the MPI's control variables (Open MPI's BTL
 * eager limits from its own registry, else through MPI_T; MPICH's CH4 OFI
 * limit through MPI_T); UCX's rendezvous
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

#if defined(OPEN_MPI)
#include <dlfcn.h>
#include <stdint.h>

/*
 * Open MPI's MCA variable registry, read directly. MPI_T_init_thread
 * registers the variables of every component of every framework, loading
 * them all (about 150 libraries, and the PSM libraries' constructors sleep):
 * 0.21 s per process on this project's machines, the whole of piano's
 * start-up cost on Open MPI. After MPI_Init the registry holds the
 * variables of the components in use, with the values MPI_T reads (test
 * mpi.openmpi.eager_detect). Both functions are exported by libopen-pal
 * (opal/mca/base/mca_base_var.h); get_value stores a pointer to the
 * variable's storage, a size_t for the BTL eager limits. -2: the registry
 * cannot be read (functions missing, a value out of range), MPI_T then.
 */
static long opal_min(char *src, size_t srclen)
{
	int (*find)(const char *, int *);
	int (*get)(int, const void *, void *, const char **);
	*(void **)&find = dlsym(RTLD_DEFAULT, "mca_base_var_find_by_name");
	*(void **)&get = dlsym(RTLD_DEFAULT, "mca_base_var_get_value");
	if (!find || !get)
		return -2;
	long best = -1;
	for (size_t k = 0; k < sizeof(cvar_names) / sizeof(cvar_names[0]); k++) {
		int index = -1;
		const size_t *v = NULL;
		if (find(cvar_names[k], &index) != 0 || index < 0)
			continue; /* component not in use */
		if (get(index, &v, NULL, NULL) != 0 || !v || *v == 0 || *v > INT32_MAX)
			return -2;
		if (best < 0 || (long)*v < best) {
			best = (long)*v;
			snprintf(src, srclen, "Open MPI's %.200s", cvar_names[k]);
		}
	}
	return best;
}
#endif

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
#if defined(OPEN_MPI)
	long best = opal_min(src, sizeof(src));
	if (best == -2)
		best = cvar_min(src, sizeof(src));
#else
	long best = cvar_min(src, sizeof(src));
#endif
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

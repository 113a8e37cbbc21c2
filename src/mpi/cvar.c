/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MPI's control variables through MPI_T: reading one by its index
 * (eager.c scans them) or by its name, inside one MPI_T session that the
 * first read during set-up opens and MPI_Finalize closes (MPICH 4.0.2 crashes in MPI_T_cvar_get_num
 * after a second MPI_T_init_thread that follows an MPI_T_finalize; and
 * closing it at set-up leaves holes in the heap, init.c).
 */
#include "cvar.h"

#include <string.h>

int cvar_read(int index, MPI_Datatype dt, long *out)
{
	MPI_T_cvar_handle h;
	int cnt = 0;
	if (MPI_T_cvar_handle_alloc(index, NULL, &h, &cnt) != MPI_SUCCESS)
		return -1;
	int rc = -1;
	union { int i; unsigned u; long l; unsigned long ul; long long ll;
	        unsigned long long ull; } v;
	memset(&v, 0, sizeof(v));
	if (cnt == 1 && MPI_T_cvar_read(h, &v) == MPI_SUCCESS) {
		rc = 0;
		if (dt == MPI_INT) *out = v.i;
		else if (dt == MPI_UNSIGNED) *out = (long)v.u;
		else if (dt == MPI_LONG) *out = v.l;
		else if (dt == MPI_UNSIGNED_LONG) *out = (long)v.ul;
		else if (dt == MPI_LONG_LONG) *out = (long)v.ll;
		else if (dt == MPI_UNSIGNED_LONG_LONG) *out = (long)v.ull;
		else rc = -1;
	}
	MPI_T_cvar_handle_free(&h);
	return rc;
}

/* Set-up and MPI_Finalize, under the set-up lock. */
static int session;
static int session_level = -1; /* -1: closed, or not to be opened */

void cvar_open(int level) { session_level = level; }

/* The session opens at its first use: on Open MPI, whose MPI_T_init_thread
 * loads every component to register its variables (0.21 s per process on
 * this project's machines), set-up needs none when Open MPI's own registry
 * answers (eager.c). */
static bool session_ready(void)
{
	if (session || session_level < 0)
		return session;
	int provided;
	/* At the level the MPI runs at: Open MPI 4.1 takes MPI_T_init_thread's
	 * level as the MPI's own (MPI_Query_thread answered MPI_THREAD_SINGLE
	 * after piano's session, and the MPI's runtime checks of
	 * MPI_THREAD_MULTIPLE read false, while piano's threads called it). */
	session = MPI_T_init_thread(session_level, &provided) == MPI_SUCCESS;
	session_level = -1; /* one attempt */
	return session;
}

void cvar_close(void)
{
	if (session)
		MPI_T_finalize();
	session = 0;
	session_level = -1;
}

bool cvar_available(void) { return session_ready(); }

int cvar_read_named(const char *name, long *out)
{
	int index, rc = -1;
	if (!session_ready())
		return -1;
	char cname[256], desc[8];
	int nlen = sizeof(cname), dlen = sizeof(desc), verb, bind, scope;
	MPI_Datatype dt;
	MPI_T_enum en;
	if (MPI_T_cvar_get_index(name, &index) == MPI_SUCCESS &&
	    MPI_T_cvar_get_info(index, cname, &nlen, &verb, &dt, &en, desc, &dlen, &bind,
	                        &scope) == MPI_SUCCESS &&
	    bind == MPI_T_BIND_NO_OBJECT)
		rc = cvar_read(index, dt, out);
	return rc;
}

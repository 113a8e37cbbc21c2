/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * User-defined reduction operations held for piano's persistent graph
 * collectives (docs/coll.md, "Persistent collectives"). The application may
 * free its MPI_Op right after MPI_Allreduce_init; the MPI's own persistent
 * collective keeps the operation alive through its own reference, which a
 * graph that calls MPI_Reduce_local with the handle does not have. So the
 * layer records every operation created through its MPI_Op_create and
 * MPI_Op_create_c; a persistent graph holds the one it names, and an
 * MPI_Op_free of a held operation only marks it: the application's handle
 * becomes MPI_OP_NULL as the standard says, the MPI's operation lives until
 * the last graph holding it is freed, and the MPI cannot hand the same
 * handle to a new operation meanwhile. Open MPI's Fortran MPI_OP_CREATE
 * and MPI_OP_FREE call PMPI_ directly: the Fortran wrappers
 * (fortran_ompi.c) record and free through here too. An operation created
 * behind the layer's back (a profiling name such as PMPI_OP_CREATE) is not
 * known here: its persistent collectives stay the MPI's, on every rank
 * alike as long as every rank creates it the same way.
 *
 * Protocol: `lock` guards the table (operations are few and made rarely).
 */
#include "op_hold.h"
#include "base.h"
#include "serial.h"

#include <pthread.h>
#include <stdlib.h>

struct held {
	MPI_Op op;
	int holds;  /* graphs holding it */
	bool freed; /* the application freed it: the MPI's free waits for the holds */
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct held *table; /* under lock */
static int n, cap;         /* under lock */

/* The entry of op, or NULL. Under lock. */
static struct held *find(MPI_Op op)
{
	for (int i = 0; i < n; i++)
		if (table[i].op == op)
			return &table[i];
	return NULL;
}

/* Under lock. */
static void drop(struct held *h) { *h = table[--n]; }

void op_record(MPI_Op op)
{
	pthread_mutex_lock(&lock);
	if (n == cap) {
		int c = cap ? 2 * cap : 16;
		struct held *t = realloc(table, sizeof(*t) * (size_t)c);
		if (!t)
			goto unlock;
		table = t;
		cap = c;
	}
	table[n++] = (struct held){ .op = op };
unlock:
	pthread_mutex_unlock(&lock);
}

bool op_holdable(MPI_Op op)
{
	if (pmpi_op_predefined(op))
		return true;
	pthread_mutex_lock(&lock);
	const struct held *h = find(op);
	bool ok = h && !h->freed;
	pthread_mutex_unlock(&lock);
	return ok;
}

bool op_hold(MPI_Op op)
{
	if (pmpi_op_predefined(op))
		return true;
	pthread_mutex_lock(&lock);
	struct held *h = find(op);
	bool ok = h && !h->freed;
	if (ok)
		h->holds++;
	pthread_mutex_unlock(&lock);
	return ok;
}

void op_release(MPI_Op op)
{
	if (op == MPI_OP_NULL || pmpi_op_predefined(op))
		return;
	pthread_mutex_lock(&lock);
	struct held *h = find(op);
	bool free_now = h && --h->holds == 0 && h->freed;
	if (free_now)
		drop(h);
	pthread_mutex_unlock(&lock);
	if (free_now && PMPI_Op_free(&op) != MPI_SUCCESS)
		pmpi_warn("cannot free a user-defined operation the application freed while a "
		          "persistent collective held it");
}

/* After the MPI's call that made *op. */
static int created(int rc, const MPI_Op *op)
{
	if (rc == MPI_SUCCESS)
		op_record(*op);
	return rc;
}

PMPI_EXPORT int MPI_Op_create(MPI_User_function *fn, int commute, MPI_Op *op)
{
	PMPI_APP_SCOPE();
	return created(PMPI_Op_create(fn, commute, op), op);
}

#if MPI_VERSION >= 4
PMPI_EXPORT int MPI_Op_create_c(MPI_User_function_c *fn, int commute, MPI_Op *op)
{
	PMPI_APP_SCOPE();
	return created(PMPI_Op_create_c(fn, commute, op), op);
}
#endif

PMPI_EXPORT int MPI_Op_free(MPI_Op *op)
{
	PMPI_APP_SCOPE();
	if (op && *op != MPI_OP_NULL && !pmpi_op_predefined(*op)) {
		pthread_mutex_lock(&lock);
		struct held *h = find(*op);
		bool deferred = h && h->holds > 0 && !h->freed;
		if (deferred)
			h->freed = true;
		else if (h)
			drop(h);
		pthread_mutex_unlock(&lock);
		if (deferred) {
			*op = MPI_OP_NULL;
			return MPI_SUCCESS;
		}
	}
	return PMPI_Op_free(op);
}

void op_hold_finalize(void)
{
	pthread_mutex_lock(&lock);
	free(table);
	table = NULL;
	n = cap = 0;
	pthread_mutex_unlock(&lock);
}

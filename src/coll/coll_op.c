/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Collective operations run as graphs (coll_op.h): begin, start, and the
 * generalized request's callbacks.
 *
 * Life of an operation: begun and built by the application's thread in the
 * MPI_I* call; started, it belongs to the graph engine (the graph's lock);
 * the step that ends the graph calls op_ended() outside every lock, which
 * completes the generalized request; the MPI calls op_free() once the
 * application has completed (or freed) the request, and only then is the
 * operation freed. `live` holds the handles of the requests not freed yet.
 */
#include "coll_op.h"
#include "coll_shadow.h"
#include "graph_internal.h"
#include "reqtab.h"

#include <stdlib.h>
#include <string.h>

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct reqtab live; /* protected by live_lock */
_Atomic long coll_op_nlive; /* entries of `live`; read without the lock */

static uint64_t key_of(MPI_Request r)
{
	uint64_t k = 0;
	memcpy(&k, &r, sizeof(r) < sizeof(k) ? sizeof(r) : sizeof(k));
	return k;
}

int coll_mpi_error(int piano_rc)
{
	switch (piano_rc) {
	case 0: return MPI_SUCCESS;
	case PIANO_ENOMEM: return MPI_ERR_NO_MEM;
	case PIANO_ERANGE: return MPI_ERR_RANK;
	case PIANO_EINVAL: return MPI_ERR_ARG;
	default: return MPI_ERR_INTERN;
	}
}

static void op_destroy(struct coll_op *op)
{
	if (op->g)
		piano_graph_free(op->g);
	for (int i = 0; i < op->nscratch; i++)
		free(op->scratch[i]);
	if (op->sh)
		coll_shadow_put(op->sh);
	free(op);
}

int coll_op_begin(MPI_Comm comm, struct coll_op **out)
{
	coll_shadow_reap();
	struct coll_op *op = calloc(1, sizeof(*op));
	if (!op)
		return MPI_ERR_NO_MEM;
	int rc = coll_shadow_get(comm, &op->sh);
	if (rc != MPI_SUCCESS)
		goto err_op;
	op->rank = op->sh->rank;
	op->size = op->sh->size;
	op->tag = coll_shadow_tag(op->sh);
	op->ntags = op->sh->tags;
	op->one_node = coll_world_one_node && op->sh->in_world;
	/* Sized and checked on the application's communicator; the messages
	 * travel on the shadow (same group, same ranks). */
	rc = coll_mpi_error(piano_graph_create(comm, &op->g));
	if (rc != MPI_SUCCESS)
		goto err_op;
	op->g->comm = op->sh->comm;
	*out = op;
	return MPI_SUCCESS;

err_op:
	op_destroy(op);
	return rc;
}

void *coll_op_scratch(struct coll_op *op, size_t bytes)
{
	if (op->nscratch == (int)(sizeof(op->scratch) / sizeof(op->scratch[0])))
		return NULL;
	/* Not zeroed: every algorithm writes a scratch buffer (a receive, a
	 * copy) before it reads or sends it, and zeroing cost a memset of the
	 * whole span per operation (1 MiB for a 2-rank Iallreduce of 1 MiB). */
	void *p = malloc(bytes ? bytes : 1);
	if (p)
		op->scratch[op->nscratch++] = p;
	return p;
}

void coll_op_abandon(struct coll_op *op) { op_destroy(op); }

/* The generalized request's callbacks (MPI-3.1 §12.2). */
static int op_query(void *extra, MPI_Status *status)
{
	struct coll_op *op = extra;
	int code = 0;
	piano_graph_error(op->g, &code, NULL);
	/* A collective's status says nothing but its error (MPI-3.1 §5.12). */
	PMPI_Status_set_elements(status, MPI_BYTE, 0);
	PMPI_Status_set_cancelled(status, 0);
	status->MPI_SOURCE = MPI_ANY_SOURCE;
	status->MPI_TAG = MPI_ANY_TAG;
	status->MPI_ERROR = code ? code : MPI_SUCCESS;
	return code ? code : MPI_SUCCESS;
}

static int op_free(void *extra)
{
	struct coll_op *op = extra;
	pthread_mutex_lock(&live_lock);
	struct reqtab_entry *e = reqtab_find(&live, key_of(op->req));
	if (e) {
		reqtab_erase(&live, e);
		atomic_fetch_sub_explicit(&coll_op_nlive, 1, memory_order_relaxed);
	}
	pthread_mutex_unlock(&live_lock);
	op_destroy(op);
	return MPI_SUCCESS;
}

/* A non-blocking collective cannot be cancelled (MPI-3.1 §5.12). */
static int op_cancel(void *extra, int complete)
{
	(void)extra;
	(void)complete;
	return MPI_SUCCESS;
}

/* The graph's end (graph_ended_fn), outside every lock of the engine. */
static void op_ended(void *extra)
{
	struct coll_op *op = extra;
	PMPI_Grequest_complete(op->req);
}

/* Before the first node posts anything, the shadow must exist: a POLL node
 * ahead of every node that has no predecessor. */
static int wait_for_shadow(struct coll_op *op)
{
	piano_graph_t *g = op->g;
	if (coll_shadow_ready(op->sh) == 1)
		return MPI_SUCCESS;
	int n = g->nnodes;
	char *has_pred = calloc((size_t)(n ? n : 1), 1);
	if (!has_pred)
		return MPI_ERR_NO_MEM;
	for (int e = 0; e < g->nedges; e++)
		has_pred[g->edge_to[e]] = 1;
	int poll = -1;
	int rc = coll_mpi_error(graph_add_poll(g, coll_shadow_ready, op->sh, &poll));
	for (int i = 0; rc == MPI_SUCCESS && i < n; i++)
		if (!has_pred[i])
			rc = coll_mpi_error(piano_graph_add_edge(g, poll, i));
	free(has_pred);
	return rc;
}

int coll_op_start(struct coll_op *op, MPI_Request *request)
{
	int rc = wait_for_shadow(op);
	if (rc == MPI_SUCCESS)
		rc = coll_mpi_error(piano_graph_commit(op->g));
	if (rc == MPI_SUCCESS)
		rc = PMPI_Grequest_start(op_query, op_free, op_cancel, op, &op->req);
	if (rc != MPI_SUCCESS) {
		op_destroy(op);
		return rc;
	}
	pthread_mutex_lock(&live_lock);
	bool created = false;
	if (reqtab_get(&live, key_of(op->req), &created) && created)
		atomic_fetch_add_explicit(&coll_op_nlive, 1, memory_order_relaxed);
	pthread_mutex_unlock(&live_lock);
	/* Stored before the start: the step that ends the graph, in this
	 * thread or another, completes op->req (the graph's and the list's
	 * locks publish both). */
	op->g->ended_fn = op_ended;
	op->g->ended_arg = op;
	*request = op->req;
	rc = coll_mpi_error(piano_graph_start(op->g));
	if (rc != MPI_SUCCESS) {
		/* Not started: complete the request with the error? It is the
		 * application's now; the graph never ran, so end it here. */
		op->g->ended_fn = NULL;
		PMPI_Grequest_complete(op->req);
	}
	return rc;
}

bool coll_op_among_slow(const MPI_Request *reqs, int n)
{
	bool found = false;
	pthread_mutex_lock(&live_lock);
	for (int i = 0; i < n && !found; i++)
		found = reqs[i] != MPI_REQUEST_NULL && reqtab_find(&live, key_of(reqs[i]));
	pthread_mutex_unlock(&live_lock);
	return found;
}

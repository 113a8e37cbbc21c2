/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Persistent collectives as graphs (coll_persist.h).
 *
 * Protocol: `lock` guards the table of handles and every operation's
 * running / free_pending flags. A run is started by the application's
 * thread (running set under the lock), ended by whichever thread's step
 * finished the graph (op_ended(): running cleared under the lock, then the
 * empty message sent). MPI_Request_free takes the handle out of the table;
 * the operation is destroyed there when it is not running, else by the end
 * of its run. op_ended() touches the operation only under the lock, or
 * after the lock when the free already happened (free_pending): once it
 * cleared `running`, a concurrent free may destroy the operation.
 */
#include "coll_persist.h"
#include "base.h"
#include "coll_algo.h"
#include "graph_internal.h"
#include "op_hold.h"
#include "reqtab.h"

#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct reqtab handles;         /* handle -> operation; under lock */
static MPI_Comm self = MPI_COMM_NULL; /* made once under lock, then read-only */
static int self_tag_ub;               /* its MPI_TAG_UB */
static int next_tag;                  /* under lock */
_Atomic long coll_persist_nhandles;   /* entries of `handles`; read without the lock */

static uint64_t key_of(MPI_Request r)
{
	uint64_t k = 0;
	memcpy(&k, &r, sizeof(r) < sizeof(k) ? sizeof(r) : sizeof(k));
	return k;
}

void coll_persist_begin(struct coll_persist *p, bool persistent)
{
	memset(p, 0, sizeof(*p));
	p->transient = !persistent;
	p->outer = coll_op_persist;
	coll_op_persist = p;
}

/* Whether t is a named datatype (MPI_DOUBLE_INT, MPI_REAL8... as well as
 * those pmpi_type_predefined() caches), which nobody frees: a duplicate
 * would only cost, and MPICH's MPI_MAXLOC and MPI_MINLOC recognise the pair
 * types by their handles, not a duplicate's. The F90 combiners' types are
 * predefined too (MPI-4.0 §19.1.9). */
static bool type_named(MPI_Datatype t) { return pmpi_type_predefined(t) || coll_type_named(t); }

MPI_Datatype coll_persist_type(struct coll_persist *p, MPI_Datatype t)
{
	if (t == MPI_DATATYPE_NULL || p->err || type_named(t))
		return t;
	if (p->nown == p->cap) {
		int cap = p->cap ? 2 * p->cap : 4;
		MPI_Datatype *own = realloc(p->own, sizeof(*own) * (size_t)cap);
		if (!own) {
			p->err = MPI_ERR_NO_MEM;
			return t;
		}
		p->own = own;
		p->cap = cap;
	}
	MPI_Datatype d;
	int rc = PMPI_Type_dup(t, &d);
	if (rc != MPI_SUCCESS) {
		p->err = rc;
		return t;
	}
	p->own[p->nown++] = d;
	return d;
}

MPI_Op coll_persist_op(struct coll_persist *p, MPI_Op op)
{
	if (pmpi_op_predefined(op) || p->err)
		return op;
	if (p->op_held || !op_hold(op)) {
		p->err = MPI_ERR_OP; /* freed since the caller's check, or a second one */
		return op;
	}
	p->op_held = true;
	p->held = op;
	return op;
}

const MPI_Datatype *coll_persist_types(struct coll_persist *p, const MPI_Datatype *types, int n)
{
	if (!types || n <= 0 || p->err)
		return types;
	MPI_Datatype *out = p->nlists < 2 ? malloc(sizeof(*out) * (size_t)n) : NULL;
	if (!out) {
		p->err = p->nlists < 2 ? MPI_ERR_NO_MEM : MPI_ERR_INTERN;
		return types;
	}
	p->lists[p->nlists++] = out;
	for (int i = 0; i < n; i++) {
		/* One duplicate per distinct derived datatype: an all-to-all
		 * names the same few for every peer. Quadratic in the derived
		 * ones at worst, once per call. */
		if (types[i] == MPI_DATATYPE_NULL || type_named(types[i])) {
			out[i] = types[i];
			continue;
		}
		int j = 0;
		while (j < i && types[j] != types[i])
			j++;
		out[i] = j < i ? out[j] : coll_persist_type(p, types[i]);
	}
	return out;
}

static int commit(struct coll_op *op, MPI_Request *request);

int coll_persist_end(struct coll_persist *p, int rc, MPI_Request *request)
{
	coll_op_persist = p->outer;
	/* A non-blocking call that succeeded has started: its graph did
	 * without what failed (coll_op_begin() fails on p->err). */
	if (p->err && rc == MPI_SUCCESS && !p->transient)
		rc = p->err;
	if (p->op) {
		if (rc == MPI_SUCCESS)
			rc = commit(p->op, request); /* the operation is gone on failure */
		else
			coll_op_abandon(p->op);
		p->op = NULL;
	}
	/* Duplicates no operation took (coll_op_begin() failed, or never
	 * ran). */
	for (int i = 0; i < p->nown; i++)
		PMPI_Type_free(&p->own[i]);
	free(p->own);
	p->own = NULL;
	p->nown = p->cap = 0;
	if (p->op_held) /* no operation took the hold either */
		op_release(p->held);
	p->op_held = false;
	/* The builder copied each block's datatype into its nodes. */
	for (int i = 0; i < p->nlists; i++)
		free(p->lists[i]);
	p->nlists = 0;
	return rc;
}

/* The private communicator, made at the first persistent collective (a
 * duplicate of MPI_COMM_SELF involves no other process). Under lock. */
static int self_get(void)
{
	if (self != MPI_COMM_NULL)
		return MPI_SUCCESS;
	int rc = PMPI_Comm_dup(MPI_COMM_SELF, &self);
	if (rc != MPI_SUCCESS)
		return rc;
	int *ub = NULL, flag = 0;
	PMPI_Comm_get_attr(self, MPI_TAG_UB, &ub, &flag);
	self_tag_ub = flag && ub ? *ub : 32767;
	return MPI_SUCCESS;
}

/* A tag no other live handle holds. Under lock. */
static int self_tag(void)
{
	for (;;) {
		int t = next_tag;
		next_tag = next_tag == self_tag_ub ? 0 : next_tag + 1;
		bool used = false;
		for (size_t i = 0; i < handles.cap && !used; i++) {
			const struct reqtab_entry *e = &handles.slots[i];
			used = e->used && ((struct coll_op *)e->data)->ptag == t;
		}
		if (!used)
			return t;
	}
}

static struct coll_op *find(MPI_Request r)
{
	if (r == MPI_REQUEST_NULL)
		return NULL;
	struct reqtab_entry *e = reqtab_find(&handles, key_of(r));
	return e ? e->data : NULL;
}

/* The graph's end (graph_ended_fn), outside every lock of the engine. */
static void op_ended(void *arg)
{
	struct coll_op *op = arg;
	int code = 0;
	piano_graph_error(op->g, &code, NULL);
	pthread_mutex_lock(&lock);
	op->running = false;
	bool freed = op->free_pending;
	int tag = op->ptag;
	MPI_Comm comm = op->comm;
	pthread_mutex_unlock(&lock);
	/* A failing MPI call inside the graph: the communicator's error
	 * handler, as the MPI's own persistent collective would report it
	 * (MPI_ERRORS_ARE_FATAL by default). */
	if (code && !freed)
		PMPI_Comm_call_errhandler(comm, code);
	static char none;
	MPI_Request r;
	if (PMPI_Isend(&none, 0, MPI_BYTE, 0, tag, self, &r) == MPI_SUCCESS)
		PMPI_Request_free(&r);
	else
		pmpi_warn("persistent collective: its end message failed; its wait may not return");
	if (freed)
		coll_op_abandon(op);
}

static int commit(struct coll_op *op, MPI_Request *request)
{
	pthread_mutex_lock(&lock);
	int rc = self_get();
	struct reqtab_entry *e = NULL;
	if (rc == MPI_SUCCESS) {
		op->ptag = self_tag();
		rc = PMPI_Recv_init(NULL, 0, MPI_BYTE, 0, op->ptag, self, &op->req);
	}
	if (rc == MPI_SUCCESS) {
		bool created = false;
		e = reqtab_get(&handles, key_of(op->req), &created);
		if (!e)
			rc = MPI_ERR_NO_MEM;
	}
	if (rc == MPI_SUCCESS) {
		e->data = op;
		atomic_fetch_add_explicit(&coll_persist_nhandles, 1, memory_order_relaxed);
		pmpi_watch_add(1);
		atomic_fetch_add_explicit(&pmpi_g.graph_persistent, 1, memory_order_relaxed);
	} else if (op->req != MPI_REQUEST_NULL) {
		PMPI_Request_free(&op->req);
	}
	pthread_mutex_unlock(&lock);
	if (rc != MPI_SUCCESS) {
		coll_op_abandon(op);
		return rc;
	}
	op->g->ended_fn = op_ended;
	op->g->ended_arg = op;
	*request = op->req;
	return MPI_SUCCESS;
}

bool coll_persist_start(MPI_Request *req, int *rc)
{
	if (!atomic_load_explicit(&coll_persist_nhandles, memory_order_relaxed))
		return false;
	pthread_mutex_lock(&lock);
	struct coll_op *op = find(*req);
	bool busy = op && op->running;
	if (op && !busy)
		op->running = true;
	pthread_mutex_unlock(&lock);
	if (!op)
		return false;
	if (busy) {
		*rc = MPI_ERR_REQUEST; /* started again before it completed */
		return true;
	}
	/* Owner of the run from here: the application's thread, until the
	 * graph starts. The receive first, so the end message always finds
	 * it posted. */
	*rc = PMPI_Start(&op->req);
	if (*rc != MPI_SUCCESS) {
		pthread_mutex_lock(&lock);
		op->running = false;
		pthread_mutex_unlock(&lock);
		return true;
	}
	int grc = piano_graph_start(op->g);
	if (grc) {
		/* The graph never ran: end the run here, so its wait returns. */
		*rc = coll_mpi_error(grc);
		op_ended(op);
	}
	return true;
}

bool coll_persist_among_slow(const MPI_Request *reqs, int n)
{
	bool found = false;
	pthread_mutex_lock(&lock);
	for (int i = 0; i < n && !found; i++)
		found = find(reqs[i]) != NULL;
	pthread_mutex_unlock(&lock);
	return found;
}

bool coll_persist_free(MPI_Request *req, int *rc)
{
	if (!req || !atomic_load_explicit(&coll_persist_nhandles, memory_order_relaxed))
		return false;
	pthread_mutex_lock(&lock);
	struct reqtab_entry *e = *req == MPI_REQUEST_NULL ? NULL
	                                                  : reqtab_find(&handles, key_of(*req));
	struct coll_op *op = e ? e->data : NULL;
	bool later = false;
	if (op) {
		reqtab_erase(&handles, e);
		atomic_fetch_sub_explicit(&coll_persist_nhandles, 1, memory_order_relaxed);
		pmpi_watch_add(-1);
		later = op->free_pending = op->running;
	}
	pthread_mutex_unlock(&lock);
	if (!op)
		return false;
	/* An active receive freed completes when its message arrives (MPI-4.0
	 * §3.7.3): the run's end still sends it. */
	*rc = PMPI_Request_free(req);
	if (!later)
		coll_op_abandon(op);
	return true;
}

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
 * operation freed, or kept for reuse (below). `live` holds the handles of
 * the requests not freed yet.
 */
#include "base.h"
#include "coll_op.h"
#include "coll_shadow.h"
#include "graph_internal.h"
#include "op_hold.h"
#include "reqtab.h"

#include <stdlib.h>
#include <string.h>

static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static struct reqtab live;  /* protected by live_lock */
_Atomic long coll_op_nlive; /* entries of `live`; read without the lock */
_Thread_local struct coll_persist *coll_op_persist;

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
	free(op->scratch);
	for (int i = 0; i < op->nown; i++)
		PMPI_Type_free(&op->own[i]);
	free(op->own);
	if (op->op_held)
		op_release(op->held);
	if (op->sh)
		coll_shadow_put(op->sh);
	free(op);
}

/*
 * Finished operations kept for reuse (coll_op.h). An operation in the cache
 * belongs to the cache alone: its graph has ended and its request is freed.
 * coll_op_begin() takes one out, op_free() puts one in (from whichever
 * thread completes the request), both under cache_lock. An operation keeps
 * its reference to the shadow while kept; one whose communicator was freed
 * is dropped by the next take or put.
 */
enum { CACHE_SCRATCH_MAX = 1 << 20 }; /* bytes of scratch memory a kept operation may hold */
static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct coll_op **cache; /* coll_cache_max slots, the oldest first */
static int ncache;

/* Whether a call with this key may be reused: its handles say the same
 * thing at every call (unused ones are zero). */
static bool key_reusable(const struct coll_key *k)
{
	return k && k->kind != COLL_NONE && coll_cache_max > 0 &&
	       (k->stype == (MPI_Datatype)0 || pmpi_type_predefined(k->stype)) &&
	       (k->rtype == (MPI_Datatype)0 || pmpi_type_predefined(k->rtype)) &&
	       (k->op == (MPI_Op)0 || pmpi_op_predefined(k->op));
}

static bool key_equal(const struct coll_key *a, const struct coll_key *b)
{
	return a->kind == b->kind && a->sbuf == b->sbuf && a->rbuf == b->rbuf &&
	       a->scount == b->scount && a->rcount == b->rcount && a->root == b->root &&
	       a->stype == b->stype && a->rtype == b->rtype && a->op == b->op &&
	       a->segment == b->segment;
}

static bool comm_freed(const struct coll_op *op)
{
	/* Acquire: pairs with the release in the attribute's delete
	 * function, which MPI_Comm_free ran before the handle could be
	 * given to a new communicator. */
	return atomic_load_explicit(&op->sh->comm_freed, memory_order_acquire);
}

/* Takes the kept operations of freed communicators out of the cache, and
 * returns them as a list; under cache_lock. */
static struct coll_op *cache_sweep(void)
{
	struct coll_op *dead = NULL;
	int k = 0;
	for (int i = 0; i < ncache; i++) {
		if (comm_freed(cache[i])) {
			cache[i]->next_dead = dead;
			dead = cache[i];
		} else {
			cache[k++] = cache[i];
		}
	}
	ncache = k;
	return dead;
}

static void destroy_list(struct coll_op *dead)
{
	while (dead) {
		struct coll_op *op = dead;
		dead = op->next_dead;
		op_destroy(op);
	}
}

/* The kept operation of comm with an equal key, taken out of the cache;
 * NULL if there is none. */
static struct coll_op *cache_take(MPI_Comm comm, const struct coll_key *key)
{
	struct coll_op *op = NULL, *dead = NULL;
	pthread_mutex_lock(&cache_lock);
	for (int i = 0; i < ncache; i++) {
		if (cache[i]->comm != comm || !key_equal(&cache[i]->key, key) ||
		    comm_freed(cache[i]))
			continue;
		op = cache[i];
		memmove(&cache[i], &cache[i + 1], (size_t)(ncache - i - 1) * sizeof(*cache));
		ncache--;
		break;
	}
	if (!op)
		dead = cache_sweep();
	pthread_mutex_unlock(&cache_lock);
	destroy_list(dead);
	return op;
}

/* Keeps a finished operation; the oldest kept goes when the cache is full. */
static void cache_put(struct coll_op *op)
{
	struct coll_op *dead = NULL;
	pthread_mutex_lock(&cache_lock);
	if (!cache)
		cache = calloc((size_t)coll_cache_max, sizeof(*cache));
	if (!cache) {
		op->next_dead = NULL;
		dead = op;
	} else {
		dead = cache_sweep();
		if (ncache == coll_cache_max) {
			cache[0]->next_dead = dead;
			dead = cache[0];
			memmove(&cache[0], &cache[1], (size_t)(ncache - 1) * sizeof(*cache));
			ncache--;
		}
		cache[ncache++] = op;
	}
	pthread_mutex_unlock(&cache_lock);
	destroy_list(dead);
}

int coll_op_begin(MPI_Comm comm, const struct coll_key *key, struct coll_op **out)
{
	coll_shadow_reap();
	coll_op_reap();
	struct coll_persist *persist = coll_op_persist;
	if (persist && persist->err)
		return persist->err; /* a duplicate or a hold the graph needs */
	bool persistent = persist && !persist->transient;
	bool reusable = !persistent && key_reusable(key);
	struct coll_op *op = reusable ? cache_take(comm, key) : NULL;
	if (op) {
		/* Its graph is committed and not running: only the tags move
		 * (one sequence number per collective, as a new one takes). */
		int tag = coll_shadow_tag(op->sh);
		int rc = coll_mpi_error(graph_retag(op->g, tag - op->tag));
		if (rc != MPI_SUCCESS) {
			op_destroy(op);
			return rc;
		}
		op->tag = tag;
		op->req = MPI_REQUEST_NULL;
		op->reused = true;
		atomic_fetch_add_explicit(&pmpi_g.graph_reused, 1, memory_order_relaxed);
		*out = op;
		return MPI_SUCCESS;
	}
	op = calloc(1, sizeof(*op));
	if (!op)
		return MPI_ERR_NO_MEM;
	op->comm = comm;
	if (reusable)
		op->key = *key;
	int rc = coll_shadow_get(comm, &op->sh);
	if (rc != MPI_SUCCESS)
		goto err_op;
	op->rank = op->sh->rank;
	op->size = op->sh->size;
	if (persistent) {
		op->persistent = true;
		op->tag = coll_shadow_ptag(op->sh);
		if (op->tag < 0) {
			rc = COLL_ENOTAGS;
			goto err_op;
		}
	} else {
		op->tag = coll_shadow_tag(op->sh);
	}
	if (persist) {
		/* The graph names these duplicates from here on. */
		op->own = persist->own;
		op->nown = persist->nown;
		persist->own = NULL;
		persist->nown = persist->cap = 0;
		op->op_held = persist->op_held;
		op->held = persist->held;
		persist->op_held = false;
	}
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
	if (op->nscratch == op->cap_scratch) {
		int cap = op->cap_scratch ? 2 * op->cap_scratch : 4;
		void **list = realloc(op->scratch, sizeof(*list) * (size_t)cap);
		if (!list)
			return NULL;
		op->scratch = list;
		op->cap_scratch = cap;
	}
	/* Not zeroed: every algorithm writes a scratch buffer (a receive, a
	 * copy) before it reads or sends it, and zeroing cost a memset of the
	 * whole span per operation (1 MiB for a 2-rank Iallreduce of 1 MiB). */
	void *p = malloc(bytes ? bytes : 1);
	if (p) {
		op->scratch[op->nscratch++] = p;
		op->scratch_bytes += bytes;
	}
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

/*
 * Operations holding MPI objects (a duplicated datatype, a held operation)
 * whose request the MPI freed: op_free() runs inside the MPI's completion
 * call, where MPICH 4.0.2 asserts on a nested MPI_Type_free, so they are
 * destroyed at the next coll_op_begin() or coll_op_reap() instead, from the
 * application's call. Under cache_lock.
 */
static struct coll_op *deferred;

void coll_op_reap(void)
{
	pthread_mutex_lock(&cache_lock);
	struct coll_op *dead = deferred;
	deferred = NULL;
	pthread_mutex_unlock(&cache_lock);
	destroy_list(dead);
}

static int op_free(void *extra)
{
	struct coll_op *op = extra;
	pthread_mutex_lock(&live_lock);
	struct reqtab_entry *e = reqtab_find(&live, key_of(op->req));
	if (e) {
		reqtab_erase(&live, e);
		atomic_fetch_sub_explicit(&coll_op_nlive, 1, memory_order_relaxed);
		pmpi_watch_add(-1);
	}
	pthread_mutex_unlock(&live_lock);
	/* Only a run that ended well is kept: the application has the
	 * request's completion, so the graph's end was published (acquire). */
	if (op->key.kind != COLL_NONE && op->scratch_bytes <= CACHE_SCRATCH_MAX &&
	    atomic_load_explicit(&op->g->state, memory_order_acquire) == GRAPH_DONE)
		cache_put(op);
	else if (op->nown || op->op_held) {
		pthread_mutex_lock(&cache_lock);
		op->next_dead = deferred;
		deferred = op;
		pthread_mutex_unlock(&cache_lock);
	} else {
		op_destroy(op);
	}
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
	int rc = MPI_SUCCESS;
	if (!op->reused) {
		int added = 0;
		rc = coll_mpi_error(
		        graph_window(op->g, op->tag, op->seg_tags, coll_window, &added));
		atomic_fetch_add_explicit(&pmpi_g.graph_window_edges, (uint64_t)added,
		                          memory_order_relaxed);
		if (rc == MPI_SUCCESS)
			rc = wait_for_shadow(op);
		if (rc == MPI_SUCCESS)
			rc = coll_mpi_error(piano_graph_commit(op->g));
	}
	if (rc == MPI_SUCCESS && op->persistent) {
		coll_op_persist->op = op;
		*request = MPI_REQUEST_NULL; /* the handle is coll_persist_end()'s */
		return MPI_SUCCESS;
	}
	if (rc == MPI_SUCCESS)
		rc = PMPI_Grequest_start(op_query, op_free, op_cancel, op, &op->req);
	if (rc != MPI_SUCCESS) {
		op_destroy(op);
		return rc;
	}
	pthread_mutex_lock(&live_lock);
	bool created = false;
	if (reqtab_get(&live, key_of(op->req), &created) && created) {
		atomic_fetch_add_explicit(&coll_op_nlive, 1, memory_order_relaxed);
		pmpi_watch_add(1);
	}
	pthread_mutex_unlock(&live_lock);
	/* Stored before the start: the step that ends the graph, in this
	 * thread or another, completes op->req (the graph's and the list's
	 * locks publish both). */
	op->g->ended_fn = op_ended;
	op->g->ended_arg = op;
	*request = op->req;
	rc = coll_mpi_error(piano_graph_start(op->g));
	if (rc != MPI_SUCCESS) {
		/* Not started: the call fails (its error handler, and a null
		 * request: the MPI layer's GRAPH_END), so the request is freed
		 * here, which ends the operation (op_free() finds it by op->req:
		 * a copy is freed, and op is not touched afterwards). */
		op->g->ended_fn = NULL;
		MPI_Request r = op->req;
		PMPI_Grequest_complete(r);
		PMPI_Request_free(&r);
		*request = MPI_REQUEST_NULL;
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

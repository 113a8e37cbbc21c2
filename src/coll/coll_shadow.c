/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Shadow communicators of piano's collectives (coll_shadow.h).
 *
 * Freeing: a shadow has one reference from its communicator's attribute and
 * one per collective that uses it. The last one to go puts it on the dead
 * list; the duplicate is freed from there by coll_shadow_reap(), never from
 * where the reference dropped: that is inside an MPI callback (the
 * attribute's delete function runs in MPI_Comm_free, a generalized
 * request's free function in a wait), where calling MPI_Comm_free again is
 * not safe on every MPI.
 */
#include "coll_shadow.h"

#include <stdlib.h>

/* Tags per collective: at most this many, fewer when the MPI's tag bound is
 * small, so that the tag space holds at least SPAN_MIN ranges; a quarter
 * of the ranges are kept for persistent collectives (at least 64), the
 * others wrap around among the non-blocking ones (at least 192 in flight
 * before a range comes back). */
enum { TAGS_MAX = 4096, SPAN_MIN = 256 };

static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static int keyval = MPI_KEYVAL_INVALID;
static int key_err = MPI_SUCCESS;

static pthread_mutex_t dead_lock = PTHREAD_MUTEX_INITIALIZER;
static struct coll_shadow *dead; /* protected by dead_lock */
static _Atomic int ndead;        /* written under dead_lock, read without */

void coll_shadow_put(struct coll_shadow *sh)
{
	/* acq_rel: the thread that drops the last reference sees every use. */
	if (atomic_fetch_sub_explicit(&sh->refs, 1, memory_order_acq_rel) != 1)
		return;
	pthread_mutex_lock(&dead_lock);
	sh->next_dead = dead;
	dead = sh;
	atomic_store_explicit(&ndead, 1, memory_order_relaxed);
	pthread_mutex_unlock(&dead_lock);
}

static int delete_attr(MPI_Comm comm, int key, void *value, void *extra)
{
	(void)comm;
	(void)key;
	(void)extra;
	struct coll_shadow *sh = value;
	atomic_store_explicit(&sh->comm_freed, 1, memory_order_release);
	coll_shadow_put(sh);
	return MPI_SUCCESS;
}

static void key_create(void)
{
	key_err = PMPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_attr, &keyval, NULL);
}

/* Whether every rank of comm is in this process's MPI_COMM_WORLD: false
 * for a communicator joined with spawned or connected processes, on every
 * rank of it (each sees the others' world as foreign), so that a choice
 * made from it is the same on every rank. */
static bool within_world(MPI_Comm comm, int size)
{
	MPI_Group g, w;
	bool in = false;
	if (PMPI_Comm_group(comm, &g) != MPI_SUCCESS)
		return false;
	if (PMPI_Comm_group(MPI_COMM_WORLD, &w) != MPI_SUCCESS)
		goto free_group;
	int *ranks = malloc(2 * sizeof(int) * (size_t)size);
	if (!ranks)
		goto free_world;
	for (int i = 0; i < size; i++)
		ranks[i] = i;
	in = PMPI_Group_translate_ranks(g, size, ranks, w, ranks + size) == MPI_SUCCESS;
	for (int i = 0; in && i < size; i++)
		in = ranks[size + i] != MPI_UNDEFINED;
	free(ranks);
free_world:
	PMPI_Group_free(&w);
free_group:
	PMPI_Group_free(&g);
	return in;
}

/* A shadow for comm: by PMPI_Comm_idup (ready later, coll_shadow_ready()),
 * or with `now` by PMPI_Comm_dup (ready on return). With `world_only`, none
 * (MPI_SUCCESS, *out untouched) unless every rank of comm is in
 * MPI_COMM_WORLD. */
static int shadow_new(MPI_Comm comm, bool now, bool world_only, struct coll_shadow **out)
{
	struct coll_shadow *sh = calloc(1, sizeof(*sh));
	if (!sh)
		return MPI_ERR_NO_MEM;
	int rc = PMPI_Comm_size(comm, &sh->size);
	if (rc == MPI_SUCCESS)
		rc = PMPI_Comm_rank(comm, &sh->rank);
	int *ub = NULL, flag = 0;
	if (rc == MPI_SUCCESS)
		rc = PMPI_Comm_get_attr(comm, MPI_TAG_UB, &ub, &flag);
	if (rc != MPI_SUCCESS)
		goto err_free;
	long ntags = flag && ub ? (long)*ub + 1 : 32768L; /* the standard's least bound */
	sh->in_world = within_world(comm, sh->size);
	if (world_only && !sh->in_world) {
		free(sh);
		return MPI_SUCCESS;
	}
	sh->tags = ntags / SPAN_MIN < TAGS_MAX ? (int)(ntags / SPAN_MIN) : TAGS_MAX;
	int ranges = (int)(ntags / sh->tags);
	sh->pslots = ranges / 4;
	sh->tag_span = ranges - sh->pslots;
	if (pthread_mutex_init(&sh->lock, NULL)) {
		rc = MPI_ERR_OTHER;
		goto err_free;
	}
	sh->idup = MPI_REQUEST_NULL;
	if (now) {
		rc = PMPI_Comm_dup(comm, &sh->comm);
		if (rc == MPI_SUCCESS)
			atomic_store_explicit(&sh->ready, 1, memory_order_relaxed);
	} else {
		rc = PMPI_Comm_idup(comm, &sh->comm, &sh->idup);
	}
	if (rc != MPI_SUCCESS)
		goto err_lock;
	atomic_init(&sh->refs, 1);
	rc = PMPI_Comm_set_attr(comm, keyval, sh);
	if (rc != MPI_SUCCESS)
		goto err_lock; /* the duplicate leaks: the idup cannot be undone */
	*out = sh;
	return MPI_SUCCESS;

err_lock:
	pthread_mutex_destroy(&sh->lock);
err_free:
	free(sh);
	return rc;
}

/* The shadow of comm if it has one (*sh NULL if not). */
static int shadow_find(MPI_Comm comm, struct coll_shadow **sh)
{
	pthread_once(&key_once, key_create);
	if (key_err != MPI_SUCCESS)
		return key_err;
	int flag = 0;
	*sh = NULL;
	int rc = PMPI_Comm_get_attr(comm, keyval, sh, &flag);
	if (rc == MPI_SUCCESS && !flag)
		*sh = NULL;
	return rc;
}

int coll_shadow_get(MPI_Comm comm, struct coll_shadow **out)
{
	struct coll_shadow *sh = NULL;
	int rc = shadow_find(comm, &sh);
	if (rc != MPI_SUCCESS)
		return rc;
	if (!sh) {
		rc = shadow_new(comm, false, false, &sh);
		if (rc != MPI_SUCCESS)
			return rc;
	}
	atomic_fetch_add_explicit(&sh->refs, 1, memory_order_relaxed);
	*out = sh;
	return MPI_SUCCESS;
}

/*
 * Open MPI 4.1.4's MPI_Comm_idup runs its context-id agreement as a chain
 * of non-blocking allreduces on the communicator, each posted when the
 * previous one completed and tagged from the same sequence as the
 * application's own non-blocking collectives: an MPI_Iallreduce the
 * application posts while the chain runs takes, on a rank whose chain
 * has moved on, the tag the chain uses on another, and the two exchange
 * data (measured: wrong sums, then MPI_ERR_TRUNCATE). MPICH's idup is one
 * schedule with one tag and passed the same program, but the shadow is
 * made the same way on both MPIs, so that one path is the tested one: by a
 * blocking duplicate inside the call that created the communicator, and a
 * communicator without one keeps the MPI's collectives. The one exception
 * is PIANO_COLL=auto on MPICH (coll_shadow_lazy_safe()): there a shadow is
 * made by idup at the first graph collective that needs it, so that the
 * many communicators that never run one cost neither a duplicate at
 * creation nor one of MPICH's 2048 context ids (a process holding over
 * 1,024 communicators would run out).
 */

int coll_shadow_make(MPI_Comm comm, bool world_only)
{
	if (comm == MPI_COMM_NULL)
		return MPI_SUCCESS;
	int inter = 1;
	int rc = PMPI_Comm_test_inter(comm, &inter);
	if (rc != MPI_SUCCESS || inter)
		return rc; /* graphs run on intra-communicators only */
	struct coll_shadow *sh = NULL;
	rc = shadow_find(comm, &sh);
	if (rc != MPI_SUCCESS || sh)
		return rc;
	return shadow_new(comm, true, world_only, &sh);
}

bool coll_shadow_lazy_safe(void)
{
#if defined(OPEN_MPI)
	return false; /* its idup's chain takes the application's tags (above) */
#else
	return true;
#endif
}

bool coll_shadow_allowed(MPI_Comm comm, int size, bool lazy)
{
	if (size == 1)
		return true; /* one rank: the idup sends nothing */
	struct coll_shadow *sh = NULL;
	if (shadow_find(comm, &sh) != MPI_SUCCESS)
		return false;
	/* No shadow yet: coll_shadow_get() starts its idup, where that is
	 * safe, on every rank alike (a communicator's collectives are called
	 * in one order, and every rank of it gets the same answer from
	 * within_world()). */
	return sh || (lazy && coll_shadow_lazy_safe() && within_world(comm, size));
}

int coll_shadow_ready(void *shadow)
{
	struct coll_shadow *sh = shadow;
	/* Acquire: pairs with the release below; the duplicate's handle and
	 * idup_err are written before it. */
	if (atomic_load_explicit(&sh->ready, memory_order_acquire))
		return sh->idup_err ? -sh->idup_err : 1;
	if (pthread_mutex_trylock(&sh->lock))
		return 0; /* another graph's step tests it right now */
	int flag = 0;
	if (!atomic_load_explicit(&sh->ready, memory_order_relaxed)) {
		int rc = PMPI_Test(&sh->idup, &flag, MPI_STATUS_IGNORE);
		if (rc != MPI_SUCCESS) {
			sh->idup_err = rc;
			flag = 1;
		}
		if (flag)
			atomic_store_explicit(&sh->ready, 1, memory_order_release);
	} else {
		flag = 1;
	}
	pthread_mutex_unlock(&sh->lock);
	if (!flag)
		return 0;
	return sh->idup_err ? -sh->idup_err : 1;
}

int coll_shadow_tag(struct coll_shadow *sh)
{
	int base = (int)(sh->seq % (unsigned)sh->tag_span) * sh->tags;
	sh->seq++;
	return base;
}

int coll_shadow_ptag(struct coll_shadow *sh)
{
	if (sh->pseq >= (unsigned)sh->pslots)
		return -1;
	return (sh->tag_span + (int)sh->pseq++) * sh->tags;
}

void coll_shadow_reap(void)
{
	/* Relaxed: a shadow put on the list just now is freed next time. */
	if (!atomic_load_explicit(&ndead, memory_order_relaxed))
		return;
	pthread_mutex_lock(&dead_lock);
	struct coll_shadow *list = dead;
	dead = NULL;
	atomic_store_explicit(&ndead, 0, memory_order_relaxed);
	pthread_mutex_unlock(&dead_lock);
	while (list) {
		struct coll_shadow *sh = list;
		list = sh->next_dead;
		/* A duplicate whose idup never completed (the communicator was
		 * freed before any collective on it ended) cannot be freed. */
		if (atomic_load_explicit(&sh->ready, memory_order_acquire) && !sh->idup_err)
			PMPI_Comm_free(&sh->comm);
		pthread_mutex_destroy(&sh->lock);
		free(sh);
	}
}

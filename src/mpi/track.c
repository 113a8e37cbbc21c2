/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Table of the requests piano tracks (those that need background progress:
 * sends above the eager limit, receives, collectives). Keyed by the handle's
 * bits (an int in MPICH, a pointer in Open MPI). One mutex protects it; it
 * is touched once per tracked operation and once per completion, never on
 * the polling path. `pending` (active tracked requests) is read lock-free.
 */
#include "mpi_internal.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

struct entry {
	uint64_t key;
	uint8_t used, persistent, active;
	uint8_t foreign; /* a kind piano leaves to the MPI (track_foreign) */
};

static pthread_mutex_t track_lock = PTHREAD_MUTEX_INITIALIZER;
static struct entry *tab;   /* protected by track_lock */
static size_t cap, count;   /* protected by track_lock */
static _Atomic long pending;
static _Atomic long nforeign; /* foreign entries: a lock-free "none" check */

static uint64_t key_of(MPI_Request r)
{
	uint64_t k = 0;
	memcpy(&k, &r, sizeof(r) < sizeof(k) ? sizeof(r) : sizeof(k));
	return k;
}

static size_t slot_of(uint64_t k, size_t mask)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & mask;
}

static struct entry *find(uint64_t k)
{
	if (!cap)
		return NULL;
	for (size_t i = slot_of(k, cap - 1);; i = (i + 1) & (cap - 1)) {
		if (!tab[i].used)
			return NULL;
		if (tab[i].key == k)
			return &tab[i];
	}
}

static int grow(void)
{
	size_t ncap = cap ? cap * 2 : 256;
	struct entry *n = calloc(ncap, sizeof(*n));
	if (!n)
		return -1;
	for (size_t i = 0; i < cap; i++) {
		if (!tab[i].used)
			continue;
		size_t j = slot_of(tab[i].key, ncap - 1);
		while (n[j].used)
			j = (j + 1) & (ncap - 1);
		n[j] = tab[i];
	}
	free(tab);
	tab = n;
	cap = ncap;
	return 0;
}

/* Linear probing with backward-shift deletion (no tombstones). */
static void erase(struct entry *e)
{
	if (e->foreign)
		atomic_fetch_sub(&nforeign, 1);
	size_t i = (size_t)(e - tab);
	for (size_t j = (i + 1) & (cap - 1); tab[j].used; j = (j + 1) & (cap - 1)) {
		size_t home = slot_of(tab[j].key, cap - 1);
		/* Move j into the hole i unless its home lies in (i, j]. */
		bool stays = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
		if (stays)
			continue;
		tab[i] = tab[j];
		i = j;
	}
	memset(&tab[i], 0, sizeof(tab[i]));
	count--;
}

/* The entry of k, created if needed (NULL when out of memory). Called with
 * track_lock held. A handle the MPI reuses keeps its slot: what the entry
 * said of the old request is undone. */
static struct entry *entry_for(uint64_t k)
{
	struct entry *e = find(k);
	if (e) {
		if (e->active)
			atomic_fetch_sub(&pending, 1); /* stale entry of a reused handle */
		if (e->foreign)
			atomic_fetch_sub(&nforeign, 1);
		e->active = e->foreign = 0;
		return e;
	}
	if ((count + 1) * 2 > cap && grow() < 0)
		return NULL;
	size_t i = slot_of(k, cap - 1);
	while (tab[i].used)
		i = (i + 1) & (cap - 1);
	e = &tab[i];
	e->used = 1;
	e->key = k;
	count++;
	return e;
}

void track_add(MPI_Request req, bool persistent, bool active)
{
	if (req == MPI_REQUEST_NULL)
		return;
	pthread_mutex_lock(&track_lock);
	struct entry *e = entry_for(key_of(req));
	if (!e) {
		pthread_mutex_unlock(&track_lock);
		pmpi_warn("out of memory: request not tracked (no background progress for it)");
		return;
	}
	e->persistent = persistent;
	e->active = active;
	pthread_mutex_unlock(&track_lock);
	atomic_fetch_add(&pmpi_g.tracked, 1);
	if (active && atomic_fetch_add(&pending, 1) == 0)
		progress_kick();
}

void track_foreign(MPI_Request req, bool persistent)
{
	if (req == MPI_REQUEST_NULL)
		return;
	pthread_mutex_lock(&track_lock);
	struct entry *e = entry_for(key_of(req));
	if (e) {
		e->persistent = persistent;
		e->foreign = 1;
		atomic_fetch_add(&nforeign, 1);
	}
	pthread_mutex_unlock(&track_lock);
	if (!e)
		pmpi_warn("out of memory: a %s request may be waited for through the engine",
		          "generalized, one-sided or partitioned");
	/* Counted with the tracked ones: completion calls then look at the
	 * table and forget the entry when the request completes. */
	atomic_fetch_add(&pmpi_g.tracked, 1);
}

bool track_any_foreign(const MPI_Request *reqs, int n)
{
	if (!atomic_load(&nforeign))
		return false;
	bool found = false;
	pthread_mutex_lock(&track_lock);
	for (int i = 0; i < n && !found; i++) {
		struct entry *e = reqs[i] == MPI_REQUEST_NULL ? NULL : find(key_of(reqs[i]));
		found = e && e->foreign;
	}
	pthread_mutex_unlock(&track_lock);
	return found;
}

void track_start(MPI_Request req)
{
	bool kick = false;
	pthread_mutex_lock(&track_lock);
	struct entry *e = find(key_of(req));
	if (e && !e->active && !e->foreign) {
		e->active = 1;
		kick = atomic_fetch_add(&pending, 1) == 0;
	}
	pthread_mutex_unlock(&track_lock);
	if (kick)
		progress_kick();
}

static void drop(MPI_Request req, bool forget)
{
	pthread_mutex_lock(&track_lock);
	struct entry *e = find(key_of(req));
	if (e) {
		if (e->active)
			atomic_fetch_sub(&pending, 1);
		e->active = 0;
		if (forget || !e->persistent)
			erase(e);
	}
	pthread_mutex_unlock(&track_lock);
}

void track_done(MPI_Request req) { drop(req, false); }
void track_forget(MPI_Request req) { drop(req, true); }

long track_pending(void) { return atomic_load(&pending); }

void track_completed(const MPI_Request *before, int n, const int *done_idx, int ndone)
{
	if (!atomic_load_explicit(&pmpi_g.tracked, memory_order_relaxed))
		return; /* nothing was ever tracked: skip the lock */
	for (int d = 0; d < ndone; d++) {
		int i = done_idx ? done_idx[d] : d;
		if (i >= 0 && i < n && before[i] != MPI_REQUEST_NULL)
			track_done(before[i]);
	}
}

void track_settle(const MPI_Request *before, const MPI_Request *after, int n,
                  const MPI_Status *statuses)
{
	pthread_mutex_lock(&track_lock);
	for (int i = 0; i < n; i++) {
		if (before[i] == MPI_REQUEST_NULL)
			continue;
		struct entry *e = find(key_of(before[i]));
		if (!e)
			continue;
		if (after[i] == MPI_REQUEST_NULL || !e->persistent) {
			/* A non-persistent handle left as it was is a request
			 * the call did not complete (MPI_ERR_PENDING). */
			if (after[i] == MPI_REQUEST_NULL) {
				if (e->active)
					atomic_fetch_sub(&pending, 1);
				erase(e);
			}
			continue;
		}
		/* Persistent: completed unless its status says pending. Without
		 * statuses, inactive: at worst a request still in flight loses
		 * background progress until its next wait, which the engine's
		 * never stopping would not be worth. */
		if (statuses && statuses[i].MPI_ERROR == MPI_ERR_PENDING)
			continue;
		if (e->active)
			atomic_fetch_sub(&pending, 1);
		e->active = 0;
	}
	pthread_mutex_unlock(&track_lock);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Table of the requests piano tracks (those that need background progress:
 * sends above the eager limit, receives, collectives). Keyed by the handle's
 * bits (an int in MPICH, a pointer in Open MPI). It is touched once per
 * tracked operation and once per completion call, never on the polling
 * path; `pending` (active tracked requests) is read lock-free by piano's
 * threads.
 *
 * Protocol: every function here is called from an application's MPI call
 * (piano's threads read `pending` and nothing else). One mutex protects
 * the table, `native_in` and `held` (table_lock()), except in serialized
 * mode: there the application makes one MPI call at a time (it asked for
 * MPI_THREAD_SERIALIZED or less, and its own synchronization orders its
 * threads' calls), which orders every use of them, so the lock is skipped
 * (with it, a 64 KiB exchange costs six lock pairs, a fifth of piano's
 * instructions on it). pmpi_g.serial is set by MPI_Init_thread before any
 * request exists.
 */
#include "track.h"
#include "reqtab.h"

#include <pthread.h>
#include <string.h>

static pthread_mutex_t track_lock = PTHREAD_MUTEX_INITIALIZER;
static struct reqtab tab; /* under table_lock() */

/* Returns whether it locked: pass that to table_unlock(). */
static bool table_lock(void)
{
	if (pmpi_g.serial)
		return false;
	pthread_mutex_lock(&track_lock);
	return true;
}

static void table_unlock(bool locked)
{
	if (locked)
		pthread_mutex_unlock(&track_lock);
}
static _Atomic long pending;
static _Atomic long nforeign; /* foreign entries: a lock-free "none" check */

static uint64_t key_of(MPI_Request r)
{
	uint64_t k = 0;
	memcpy(&k, &r, sizeof(r) < sizeof(k) ? sizeof(r) : sizeof(k));
	return k;
}

/*
 * The MPI layer's hold on the timer (PIANO_TIMER_MODE=demand: the timer
 * ticks while a tracked request is in flight, docs/mpi.md, "Do no harm"):
 * wanted while `pending` is not 0 and no application thread is in a native
 * wait that set it aside (track_native_wait_begin()). `pending` changes only
 * under table_lock(), here, and so do `native_in` and `held`: the lock keeps
 * hold and release in the order of the transitions. */
static int native_in; /* under table_lock() */
static bool held;     /* under table_lock(): the hold is taken */

static void hold_sync(void)
{
	bool want = atomic_load_explicit(&pending, memory_order_relaxed) > 0 && native_in == 0;
	if (want && !held)
		piano_timer_hold(PIANO_TIMER_PREDICTED);
	else if (!want && held)
		piano_timer_release(PIANO_TIMER_PREDICTED);
	held = want;
}

/* Returns whether the count left 0. */
static bool pending_add(void)
{
	if (atomic_fetch_add(&pending, 1) != 0) {
		/* Under the hold already: a timer that backed off while the
		 * others waited for their peers ticks for this one at once. */
		piano_timer_renew();
		return false;
	}
	hold_sync();
	return true;
}

static void pending_sub(void)
{
	if (atomic_fetch_sub(&pending, 1) == 1)
		hold_sync();
}

bool track_native_wait_begin(void)
{
	if (!atomic_load_explicit(&pending, memory_order_relaxed))
		return false;
	bool locked = table_lock();
	native_in++;
	hold_sync();
	table_unlock(locked);
	return true;
}

void track_native_wait_end(void)
{
	bool locked = table_lock();
	native_in--;
	hold_sync();
	table_unlock(locked);
}

static struct reqtab_entry *find(MPI_Request r) { return reqtab_find(&tab, key_of(r)); }

_Atomic long track_entries; /* track.h */

static void erase(struct reqtab_entry *e)
{
	if (e->foreign)
		atomic_fetch_sub(&nforeign, 1);
	reqtab_erase(&tab, e);
	atomic_store_explicit(&track_entries, (long)tab.count, memory_order_relaxed);
}

/* The entry of r, created if needed (NULL when out of memory). Called under
 * table_lock(). A handle the MPI reuses keeps its slot: what the entry
 * said of the old request is undone. */
static struct reqtab_entry *entry_for(MPI_Request r)
{
	bool created;
	struct reqtab_entry *e = reqtab_get(&tab, key_of(r), &created);
	if (created)
		atomic_store_explicit(&track_entries, (long)tab.count, memory_order_relaxed);
	if (!e || created)
		return e;
	if (e->active)
		pending_sub(); /* stale entry of a reused handle */
	if (e->foreign)
		atomic_fetch_sub(&nforeign, 1);
	e->active = e->foreign = 0;
	return e;
}

bool track_add(MPI_Request req, bool persistent, bool active)
{
	if (req == MPI_REQUEST_NULL)
		return false;
	bool locked = table_lock();
	struct reqtab_entry *e = entry_for(req);
	if (!e) {
		table_unlock(locked);
		pmpi_warn("out of memory: request not tracked (no background progress for it)");
		return false;
	}
	e->persistent = persistent;
	e->active = active;
	bool first = active && pending_add();
	table_unlock(locked);
	atomic_fetch_add(&pmpi_g.tracked, 1);
	return first;
}

void track_foreign(MPI_Request req, bool persistent)
{
	if (req == MPI_REQUEST_NULL)
		return;
	bool locked = table_lock();
	struct reqtab_entry *e = entry_for(req);
	if (e) {
		e->persistent = persistent;
		e->foreign = 1;
		atomic_fetch_add(&nforeign, 1);
	}
	table_unlock(locked);
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
	bool locked = table_lock();
	for (int i = 0; i < n && !found; i++) {
		struct reqtab_entry *e = reqs[i] == MPI_REQUEST_NULL ? NULL : find(reqs[i]);
		found = e && e->foreign;
	}
	table_unlock(locked);
	return found;
}

bool track_start(MPI_Request req)
{
	bool kick = false;
	bool locked = table_lock();
	struct reqtab_entry *e = find(req);
	if (e && !e->active && !e->foreign) {
		e->active = 1;
		kick = pending_add();
	}
	table_unlock(locked);
	return kick;
}

/* Under table_lock(). */
static void drop_locked(MPI_Request req, bool forget)
{
	struct reqtab_entry *e = find(req);
	if (e) {
		if (e->active)
			pending_sub();
		e->active = 0;
		if (forget || !e->persistent)
			erase(e);
	}
}

static void drop(MPI_Request req, bool forget)
{
	bool locked = table_lock();
	drop_locked(req, forget);
	table_unlock(locked);
}

void track_done(MPI_Request req) { drop(req, false); }
void track_forget(MPI_Request req) { drop(req, true); }

long track_pending(void) { return atomic_load(&pending); }

void track_completed(const MPI_Request *before, int n, const int *done_idx, int ndone)
{
	if (!track_any())
		return; /* an empty table: skip the lock */
	/* One lock for the call's requests, not one each. */
	bool locked = table_lock();
	for (int d = 0; d < ndone; d++) {
		int i = done_idx ? done_idx[d] : d;
		if (i >= 0 && i < n && before[i] != MPI_REQUEST_NULL)
			drop_locked(before[i], false);
	}
	table_unlock(locked);
}

void track_settle(const MPI_Request *before, const MPI_Request *after, int n,
                  const MPI_Status *statuses)
{
	bool locked = table_lock();
	for (int i = 0; i < n; i++) {
		if (before[i] == MPI_REQUEST_NULL)
			continue;
		struct reqtab_entry *e = find(before[i]);
		if (!e)
			continue;
		if (after[i] == MPI_REQUEST_NULL || !e->persistent) {
			/* A non-persistent handle left as it was is a request
			 * the call did not complete (MPI_ERR_PENDING). */
			if (after[i] == MPI_REQUEST_NULL) {
				if (e->active)
					pending_sub();
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
			pending_sub();
		e->active = 0;
	}
	table_unlock(locked);
}

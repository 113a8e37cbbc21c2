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
/* Active entries not `finished`: what the progress task, the timer's hold
 * and the socket watcher wait for. */
static _Atomic long pending;
/* Active entries `finished` (changed with `finished`); for PIANO_STATS. */
static _Atomic long nfinished;
/* Pending point-to-point entries, those track_check_finished() asks about:
 * without one it skips its walk of the table. Under table_lock(). */
static long npending_p2p;
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

/* Under table_lock(): the entry no longer active (a finished one was not
 * pending any more). */
static void deactivate(struct reqtab_entry *e)
{
	if (e->active && !e->finished) {
		npending_p2p -= e->p2p;
		pending_sub();
	} else if (e->active)
		atomic_fetch_sub_explicit(&nfinished, 1, memory_order_relaxed);
	e->active = e->finished = 0;
}

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
	deactivate(e); /* stale entry of a reused handle */
	if (e->foreign)
		atomic_fetch_sub(&nforeign, 1);
	e->foreign = e->p2p = 0;
	return e;
}

bool track_add(MPI_Request req, bool persistent, bool active, bool p2p)
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
	e->p2p = p2p;
	npending_p2p += active && p2p;
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
		e->finished = 0;
		npending_p2p += e->p2p;
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
		deactivate(e);
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

long track_active(void)
{
	return atomic_load(&pending) + atomic_load_explicit(&nfinished, memory_order_relaxed);
}

/* Owned by the progress task (it runs on one thread at a time): the slot
 * where the previous track_check_finished() stopped. */
static size_t check_cursor;

unsigned track_check_finished(void)
{
	/* Only in serialized mode: there the gate, which the caller holds,
	 * keeps every application MPI call out, and with them every change
	 * of the table and every completion that frees a request; its
	 * acquire (gate_enter) makes the application's last changes visible.
	 * At MPI_THREAD_MULTIPLE an application thread could free a request
	 * between our look at its entry and the MPI's answer. */
	if (!pmpi_g.serial || !npending_p2p)
		return 0;
	unsigned found = 0;
	size_t cap = tab.cap;
	for (size_t n = 0; n < cap && npending_p2p > 0; n++) {
		size_t i = (check_cursor + n) & (cap - 1);
		struct reqtab_entry *e = &tab.slots[i];
		if (!e->used || !e->active || e->finished || !e->p2p || e->foreign)
			continue;
		MPI_Request r = MPI_REQUEST_NULL;
		memcpy(&r, &e->key, sizeof(r) < sizeof(e->key) ? sizeof(r) : sizeof(e->key));
		int flag = 0;
		/* Not finished: stop here, the next call begins with it. One
		 * request still in flight keeps the engine busy anyway, and
		 * the MPI makes a progress call for each unfinished one. */
		if (PMPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS || !flag) {
			check_cursor = i;
			break;
		}
		e->finished = 1;
		npending_p2p--;
		atomic_fetch_add_explicit(&nfinished, 1, memory_order_relaxed);
		pending_sub();
		found++;
	}
	if (found)
		atomic_fetch_add_explicit(&pmpi_g.finished_early, found, memory_order_relaxed);
	return found;
}

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
				deactivate(e);
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
		deactivate(e);
	}
	table_unlock(locked);
}

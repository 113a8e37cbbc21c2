/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Table of the requests piano tracks (those that need background progress:
 * sends above the eager limit, receives, collectives). Keyed by the handle's
 * bits (an int in MPICH, a pointer in Open MPI). It is touched once per
 * tracked operation and once per completion call, never on the polling
 * path; `pending` (active tracked requests) is read lock-free by piano's
 * threads.
 *
 * Protocol: every function here is called from an application's MPI call,
 * except track_check_finished(), the progress task's (piano's other threads
 * read `pending` and nothing else). One mutex protects
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

#include "starve.h"
#include "sys.h"

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
 * without one it skips its walk of the table. Written under table_lock()
 * (p2p_add), read relaxed by the check at MPI_THREAD_MULTIPLE before it
 * raises its side of the door. */
static _Atomic long npending_p2p;

static void p2p_add(long d)
{
	long v = atomic_load_explicit(&npending_p2p, memory_order_relaxed);
	atomic_store_explicit(&npending_p2p, v + d, memory_order_relaxed);
}

static long p2p_pending(void) { return atomic_load_explicit(&npending_p2p, memory_order_relaxed); }
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
		p2p_add(-(long)e->p2p);
		pending_sub();
	} else if (e->active)
		atomic_fetch_sub_explicit(&nfinished, 1, memory_order_relaxed);
	e->active = e->finished = 0;
}

_Atomic long track_entries; /* track.h */

/* track_entries from the table's count, and pmpi_watch_n by the change
 * (under table_lock(): one writer). */
static void entries_update(void)
{
	long n = (long)tab.count;
	long old = atomic_load_explicit(&track_entries, memory_order_relaxed);
	atomic_store_explicit(&track_entries, n, memory_order_relaxed);
	if (n != old)
		pmpi_watch_add(n - old);
}

static void erase(struct reqtab_entry *e)
{
	if (e->foreign)
		atomic_fetch_sub(&nforeign, 1);
	reqtab_erase(&tab, e);
	entries_update();
}

/* The entry of r, created if needed (NULL when out of memory). Called under
 * table_lock(). A handle the MPI reuses keeps its slot: what the entry
 * said of the old request is undone. */
static struct reqtab_entry *entry_for(MPI_Request r)
{
	bool created;
	struct reqtab_entry *e = reqtab_get(&tab, key_of(r), &created);
	if (created)
		entries_update();
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
	p2p_add(active && p2p);
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
		p2p_add(e->p2p);
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

/* Under table_lock(): marks e finished (no longer pending). */
static void mark_finished(struct reqtab_entry *e)
{
	e->finished = 1;
	p2p_add(-1);
	atomic_fetch_add_explicit(&nfinished, 1, memory_order_relaxed);
	pending_sub();
}

static bool checkable(const struct reqtab_entry *e)
{
	return e->used && e->active && !e->finished && e->p2p && !e->foreign;
}

static MPI_Request handle_of(const struct reqtab_entry *e)
{
	MPI_Request r = MPI_REQUEST_NULL;
	memcpy(&r, &e->key, sizeof(r) < sizeof(e->key) ? sizeof(r) : sizeof(e->key));
	return r;
}

/* Serialized mode: the gate, which the caller holds, keeps every
 * application MPI call out, and with them every change of the table and
 * every completion that frees a request; its acquire (gate_enter) makes
 * the application's last changes visible. */
static unsigned check_serial(void)
{
	unsigned found = 0;
	size_t cap = tab.cap;
	for (size_t n = 0; n < cap && p2p_pending() > 0; n++) {
		size_t i = (check_cursor + n) & (cap - 1);
		struct reqtab_entry *e = &tab.slots[i];
		if (!checkable(e))
			continue;
		int flag = 0;
		/* Not finished: stop here, the next call begins with it. One
		 * request still in flight keeps the engine busy anyway, and
		 * the MPI makes a progress call for each unfinished one. */
		if (PMPI_Request_get_status(handle_of(e), &flag, MPI_STATUS_IGNORE) !=
		            MPI_SUCCESS ||
		    !flag) {
			check_cursor = i;
			break;
		}
		mark_finished(e);
		found++;
	}
	return found;
}

/*
 * MPI_THREAD_MULTIPLE: the door. An application thread may free a request
 * (a completion call, MPI_Request_free) while the check asks the MPI about
 * it, so the two exclude each other: a completion call that may complete a
 * tracked request counts itself in `completing` before the MPI's call and
 * until the table has forgotten what it completed (track_door_enter/leave);
 * the check raises `checking`, then reads `completing`, and asks only if it
 * is 0, stopping as soon as a call comes in.
 *   enter: completing++, then wait while checking.
 *   check: checking = 1, then read completing; if non-zero, checking = 0.
 * Both writes and both reads are seq_cst (the store-load pattern needs the
 * single total order): either the check sees the call and asks nothing, or
 * the call sees the check and waits until it has cleared `checking`, which
 * it does after at most one more MPI_Request_get_status (it re-reads
 * `completing` after each). The check may run on an idle thread at
 * SCHED_IDLE: it marks itself inside a progress call (starve_begin()), and
 * a call that waits for it long raises it (starve_relieve()). A completion
 * call that found the table empty (track_any() false) takes no door: none
 * of its requests has an entry. The check does not hold the table's lock
 * while it calls the MPI (a progress call there must not wait for our
 * lock): it copies a handle under the lock, asks, and marks the entry
 * found again under the lock.
 */
static _Atomic int completing;
static _Atomic int checking;

bool track_door_enter(void)
{
	if (pmpi_g.serial || !pmpi_g.threaded)
		return false;
	atomic_fetch_add(&completing, 1); /* seq_cst: the door's first half */
	/* seq_cst loads: its second. The check may run on an idle thread at
	 * SCHED_IDLE, preempted by this very thread: after a short spin, raise
	 * it (it is marked inside, starve_begin()) or give it the CPU. */
	for (unsigned spins = 0; atomic_load(&checking); spins++) {
		if (spins < 256)
			sys_cpu_relax();
		else if (spins == 256)
			starve_relieve();
		else if (spins < 512)
			sys_yield();
		else
			sys_sleep_ns(20000);
	}
	return true;
}

void track_door_leave(bool entered)
{
	/* Release: the table's updates of this call come before the check
	 * can see the door free (it re-takes the table's lock anyway). */
	if (entered)
		atomic_fetch_sub_explicit(&completing, 1, memory_order_release);
}

/* The next checkable entry from the cursor, its handle in *r; false when
 * there is none. Under table_lock(). */
static bool next_checkable(MPI_Request *r)
{
	size_t cap = tab.cap;
	for (size_t n = 0; n < cap && p2p_pending() > 0; n++) {
		size_t i = (check_cursor + n) & (cap - 1);
		if (checkable(&tab.slots[i])) {
			check_cursor = i;
			*r = handle_of(&tab.slots[i]);
			return true;
		}
	}
	return false;
}

static unsigned check_multiple(void)
{
	struct poker *me = starve_begin(); /* a door's waiter may raise us */
	atomic_store(&checking, 1);        /* seq_cst: see the door */
	unsigned found = 0;
	long budget = -1; /* pending p2p entries at the start: one pass at most */
	while (!atomic_load(&completing) && budget != 0) {
		MPI_Request r;
		bool locked = table_lock();
		if (budget < 0)
			budget = p2p_pending();
		bool any = next_checkable(&r);
		table_unlock(locked);
		if (!any)
			break;
		budget--;
		int flag = 0;
		if (PMPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS || !flag)
			break; /* the next call begins with it, as in serialized mode */
		locked = table_lock();
		/* The door kept every free out: the handle is still this entry's
		 * request. */
		struct reqtab_entry *e = find(r);
		if (e && checkable(e)) {
			mark_finished(e);
			found++;
		}
		table_unlock(locked);
	}
	atomic_store_explicit(&checking, 0, memory_order_release);
	starve_end(me);
	return found;
}

unsigned track_check_finished(void)
{
	unsigned found;
	if (!p2p_pending())
		return 0;
	if (pmpi_g.serial)
		found = check_serial();
	else if (pmpi_g.threaded)
		found = check_multiple();
	else
		return 0;
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

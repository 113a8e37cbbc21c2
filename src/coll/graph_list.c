/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The running graphs of the process, advanced in the background by the MPI
 * layer's progress task (progress.c calls graphs_progress()): a graph's
 * requests are the graph's own, never the application's, so the engine may
 * test them (docs/mpi.md, the tracking rule; docs/coll.md).
 *
 * Locks: `list_lock` protects the list and each graph's links and `listed`.
 * Order: a graph's lock, then the list's (start and a finishing test/wait).
 * The progress task takes them the other way round but only with trylock,
 * so it never waits while holding one: no deadlock, and the application's
 * thread is never blocked behind a background step for long.
 */
#include "graph_list.h"
#include "graph_hold.h"
#include "graph_internal.h"

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
static piano_graph_t *head; /* protected by list_lock */
static _Atomic long nrunning;

void graph_list_add(piano_graph_t *g)
{
	pthread_mutex_lock(&list_lock);
	g->prev = NULL;
	g->next = head;
	if (head)
		head->prev = g;
	head = g;
	g->listed = true;
	/* seq_cst: read by has_work() (progress.c). The timer's hold
	 * (graph_hold.c) follows the runs: a running graph is in flight
	 * (docs/mpi.md, "Do no harm"). */
	atomic_fetch_add(&nrunning, 1);
	graph_hold_run(1);
	pthread_mutex_unlock(&list_lock);
}

static void unlink_locked(piano_graph_t *g)
{
	if (!g->listed)
		return;
	if (g->prev)
		g->prev->next = g->next;
	else
		head = g->next;
	if (g->next)
		g->next->prev = g->prev;
	g->next = g->prev = NULL;
	g->listed = false;
	atomic_fetch_sub(&nrunning, 1);
	graph_hold_run(-1);
}

void graph_list_remove(piano_graph_t *g)
{
	pthread_mutex_lock(&list_lock);
	unlink_locked(g);
	pthread_mutex_unlock(&list_lock);
}

long graphs_running(void) { return atomic_load(&nrunning); }

/* Relaxed: a hint for the background step; missing a driver that has just
 * arrived costs one step that may take the list from it, nothing more. */
static _Atomic int ndrivers;

void graphs_drive_begin(void) { atomic_fetch_add_explicit(&ndrivers, 1, memory_order_relaxed); }

void graphs_drive_end(void) { atomic_fetch_sub_explicit(&ndrivers, 1, memory_order_relaxed); }

bool graphs_driven(void) { return atomic_load_explicit(&ndrivers, memory_order_relaxed) > 0; }

unsigned graphs_progress(void)
{
	enum { MAX_ENDS = 16 };
	struct graph_end ends[MAX_ENDS];
	int nends = 0;
	if (!atomic_load_explicit(&nrunning, memory_order_relaxed))
		return 0;
	if (pthread_mutex_trylock(&list_lock))
		return 0; /* another thread is at it, or a graph starts or ends */
	unsigned work = 0;
	/* Stops when the hooks' array is full: the rest waits for the next
	 * step, after the hooks ran outside every lock. */
	for (piano_graph_t *g = head, *next; g && nends < MAX_ENDS; g = next) {
		next = g->next;
		if (pthread_mutex_trylock(&g->lock))
			continue; /* its owner's thread advances it right now */
		work += graph_advance(g);
		if (graph_ended(g)) {
			ends[nends++] = graph_end_of(g);
			unlink_locked(g);
			graph_publish(g);
		}
		pthread_mutex_unlock(&g->lock);
	}
	pthread_mutex_unlock(&list_lock);
	for (int i = 0; i < nends; i++)
		graph_end_call(ends[i]);
	return work;
}

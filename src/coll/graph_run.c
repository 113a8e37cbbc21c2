/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Running a graph, the application's side: start, test and wait. Steps
 * (graph_step.c) run from here under the graph's lock and from the progress
 * task (graph_list.c); whichever step ends the run takes the graph off the
 * running list, then publishes its final state.
 */
#include "graph_internal.h"
#include "graph_list.h"
#include "ltask.h"
#include "progress.h"
#include "sys.h"
#include "waiters.h"

#include <pthread.h>

/* A step from the application's thread, under g->lock; the maker's hook
 * of a run it ended, for the caller to call once unlocked. */
static struct graph_end step(piano_graph_t *g)
{
	struct graph_end end = { NULL, NULL, NULL };
	graph_advance(g);
	if (graph_ended(g)) {
		end = graph_end_of(g);
		graph_list_remove(g);
		graph_publish(g);
	}
	return end;
}

int piano_graph_start(piano_graph_t *g)
{
	if (!g)
		return PIANO_EINVAL;
	pthread_mutex_lock(&g->lock);
	int st = atomic_load_explicit(&g->state, memory_order_acquire);
	if (st != GRAPH_READY && st != GRAPH_DONE && st != GRAPH_FAILED) {
		pthread_mutex_unlock(&g->lock);
		return PIANO_ESTATE;
	}
	graph_arm(g);
	/* Listed before its first step: that step may finish it, and
	 * finishing unlinks it. The list's lock orders the counts stored above
	 * before any step of the progress task. */
	graph_list_add(g);
	struct graph_end end = step(g);
	pthread_mutex_unlock(&g->lock);
	graph_end_call(end);
	progress_kick();
	return 0;
}

/* The caller's result for a graph that is no longer running. */
static int graph_result(const piano_graph_t *g, int st)
{
	if (st == GRAPH_DONE)
		return 0;
	const struct graph_node *n = g->err_node >= 0 ? &g->nodes[g->err_node] : NULL;
	return n && n->kind == NODE_CALC ? PIANO_ECANCELED : PIANO_ESYS;
}

int piano_graph_test(piano_graph_t *g, int *flag)
{
	if (!g || !flag)
		return PIANO_EINVAL;
	int st = atomic_load_explicit(&g->state, memory_order_acquire);
	if (st == GRAPH_BUILD || st == GRAPH_READY)
		return PIANO_ESTATE;
	if (st == GRAPH_RUNNING && pthread_mutex_trylock(&g->lock) == 0) {
		struct graph_end end = step(g);
		pthread_mutex_unlock(&g->lock);
		graph_end_call(end);
		st = atomic_load_explicit(&g->state, memory_order_acquire);
	}
	if (st == GRAPH_RUNNING) {
		*flag = 0;
		return 0;
	}
	int rc = graph_result(g, st);
	if (!rc)
		*flag = 1;
	return rc;
}

/* Registers c as g's sleeper: false when g no longer runs or another
 * thread already sleeps on it. Under g->lock, where the run's end takes
 * the sleeper before it publishes the final state, so the end cannot be
 * missed. */
static bool sleeper_set(piano_graph_t *g, piano_cond_t *c)
{
	bool set = false;
	pthread_mutex_lock(&g->lock);
	if (atomic_load_explicit(&g->state, memory_order_relaxed) == GRAPH_RUNNING && !g->sleeper) {
		piano_cond_init(c, 0);
		g->sleeper = c;
		set = true;
	}
	pthread_mutex_unlock(&g->lock);
	return set;
}

/*
 * By the rule of the MPI layer's waits (waitop.h, and wait.c for graph
 * collectives): a waiter drives its graph itself, and the other running
 * graphs, back to back as an MPI wait spins, counted as a native waiter,
 * and wakes the threads asleep on them. A thread that found another
 * already waiting when it came, once it has stepped for
 * GRAPH_SLEEP_AFTER_NS, registers as the graph's sleeper and sleeps until
 * the run ends (after PIANO_SPIN_US of polling through the engine), while
 * a stepping waiter or piano's progress task advances the graph: N threads
 * waiting long cost one poller. Without background progress every waiter
 * steps throughout.
 */
int piano_graph_wait(piano_graph_t *g)
{
	if (!g)
		return PIANO_EINVAL;
	int st = atomic_load_explicit(&g->state, memory_order_acquire);
	if (st == GRAPH_BUILD || st == GRAPH_READY)
		return PIANO_ESTATE;
	if (st != GRAPH_RUNNING)
		return graph_result(g, st);
	bool may_sleep = !waiters_enter() && pmpi_g.threaded && !pmpi_g.serial &&
	                 !ltask_current_tls;
	uint64_t since = may_sleep ? sys_now_ns() : 0;
	bool native = true;
	waiters_go_native();
	graphs_drive_begin();
	while (st == GRAPH_RUNNING) {
		pthread_mutex_lock(&g->lock);
		struct graph_end end = step(g);
		pthread_mutex_unlock(&g->lock);
		graph_end_call(end);
		st = atomic_load_explicit(&g->state, memory_order_acquire);
		if (st != GRAPH_RUNNING)
			break;
		if (graphs_running() > 1) {
			graphs_progress();
			st = atomic_load_explicit(&g->state, memory_order_acquire);
		}
		if (waiters_pending())
			waiters_progress();
		if (!may_sleep || sys_now_ns() - since < GRAPH_SLEEP_AFTER_NS)
			continue;
		may_sleep = false;
		piano_cond_t asleep;
		if (!sleeper_set(g, &asleep))
			continue;
		graphs_drive_end();
		waiters_delegate();
		native = false;
		progress_kick();
		/* Fails only inside an ltask, which this is not; even then the
		 * end's signal is on its way and the cond must outlive it.
		 * The state was published before the signal. */
		if (piano_cond_wait(&asleep, 1))
			while (piano_cond_test(&asleep, 1))
				sys_yield();
		st = atomic_load_explicit(&g->state, memory_order_acquire);
	}
	if (native)
		graphs_drive_end();
	waiters_leave(native);
	return graph_result(g, st);
}

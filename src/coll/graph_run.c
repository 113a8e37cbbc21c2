/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Running a graph, the application's side: start, test and wait. Steps
 * (graph_step.c) run from here under the graph's lock and from the progress
 * task (graph_list.c); whichever step ends the run takes the graph off the
 * running list, then publishes its final state.
 */
#include "graph_internal.h"
#include "graph_list.h"
#include "progress.h"

#include <pthread.h>

/* A step from the application's thread, under g->lock; the maker's hook
 * of a run it ended, for the caller to call once unlocked. */
static struct graph_end step(piano_graph_t *g)
{
	struct graph_end end = { NULL, NULL };
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

int piano_graph_wait(piano_graph_t *g)
{
	if (!g)
		return PIANO_EINVAL;
	int st = atomic_load_explicit(&g->state, memory_order_acquire);
	if (st == GRAPH_BUILD || st == GRAPH_READY)
		return PIANO_ESTATE;
	/* The waiting thread drives its graph itself, as an MPI wait does. */
	while (st == GRAPH_RUNNING) {
		pthread_mutex_lock(&g->lock);
		struct graph_end end = step(g);
		pthread_mutex_unlock(&g->lock);
		graph_end_call(end);
		st = atomic_load_explicit(&g->state, memory_order_acquire);
	}
	return graph_result(g, st);
}

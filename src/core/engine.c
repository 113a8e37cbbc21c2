/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Engine life cycle (piano_init, piano_finalize: the configuration, the
 * queue tree, the threads) and introspection. The top layer: it may call
 * every other file (docs/architecture.md, "Layers").
 */
#include "config.h"
#include "handoff.h"
#include "helpers.h"
#include "idle.h"
#include "location.h"
#include "ltask.h"
#include "park.h"
#include "policy.h"
#include "settings_internal.h"
#include "queue.h"
#include "stats.h"
#include "timer.h"
#include "topo.h"
#include "warn.h"
#include "sys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

_Atomic(struct piano_engine *) piano_engine_g;

static pthread_mutex_t init_lock = PTHREAD_MUTEX_INITIALIZER;
static int init_refcount;   /* protected by init_lock */
static unsigned gen_counter; /* protected by init_lock */

/* ------------------------------------------------------------ life cycle */

/* After a failed start too: stops whatever threads started. */
static void threads_stop(struct piano_engine *e)
{
	atomic_store_explicit(&e->stopping, 1, memory_order_release);
	park_wake(e);
	idle_stop(e);
	timer_stop(e);
	helpers_stop(e);   /* they hand their tasks back to the queues */
	handoff_destroy(&e->handoff);
}

static int threads_start(struct piano_engine *e)
{
	handoff_init(&e->handoff);
	if (!e->cfg.progression)
		return 0;
	int rc = idle_start(e);
	if (!rc)
		rc = timer_start(e);
	if (!rc)
		rc = helpers_start(e);
	if (rc)
		threads_stop(e);
	return rc;
}

/* piano is already initialised: overrides cannot change it any more. */
static void report_late_overrides(const struct piano_override *ov, int n)
{
	for (int i = 0; ov && i < n; i++)
		if (ov[i].name && ov[i].value && settings_differs(ov[i].name, ov[i].value))
			piano_warn("piano_init_with: piano is already initialised; %s='%s' not "
			           "applied (the first piano_init() fixed the settings)",
			           ov[i].name, ov[i].value);
}

PIANO_API int piano_init_with(const struct piano_override *overrides, int n)
{
	int rc;
	pthread_mutex_lock(&init_lock);
	if (init_refcount > 0) {
		report_late_overrides(overrides, n);
		init_refcount++;
		pthread_mutex_unlock(&init_lock);
		return 0;
	}
	rc = settings_load(overrides, n);
	if (rc)
		goto undo_lock;
	piano_settings_check_env();
	struct piano_engine *e = calloc(1, sizeof(*e));
	rc = PIANO_ENOMEM;
	if (!e)
		goto undo_settings;
	rc = config_load(&e->cfg);
	if (rc)
		goto undo_alloc;
	rc = topo_build(e);
	if (rc)
		goto undo_alloc;
	e->gen = ++gen_counter;
	pthread_mutex_init(&e->stats_lock, NULL);
	timer_init(e);
	atomic_store_explicit(&piano_engine_g, e, memory_order_release);
	rc = threads_start(e);
	if (rc)
		goto undo_publish;
	init_refcount = 1;
	pthread_mutex_unlock(&init_lock);
	return 0;

undo_publish:
	atomic_store_explicit(&piano_engine_g, NULL, memory_order_release);
	stats_free_all(e);
	timer_destroy(e);
	pthread_mutex_destroy(&e->stats_lock);
	topo_free(e);
undo_alloc:
	free(e);
undo_settings:
	settings_unload();
undo_lock:
	pthread_mutex_unlock(&init_lock);
	return rc;
}

PIANO_API int piano_init(void) { return piano_init_with(NULL, 0); }

static bool drain_pending(struct piano_engine *e)
{
	return queue_any_busy(e) ||
	       atomic_load(&e->handoff.nfree) < e->nhelpers;
}

/* Runs pending tasks from the calling thread until none is left or the
 * deadline passes. */
static void drain(struct piano_engine *e, uint64_t deadline)
{
	struct poller p;
	poller_init(&p, e, PIANO_POINT_EXPLICIT);
	while (drain_pending(e) && sys_now_ns() < deadline) {
		unsigned work = poll_all(&p);
		poller_end_round(&p, work);
		if (!work)
			sys_yield();
	}
}

static void report_leftovers(struct piano_engine *e)
{
	for (int i = 0; i < e->nqueues; i++) {
		struct piano_queue *q = &e->queues[i];
		long n = atomic_load(&q->nlive);
		if (!n)
			continue;
		piano_warn("finalize: %ld ltask(s) still pending in queue %d after "
		           "PIANO_FINALIZE_TIMEOUT_MS=%ld; they are left unrun and not freed",
		           n, i, e->cfg.finalize_timeout_ms);
		for (struct piano_ltask *t = q->head; t; t = t->next)
			piano_warn("  pending ltask '%s'", t->name[0] ? t->name : "(unnamed)");
	}
}

PIANO_API int piano_finalize(void)
{
	pthread_mutex_lock(&init_lock);
	if (init_refcount == 0) {
		pthread_mutex_unlock(&init_lock);
		return PIANO_ENOTINIT;
	}
	if (--init_refcount > 0) {
		pthread_mutex_unlock(&init_lock);
		return 0;
	}
	struct piano_engine *e = engine_get();
	uint64_t deadline = sys_now_ns() + (uint64_t)e->cfg.finalize_timeout_ms * 1000000u;
	drain(e, deadline);
	if (e->cfg.stats)
		piano_stats_print(); /* while the thread counts are still live */
	threads_stop(e);   /* helpers hand their tasks back to the queues */
	drain(e, deadline);
	report_leftovers(e);
	atomic_store_explicit(&piano_engine_g, NULL, memory_order_release);
	stats_free_all(e);
	timer_destroy(e);
	pthread_mutex_destroy(&e->stats_lock);
	topo_free(e);
	free(e);
	settings_unload();
	pthread_mutex_unlock(&init_lock);
	return 0;
}

PIANO_API int piano_initialized(void) { return engine_get() != NULL; }

/* --------------------------------------------------------- introspection */

PIANO_API int piano_queue_count(int *n)
{
	struct piano_engine *e = engine_get();
	if (!n)
		return PIANO_EINVAL;
	if (!e)
		return PIANO_ENOTINIT;
	*n = e->nqueues;
	return 0;
}

PIANO_API int piano_queue_info(int index, struct piano_queue_info *out)
{
	struct piano_engine *e = engine_get();
	if (!out)
		return PIANO_EINVAL;
	if (!e)
		return PIANO_ENOTINIT;
	if (index < 0 || index >= e->nqueues)
		return PIANO_ERANGE;
	const struct piano_queue *q = &e->queues[index];
	struct piano_queue_info info;
	memset(&info, 0, sizeof(info));
	info.index = q->index;
	info.parent = q->parent;
	info.depth = q->depth;
	info.nchildren = q->nchildren;
	info.type = hwloc_obj_type_string(q->obj->type);
	info.logical_index = (int)q->obj->logical_index;
	hwloc_bitmap_list_snprintf(info.cpuset, sizeof(info.cpuset), q->cpuset);
	info.submitted = atomic_load_explicit(&q->submitted, memory_order_relaxed);
	*out = info;
	return 0;
}

PIANO_API int piano_queue_local(int *index)
{
	struct piano_engine *e = engine_get();
	if (!index)
		return PIANO_EINVAL;
	if (!e)
		return PIANO_ENOTINIT;
	*index = location_leaf(e);
	return 0;
}

PIANO_API int piano_thread_count(int point, int *n)
{
	struct piano_engine *e = engine_get();
	if (!n)
		return PIANO_EINVAL;
	if (!e)
		return PIANO_ENOTINIT;
	switch (point) {
	case PIANO_POINT_IDLE: *n = e->nidle; return 0;
	case PIANO_POINT_TIMER: *n = e->has_timer; return 0;
	case PIANO_POINT_BLOCK: *n = e->nhelpers; return 0;
	case PIANO_POINT_EXPLICIT: *n = 0; return 0;
	default: return PIANO_EINVAL;
	}
}

PIANO_API int piano_topology_get(hwloc_topology_t *out)
{
	struct piano_engine *e = engine_get();
	if (!out)
		return PIANO_EINVAL;
	if (!e)
		return PIANO_ENOTINIT;
	*out = e->topo;
	return 0;
}

PIANO_API int piano_stats_print(void)
{
	if (!engine_get())
		return PIANO_ENOTINIT;
	int n[PIANO_POINT_COUNT] = { 0 };
	for (int i = 0; i < PIANO_POINT_COUNT; i++)
		piano_thread_count(i, &n[i]);
	stats_print(n);
	timer_stats_print(engine_get());
	return 0;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Topology: loads hwloc and builds the queue tree. One queue per object of
 * the kept types (Machine, then Package/Core/PU down to PIANO_QUEUE_LEVEL);
 * an object whose cpuset equals its parent queue's (no siblings) shares the
 * parent's queue, so useless levels are pruned.
 */
#include "topo.h"
#include "queue.h"
#include "warn.h"

#include <stdlib.h>
#include <string.h>

static atomic_flag warned_bind = ATOMIC_FLAG_INIT;

int topo_level_type(int level, hwloc_obj_type_t *type)
{
	static const hwloc_obj_type_t types[] = { HWLOC_OBJ_MACHINE, HWLOC_OBJ_PACKAGE,
	                                          HWLOC_OBJ_CORE, HWLOC_OBJ_PU };
	if (level < LEVEL_MACHINE || level > LEVEL_PU)
		return -1;
	*type = types[level];
	return 0;
}

static int kept_type(int queue_level, hwloc_obj_type_t type)
{
	for (int l = LEVEL_MACHINE; l <= queue_level; l++) {
		hwloc_obj_type_t t;
		if (topo_level_type(l, &t) == 0 && t == type)
			return 1;
	}
	return 0;
}

struct builder {
	struct piano_engine *e;
	int cap;
};

static int add_queue(struct builder *b, hwloc_obj_t obj, int parent)
{
	struct piano_engine *e = b->e;
	if (e->nqueues == b->cap) {
		int cap = b->cap ? 2 * b->cap : 16;
		struct piano_queue *q = realloc(e->queues, (size_t)cap * sizeof(*q));
		if (!q)
			return -1;
		e->queues = q;
		b->cap = cap;
	}
	struct piano_queue *q = &e->queues[e->nqueues];
	memset(q, 0, sizeof(*q));
	q->index = e->nqueues;
	q->parent = parent;
	q->depth = parent < 0 ? 0 : e->queues[parent].depth + 1;
	q->obj = obj;
	q->cpuset = hwloc_bitmap_dup(obj->cpuset);
	if (!q->cpuset)
		return -1;
	return e->nqueues++;
}

static int walk(struct builder *b, hwloc_obj_t obj, int parent)
{
	int here = parent;
	if (kept_type(b->e->cfg.queue_level, obj->type) &&
	    (parent < 0 || !hwloc_bitmap_isequal(obj->cpuset, b->e->queues[parent].cpuset))) {
		here = add_queue(b, obj, parent);
		if (here < 0)
			return -1;
	}
	for (hwloc_obj_t c = obj->first_child; c; c = c->next_sibling)
		if (c->cpuset && !hwloc_bitmap_iszero(c->cpuset) && walk(b, c, here) < 0)
			return -1;
	return 0;
}

static int link_children(struct piano_engine *e)
{
	for (int i = 1; i < e->nqueues; i++)
		e->queues[e->queues[i].parent].nchildren++;
	for (int i = 0; i < e->nqueues; i++) {
		struct piano_queue *q = &e->queues[i];
		q->children = calloc((size_t)q->nchildren + 1, sizeof(int));
		if (!q->children)
			return -1;
		q->nchildren = 0;
	}
	for (int i = 1; i < e->nqueues; i++) {
		struct piano_queue *p = &e->queues[e->queues[i].parent];
		p->children[p->nchildren++] = i;
	}
	/* Parents come before children in walk order, so div is ready. */
	for (int i = 0; i < e->nqueues; i++) {
		struct piano_queue *q = &e->queues[i];
		q->div = q->parent < 0 ? 1 : e->queues[q->parent].div *
		                                 (uint64_t)e->queues[q->parent].nchildren;
	}
	return 0;
}

int topo_queue_for_set(const struct piano_engine *e, hwloc_const_cpuset_t set)
{
	int q = 0;
	if (!set || hwloc_bitmap_iszero(set))
		return 0;
	for (;;) {
		const struct piano_queue *cur = &e->queues[q];
		int next = -1;
		for (int i = 0; i < cur->nchildren; i++)
			if (hwloc_bitmap_isincluded(set, e->queues[cur->children[i]].cpuset)) {
				next = cur->children[i];
				break;
			}
		if (next < 0)
			return q;
		q = next;
	}
}

static int map_cpus(struct piano_engine *e)
{
	int last = hwloc_bitmap_last(hwloc_topology_get_topology_cpuset(e->topo));
	e->ncpus = last < 0 ? 1 : last + 1;
	e->cpu_leaf = calloc((size_t)e->ncpus, sizeof(int));
	if (!e->cpu_leaf)
		return -1;
	hwloc_bitmap_t one = hwloc_bitmap_alloc();
	if (!one)
		return -1;
	for (int cpu = 0; cpu < e->ncpus; cpu++) {
		hwloc_bitmap_only(one, (unsigned)cpu);
		e->cpu_leaf[cpu] = topo_queue_for_set(e, one);
	}
	hwloc_bitmap_free(one);
	return 0;
}

/* PIANO_BIND_CPUS may only name CPUs of this machine: a CPU it does not
 * have is a typo or a list meant for another node, not something to drop
 * quietly. */
static int bind_set_build(struct piano_engine *e)
{
	if (!e->cfg.bind_cpus[0])
		return 0;
	hwloc_const_cpuset_t all = hwloc_topology_get_topology_cpuset(e->topo);
	e->bind_set = hwloc_bitmap_alloc();
	if (!e->bind_set)
		return PIANO_ENOMEM;
	hwloc_bitmap_list_sscanf(e->bind_set, e->cfg.bind_cpus);
	if (!hwloc_bitmap_isincluded(e->bind_set, all)) {
		char have[128], bad[128];
		hwloc_bitmap_t extra = hwloc_bitmap_alloc();
		if (!extra)
			return PIANO_ENOMEM;
		hwloc_bitmap_andnot(extra, e->bind_set, all);
		hwloc_bitmap_list_snprintf(bad, sizeof(bad), extra);
		hwloc_bitmap_list_snprintf(have, sizeof(have), all);
		hwloc_bitmap_free(extra);
		piano_warn("invalid PIANO_BIND_CPUS='%s': CPUs %s are not on this machine "
		           "(it has CPUs %s)", e->cfg.bind_cpus, bad, have);
		return PIANO_ECONFIG;
	}
	return 0;
}

/* realloc() only guarantees 16-byte alignment; queues keep their
 * submission and owner sides on separate cache lines, so move them to
 * cache-line aligned memory before anyone touches the atomics. */
static int realign(struct piano_engine *e)
{
	size_t len = (size_t)e->nqueues * sizeof(struct piano_queue);
	struct piano_queue *q = aligned_alloc(PIANO_CACHELINE, len);
	if (!q)
		return -1;
	memcpy(q, e->queues, len);
	free(e->queues);
	e->queues = q;
	return 0;
}

int topo_build(struct piano_engine *e)
{
	struct builder b = { .e = e, .cap = 0 };
	if (hwloc_topology_init(&e->topo))
		return PIANO_ESYS;
	if (hwloc_topology_load(e->topo))
		goto undo_init;
	if (walk(&b, hwloc_get_root_obj(e->topo), -1) < 0 || e->nqueues == 0)
		goto undo_queues;
	if (realign(e) < 0 || link_children(e) < 0 || map_cpus(e) < 0)
		goto undo_queues;
	int rc = bind_set_build(e);
	if (rc) {
		topo_free(e);
		return rc;
	}
	return 0;
undo_queues:
	topo_free(e);
	return PIANO_ENOMEM;
undo_init:
	hwloc_topology_destroy(e->topo);
	e->topo = NULL;
	return PIANO_ESYS;
}

void topo_free(struct piano_engine *e)
{
	hwloc_bitmap_free(e->bind_set);
	e->bind_set = NULL;
	for (int i = 0; i < e->nqueues; i++) {
		hwloc_bitmap_free(e->queues[i].cpuset);
		free(e->queues[i].children);
	}
	free(e->queues);
	free(e->cpu_leaf);
	e->queues = NULL;
	e->cpu_leaf = NULL;
	e->nqueues = 0;
	if (e->topo)
		hwloc_topology_destroy(e->topo);
	e->topo = NULL;
}

/* Binds the calling thread to `set` restricted to PIANO_BIND_CPUS. */
void topo_bind_thread(struct piano_engine *e, hwloc_const_cpuset_t set)
{
	hwloc_bitmap_t b = hwloc_bitmap_dup(set ? set : hwloc_topology_get_topology_cpuset(e->topo));
	if (!b)
		return;
	if (e->bind_set)
		hwloc_bitmap_and(b, b, e->bind_set);
	if (!hwloc_bitmap_iszero(b) && hwloc_set_cpubind(e->topo, b, HWLOC_CPUBIND_THREAD) != 0 &&
	    !atomic_flag_test_and_set(&warned_bind))
		piano_warn("cannot bind piano threads (hwloc_set_cpubind failed); they run unbound");
	hwloc_bitmap_free(b);
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where the calling thread runs: its leaf queue (current CPU) and the
 * smallest queue containing its binding, cached per thread.
 */
#include "location.h"
#include "topo.h"
#include "sys.h"

/* Per-thread cache of where the thread runs and how it is bound. Refreshed
 * every PIANO_LOCATION_REFRESH_US: asking the OS (sched_getcpu + hwloc
 * get_cpubind) on every poll would cost more than the poll. */
struct location {
	unsigned gen;
	int leaf;
	int bindq;
	uint64_t stamp;
};
static _Thread_local struct location loc_tls;

static void location_refresh(struct piano_engine *e)
{
	uint64_t now = sys_now_coarse_ns();
	if (loc_tls.gen == e->gen &&
	    now - loc_tls.stamp < (uint64_t)e->cfg.location_refresh_us * 1000u)
		return;
	int cpu = sys_current_cpu();
	loc_tls.leaf = (cpu >= 0 && cpu < e->ncpus) ? e->cpu_leaf[cpu] : 0;
	loc_tls.bindq = 0;
	hwloc_bitmap_t set = hwloc_bitmap_alloc();
	if (set && hwloc_get_cpubind(e->topo, set, HWLOC_CPUBIND_THREAD) == 0)
		loc_tls.bindq = topo_queue_for_set(e, set);
	hwloc_bitmap_free(set);
	loc_tls.stamp = now;
	loc_tls.gen = e->gen;
}

int location_leaf(struct piano_engine *e)
{
	location_refresh(e);
	return loc_tls.leaf;
}

int location_bind_queue(struct piano_engine *e)
{
	location_refresh(e);
	return loc_tls.bindq;
}

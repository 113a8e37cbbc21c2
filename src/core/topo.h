/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Topology (topo.c): loads hwloc and builds the queue tree, one queue per
 * kept object; binds piano's threads. Calls nothing of piano but the
 * diagnostics.
 */
#ifndef PIANO_TOPO_H
#define PIANO_TOPO_H

#include "state.h"

int topo_build(struct piano_engine *e);
void topo_free(struct piano_engine *e);
/* Smallest queue whose cpuset contains set (0, the root, for an empty set). */
int topo_queue_for_set(const struct piano_engine *e, hwloc_const_cpuset_t set);
int topo_level_type(int level, hwloc_obj_type_t *type);
/* Binds the calling thread to `set` (NULL = the machine) within PIANO_BIND_CPUS. */
void topo_bind_thread(struct piano_engine *e, hwloc_const_cpuset_t set);

#endif

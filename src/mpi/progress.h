/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The progress ltask (progress.c): one per process, submitted while
 * anything is pending (tracked requests, delegated waits, started graphs).
 */
#ifndef PIANO_MPI_PROGRESS_H
#define PIANO_MPI_PROGRESS_H

#include "graph_list.h"
#include "offload.h"
#include "track.h"
#include "waiters.h"

#include <stdbool.h>

/* Keeps the progress task submitted: called when the first request becomes
 * pending (track_add, track_start), when a wait op is linked and when a
 * graph starts. */
void progress_kick(void);
/* Whether anything is left for piano's threads to call the MPI for: the
 * progress task's work or sends queued for offload (gate_quiet()). Inline:
 * the progress task and the socket watcher, side by side in the layers,
 * both ask. */
static inline bool progress_pending(void)
{
	return track_pending() > 0 || waiters_pending() || graphs_running() > 0 ||
	       atomic_load_explicit(&offload_queued_n, memory_order_relaxed);
}
int progress_setup(void);
void progress_shutdown(void);

#endif

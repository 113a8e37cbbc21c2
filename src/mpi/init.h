/* SPDX-License-Identifier: BSD-3-Clause */
/* Set-up and finalisation of the MPI layer (init.c). */
#ifndef PIANO_MPI_INIT_H
#define PIANO_MPI_INIT_H

#include "hidden.h"
#include <stdatomic.h>

/* Sets piano up if MPI is initialised and piano is not yet (library loaded
 * or linked after MPI_Init). Every wrapper calls it first: inline, one
 * load when ready. */
extern PIANO_HIDDEN _Atomic int pmpi_ready;
void pmpi_ensure_slow(void);

static inline void pmpi_ensure(void)
{
	/* Acquire, partner: the release store at the end of set-up: whoever
	 * reads 1 sees everything set-up wrote. */
	if (!atomic_load_explicit(&pmpi_ready, memory_order_acquire))
		pmpi_ensure_slow();
}

/* Set-up's verdict for the posts (post_way(), p2p.c): FULL while set-up
 * has not run or at finalization, or where something watches every post
 * (an overlap report, PIANO_STATS, offload); PLAIN_TRACKING: an eager post
 * goes straight to the MPI, a larger one is tracked; PLAIN_ALL: no
 * background progress, every post goes straight to the MPI. Released after
 * pmpi_ready. */
enum { PMPI_POST_FULL, PMPI_POST_PLAIN_TRACKING, PMPI_POST_PLAIN_ALL };
extern PIANO_HIDDEN _Atomic int pmpi_post_plain;

#endif

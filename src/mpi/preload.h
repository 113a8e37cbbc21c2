/* SPDX-License-Identifier: BSD-3-Clause */
/* Keeping piano out of the processes a rank starts (preload.c). */
#ifndef PIANO_MPI_PRELOAD_H
#define PIANO_MPI_PRELOAD_H

/* In a process that did not look like the rank when piano was loaded,
 * removes piano's entry from LD_PRELOAD now that it is the rank
 * (MPI_Init), so that its children do not load piano. */
void pmpi_preload_drop(void);

#endif

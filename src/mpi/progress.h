/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The progress ltask (progress.c): one per process, submitted while
 * anything is pending (tracked requests, delegated waits, started graphs).
 */
#ifndef PIANO_MPI_PROGRESS_H
#define PIANO_MPI_PROGRESS_H

/* Keeps the progress task submitted: called when the first request becomes
 * pending (track_add, track_start), when a wait op is linked and when a
 * graph starts. */
void progress_kick(void);
int progress_setup(void);
void progress_shutdown(void);

#endif

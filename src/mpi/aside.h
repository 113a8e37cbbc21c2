/* SPDX-License-Identifier: BSD-3-Clause */
/* Work of piano's own in the application's thread, run where its memory
 * does not land in the application's heap (aside.c). */
#ifndef PIANO_MPI_ASIDE_H
#define PIANO_MPI_ASIDE_H

/* Runs fn(arg) in a short-lived thread and returns when it has; runs it in
 * the calling thread if no thread can be created. */
void pmpi_aside(void (*fn)(void *), void *arg);

#endif

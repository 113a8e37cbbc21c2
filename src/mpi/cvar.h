/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MPI's integer control variables through MPI_T (cvar.c), read between
 * cvar_open() (set-up) and cvar_close() (MPI_Finalize), under the set-up
 * lock: 0 when read.
 */
#ifndef PIANO_MPI_CVAR_H
#define PIANO_MPI_CVAR_H

#include <mpi.h>
#include <stdbool.h>

/* level: the thread level the MPI runs at (MPI_T_init_thread's). The
 * session itself opens at the first read (cvar_available() included). */
void cvar_open(int level);
void cvar_close(void);
bool cvar_available(void);
int cvar_read(int index, MPI_Datatype dt, long *out);
int cvar_read_named(const char *name, long *out);

#endif

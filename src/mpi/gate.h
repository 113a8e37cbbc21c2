/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The gate (gate.c): piano's threads call the MPI in the background only
 * through gate_poke(), which makes its call only between a gate_enter()
 * that returned true and gate_leave(). Application threads close the gate
 * around what the MPI cannot run beside such a call (on Open MPI: an open
 * MPI file, file.c); gate_close() returns once no thread is inside, `why`
 * ends the one-line notice printed when background progress stays off for
 * long. Armed on Open MPI only.
 */
#ifndef PIANO_MPI_GATE_H
#define PIANO_MPI_GATE_H

#include <stdbool.h>

bool gate_enter(void);
void gate_leave(void);
void gate_close(const char *why);
void gate_open(void);
/* Serialized mode (serial.h): an application thread's MPI call, from
 * before it enters the MPI until it has returned; once gate_app_close()
 * returns no piano thread is inside the MPI through the gate. */
void gate_app_close(void);
void gate_app_open(void);
/* Serialized mode: set-up, once piano's threads may run (registers
 * membarrier), and the engine's word that no background call will come
 * until the next gate_enter(): application calls then close the gate
 * without a fence. */
void gate_serial_setup(void);
void gate_quiet(void);
/* Serialized mode: whether application calls take the fenced path now (a
 * hint, read relaxed). */
bool gate_fenced(void);
/* Serialized mode, PIANO_STATS: how often the engine turned the fenced
 * path on, and how many application calls took it. */
struct gate_stats {
	unsigned long long activations, fenced_calls;
};
void gate_stats(struct gate_stats *out);

/* One progress call of the MPI that touches no application request:
 * PMPI_Iprobe(ANY_SOURCE, ANY_TAG, MPI_COMM_WORLD), through the gate. A
 * probe never receives, so it cannot take a message from the application
 * (MPICH does not progress from a probe on MPI_COMM_SELF; a private
 * duplicate of MPI_COMM_WORLD made MPICH's point-to-point slower:
 * docs/mpi.md). */
void gate_poke(void);

#endif

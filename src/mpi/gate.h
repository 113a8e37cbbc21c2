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

#include "hidden.h"
#include <stdatomic.h>
#include <stdbool.h>

bool gate_enter(void);
void gate_leave(void);
void gate_close(const char *why);
void gate_open(void);
/*
 * Serialized mode (serial.h): an application thread's MPI call, from
 * before it enters the MPI until it has returned; once gate_app_close()
 * returns no piano thread is inside the MPI through the gate. Inline: every
 * application MPI call takes them (as calls, they were a third of piano's
 * samples on a ring of 8-byte messages).
 *
 * In serialized mode the application makes one MPI call at a time (it asked
 * for less than MPI_THREAD_MULTIPLE), so `gate_app_in` has one writer at a
 * time, ordered by the application's own synchronisation between its calls:
 * a load and a store update it, and only the outermost call of a nesting (a
 * wrapper calling another) pays the fence. On the hot path of every MPI call
 * a locked read-modify-write cost more than the MPI's own work (it waits for
 * the store buffer to drain). While `gate_bg` is GATE_BG_OFF no fence at
 * all (gate.c: the engine's membarrier() is the other half).
 */
enum { GATE_BG_OFF, GATE_BG_ON, GATE_BG_DRAIN };
extern PIANO_HIDDEN _Atomic int gate_app_in, gate_bg;
void gate_app_fenced(void);

static inline void gate_app_close(void)
{
	int n = atomic_load_explicit(&gate_app_in, memory_order_relaxed);
	atomic_store_explicit(&gate_app_in, n + 1, memory_order_relaxed);
	if (n)
		return;
	/* The store stays before the load in program order (the compiler's);
	 * membarrier() on the engine's side orders them for the CPU. */
	atomic_signal_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&gate_bg, memory_order_relaxed) != GATE_BG_OFF)
		gate_app_fenced();
}

static inline void gate_app_open(void)
{
	int n = atomic_load_explicit(&gate_app_in, memory_order_relaxed);
	/* Release, partner: the acquire fence in gate_enter(): our call
	 * happens before the next background call. */
	atomic_store_explicit(&gate_app_in, n - 1, memory_order_release);
}
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
 * docs/mpi.md). Returns whether the call was made (false: the gate is
 * closed). */
bool gate_poke(void);

#endif

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

#include "base.h"
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
 * the store buffer to drain).
 *
 * `gate_bg` says whether piano's threads may call at all. GATE_BG_OFF: no
 * piano thread is inside and none enters until an application thread turns
 * it GATE_BG_ON (gate_app_busy(), when it has given piano's threads
 * something to progress); the engine turns it off again when nothing is
 * left (gate_quiet(), through GATE_BG_DRAIN). While it is off an
 * application call needs no fence, and a call that gives piano's threads
 * nothing (gate_app_idle(): SERIAL_WRAP) skips the gate altogether.
 */
enum { GATE_BG_OFF, GATE_BG_ON, GATE_BG_DRAIN };
extern PIANO_HIDDEN _Atomic int gate_app_in, gate_bg;
void gate_app_fenced(void);
/* PIANO_STATS: an application call closed the gate (outermost only). */
void gate_count_closed(void);

static inline void gate_app_close(void)
{
	int n = atomic_load_explicit(&gate_app_in, memory_order_relaxed);
	atomic_store_explicit(&gate_app_in, n + 1, memory_order_relaxed);
	if (n)
		return;
	if (pmpi_g.stats)
		gate_count_closed();
	/* Off: only this application (this call, or one ordered before it by
	 * the application) turns it on, and a piano thread that then reads it
	 * on also reads our store, made before (gate_app_busy()'s release).
	 * Acquire, partner: gate_quiet()'s store of GATE_BG_OFF, made after the
	 * last background call left: that call happens before ours.
	 * Anything else: the fenced path, the Dekker pair with gate_enter(). */
	if (atomic_load_explicit(&gate_bg, memory_order_acquire) != GATE_BG_OFF)
		gate_app_fenced();
}

static inline void gate_app_open(void)
{
	int n = atomic_load_explicit(&gate_app_in, memory_order_relaxed);
	/* Release, partner: the acquire fence in gate_enter(): our call
	 * happens before the next background call. */
	atomic_store_explicit(&gate_app_in, n - 1, memory_order_release);
}

/* Whether an application call that gives piano's threads nothing may skip
 * the gate: no piano thread is inside or can enter before this application
 * turns the gate on. Acquire, partner: gate_quiet()'s store, made after
 * the last background call left (its acquire load of `inside`): that call
 * happens before ours. */
static inline bool gate_app_idle(void)
{
	return atomic_load_explicit(&gate_bg, memory_order_acquire) == GATE_BG_OFF;
}

/* Serialized mode, an application thread inside a gated call (never a
 * piano thread), after it published something for piano's threads to
 * progress (a tracked request, a delegated wait, a started graph, a queued
 * send): turns the gate on. */
void gate_app_busy(void);
/* Serialized mode: set-up, once piano's threads may run; and the engine's
 * word that nothing is left for its threads: the gate turns off unless
 * left() (progress_pending()), asked once no background call is inside,
 * says otherwise. */
void gate_serial_setup(void);
void gate_quiet(bool (*left)(void));
/* Serialized mode: whether application calls take the fenced path now (a
 * hint, read relaxed). */
bool gate_fenced(void);
/* Serialized mode, PIANO_STATS: how often the application turned the gate
 * on, how many application calls closed it (the others skipped it) and how
 * many of those took the fenced path. */
struct gate_stats {
	unsigned long long activations, closed_calls, fenced_calls;
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

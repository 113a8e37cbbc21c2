/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The threads inside blocking completion calls (waiters.c): how many, how
 * many wait natively in the MPI, and the wait ops of those that delegated
 * their wait; and what a round of the progress task does about them.
 * waitop.h decides how a call waits; this is what the progress task sees.
 */
#ifndef PIANO_MPI_WAITERS_H
#define PIANO_MPI_WAITERS_H

#include "hidden.h"
#include "base.h"

enum waitop_kind { WAIT_ONE, WAIT_ANY, WAIT_SOME, WAIT_ALL };

/*
 * A delegated wait. Owned by the waiting thread (on its stack); linked in
 * the wait-op list while pending (`linked`, protected by the list's lock);
 * the progress task checks it with PMPI_Request_get_status and signals
 * `cond` when it is ready. After the signal the progress task never touches
 * it again.
 */
struct waitop {
	enum waitop_kind kind;
	int n;
	const MPI_Request *reqs;
	/* WAIT_ALL: requests before it are finished (the waiter's until
	 * linked, then under the list lock). */
	int first_open;
	bool linked;
	piano_cond_t cond;
	struct waitop *next, *prev;
};

/* A thread enters a blocking completion call that may go through piano,
 * counted as waiting natively: true when no other thread is inside one. */
bool waiters_enter(void);
/* It waits natively (in the MPI's own call, which it progresses itself). */
void waiters_go_native(void);
/* Or it delegates its wait: no longer counted as waiting natively. */
void waiters_delegate(void);
void waiters_leave(bool native);
/*
 * Serialized mode's native wait: the same hint for the progress task and
 * the socket watcher, without the count of waiters (there is one). One
 * application thread at a time is inside the MPI (the application's
 * promise at its thread level, ordered by its own synchronisation between
 * calls), and the gate keeps piano's calls out while it is
 * (gate_app_close()). So the word has one writer at a time and needs
 * neither the read-modify-writes nor the Dekker pair of waiters_enter(): it
 * is only the hint the progress task and the socket watcher read. On a
 * ring of blocking 8-byte messages the locked operations would be most of
 * what piano adds (docs/performance.md, "Small messages"); inline, as every
 * blocking call takes them.
 */
#define WAITERS_ONE 1u
#define WAITERS_NATIVE (1u << 16)
/* Threads in blocking completion calls (low half) and those of them
 * waiting natively (high half): waiters.c. */
extern PIANO_HIDDEN _Atomic unsigned waiters_word;

static inline void waiters_serial_enter(void)
{
	unsigned w = atomic_load_explicit(&waiters_word, memory_order_relaxed);
	atomic_store_explicit(&waiters_word, w + (WAITERS_ONE | WAITERS_NATIVE),
	                      memory_order_relaxed);
}

static inline void waiters_serial_leave(void)
{
	unsigned w = atomic_load_explicit(&waiters_word, memory_order_relaxed);
	atomic_store_explicit(&waiters_word, w - (WAITERS_ONE | WAITERS_NATIVE),
	                      memory_order_relaxed);
}
/* Some thread waits natively now (it drives the MPI itself). */
bool waiters_native(void);

/* Whether the waiter's own completion call on op's requests would return
 * at once (called by the waiter before it links op). */
bool waitop_ready(struct waitop *op);
/* Links op for the progress task, its cond cleared. */
void waiters_link(struct waitop *op);
/* Takes op back: true if it was still linked; false if the progress task
 * has taken it out and its signal is on its way. */
bool waiters_unlink(struct waitop *op);

/* Wait ops are linked: the progress task has work. */
bool waiters_pending(void);
/* One round of the progress task: the linked wait ops checked (the ready
 * ones signalled), or, with none, one probe of the MPI unless a native
 * waiter drives it. Returns the number of wait ops signalled. */
unsigned waiters_progress(void);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The gate: piano's threads drive the MPI in the background only while it
 * is open. The application closes it while it does something the MPI cannot
 * run concurrently with a progress call from another thread (docs/mpi.md,
 * "The gate"); on Open MPI that is holding an MPI file open (file.c).
 *
 * Who goes through it: gate_poke(), the background progress call of the
 * progress task and of the socket watcher. The wait-op tests do not: they
 * run only while the application thread that owns the requests is blocked
 * in its wait call, in place of the progress calls that thread would make
 * itself (docs/mpi.md).
 *
 * Protocol. `closers` counts the reasons the gate is closed (one per open
 * file, from the start of its MPI_File_open); only application threads
 * change it.
 * `inside` counts the threads between gate_enter() and gate_leave().
 *   enter: inside++, then read closers; if non-zero, inside-- and back out.
 *   close: closers++, then wait until inside == 0.
 * Both increments and both reads are seq_cst, so at least one side sees the
 * other's increment (the store-load pattern needs the single total order):
 * either the entering thread backs out, or the closing thread waits for it
 * to leave. A thread that has read closers == 0 is inside before any closer
 * that it missed has finished waiting, so once gate_close() returns no
 * thread is inside the MPI through the gate, and none enters until
 * gate_open() has run as often as gate_close().
 *
 * Serialized mode (serial.h) closes the gate around every application MPI
 * call with a counter of its own, `gate_app_in` (see gate_app_close() for its
 * protocol), and lets one background call in at a time (`bg_one`). A
 * call that finds the application inside the MPI is no reason to tell the
 * user that background progress is off (it is not: the MPI progresses
 * itself meanwhile), so it stays out of the notice's bookkeeping.
 */
#include "gate.h"
#include "base.h"
#include "sys.h"

#include <pthread.h>
#include <unistd.h>

/*
 * Armed on Open MPI only. Nothing closes the gate on MPICH: its ROMIO
 * keeps non-blocking I/O out of the progress engine (MPICH polls a ROMIO
 * request, MPIR_Grequest_poll, only in a Test or Wait on that very request,
 * never from MPID_Progress_test, which is all a probe runs), and test
 * mpi.mpich.file_io passes without a gate. Unarmed, entering costs nothing.
 */
#if defined(OPEN_MPI)
#define GATE_ARMED 1
#else
#define GATE_ARMED 0
#endif

static _Atomic int closers;
static _Atomic int inside;
_Atomic int gate_app_in; /* serialized mode: application threads in an MPI call */

/* Armed where something closes the gate: Open MPI's file calls, and every
 * application call in serialized mode (pmpi_g.serial, fixed by set-up
 * before piano's threads exist, so enter and leave always agree). */
static inline bool armed(void) { return GATE_ARMED || pmpi_g.serial; }

/*
 * Serialized mode's gate word (gate.h). Piano's threads enter only while it
 * is GATE_BG_ON; an application thread turns it on (gate_app_busy()) from
 * inside a gated call once it has published work for them, so that a piano
 * thread that reads it on also reads the application's store to
 * gate_app_in made before and backs out until that call is over; the
 * application's next calls see it on and take the fenced path. Turning it
 * off (gate_quiet()) goes through GATE_BG_DRAIN: the fenced path stays
 * until no background call is inside, and an entrant that finds `gate_bg`
 * not GATE_BG_ON after its increment backs out. Transitions under bg_lock.
 */
_Atomic int gate_bg = GATE_BG_ON;
static pthread_mutex_t bg_lock = PTHREAD_MUTEX_INITIALIZER;
/* PIANO_STATS only (relaxed: they only count): turns to GATE_BG_ON, under
 * bg_lock; application calls that closed the gate, and that took the
 * fenced path. */
static _Atomic unsigned long long activations, closed_calls, fenced_calls;

void gate_serial_setup(void) { gate_quiet(NULL); }

void gate_app_busy(void)
{
	if (!pmpi_g.serial)
		return;
	/* StoreLoad, Dekker pair with gate_quiet()'s fence: the caller's work
	 * was published before; either the engine, turning the gate off, sees
	 * it and keeps the gate on, or we see its GATE_BG_DRAIN or GATE_BG_OFF
	 * here and turn it back on. */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&gate_bg, memory_order_relaxed) == GATE_BG_ON)
		return;
	pthread_mutex_lock(&bg_lock);
	/* Release (seq_cst), partner: the entrant's load of gate_bg: our
	 * caller's store to gate_app_in is seen with it. */
	atomic_store(&gate_bg, GATE_BG_ON);
	if (pmpi_g.stats)
		atomic_fetch_add_explicit(&activations, 1, memory_order_relaxed);
	pthread_mutex_unlock(&bg_lock);
}

void gate_quiet(bool (*left)(void))
{
	if (!pmpi_g.serial)
		return;
	pthread_mutex_lock(&bg_lock);
	if (atomic_load(&gate_bg) == GATE_BG_ON) {
		atomic_store(&gate_bg, GATE_BG_DRAIN); /* seq_cst: pairs with the entrant's re-check */
		while (atomic_load(&inside))
			sys_yield();
		/* The pair of gate_app_busy()'s fence: work published before a
		 * busy() that read GATE_BG_ON is seen here. */
		atomic_thread_fence(memory_order_seq_cst);
		/* seq_cst store (so release, partner: gate_app_idle()'s acquire):
		 * the background calls that left happen before the
		 * application's calls that skip the gate. */
		atomic_store(&gate_bg, left && left() ? GATE_BG_ON : GATE_BG_OFF);
	}
	pthread_mutex_unlock(&bg_lock);
}

bool gate_fenced(void)
{
	return pmpi_g.serial && atomic_load_explicit(&gate_bg, memory_order_relaxed) != GATE_BG_OFF;
}

/* The notice: one line per process once background progress has been
 * wanted but skipped for NOTICE_NS in one closed period. closed_since is
 * written (relaxed: it only times a message) by the thread that takes
 * closers from 0 to 1. */
#define NOTICE_NS 1000000000u
static _Atomic uint64_t closed_since;
static _Atomic int noticed;
static _Atomic(const char *) closed_for;

static void skipped(void)
{
	if (atomic_load_explicit(&noticed, memory_order_relaxed))
		return;
	uint64_t since = atomic_load_explicit(&closed_since, memory_order_relaxed);
	if (sys_now_ns() - since < NOTICE_NS || atomic_exchange(&noticed, 1))
		return;
	pmpi_warn("no background progress for over %u s: %s (told once; "
	          "docs/mpi.md, \"The gate\")",
	          NOTICE_NS / 1000000000u, atomic_load_explicit(&closed_for, memory_order_relaxed));
}

/* Serialized mode: the background call inside, if any. The MPI runs below
 * MPI_THREAD_MULTIPLE, so piano's own threads (the progress task's, the
 * socket watcher's) must not call it at the same time either: UCX asserted
 * on two probes in its worker at once. Acquire/release: one background
 * call happens before the next. */
static _Atomic int bg_one;

static bool serial_enter(void)
{
	return !atomic_exchange_explicit(&bg_one, 1, memory_order_acquire);
}

static void serial_leave(void) { atomic_store_explicit(&bg_one, 0, memory_order_release); }

static bool enter(void);

bool gate_enter(void)
{
	if (!pmpi_g.serial)
		return enter();
	/* Another background call is inside: it progresses the MPI for us. */
	if (!serial_enter())
		return false;
	if (enter())
		return true;
	serial_leave();
	return false;
}

static bool enter(void)
{
	if (!armed())
		return true;
	/* Fast path: a closed gate is seen with one relaxed load each; backing
	 * out on a stale value is always safe. */
	if (atomic_load_explicit(&closers, memory_order_relaxed)) {
		skipped();
		return false;
	}
	if (atomic_load_explicit(&gate_app_in, memory_order_relaxed))
		return false;
	/* Off: nothing the application gave us to progress (gate.h). */
	if (pmpi_g.serial && atomic_load_explicit(&gate_bg, memory_order_relaxed) != GATE_BG_ON)
		return false;
	/* seq_cst: Dekker pair with gate_close(); the fence pairs with the one
	 * in gate_app_close() and with gate_quiet()'s GATE_BG_DRAIN. */
	atomic_fetch_add(&inside, 1);
	atomic_thread_fence(memory_order_seq_cst);
	/* seq_cst (so also acquire, partner: the release decrements in
	 * gate_open() and gate_app_open()): whatever the application did to
	 * the MPI before it reopened the gate happens before our call.
	 * gate_bg before gate_app_in: an application call that found the gate
	 * off skipped the fence, and may turn it on (gate_app_busy()) and go on
	 * calling the MPI; reading that GATE_BG_ON (acquire, partner: its
	 * seq_cst store) makes its earlier store to gate_app_in visible to the
	 * load after it. In the other order the piano thread could read
	 * gate_app_in before that call began and GATE_BG_ON after it turned
	 * the gate on (tools/gate-model.py --app-in-first). */
	if ((pmpi_g.serial && atomic_load(&gate_bg) != GATE_BG_ON) || atomic_load(&closers) ||
	    atomic_load(&gate_app_in)) {
		atomic_fetch_sub_explicit(&inside, 1, memory_order_relaxed);
		if (atomic_load_explicit(&closers, memory_order_relaxed))
			skipped();
		return false;
	}
	return true;
}

void gate_leave(void)
{
	if (!armed())
		return;
	/* Release, partner: the load of `inside` in gate_close(): our MPI call
	 * happens before the application's call that closed the gate. */
	atomic_fetch_sub_explicit(&inside, 1, memory_order_release);
	if (pmpi_g.serial)
		serial_leave();
}

void gate_close(const char *why)
{
	if (!armed())
		return;
	if (atomic_fetch_add(&closers, 1) == 0) { /* seq_cst: Dekker pair with gate_enter() */
		atomic_store_explicit(&closed_since, sys_now_ns(), memory_order_relaxed);
		atomic_store_explicit(&closed_for, why, memory_order_relaxed);
	}
	/* seq_cst load (acquire, partner: the release in gate_leave()). A
	 * progress call lasts microseconds, but the thread making it may be an
	 * idle thread at SCHED_IDLE on this very core: yield, then sleep, so
	 * that it gets the CPU to finish its call. */
	for (unsigned spins = 0; atomic_load(&inside); spins++) {
		if (spins < 64)
			sys_yield();
		else
			sys_sleep_ns(50000);
	}
}

void gate_open(void)
{
	if (!armed())
		return;
	/* Release, partner: the seq_cst load in gate_enter(). */
	atomic_fetch_sub_explicit(&closers, 1, memory_order_release);
}

/* A piano thread is inside: its call (a probe, a graph's test) lasts
 * microseconds when it runs, so spin first; it may be an idle thread at
 * SCHED_IDLE on this very core, so then give it the CPU. */
static void wait_outside(void)
{
	for (unsigned spins = 0; atomic_load(&inside); spins++) {
		if (spins < 256)
			sys_cpu_relax();
		else if (spins < 512)
			sys_yield();
		else
			sys_sleep_ns(20000);
	}
}

/* gate_app_close()'s fenced path (gate.h has the rest and the protocol). */
void gate_app_fenced(void)
{
	/* StoreLoad, Dekker pair with the fence in gate_enter(): either the
	 * piano thread sees gate_app_in and backs out, or we see it inside. */
	atomic_thread_fence(memory_order_seq_cst);
	/* Acquire, partner: the release in gate_leave(): a background call
	 * that already left happens before ours. */
	if (atomic_load_explicit(&inside, memory_order_acquire))
		wait_outside();
	if (pmpi_g.stats)
		atomic_fetch_add_explicit(&fenced_calls, 1, memory_order_relaxed);
}

void gate_count_closed(void) { atomic_fetch_add_explicit(&closed_calls, 1, memory_order_relaxed); }

void gate_stats(struct gate_stats *out)
{
	out->activations = atomic_load_explicit(&activations, memory_order_relaxed);
	out->closed_calls = atomic_load_explicit(&closed_calls, memory_order_relaxed);
	out->fenced_calls = atomic_load_explicit(&fenced_calls, memory_order_relaxed);
}

bool gate_poke(void)
{
	int flag = 0;
	if (!gate_enter())
		return false; /* the application holds the gate closed */
	PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
	gate_leave();
	return true;
}

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
 * call with a counter of its own, `app_in` (see gate_app_close() for its
 * protocol): a call that finds the application inside the MPI is no reason
 * to tell the user that background progress is off (it is not: the MPI
 * progresses itself meanwhile), so it stays out of the notice's
 * bookkeeping.
 */
#include "gate.h"
#include "base.h"
#include "sys.h"

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
static _Atomic int app_in; /* serialized mode: application threads in an MPI call */

/* Armed where something closes the gate: Open MPI's file calls, and every
 * application call in serialized mode (pmpi_g.serial, fixed by set-up
 * before piano's threads exist, so enter and leave always agree). */
static inline bool armed(void) { return GATE_ARMED || pmpi_g.serial; }

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

bool gate_enter(void)
{
	if (!armed())
		return true;
	/* Fast path: a closed gate is seen with one relaxed load each; backing
	 * out on a stale value is always safe. */
	if (atomic_load_explicit(&closers, memory_order_relaxed)) {
		skipped();
		return false;
	}
	if (atomic_load_explicit(&app_in, memory_order_relaxed))
		return false;
	/* seq_cst: Dekker pair with gate_close(); the fence pairs with the one
	 * in gate_app_close(). */
	atomic_fetch_add(&inside, 1);
	atomic_thread_fence(memory_order_seq_cst);
	/* seq_cst (so also acquire, partner: the release decrements in
	 * gate_open() and gate_app_open()): whatever the application did to
	 * the MPI before it reopened the gate happens before our call. */
	if (atomic_load(&closers) || atomic_load(&app_in)) {
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

/*
 * In serialized mode the application makes one MPI call at a time (it asked
 * for less than MPI_THREAD_MULTIPLE), so `app_in` has one writer at a time,
 * ordered by the application's own synchronisation between its calls: a
 * load and a store update it, and only the outermost call of a nesting
 * (a wrapper calling another) pays the fence. On the hot path of every MPI
 * call a locked read-modify-write cost more than the MPI's own work (it
 * waits for the store buffer to drain).
 */
void gate_app_close(void)
{
	int n = atomic_load_explicit(&app_in, memory_order_relaxed);
	atomic_store_explicit(&app_in, n + 1, memory_order_relaxed);
	if (n)
		return;
	/* StoreLoad, Dekker pair with the fence in gate_enter(): either the
	 * piano thread sees app_in and backs out, or we see it inside. */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&inside, memory_order_relaxed))
		wait_outside();
}

void gate_app_open(void)
{
	int n = atomic_load_explicit(&app_in, memory_order_relaxed);
	/* Release, partner: the acquire fence in gate_enter(): our call
	 * happens before the next background call. */
	atomic_store_explicit(&app_in, n - 1, memory_order_release);
}

void gate_poke(void)
{
	int flag = 0;
	if (!gate_enter())
		return; /* the application holds the gate closed */
	PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
	gate_leave();
}

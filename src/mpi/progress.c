/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The progress ltask.
 *
 * The task is submitted when the first tracked request, wait op or started
 * graph appears and completes itself when none is left, so an MPI process
 * with nothing in flight has no pending ltask and the engine's threads park.
 * task_active is the hand-over flag between the task deciding to stop and a
 * submitter that needs it (both sides use seq_cst; see progress_fn).
 */
#include "progress.h"
#include "watch_wake.h"
#include "base.h"
#include "busy.h"
#include "gate.h"
#include "graph_list.h"
#include "report.h"
#include "starve.h"
#include "sys.h"
#include "track.h"
#include "waiters.h"

static _Atomic int task_active;

static bool has_work(void)
{
	return track_pending() > 0 || waiters_pending() || graphs_running() > 0;
}

/* Owned by the progress task (it never runs on two threads at once). */
static uint64_t idle_since;

/* A progress call counts as work when busy (busy.h), so that idle threads
 * poll a transfer in flight back to back instead of pausing between
 * rounds, and the timer keeps its period (0 drives the engine's back-off). */
static uint64_t busy_call_ns; /* set once by progress_setup(), read-only afterwards */
static _Thread_local struct busy_floor floor_tl = BUSY_FLOOR_INIT;

/* The timer wakes on a core where the application computes, and its empty
 * calls there are cold: beside a memory-bound kernel (bench_interference's
 * triad, MPICH, an 8 MiB receive waiting for a late peer) they took
 * 1.6-8 us, against a floor of 0.1-0.6 us from the few it made warm, so
 * 4 times the floor called 40 % of them busy and the timer's back-off
 * (PIANO_TIMER_MAX_US) rarely saw 8 empty rounds in a row. Its calls that
 * moved data took 80-370 us (a 16 MiB receive on shared memory, and the
 * end of that 8 MiB one). Only the timer's calls take this bar: idle
 * threads poll warm on cores of their own. */
#define TIMER_BUSY_NS 10000u

/* The timer's calls busy by their duration (busy_confirm()). Owned by the
 * timer thread. */
static struct busy_pair timer_pair;

static unsigned timed_progress(void)
{
	uint64_t t0 = sys_now_ns();
	unsigned work = waiters_progress();
	/* Started graphs: their requests are theirs, not the application's,
	 * so the engine tests them (src/coll/graph_list.c), unless a waiter
	 * steps them itself. */
	if (graphs_running() > 0 && !graphs_driven() && gate_enter()) {
		work += graphs_progress();
		gate_leave();
	}
	bool timer = piano_point_current() == PIANO_POINT_TIMER;
	uint64_t min_busy = busy_call_ns;
	if (min_busy < TIMER_BUSY_NS && timer)
		min_busy = TIMER_BUSY_NS;
	bool busy = busy_call(&floor_tl, sys_now_ns() - t0, min_busy);
	/* After the timing: the MPI's answers, one progress call for the
	 * first request not finished, would make a round look busy. Waiters
	 * test their own requests; a thread in the MPI's own wait drives the
	 * MPI, and a question beside it would only contend with it (at
	 * MPI_THREAD_MULTIPLE: in serialized mode the gate keeps us out). */
	if (track_pending() > 0 && !waiters_pending() && (pmpi_g.serial || !waiters_native()) &&
	    gate_enter()) {
		track_check_finished();
		gate_leave();
	}
	return work + (timer ? busy_confirm(&timer_pair, busy) : busy);
}

/* Cost of an empty progress call on this MPI and machine: a few dozen
 * probes with nothing in flight (MPI_Init has just returned). */
static uint64_t busy_call_threshold(void)
{
	enum { N = 33 };
	uint64_t v[N];
	for (int i = 0; i < N; i++) {
		uint64_t t0 = sys_now_ns();
		gate_poke();
		v[i] = sys_now_ns() - t0;
	}
	return busy_threshold(v, N);
}

static unsigned progress_fn(void *arg)
{
	(void)arg;
	unsigned work = 0;
	if (!atomic_load(&pmpi_g.finalizing)) {
		/* Any MPI call progresses every pending operation: testing the
		 * waiters' requests does; without waiters, a probe does so
		 * without receiving anything. */
		bool raised = starve_raise();
		work = timed_progress();
		starve_lower(raised);
		report_round();
		if (has_work()) {
			idle_since = 0;
			return work;
		}
		if (pmpi_linger(&idle_since))
			return work;
	}
	idle_since = 0;
	atomic_store(&task_active, 0);
	/* A submitter may have added work after our check and seen
	 * task_active == 1: take the flag back and keep running. */
	if (!atomic_load(&pmpi_g.finalizing) && has_work() && !atomic_exchange(&task_active, 1))
		return work;
	/* Nothing in flight: application calls need no fence until the next
	 * background call (serialized mode). */
	gate_quiet(progress_pending);
	piano_ltask_complete(piano_ltask_current());
	return work;
}

void progress_kick(void)
{
	if (!pmpi_g.threaded)
		return;
	/* Before the task may run: its calls need the gate on. */
	gate_app_busy();
	/* Whatever kicks the task also needs the socket watcher listening. */
	watch_nudge();
	/* A resting watcher wakes only for a delegated wait or a graph, which
	 * wait for its rounds; their poster published them before this kick,
	 * and watch_nudge()'s seq_cst fence orders that before the load of
	 * the flag (a Dekker pair with the watcher's fence after raising it,
	 * watch.c). */
	if (atomic_load_explicit(&watch_rest_flag, memory_order_relaxed) &&
	    (waiters_pending() ||
	     (graphs_running() > 0 &&
	      !atomic_load_explicit(&watch_graphs_ticked, memory_order_relaxed))) &&
	    atomic_exchange_explicit(&watch_rest_flag, 0, memory_order_relaxed))
		watch_wake_write();
	if (atomic_exchange(&task_active, 1))
		return;
	int rc;
	/* EBUSY only in the short window where the task has decided to stop
	 * but has not published its completion yet. */
	while ((rc = piano_ltask_submit(pmpi_g.progress)) == PIANO_EBUSY)
		sys_yield();
	if (rc)
		pmpi_warn("cannot submit the progress task: %s", piano_strerror(rc));
}

int progress_setup(void)
{
	int rc = piano_ltask_create(progress_fn, NULL, PIANO_LTASK_REPEAT, &pmpi_g.progress);
	if (rc)
		return rc;
	piano_ltask_set_name(pmpi_g.progress, "mpi-progress");
	busy_call_ns = busy_call_threshold();
	return 0;
}

void progress_shutdown(void)
{
	atomic_store(&pmpi_g.finalizing, 1);
	if (!pmpi_g.progress)
		return;
	if (piano_ltask_state(pmpi_g.progress) != PIANO_LTASK_INIT)
		piano_ltask_wait(pmpi_g.progress);
	piano_ltask_destroy(pmpi_g.progress);
	pmpi_g.progress = NULL;
}

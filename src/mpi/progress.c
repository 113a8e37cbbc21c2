/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The progress ltask.
 *
 * The task is submitted when the first tracked request or wait op appears
 * and completes itself when none is left, so an MPI process with nothing
 * in flight has no pending ltask and the engine's threads park.
 * task_active is the hand-over flag between the task deciding to stop and a
 * submitter that needs it (both sides use seq_cst; see progress_fn).
 */
#include "mpi_internal.h"
#include "sys.h"

static _Atomic int task_active;

static bool has_work(void)
{
	return track_pending() > 0 || !waitops_empty();
}

void progress_poke(void)
{
	int flag = 0;
	if (!gate_enter())
		return; /* the application holds the gate closed (gate.c) */
	PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
	gate_leave();
}

/* Owned by the progress task (it never runs on two threads at once). */
static uint64_t idle_since;

/*
 * The MPI does not say whether a progress call did anything. A call that
 * lasts several times an empty one moved data or advanced a protocol: it
 * counts as work, so that idle threads poll a transfer in flight back to
 * back instead of pausing between rounds, and the timer keeps its period
 * (0 drives the engine's back-off).
 * "An empty one" depends on the calling thread: the timer wakes on a core
 * where another thread computed, and its empty calls take 2-4 us with cold
 * caches against 0.25 us for a waiter's; against the global figure every
 * timer round looked busy. So each thread compares with the shortest call
 * it made lately (the minimum over the current and the previous window of
 * WINDOW calls), and never with less than busy_call_ns.
 */
static uint64_t busy_call_ns; /* set once by progress_setup(), read-only afterwards */

enum { WINDOW = 64 };

struct call_floor {
	uint64_t min_prev, min_cur;
	unsigned n;
};

static _Thread_local struct call_floor floor_tl = { UINT64_MAX, UINT64_MAX, 0 };

static bool call_was_busy(uint64_t dt)
{
	struct call_floor *f = &floor_tl;
	if (dt < f->min_cur)
		f->min_cur = dt;
	if (++f->n == WINDOW) {
		f->min_prev = f->min_cur;
		f->min_cur = UINT64_MAX;
		f->n = 0;
	}
	uint64_t base = f->min_prev < f->min_cur ? f->min_prev : f->min_cur;
	uint64_t limit = base < UINT64_MAX / 4 ? 4 * base : UINT64_MAX;
	return dt > (limit > busy_call_ns ? limit : busy_call_ns);
}

static unsigned timed_progress(void)
{
	uint64_t t0 = sys_now_ns();
	unsigned work;
	if (!waitops_empty()) {
		work = waitops_serve();
	} else {
		/* A thread waiting alone in the MPI's own wait drives it; a
		 * second poller would only contend with it (MPICH's global
		 * lock) and make that wait slower than without piano. */
		if (!waiter_native())
			progress_poke();
		work = 0;
	}
	return work + call_was_busy(sys_now_ns() - t0);
}

/* Cost of an empty progress call on this MPI and machine: median of a few
 * dozen Iprobes with nothing in flight (MPI_Init has just returned). */
static uint64_t empty_call_ns(void)
{
	enum { N = 33 };
	uint64_t v[N];
	for (int i = 0; i < N; i++) {
		uint64_t t0 = sys_now_ns();
		progress_poke();
		v[i] = sys_now_ns() - t0;
	}
	for (int i = 1; i < N; i++) /* insertion sort: N is tiny */
		for (int j = i; j > 0 && v[j - 1] > v[j]; j--) {
			uint64_t x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	return v[N / 2];
}

static unsigned progress_fn(void *arg)
{
	(void)arg;
	unsigned work = 0;
	if (!atomic_load(&pmpi_g.finalizing)) {
		/* Any MPI call progresses every pending operation: testing the
		 * waiters' requests does; without waiters, a probe does so
		 * without receiving anything. */
		work = timed_progress();
		if (has_work()) {
			idle_since = 0;
			return work;
		}
		/* Linger a little before stopping: resubmitting the task wakes
		 * the engine's parked threads, which a communication pattern of
		 * short bursts would otherwise pay for at every burst. */
		uint64_t now = sys_now_ns();
		if (!idle_since)
			idle_since = now;
		if (now - idle_since < pmpi_g.linger_ns)
			return work;
	}
	idle_since = 0;
	atomic_store(&task_active, 0);
	/* A submitter may have added work after our check and seen
	 * task_active == 1: take the flag back and keep running. */
	if (!atomic_load(&pmpi_g.finalizing) && has_work() && !atomic_exchange(&task_active, 1))
		return work;
	piano_ltask_complete(piano_ltask_current());
	return work;
}

void progress_kick(void)
{
	if (!pmpi_g.threaded || atomic_exchange(&task_active, 1))
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
	/* 4x the median, at least 1 us: clock noise must not look like work. */
	busy_call_ns = 4 * empty_call_ns();
	if (busy_call_ns < 1000)
		busy_call_ns = 1000;
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

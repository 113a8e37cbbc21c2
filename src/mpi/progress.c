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

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static _Atomic int task_active;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool has_work(void)
{
	return track_pending() > 0 || !waitops_empty() || graphs_running() > 0;
}

/*
 * A progress call made at SCHED_IDLE may take over a piece of the MPI's
 * work that lasts: on Open MPI a probe that finds a rendezvous receives the
 * whole message (vader's single-copy get of 16 MiB, process_vm_readv) in
 * that one call. If the application thread then waits for that very
 * request, its MPI spins on every core it can get and the idle thread,
 * runnable but at SCHED_IDLE, gets next to no CPU: the wait lasts until the
 * scheduler happens to run it (MPICH's pt2pt/huge_dupcomm, 4 x 16 MiB: no
 * result in 60 s in 2 of 10 runs on a loaded 2-core node, 0 of 10 without
 * piano). So a thread making a progress call at SCHED_IDLE says so in a
 * record of its own, and a thread that starts to wait natively raises it to
 * SCHED_OTHER until its call returns (progress_unstarve()); the thread
 * takes itself back to SCHED_IDLE as it leaves. Records live for the
 * process (engine threads are few and created once).
 */
struct poker {
	pthread_mutex_t lock;  /* orders boosting against leaving the call */
	pid_t tid;
	_Atomic int inside;    /* in PMPI_Iprobe at SCHED_IDLE */
	int boosted;           /* raised by a waiter (under lock) */
	struct poker *next;    /* immutable once published */
};

static _Atomic(struct poker *) pokers;
static _Atomic int boost_denied; /* leaving SCHED_IDLE is not permitted */

/* This thread's record, NULL when it does not poll at SCHED_IDLE (decided at
 * its first call: the engine sets an idle thread's policy before it polls,
 * and with PIANO_IDLE_BOOST=1 it polls at SCHED_OTHER). */
static struct poker *my_poker(void)
{
	static _Thread_local int known;
	static _Thread_local struct poker *mine;
	if (known)
		return mine;
	known = 1;
	if (sched_getscheduler(0) != SCHED_IDLE)
		return NULL;
	struct poker *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	pthread_mutex_init(&p->lock, NULL);
	p->tid = (pid_t)syscall(SYS_gettid);
	p->next = atomic_load(&pokers);
	while (!atomic_compare_exchange_weak(&pokers, &p->next, p))
		;
	mine = p;
	return p;
}

static int set_policy(pid_t tid, int policy)
{
	struct sched_param sp = { .sched_priority = 0 };
	return sched_setscheduler(tid, policy, &sp);
}

void progress_poke(void)
{
	int flag = 0;
	if (!gate_enter())
		return; /* the application holds the gate closed (gate.c) */
	struct poker *me = my_poker();
	if (me) {
		/* seq_cst store, then load: either the waiter that arrives now
		 * sees us inside, or we see it and stand back, as
		 * timed_progress() does. */
		atomic_store(&me->inside, 1);
		if (waiter_native()) {
			atomic_store_explicit(&me->inside, 0, memory_order_relaxed);
			gate_leave();
			return;
		}
	}
	PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
	if (me) {
		pthread_mutex_lock(&me->lock);
		atomic_store_explicit(&me->inside, 0, memory_order_relaxed);
		int back = me->boosted;
		me->boosted = 0;
		pthread_mutex_unlock(&me->lock);
		if (back)
			set_policy(0, SCHED_IDLE);
	}
	gate_leave();
}

void progress_unstarve(void)
{
	for (struct poker *p = atomic_load(&pokers); p; p = p->next) {
		if (!atomic_load(&p->inside))
			continue;
		bool wait = atomic_load_explicit(&boost_denied, memory_order_relaxed);
		if (!wait) {
			pthread_mutex_lock(&p->lock);
			if (atomic_load_explicit(&p->inside, memory_order_relaxed) && !p->boosted) {
				if (set_policy(p->tid, SCHED_OTHER) == 0)
					p->boosted = 1;
				else
					wait = true;
			}
			pthread_mutex_unlock(&p->lock);
			if (wait)
				atomic_store_explicit(&boost_denied, 1, memory_order_relaxed);
		}
		/* Not permitted (no CAP_SYS_NICE, RLIMIT_NICE too low): let it
		 * have a CPU until its call returns: yield, then sleep (a
		 * progress call is short unless it was starved). */
		for (unsigned spins = 0; wait && atomic_load(&p->inside); spins++) {
			if (spins < 64)
				sched_yield();
			else
				nanosleep(&(struct timespec){ .tv_nsec = 50000 }, NULL);
		}
	}
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
	uint64_t t0 = now_ns();
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
	/* Started graphs: their requests are theirs, not the application's,
	 * so the engine tests them (src/coll/graph_list.c). */
	if (graphs_running() > 0 && gate_enter()) {
		work += graphs_progress();
		gate_leave();
	}
	return work + call_was_busy(now_ns() - t0);
}

/* Cost of an empty progress call on this MPI and machine: median of a few
 * dozen Iprobes with nothing in flight (MPI_Init has just returned). */
static uint64_t empty_call_ns(void)
{
	enum { N = 33 };
	uint64_t v[N];
	for (int i = 0; i < N; i++) {
		uint64_t t0 = now_ns();
		progress_poke();
		v[i] = now_ns() - t0;
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
		uint64_t now = now_ns();
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
		sched_yield();
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

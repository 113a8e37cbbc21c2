/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Idle threads: one per object of PIANO_IDLE_LEVEL, bound to it, running at
 * SCHED_IDLE so that they use only the cores the application leaves idle,
 * throttled by a pause between rounds; they park (park.c) when no queue
 * holds a task. Which queues a round polls: poll_idle (policy.c).
 *
 * Paused (piano_idle_pause): engine->idle_state goes from IDLE_RUN to
 * IDLE_PAUSED, and each thread, between two rounds, sleeps on that word
 * while it holds IDLE_PAUSED. piano_idle_resume() and idle_stop() store
 * another value and then wake the word, so a thread that read IDLE_PAUSED
 * just before one of them sees the new value in futex_wait (which compares
 * atomically) or is woken. idle_stop() stores IDLE_STOP, which
 * later pauses and resumes leave alone (compare-and-swap from the state
 * they undo).
 */
#include "idle.h"
#include "park.h"
#include "policy.h"
#include "queue.h"
#include "topo.h"
#include "warn.h"
#include "sys.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_flag warned_idle = ATOMIC_FLAG_INIT;
static atomic_flag warned_boost = ATOMIC_FLAG_INIT;

/* An idle thread bound to a single CPU that found no work for this long
 * pauses by sleeping, not with a sched_yield() loop (see idle_main). */
#define IDLE_QUIET_NS 10000000u

/* A pause overshooting its length by this much means the core was busy,
 * unless the thread spent less than that waiting runnable (below). */
#define IDLE_STARVED_NS 200000u

/* The pause of a thread whose last pause found its core busy: a sleep, so
 * that it is not runnable there meanwhile, doubling while the core stays
 * busy, up to the limit. */
#define IDLE_STARVED_NAP_US 4000
#define IDLE_STARVED_NAP_MAX_US 64000

struct idle_thread {
	struct piano_engine *e;
	hwloc_obj_t obj;
	struct poll_span span; /* the queues it polls (poll_idle) */
	bool single;   /* bound to one CPU: it cannot leave a busy one */
	pthread_t tid;
};

/* sleep: pause by sleeping even below PIANO_IDLE_YIELD_US. */
static void pause_us(struct piano_engine *e, long us, bool sleep)
{
	const struct piano_config *cfg = &e->cfg;
	/* us > 0: park_nap(0) would mean "no timeout". */
	if (us > 0 && (us >= cfg->idle_yield_us || sleep)) {
		park_nap(e, (uint64_t)us * 1000u);
		return;
	}
	/* Sleeps shorter than the timer slack (~50 us) are not honoured by the
	 * kernel: yield instead, which costs nothing when the core is idle. */
	uint64_t end = sys_now_ns() + (uint64_t)us * 1000u;
	do
		sys_yield();
	while (sys_now_ns() < end);
}

static void idle_setup(struct idle_thread *it)
{
	struct piano_engine *e = it->e;
	topo_bind_thread(e, it->obj->cpuset);
	if (sys_sched_idle() != 0) {
		if (!atomic_flag_test_and_set(&warned_idle))
			piano_warn("SCHED_IDLE unavailable; idle threads run at the lowest "
			           "SCHED_OTHER priority (nice 19) and may steal time from compute");
		sys_sched_lowest();
	}
}

/* Whether this thread may switch to SCHED_OTHER while holding a queue
 * (PIANO_IDLE_BOOST=1, not the default: see docs/architecture.md). */
static bool idle_can_boost(const struct piano_engine *e)
{
	if (!e->cfg.idle_boost)
		return false;
	if (sys_sched_normal() != 0) {
		if (!atomic_flag_test_and_set(&warned_boost))
			piano_warn("idle threads cannot leave SCHED_IDLE (no CAP_SYS_NICE, "
			           "RLIMIT_NICE too low): while every core is busy, an idle thread "
			           "holding a queue may delay it until the scheduler runs it again");
		return false;
	}
	sys_sched_idle();
	return true;
}

/*
 * Called after a pause that overshot (another thread had this CPU): if the
 * thread's object has other CPUs, leave this one. The kernel wakes a parked
 * idle thread next to its waker and does not reliably move it off a CPU
 * where a normal thread computes (measured, MPICH: a rank's idle thread
 * queued behind the rank's own computation while the other core ran a
 * peer's idle thread or idled; see docs/architecture.md). Excluding the
 * CPU migrates the thread at once; the full set is restored right away, so
 * the scheduler may bring it back when the CPU frees up.
 */
static void idle_leave_cpu(struct idle_thread *it)
{
	struct piano_engine *e = it->e;
	int cpu = sys_current_cpu();
	if (cpu < 0)
		return;
	hwloc_bitmap_t set = hwloc_bitmap_dup(it->obj->cpuset);
	if (!set)
		return;
	if (e->bind_set)
		hwloc_bitmap_and(set, set, e->bind_set);
	hwloc_bitmap_t others = hwloc_bitmap_dup(set);
	if (!others)
		goto free_set;
	hwloc_bitmap_clr(others, (unsigned)cpu);
	if (hwloc_bitmap_iszero(others))
		goto free_others;
	if (hwloc_set_cpubind(e->topo, others, HWLOC_CPUBIND_THREAD) == 0)
		hwloc_set_cpubind(e->topo, set, HWLOC_CPUBIND_THREAD);
free_others:
	hwloc_bitmap_free(others);
free_set:
	hwloc_bitmap_free(set);
}

static void *idle_main(void *arg)
{
	struct idle_thread *it = arg;
	struct piano_engine *e = it->e;
	const struct piano_config *cfg = &e->cfg;
	idle_setup(it);
	struct poller p;
	poller_init(&p, e, PIANO_POINT_IDLE);
	p.idle_thread = idle_can_boost(e);
	p.rescue_tid = sys_gettid();
	bool starved = false;
	long nap_us = 0; /* the last starved pause (IDLE_STARVED_NAP_US) */
	int sched_fd = sys_schedstat_open(); /* this thread's run delay */
	uint64_t quiet_since = 0; /* start of the current run of rounds without work */
	for (uint64_t r = 0; !engine_stopping(e); r++) {
		/* Acquire is not needed: nothing is published with the state. */
		if (atomic_load_explicit(&e->idle_state, memory_order_relaxed) == IDLE_PAUSED) {
			sys_futex_wait(&e->idle_state, IDLE_PAUSED, 0);
			starved = false;
			quiet_since = 0;
			continue;
		}
		bool busy = true;
		unsigned work = 0;
		/* After a pause that lasted far longer than asked, other threads
		 * had the core: it is not idle, so do not poll (a round would
		 * steal time from the computation, more so with PIANO_IDLE_BOOST);
		 * the timer thread covers busy cores. */
		if (!starved) {
			work = poll_idle(&p, &it->span, r, &busy);
			poller_end_round(&p, work);
		}
		long us;
		if (work)
			us = 0; /* work begets work (a transfer in flight): only yield */
		else if (busy)
			us = cfg->idle_period_us;
		else if (queue_any_busy(e))
			us = cfg->idle_period_us * cfg->idle_coef;
		else {
			park_wait(e, 0);
			starved = false;
			quiet_since = 0;
			continue;
		}
		uint64_t t0 = sys_now_ns();
		if (work || !quiet_since)
			quiet_since = t0;
		/* On one CPU shared with a computation (explicit placement), this
		 * kernel's scheduler kept picking the yielding SCHED_IDLE thread
		 * over the runnable computation for seconds; a thread with other
		 * CPUs leaves instead (idle_leave_cpu). Sleeps end it, at the cost
		 * of a slower reaction, so only after IDLE_QUIET_NS without work.
		 * Starved, a thread that kept yielding stayed runnable beside the
		 * computations, and the scheduler still gave it a slice every ~20
		 * ms (LAMMPS peptide, 2 ranks on 2 cores: ~600 slices of ~50 µs
		 * per rank in 11 s, each a preemption of a rank's computation):
		 * asleep it is not runnable, and finds out at its next wake-up
		 * whether a core is free (core.idle_starved). */
		if (starved) {
			nap_us = nap_us ? (nap_us * 2 < IDLE_STARVED_NAP_MAX_US ? nap_us * 2
			                                                         : IDLE_STARVED_NAP_MAX_US)
			                : IDLE_STARVED_NAP_US;
			us = nap_us;
		} else
			nap_us = 0;
		bool sleep = starved || (it->single && t0 - quiet_since > IDLE_QUIET_NS);
		bool sleeping = us > 0 && (us >= cfg->idle_yield_us || sleep); /* pause_us() */
		int64_t delay0 = sleeping ? sys_run_delay_ns(sched_fd) : -1;
		pause_us(e, us, sleep);
		bool was_starved = starved;
		starved = sys_now_ns() - t0 > (uint64_t)us * 1000u + IDLE_STARVED_NS;
		/* A sleep may end late with the core idle: a virtual CPU that
		 * halted meanwhile is woken by its host late (on this project's
		 * VMs 200-280 us past 16-64 ms sleeps, more than half of them,
		 * on an idle machine), and the doubling naps then kept the
		 * thread from ever polling again. The core was busy only if
		 * the thread waited runnable. (A yield keeps it runnable: its
		 * overshoot is such a wait.) */
		if (starved && delay0 >= 0) {
			int64_t delay1 = sys_run_delay_ns(sched_fd);
			if (delay1 >= 0 && delay1 - delay0 < (int64_t)IDLE_STARVED_NS)
				starved = false;
		}
		/* Once: starved again where it went, every CPU is busy, and
		 * moving on would only add migrations to the computations. */
		if (starved && !was_starved)
			idle_leave_cpu(it);
	}
	if (sched_fd >= 0)
		close(sched_fd);
	return NULL;
}

static int idle_prepare(struct piano_engine *e, struct idle_thread *it, hwloc_obj_t obj)
{
	it->e = e;
	it->obj = obj;
	hwloc_bitmap_t set = hwloc_bitmap_dup(obj->cpuset);
	if (!set)
		return PIANO_ENOMEM;
	if (e->bind_set)
		hwloc_bitmap_and(set, set, e->bind_set);
	it->single = hwloc_bitmap_weight(set) == 1;
	hwloc_bitmap_free(set);
	return poll_span_init(e, obj->cpuset, &it->span);
}

int idle_start(struct piano_engine *e)
{
	hwloc_obj_type_t type;
	if (e->cfg.idle_level == LEVEL_NONE || topo_level_type(e->cfg.idle_level, &type))
		return 0;
	int n = hwloc_get_nbobjs_by_type(e->topo, type);
	if (n <= 0)
		return 0;
	struct idle_thread *its = calloc((size_t)n, sizeof(*its));
	if (!its)
		return PIANO_ENOMEM;
	e->idle_threads = its;
	for (int i = 0, k = 0; i < n; i++) {
		hwloc_obj_t obj = hwloc_get_obj_by_type(e->topo, type, (unsigned)i);
		/* With PIANO_BIND_CPUS, only objects that have one of its CPUs. */
		if (e->bind_set && !hwloc_bitmap_intersects(obj->cpuset, e->bind_set))
			continue;
		int rc = idle_prepare(e, &its[k], obj);
		if (rc)
			return rc;
		int err = pthread_create(&its[k].tid, NULL, idle_main, &its[k]);
		if (err) {
			piano_warn("cannot create an idle thread: %s", strerror(err));
			poll_span_free(&its[k].span);
			return PIANO_ESYS;
		}
		sys_thread_name(its[k].tid, "piano-idle");
		e->nidle = ++k;
	}
	return 0;
}

/* Moves idle_state from `from` to `to` (see the top); wakes the threads
 * when they may be asleep on it. */
static void idle_state_move(struct piano_engine *e, uint32_t from, uint32_t to)
{
	uint32_t expected = from;
	if (atomic_compare_exchange_strong(&e->idle_state, &expected, to) && from == IDLE_PAUSED)
		sys_futex_wake(&e->idle_state, INT32_MAX);
}

PIANO_API int piano_idle_pause(void)
{
	struct piano_engine *e = engine_get();
	if (!e)
		return PIANO_ENOTINIT;
	idle_state_move(e, IDLE_RUN, IDLE_PAUSED);
	return 0;
}

PIANO_API int piano_idle_resume(void)
{
	struct piano_engine *e = engine_get();
	if (!e)
		return PIANO_ENOTINIT;
	idle_state_move(e, IDLE_PAUSED, IDLE_RUN);
	return 0;
}

void idle_stop(struct piano_engine *e)
{
	atomic_store(&e->idle_state, IDLE_STOP);
	sys_futex_wake(&e->idle_state, INT32_MAX);
	for (int i = 0; i < e->nidle; i++) {
		pthread_join(e->idle_threads[i].tid, NULL);
		poll_span_free(&e->idle_threads[i].span);
	}
	free(e->idle_threads);
	e->idle_threads = NULL;
	e->nidle = 0;
}

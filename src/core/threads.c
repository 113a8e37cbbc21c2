/*
 * Progression threads: idle threads (SCHED_IDLE, bound, throttled), the
 * timer thread (normal priority, periodic) and the blocking helpers.
 * All of them park on engine->park_seq when no queue holds a task.
 */
#include "internal.h"
#include "sys.h"

#include <stdlib.h>
#include <string.h>

static atomic_flag warned_idle = ATOMIC_FLAG_INIT;
static atomic_flag warned_boost = ATOMIC_FLAG_INIT;
static atomic_flag warned_bind = ATOMIC_FLAG_INIT;

static bool stopping(struct piano_engine *e)
{
	return atomic_load_explicit(&e->stopping, memory_order_acquire);
}

/* Sleeps until a submit bumps park_seq (or timeout_ns, 0 = none). */
static void park(struct piano_engine *e, uint64_t timeout_ns)
{
	uint32_t seq = atomic_load_explicit(&e->park_seq, memory_order_seq_cst);
	atomic_fetch_add_explicit(&e->nparked, 1, memory_order_seq_cst);
	if (!engine_has_work(e) && !stopping(e))
		sys_futex_wait((uint32_t *)&e->park_seq, seq, timeout_ns);
	atomic_fetch_sub_explicit(&e->nparked, 1, memory_order_seq_cst);
}

/* ------------------------------------------------------------ idle threads */

/* An idle thread bound to a single CPU that found no work for this long
 * pauses by sleeping, not with a sched_yield() loop (see idle_main). */
#define IDLE_QUIET_NS 10000000u

/* A pause overshooting its length by this much means the core was busy. */
#define IDLE_STARVED_NS 200000u

struct idle_thread {
	struct piano_engine *e;
	hwloc_obj_t obj;
	int *down;     /* queues inside obj's cpuset, polled every round */
	int ndown;
	int cover;     /* deepest queue covering obj: the thread's own level */
	int anchor;    /* first ancestor queue polled at a divided frequency */
	bool single;   /* bound to one CPU: it cannot leave a busy one */
	pthread_t tid;
};

/* Sleeps for ns, or until threads_stop() or a submit wakes parked threads:
 * finalize never waits for a long idle pause or timer period. */
static void engine_sleep(struct piano_engine *e, uint64_t ns)
{
	uint32_t seq = atomic_load_explicit(&e->park_seq, memory_order_seq_cst);
	if (!stopping(e))
		sys_futex_wait((uint32_t *)&e->park_seq, seq, ns);
}

/* sleep: pause by sleeping even below PIANO_IDLE_YIELD_US. */
static void pause_us(struct piano_engine *e, long us, bool sleep)
{
	const struct piano_config *cfg = &e->cfg;
	/* us > 0: engine_sleep(0) would mean "no timeout". */
	if (us > 0 && (us >= cfg->idle_yield_us || sleep)) {
		engine_sleep(e, (uint64_t)us * 1000u);
		return;
	}
	/* Sleeps shorter than the timer slack (~50 us) are not honoured by the
	 * kernel: yield instead, which costs nothing when the core is idle. */
	uint64_t end = sys_now_ns() + (uint64_t)us * 1000u;
	do
		sys_yield();
	while (sys_now_ns() < end);
}

static unsigned idle_round(struct poller *p, struct idle_thread *it, uint64_t r, bool *busy)
{
	struct piano_engine *e = it->e;
	unsigned work = 0;
	*busy = false;
	for (int i = 0; i < it->ndown; i++) {
		struct piano_queue *q = &e->queues[it->down[i]];
		*busy |= queue_busy(q);
		work += queue_poll(p, q);
	}
	uint64_t base = e->queues[it->cover].div;
	for (int a = it->anchor; a >= 0; a = e->queues[a].parent) {
		struct piano_queue *q = &e->queues[a];
		*busy |= queue_busy(q);
		/* A parent is shared by all its children's pollers: each polls it
		 * 1/nsiblings of the time (div(own) / div(ancestor) rounds), so the
		 * parent sees about one poll per round (PIOMan-2015, IV-A). */
		if (r % (base / q->div) == 0)
			work += queue_poll(p, q);
	}
	return work;
}

/* Binds the calling thread to `set` restricted to PIANO_BIND_CPUS. */
static void bind_thread(struct piano_engine *e, hwloc_const_cpuset_t set)
{
	hwloc_bitmap_t b = hwloc_bitmap_dup(set ? set : hwloc_topology_get_topology_cpuset(e->topo));
	if (!b)
		return;
	if (e->bind_set)
		hwloc_bitmap_and(b, b, e->bind_set);
	if (!hwloc_bitmap_iszero(b) && hwloc_set_cpubind(e->topo, b, HWLOC_CPUBIND_THREAD) != 0 &&
	    !atomic_flag_test_and_set(&warned_bind))
		piano_warn("cannot bind piano threads (hwloc_set_cpubind failed); they run unbound");
	hwloc_bitmap_free(b);
}

static void idle_setup(struct idle_thread *it)
{
	struct piano_engine *e = it->e;
	bind_thread(e, it->obj->cpuset);
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
	sys_thread_name("piano-idle");
	idle_setup(it);
	struct poller p;
	poller_init(&p, e, PIANO_POINT_IDLE);
	p.idle_thread = idle_can_boost(e);
	bool starved = false;
	uint64_t quiet_since = 0; /* start of the current run of rounds without work */
	for (uint64_t r = 0; !stopping(e); r++) {
		bool busy = true;
		unsigned work = 0;
		/* After a pause that lasted far longer than asked, other threads
		 * had the core: it is not idle, so do not poll (a round would
		 * steal time from the computation, more so with PIANO_IDLE_BOOST);
		 * the timer thread covers busy cores. */
		if (!starved) {
			work = idle_round(&p, it, r, &busy);
			poller_end_round(&p, work);
		}
		long us;
		if (work)
			us = 0; /* work begets work (a transfer in flight): only yield */
		else if (busy)
			us = cfg->idle_period_us;
		else if (engine_has_work(e))
			us = cfg->idle_period_us * cfg->idle_coef;
		else {
			park(e, 0);
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
		 * of a slower reaction, so only after IDLE_QUIET_NS without work. */
		pause_us(e, us, it->single && t0 - quiet_since > IDLE_QUIET_NS);
		bool was_starved = starved;
		starved = sys_now_ns() - t0 > (uint64_t)us * 1000u + IDLE_STARVED_NS;
		/* Once: starved again where it went, every CPU is busy, and
		 * moving on would only add migrations to the computations. */
		if (starved && !was_starved)
			idle_leave_cpu(it);
	}
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
	it->down = calloc((size_t)e->nqueues, sizeof(int));
	if (!it->down)
		return PIANO_ENOMEM;
	for (int i = 0; i < e->nqueues; i++)
		if (hwloc_bitmap_isincluded(e->queues[i].cpuset, obj->cpuset))
			it->down[it->ndown++] = i;
	int cover = topo_queue_for_set(e, obj->cpuset);
	it->cover = cover;
	bool cover_down = hwloc_bitmap_isincluded(e->queues[cover].cpuset, obj->cpuset);
	it->anchor = cover_down ? e->queues[cover].parent : cover;
	return 0;
}

static int idle_start(struct piano_engine *e)
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
			free(its[k].down);
			return PIANO_ESYS;
		}
		e->nidle = ++k;
	}
	return 0;
}

/* ------------------------------------------------------------ timer thread */

/*
 * The safety net polls only the queues that nobody polled during the last
 * period: where idle threads or waiters keep a queue moving, a timer round
 * would add nothing but a preemption of whatever computes on its core.
 */
static unsigned timer_round(struct poller *p, uint64_t period)
{
	struct piano_engine *e = p->e;
	uint64_t now = sys_now_ns();
	unsigned work = 0;
	for (int i = e->nqueues - 1; i >= 0; i--) {
		struct piano_queue *q = &e->queues[i];
		if (atomic_load_explicit(&q->polled_ns, memory_order_relaxed) + period > now)
			continue;
		work += queue_poll(p, q);
	}
	return work;
}

/*
 * With PIANO_TIMER_MAX_US above the period, the period doubles after each
 * round that did no work, up to that limit, and is back to
 * PIANO_TIMER_PERIOD_US after a round that did some or a park. A wake-up
 * that preempts a computing thread costs tens of µs on a virtual machine:
 * while the pending tasks wait for a remote peer, the timer then wakes less
 * often, at the price of a longer reaction when every core is busy (not
 * the default: docs/performance.md has both numbers).
 */
static uint64_t timer_next(const struct piano_engine *e, uint64_t cur, unsigned work)
{
	uint64_t period = (uint64_t)e->cfg.timer_period_us * 1000u;
	uint64_t max = (uint64_t)e->cfg.timer_max_us * 1000u;
	if (work || max <= period)
		return period;
	return cur * 2 < max ? cur * 2 : max;
}

static void *timer_main(void *arg)
{
	struct piano_engine *e = arg;
	uint64_t period = (uint64_t)e->cfg.timer_period_us * 1000u;
	uint64_t sleep_ns = period;
	sys_thread_name("piano-timer");
	/* Explicitly, even without PIANO_BIND_CPUS: threads inherit the
	 * creator's binding, and an MPI launcher binds each rank to one core,
	 * where the timer would only take time from its own rank. */
	bind_thread(e, e->bind_set);
	struct poller p;
	poller_init(&p, e, PIANO_POINT_TIMER);
	while (!stopping(e)) {
		if (!engine_has_work(e)) {
			park(e, 0);
			sleep_ns = period;
			continue;
		}
		engine_sleep(e, sleep_ns);
		if (stopping(e))
			break;
		/* A queue counts as unpolled after the base period, whatever
		 * the current sleep: others' polls keep the timer quiet. */
		unsigned work = timer_round(&p, period);
		poller_end_round(&p, work);
		sleep_ns = timer_next(e, sleep_ns, work);
	}
	return NULL;
}

/* --------------------------------------------------------- blocking helpers */

bool helpers_try_take(struct piano_engine *e, struct piano_ltask *t)
{
	struct helper_pool *h = &e->helpers;
	long f = atomic_load_explicit(&h->nfree, memory_order_relaxed);
	do {
		if (f <= 0 || stopping(e))
			return false;
	} while (!atomic_compare_exchange_weak(&h->nfree, &f, f - 1));
	atomic_store_explicit(&t->state, PIANO_LTASK_BLOCKED, memory_order_relaxed);
	pthread_mutex_lock(&h->lock);
	t->next = h->head;
	h->head = t;
	pthread_cond_signal(&h->cond);
	pthread_mutex_unlock(&h->lock);
	return true;
}

static void helper_resubmit(struct piano_engine *e, struct piano_ltask *t)
{
	t->first_poll_ns = 0;
	atomic_store_explicit(&t->state, PIANO_LTASK_QUEUED, memory_order_relaxed);
	queue_push(e, &e->queues[t->queue], t);
}

/* Returns true when t finished (and must not be touched again). */
static bool helper_check_req(struct piano_ltask *t)
{
	unsigned req = atomic_load_explicit(&t->req, memory_order_acquire);
	if (!req)
		return false;
	ltask_finish(t, (req & REQ_CANCEL) ? DONE_CANCELED : DONE_COMPLETED);
	return true;
}

/*
 * Serves one handed-off task: block, and after an event run the task at
 * once rather than wait for a poller. A task with a blocking delay goes
 * back to its queue afterwards; a task with delay 0 is purely event-driven
 * and stays with the helper (block, run, block...) until it finishes, an
 * error, or the engine stops.
 */
static void helper_serve(struct piano_engine *e, struct poller *p, struct piano_ltask *t)
{
	for (;;) {
		if (helper_check_req(t))
			return;
		if (stopping(e))
			break;
		int r = t->block(t->arg, (int)e->cfg.block_timeout_ms);
		if (helper_check_req(t))
			return;
		if (r > 0) {
			p->t0 = sys_now_ns();
			unsigned w = ltask_run(p, t);
			poller_end_round(p, w >> 1);
			if (w & 1u)
				return;
		}
		if (r < 0 || t->block_delay_ns)
			break;
	}
	helper_resubmit(e, t);
}

static void *helper_main(void *arg)
{
	struct piano_engine *e = arg;
	struct helper_pool *h = &e->helpers;
	sys_thread_name("piano-block");
	bind_thread(e, e->bind_set); /* see timer_main */
	struct poller p;
	poller_init(&p, e, PIANO_POINT_BLOCK);
	pthread_mutex_lock(&h->lock);
	for (;;) {
		while (!h->head && !stopping(e))
			pthread_cond_wait(&h->cond, &h->lock);
		if (!h->head)
			break;
		struct piano_ltask *t = h->head;
		h->head = t->next;
		pthread_mutex_unlock(&h->lock);
		helper_serve(e, &p, t);
		atomic_fetch_add(&h->nfree, 1);
		pthread_mutex_lock(&h->lock);
	}
	pthread_mutex_unlock(&h->lock);
	return NULL;
}

static int helpers_start(struct piano_engine *e)
{
	struct helper_pool *h = &e->helpers;
	int n = (int)e->cfg.block_helpers;
	if (n == 0)
		return 0;
	h->threads = calloc((size_t)n, sizeof(pthread_t));
	if (!h->threads)
		return PIANO_ENOMEM;
	for (int i = 0; i < n; i++) {
		int err = pthread_create(&h->threads[i], NULL, helper_main, e);
		if (err) {
			piano_warn("cannot create a blocking helper thread: %s", strerror(err));
			return PIANO_ESYS;
		}
		h->nthreads++;
		atomic_fetch_add(&h->nfree, 1);
	}
	return 0;
}

/* ---------------------------------------------------------------- control */

int threads_start(struct piano_engine *e)
{
	struct helper_pool *h = &e->helpers;
	pthread_mutex_init(&h->lock, NULL);
	pthread_cond_init(&h->cond, NULL);
	if (!e->cfg.progression)
		return 0;
	int rc = idle_start(e);
	if (!rc && e->cfg.timer_period_us > 0) {
		int err = pthread_create(&e->timer_thread, NULL, timer_main, e);
		if (err) {
			piano_warn("cannot create the timer thread: %s", strerror(err));
			rc = PIANO_ESYS;
		} else {
			e->has_timer = 1;
		}
	}
	if (!rc)
		rc = helpers_start(e);
	if (rc)
		threads_stop(e);
	return rc;
}

void threads_stop(struct piano_engine *e)
{
	struct helper_pool *h = &e->helpers;
	atomic_store_explicit(&e->stopping, 1, memory_order_release);
	engine_wake_parked(e);
	for (int i = 0; i < e->nidle; i++) {
		pthread_join(e->idle_threads[i].tid, NULL);
		free(e->idle_threads[i].down);
	}
	free(e->idle_threads);
	e->idle_threads = NULL;
	e->nidle = 0;
	if (e->has_timer)
		pthread_join(e->timer_thread, NULL);
	e->has_timer = 0;
	pthread_mutex_lock(&h->lock);
	pthread_cond_broadcast(&h->cond);
	pthread_mutex_unlock(&h->lock);
	for (int i = 0; i < h->nthreads; i++)
		pthread_join(h->threads[i], NULL);
	free(h->threads);
	h->threads = NULL;
	h->nthreads = 0;
	atomic_store(&h->nfree, 0);
	pthread_mutex_destroy(&h->lock);
	pthread_cond_destroy(&h->cond);
}

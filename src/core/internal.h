/*
 * Internal structures of the core engine. Ownership rules are stated next to
 * each field: "submitters" = any thread calling piano_ltask_submit; "owner" =
 * the thread holding the queue's lock (the mask).
 */
#ifndef PIANO_INTERNAL_H
#define PIANO_INTERNAL_H

#include <piano/piano.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define PIANO_CACHELINE 64

/* ------------------------------------------------------------------ config */

enum piano_level { LEVEL_NONE = -1, LEVEL_MACHINE, LEVEL_PACKAGE, LEVEL_CORE, LEVEL_PU };

struct piano_config {
	int progression;          /* PIANO_PROGRESSION */
	int queue_level;          /* enum piano_level */
	int idle_level;           /* enum piano_level, LEVEL_NONE = no idle threads */
	long idle_period_us;
	long idle_coef;
	long idle_yield_us;
	int idle_boost;           /* PIANO_IDLE_BOOST */
	long timer_period_us;     /* 0 = no timer thread */
	long timer_max_us;        /* back-off limit of the period */
	long spin_us;
	long block_helpers;
	long block_delay_us;
	long block_timeout_ms;
	long location_refresh_us;
	long finalize_timeout_ms;
	int stats;
	char bind_cpus[256];      /* PIANO_BIND_CPUS, hwloc list; "" = anywhere */
};

/* Reads and validates the environment. PIANO_ECONFIG after printing why. */
int config_load(struct piano_config *cfg);
/* Set once config_load succeeded: piano_setting_get shows live values. */
void config_set_live(const struct piano_config *cfg);
const char *config_level_name(int level);

/* ------------------------------------------------------------------- tasks */

/* Bits of piano_ltask.req, set by any thread, read by whoever runs the task. */
#define REQ_COMPLETE 1u
#define REQ_CANCEL 2u

/* Bits of piano_ltask.done: the final status, published last (see ltask.c). */
#define DONE_COMPLETED 1u
#define DONE_CANCELED 2u
#define DONE_ANY (DONE_COMPLETED | DONE_CANCELED)

struct piano_ltask {
	/* Immutable while in flight. */
	piano_ltask_fn fn;
	void *arg;
	piano_ltask_block_fn block;
	piano_ltask_dtor_fn dtor;
	uint64_t block_delay_ns;
	unsigned flags;
	int bound_queue;           /* -1 = follow the submitting thread */
	/* Queue it was submitted to; written by the submitter before the push. */
	int queue;
	_Atomic int state;         /* enum piano_ltask_state, diagnostics + CAS at submit */
	_Atomic unsigned req;      /* REQ_* requests */
	piano_cond_t done;         /* DONE_* bits: the only thing waiters trust */
	/* Owned by the submitter until the push (release), then by the queue owner. */
	struct piano_ltask *next;
	uint64_t first_poll_ns;    /* owner: when polling without completion began */
	char name[32];
};

/* ------------------------------------------------------------------ queues */

struct piano_queue {
	/* Submission side: lock-free, written by submitters. Treiber stack. */
	_Alignas(PIANO_CACHELINE) _Atomic(struct piano_ltask *) sub_head;
	/* Tasks in this queue (submission list + main list). Incremented by
	 * submitters before the push, decremented by the owner when a task
	 * leaves; > 0 whenever a task is anywhere in the queue, so peeking it
	 * never misses a task in transit between the two lists. */
	_Atomic long nlive;
	_Atomic uint64_t submitted;

	/* Main side: the lock is a mask, only ever try-locked. */
	_Alignas(PIANO_CACHELINE) _Atomic int lock;
	struct piano_ltask *head, *tail; /* owner only */
	/* Start of the last round that held the lock: written by the owner,
	 * read (relaxed) by the timer thread, which skips queues that somebody
	 * polled during its last period. */
	_Atomic uint64_t polled_ns;

	/* Immutable after init. */
	_Alignas(PIANO_CACHELINE) int index;
	int parent;
	int depth;
	int nchildren;
	int *children;
	uint64_t div;               /* product of ancestors' arities (polling divisor) */
	hwloc_obj_t obj;
	hwloc_bitmap_t cpuset;
};

/* ----------------------------------------------------------------- stats */

enum { STAT_ROUNDS, STAT_RUN, STAT_EMPTY, STAT_TIME, STAT_COUNT };

/* One block per thread that ever polled; written only by that thread
 * (relaxed load+store), read by anyone (relaxed). Freed at finalize. */
struct stats_block {
	_Atomic uint64_t v[PIANO_POINT_COUNT][STAT_COUNT];
	struct stats_block *next;
};

/* ---------------------------------------------------------------- engine */

struct idle_thread;

/* handoff.c: tasks handed from a queue to a blocking helper. */
struct handoff {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct piano_ltask *head;    /* handed-off tasks, protected by lock */
	_Atomic long nfree;          /* helpers ready to take a task */
};

struct piano_engine {
	struct piano_config cfg;
	hwloc_topology_t topo;
	struct piano_queue *queues;
	int nqueues;
	int *cpu_leaf;              /* os cpu index -> leaf queue */
	int ncpus;
	unsigned gen;               /* engine generation, invalidates TLS caches */

	_Atomic int stopping;
	/* Parking: threads with nothing to do sleep on park_seq. A submitter
	 * that sees nparked > 0 bumps park_seq and wakes them. Both sides use
	 * seq_cst so one of them always sees the other (Dekker pattern). */
	_Atomic uint32_t park_seq;
	_Atomic int nparked;

	struct idle_thread *idle_threads;
	int nidle;
	pthread_t timer_thread;
	int has_timer;
	struct handoff handoff;
	pthread_t *helper_threads;
	int nhelpers;
	hwloc_bitmap_t bind_set;    /* PIANO_BIND_CPUS parsed, NULL = anywhere */

	pthread_mutex_t stats_lock;
	_Atomic(struct stats_block *) stats_head;
};

extern _Atomic(struct piano_engine *) piano_engine_g;

static inline struct piano_engine *engine_get(void)
{
	return atomic_load_explicit(&piano_engine_g, memory_order_acquire);
}

static inline bool engine_stopping(struct piano_engine *e)
{
	return atomic_load_explicit(&e->stopping, memory_order_acquire);
}

/* Whether anything besides explicit polling makes progress. */
static inline bool engine_has_threads(const struct piano_engine *e)
{
	return e->nidle > 0 || e->has_timer;
}

/* topo.c */
int topo_build(struct piano_engine *e);
void topo_free(struct piano_engine *e);
int topo_queue_for_set(const struct piano_engine *e, hwloc_const_cpuset_t set);
int topo_level_type(int level, hwloc_obj_type_t *type);
/* Binds the calling thread to `set` (NULL = the machine) within PIANO_BIND_CPUS. */
void topo_bind_thread(struct piano_engine *e, hwloc_const_cpuset_t set);

/* Poller context: who polls, and its counters. */
struct poller {
	struct piano_engine *e;
	int point;
	struct stats_block *st;
	bool idle_thread;           /* may boost to SCHED_OTHER while holding a queue */
	bool boosted;
	uint64_t t0;                /* start of the current busy round, 0 if none */
};

/* queue.c */
void queue_push(struct piano_queue *q, struct piano_ltask *t);
unsigned queue_poll(struct poller *p, struct piano_queue *q);
static inline bool queue_busy(struct piano_queue *q)
{
	return atomic_load_explicit(&q->nlive, memory_order_seq_cst) > 0;
}
/* Whether any queue holds a task. */
bool queue_any_busy(const struct piano_engine *e);

/* park.c */
void park_wait(struct piano_engine *e, uint64_t timeout_ns);
void park_nap(struct piano_engine *e, uint64_t ns);
void park_notify(struct piano_engine *e);
void park_wake(struct piano_engine *e);

/* ltask.c */
void ltask_finish(struct piano_ltask *t, unsigned done);
void ltask_enqueue(struct piano_engine *e, struct piano_ltask *t);
unsigned ltask_run(struct poller *p, struct piano_ltask *t);
extern _Thread_local struct piano_ltask *ltask_current_tls;

/* location.c */
/* Leaf queue of the CPU the calling thread runs on. */
int location_leaf(struct piano_engine *e);
/* Smallest queue containing the calling thread's binding. */
int location_bind_queue(struct piano_engine *e);

/* poll.c */
void poller_init(struct poller *p, struct piano_engine *e, int point);
void poller_end_round(struct poller *p, unsigned work);
unsigned poll_branch(struct poller *p, int leaf);
unsigned poll_all(struct poller *p);
/* The queues an idle thread polls, for an object's cpuset. */
struct poll_span {
	int *down;     /* queues inside the cpuset, polled every round */
	int ndown;
	int cover;     /* deepest queue covering the cpuset: the thread's own level */
	int anchor;    /* first ancestor queue polled at a divided frequency */
};
int poll_span_init(struct piano_engine *e, hwloc_const_cpuset_t set, struct poll_span *s);
void poll_span_free(struct poll_span *s);
/* Round r of an idle thread; *busy: whether a queue of the span held a task. */
unsigned poll_idle(struct poller *p, const struct poll_span *s, uint64_t r, bool *busy);
/* The queues that nobody polled during the last period_ns. */
unsigned poll_unpolled(struct poller *p, uint64_t period_ns);

/* idle.c, timer.c */
int idle_start(struct piano_engine *e);
void idle_stop(struct piano_engine *e);
int timer_start(struct piano_engine *e);
void timer_stop(struct piano_engine *e);

/* helpers.c */
int helpers_start(struct piano_engine *e);
void helpers_stop(struct piano_engine *e);

/* handoff.c */
void handoff_init(struct handoff *h);
void handoff_destroy(struct handoff *h);
/* Gives t to a free helper; false if none is free or the engine stops. */
bool handoff_offer(struct piano_engine *e, struct piano_ltask *t);
/* Waits for a task; NULL once the engine stops and none is left. */
struct piano_ltask *handoff_take(struct piano_engine *e);
/* A helper is ready to take a task. */
void handoff_ready(struct handoff *h);
/* Wakes the helpers waiting in handoff_take (the engine stops). */
void handoff_close(struct handoff *h);

/* stats.c */
struct stats_block *stats_local(struct piano_engine *e);
void stats_add(struct stats_block *b, int point, int stat, uint64_t n);
void stats_free_all(struct piano_engine *e);
/* The table of piano_stats_print, given the thread count of each point. */
void stats_print(const int nthreads[PIANO_POINT_COUNT]);

/* cond.c */
/* Sleeps until a bit of mask is set or the deadline (sys_now_ns, UINT64_MAX
 * = none) passes: 0 or PIANO_ETIMEDOUT. */
int cond_block(piano_cond_t *c, uint32_t mask, uint64_t deadline);

#include "warn.h"

#endif

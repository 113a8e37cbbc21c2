/*
 * Internal structures of the core engine. Ownership rules are stated next to
 * each field: "submitters" = any thread calling piano_ltask_submit; "owner" =
 * the thread holding the queue's lock (the mask).
 */
#ifndef PIANO_INTERNAL_H
#define PIANO_INTERNAL_H

#include <piano/piano.h>

#include <hwloc.h>

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

struct helper_pool {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct piano_ltask *head;    /* handed-off tasks, protected by lock */
	_Atomic long nfree;          /* helpers ready to take a task */
	pthread_t *threads;
	int nthreads;
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
	struct helper_pool helpers;
	hwloc_bitmap_t bind_set;    /* PIANO_BIND_CPUS parsed, NULL = anywhere */

	pthread_mutex_t stats_lock;
	_Atomic(struct stats_block *) stats_head;
};

extern _Atomic(struct piano_engine *) piano_engine_g;

static inline struct piano_engine *engine_get(void)
{
	return atomic_load_explicit(&piano_engine_g, memory_order_acquire);
}

/* topo.c */
int topo_build(struct piano_engine *e);
void topo_free(struct piano_engine *e);
int topo_queue_for_set(const struct piano_engine *e, hwloc_const_cpuset_t set);
int topo_level_type(int level, hwloc_obj_type_t *type);

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
void queue_push(struct piano_engine *e, struct piano_queue *q, struct piano_ltask *t);
unsigned queue_poll(struct poller *p, struct piano_queue *q);
static inline bool queue_busy(struct piano_queue *q)
{
	return atomic_load_explicit(&q->nlive, memory_order_seq_cst) > 0;
}
bool engine_has_work(struct piano_engine *e);
void engine_wake_parked(struct piano_engine *e);

/* ltask.c */
void ltask_finish(struct piano_ltask *t, unsigned done);
unsigned ltask_run(struct poller *p, struct piano_ltask *t);
extern _Thread_local struct piano_ltask *ltask_current_tls;

/* engine.c: thread-local location and polling helpers */
void poller_init(struct poller *p, struct piano_engine *e, int point);
void poller_end_round(struct poller *p, unsigned work);
int engine_local_leaf(struct piano_engine *e);
int engine_bind_queue(struct piano_engine *e);
unsigned engine_poll_branch(struct poller *p, int leaf);
unsigned engine_poll_all(struct poller *p);
/* Whether anything besides explicit polling makes progress. */
bool engine_has_threads(const struct piano_engine *e);

/* threads.c */
int threads_start(struct piano_engine *e);
void threads_stop(struct piano_engine *e);
bool helpers_try_take(struct piano_engine *e, struct piano_ltask *t);
void helpers_stop(struct piano_engine *e);

/* stats.c */
struct stats_block *stats_local(struct piano_engine *e);
void stats_add(struct stats_block *b, int point, int stat, uint64_t n);
void stats_free_all(struct piano_engine *e);

/* cond.c */
/* spin_us < 0: PIANO_SPIN_US. */
int cond_wait_poll(piano_cond_t *c, uint32_t mask, long timeout_us, int poll_queue, long spin_us);

#include "warn.h"

#endif

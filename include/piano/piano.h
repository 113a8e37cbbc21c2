/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * piano — portable asynchronous progression engine.
 *
 * Public API of the core engine (libpiano). Light tasks ("ltasks") are small
 * callbacks that a communication library submits to the engine; the engine
 * runs them at polling points (explicit polls and waits, idle threads, a timer
 * thread, blocking helpers) until they declare themselves complete.
 *
 * Conventions: every call returns 0 or a negative PIANO_E* code (see
 * piano_strerror()), except ten that return a value: piano_poll() and
 * piano_poll_all() (the work done, >= 0, or a negative code),
 * piano_ltask_state() (a state, >= 0, or PIANO_EINVAL), piano_initialized()
 * (1 or 0), piano_cond_get() (the status bits), piano_strerror(),
 * piano_ltask_name() and piano_point_name() (strings; the last two NULL on a
 * bad argument), piano_ltask_current() (a task or NULL) and
 * piano_point_current() (a polling point, or -1). Output
 * arguments are written only on success; no call aborts the process.
 */
#ifndef PIANO_PIANO_H
#define PIANO_PIANO_H

#include <stddef.h>
#include <stdint.h>

/*
 * hwloc's types, declared rather than included: a const struct hwloc_bitmap_s *
 * is an hwloc_const_cpuset_t and a struct hwloc_topology * an hwloc_topology_t,
 * so callers that include <hwloc.h> pass hwloc's own types unchanged.
 */
struct hwloc_bitmap_s;
struct hwloc_topology;

#include <piano/settings.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(PIANO_BUILDING) && defined(__GNUC__)
#define PIANO_API __attribute__((visibility("default")))
#else
#define PIANO_API
#endif

#define PIANO_VERSION_MAJOR 0
#define PIANO_VERSION_MINOR 1
#define PIANO_VERSION_PATCH 0
#define PIANO_VERSION_STRING "0.1.0"

/* ------------------------------------------------------------------ errors */

enum piano_error {
	PIANO_OK = 0,
	PIANO_EINVAL = -1,     /* invalid argument */
	PIANO_ENOMEM = -2,     /* out of memory */
	PIANO_EBUSY = -3,      /* object in use (task queued or running) */
	PIANO_EDEADLK = -4,    /* wait from inside a running ltask */
	PIANO_ECANCELED = -5,  /* the ltask was cancelled */
	PIANO_EAGAIN = -6,     /* not complete yet (test calls) */
	PIANO_ETIMEDOUT = -7,  /* timed wait expired */
	PIANO_ECONFIG = -8,    /* invalid environment variable (message on stderr) */
	PIANO_ESYS = -9,       /* a system or hwloc call failed */
	PIANO_ENOTINIT = -10,  /* piano_init() has not been called */
	PIANO_ESTATE = -11,    /* operation not valid in the object's state */
	PIANO_ERANGE = -12,    /* index out of range */
};

/* Static string describing an error code (never NULL). */
PIANO_API const char *piano_strerror(int err);

/* ----------------------------------------------------------- engine life */

/*
 * Reads the settings of every registered layer (<piano/settings.h>: the
 * environment, see docs/configuration.md), builds the queue tree from the
 * hwloc topology and starts the progression threads. Reference counted: each
 * successful piano_init() needs one piano_finalize(). Returns PIANO_ECONFIG,
 * after printing every invalid variable and its accepted values, when the
 * environment is invalid. The first call also reports unknown PIANO_*
 * variables (piano_settings_check_env()).
 */
PIANO_API int piano_init(void);

/*
 * piano_init() with `n` overrides: each NAME=VALUE takes the place of the
 * environment's value of a registered setting, validated the same way
 * (PIANO_EINVAL for a name nobody registered). Overrides take effect only
 * when this call initialises piano; when piano is already initialised, it
 * adds a reference and reports each override that differs from the live
 * value on stderr.
 */
PIANO_API int piano_init_with(const struct piano_override *overrides, int n);

/*
 * Drops one reference. The last one runs pending ltasks to completion from the
 * calling thread (bounded: tasks still pending after PIANO_FINALIZE_TIMEOUT_MS
 * are reported and left), stops the threads and frees the engine. Prints the
 * statistics when PIANO_STATS=1.
 */
PIANO_API int piano_finalize(void);

/* 1 if the engine is initialised, 0 otherwise. */
PIANO_API int piano_initialized(void);

/*
 * Explicit polling point: runs the ltasks of the calling thread's local queue,
 * then of its ancestors (in no-thread mode: of every queue). Returns the
 * amount of work done (sum of the callbacks' return values plus tasks
 * finished), 0 when nothing was done, or a negative error code. Calling it
 * from inside an ltask returns 0 (polling is not re-entrant).
 */
PIANO_API int piano_poll(void);

/* Polls every queue of the machine, as the timer thread does. */
PIANO_API int piano_poll_all(void);

/*
 * Holds on the timer thread, for PIANO_TIMER_MODE=demand. In that mode the
 * timer ticks (polls the queues nobody polled during its period) only while
 * a hold is taken, the first tick one period after the hold that took the
 * count from 0: a layer holds while something it submitted needs progress
 * when every core is busy (an operation in flight, a thread blocked until a
 * task sees it done), not while its tasks merely stay queued. Taking and
 * dropping a hold never wakes the timer thread.
 * PIANO_TIMER_PREDICTED: nothing blocks on the engine during the hold and
 * its length is not known; after a streak of such holds that all ended
 * within a period (no tick could have come), the next one does not arm the
 * timer, until one lasts longer: that one gets its first tick late, 4 to 64
 * periods after it began (later while such streaks go on). Without the
 * flag the timer is always armed while held. A release passes the flags of its hold.
 * In the default mode (`queues`) the timer ticks while any queue holds a
 * task and holds change nothing. Returns 0, PIANO_EINVAL (unknown flag),
 * PIANO_ENOTINIT, or PIANO_ESTATE for a release without a hold.
 */
#define PIANO_TIMER_PREDICTED 1u
PIANO_API int piano_timer_hold(unsigned flags);
PIANO_API int piano_timer_release(unsigned flags);

/*
 * New work was submitted under a hold (an operation started while others
 * are in flight): if the timer has backed off (PIANO_TIMER_MAX_US), its
 * period is PIANO_TIMER_PERIOD_US again from now, so that the new work gets
 * its ticks at once rather than at the grown interval. Cheap when the timer
 * has not backed off (one load). Works in both timer modes. Returns 0 or
 * PIANO_ENOTINIT.
 */
PIANO_API int piano_timer_renew(void);

/* ------------------------------------------------------------------ ltasks */

/*
 * Task callback: does one bounded step of work and returns how much it did
 * (0 = nothing happened; drives the engine's back-off decisions).
 */
typedef unsigned (*piano_ltask_fn)(void *arg);

/*
 * Blocking callback: may sleep in the kernel (poll() on a file descriptor...)
 * for at most timeout_ms milliseconds. Returns > 0 when an event happened (the
 * engine then runs the task callback), 0 on timeout, < 0 on error (the task is
 * put back in its queue and polled normally).
 */
typedef int (*piano_ltask_block_fn)(void *arg, int timeout_ms);

/* Destructor of a PIANO_LTASK_NOWAIT task, called once it has finished. */
typedef void (*piano_ltask_dtor_fn)(void *arg);

typedef struct piano_ltask piano_ltask_t;

enum piano_ltask_flags {
	/* Default: the task repeats until piano_ltask_complete() is called. */
	PIANO_LTASK_REPEAT = 0,
	/* Runs once, then completes. */
	PIANO_LTASK_ONESHOT = 1u << 0,
	/* Nobody waits: the engine calls the destructor and frees the task when
	 * it finishes (completed or cancelled). The handle must not be used
	 * after a successful submit. */
	PIANO_LTASK_NOWAIT = 1u << 1,
};

enum piano_ltask_state {
	PIANO_LTASK_INIT = 0,   /* created, never submitted */
	PIANO_LTASK_QUEUED,     /* waiting in a queue */
	PIANO_LTASK_RUNNING,    /* its callback is running */
	PIANO_LTASK_BLOCKED,    /* a blocking helper sleeps on its behalf */
	PIANO_LTASK_COMPLETED,  /* finished normally */
	PIANO_LTASK_CANCELED,   /* cancelled before it completed */
};

/* Creates a task in state INIT. `flags` is an OR of piano_ltask_flags. */
PIANO_API int piano_ltask_create(piano_ltask_fn fn, void *arg, unsigned flags,
                                 piano_ltask_t **out);

/* Name used in diagnostics (copied, truncated to 31 characters). */
PIANO_API int piano_ltask_set_name(piano_ltask_t *t, const char *name);
PIANO_API const char *piano_ltask_name(const piano_ltask_t *t);

/* Destructor for a PIANO_LTASK_NOWAIT task (required for such tasks). */
PIANO_API int piano_ltask_set_dtor(piano_ltask_t *t, piano_ltask_dtor_fn dtor);

/*
 * Blocking option: once the task has been polled for `delay_us`
 * microseconds without completing (negative: PIANO_BLOCK_DELAY_US), a free
 * blocking helper thread calls `block` on its behalf and runs the task after
 * each event; the task then goes back to its queue. Used when every core is
 * busy and polling would be too slow. With delay_us = 0 the task is purely
 * event-driven: piano_ltask_submit() hands it to a free helper at once (to
 * its queue if none is free, then to a helper at its first poll) and it
 * stays there (block, run, block...) until it finishes. Only in state
 * INIT/COMPLETED/CANCELED.
 */
PIANO_API int piano_ltask_set_blocking(piano_ltask_t *t, piano_ltask_block_fn block,
                                       long delay_us);

/*
 * Binds the task to the smallest queue whose cpuset includes `set` (a
 * topology object's cpuset works too). Unbound tasks go to the queue that
 * matches the submitting thread's binding (the machine queue when unbound).
 */
PIANO_API int piano_ltask_bind(piano_ltask_t *t, const struct hwloc_bitmap_s *set);

/* Binds the task to queue number `queue` (see piano_queue_info()). */
PIANO_API int piano_ltask_bind_queue(piano_ltask_t *t, int queue);

/* Queue the task is bound to, or will be submitted to (-1: decided at submit). */
PIANO_API int piano_ltask_queue(const piano_ltask_t *t, int *queue);

/*
 * Submits the task: state INIT/COMPLETED/CANCELED -> QUEUED. Lock-free; any
 * thread, including a running ltask. PIANO_EBUSY if it is already in flight.
 */
PIANO_API int piano_ltask_submit(piano_ltask_t *t);

/*
 * Declares the task complete. From inside its callback: it completes when
 * the callback returns. From elsewhere: it completes at its next run, without
 * running again.
 */
PIANO_API int piano_ltask_complete(piano_ltask_t *t);

/*
 * Requests cancellation. A queued or blocked task never runs again; a running
 * one finishes its current call. The task reaches CANCELED at the next visit
 * of a poller to its queue; piano_ltask_wait() then returns PIANO_ECANCELED.
 * PIANO_ESTATE when the task is not in flight.
 */
PIANO_API int piano_ltask_cancel(piano_ltask_t *t);

/* 0 if completed, PIANO_ECANCELED if cancelled, PIANO_EAGAIN otherwise. */
PIANO_API int piano_ltask_test(const piano_ltask_t *t);

/*
 * Waits for the task to finish: polls explicitly for PIANO_SPIN_US, then
 * blocks (never blocks in no-thread mode). 0 if completed, PIANO_ECANCELED if
 * cancelled, PIANO_EDEADLK when called from inside a running ltask,
 * PIANO_ESTATE if the task was never submitted or is NOWAIT.
 */
PIANO_API int piano_ltask_wait(piano_ltask_t *t);

/* Current state (enum piano_ltask_state). */
PIANO_API int piano_ltask_state(const piano_ltask_t *t);

/* The task whose callback runs on this thread, or NULL. */
PIANO_API piano_ltask_t *piano_ltask_current(void);

/* Frees a task that is not in flight (PIANO_EBUSY otherwise). */
PIANO_API int piano_ltask_destroy(piano_ltask_t *t);

/* ------------------------------------------------------ completion objects */

/*
 * A status word set lock-free by a task and tested lock-free by anyone.
 * Bits 0..30 are status bits for the user; bit 31 is reserved (waiters).
 * The signal side touches the object with a single atomic operation followed
 * by a futex wake on its address, so a waiter may free the object as soon as
 * its wait returns. Plain struct so it can be embedded; use only through the
 * functions below.
 */
typedef struct piano_cond {
	uint32_t word;
} piano_cond_t;

#define PIANO_COND_MASK 0x7fffffffu

PIANO_API int piano_cond_init(piano_cond_t *c, uint32_t bits);
/* Sets `bits` and wakes the blocked waiters. */
PIANO_API int piano_cond_signal(piano_cond_t *c, uint32_t bits);
/* Clears `bits` (no waiter may be waiting on them). */
PIANO_API int piano_cond_clear(piano_cond_t *c, uint32_t bits);
/* Current status bits (lock-free, acquire). */
PIANO_API uint32_t piano_cond_get(const piano_cond_t *c);
/* 0 if any bit of `mask` is set, PIANO_EAGAIN otherwise. */
PIANO_API int piano_cond_test(const piano_cond_t *c, uint32_t mask);
/*
 * Waits until a bit of `mask` is set: polls explicitly for PIANO_SPIN_US,
 * then blocks on a futex. PIANO_EDEADLK from inside a running ltask unless
 * the condition already holds.
 */
PIANO_API int piano_cond_wait(piano_cond_t *c, uint32_t mask);
/* Same with a timeout in microseconds (PIANO_ETIMEDOUT when it expires). */
PIANO_API int piano_cond_wait_timeout(piano_cond_t *c, uint32_t mask, long timeout_us);
/*
 * Same as piano_cond_wait() with `spin_us` instead of PIANO_SPIN_US: a
 * caller that already spun on the condition by its own means blocks at
 * once with 0 (without progression threads, waits never block).
 */
PIANO_API int piano_cond_wait_spin(piano_cond_t *c, uint32_t mask, long spin_us);
/* Waits until every cond has a bit of `mask` set. */
PIANO_API int piano_cond_wait_all(piano_cond_t *const *conds, size_t n, uint32_t mask);
PIANO_API int piano_cond_destroy(piano_cond_t *c);

/* ------------------------------------------------------------ introspection */

/* Polling points, for statistics. */
enum piano_point {
	PIANO_POINT_EXPLICIT = 0, /* piano_poll() and waits */
	PIANO_POINT_IDLE,         /* idle threads */
	PIANO_POINT_TIMER,        /* timer thread */
	PIANO_POINT_BLOCK,        /* blocking helpers */
	PIANO_POINT_COUNT
};

struct piano_stats {
	uint64_t rounds;       /* polling rounds */
	uint64_t ltasks_run;   /* callback invocations */
	uint64_t empty_rounds; /* rounds that found nothing to do */
	uint64_t time_ns;      /* time spent in rounds that ran ltasks */
};

/* Counters of one polling point, summed over threads. */
PIANO_API int piano_stats_get(int point, struct piano_stats *out);
PIANO_API const char *piano_point_name(int point);
/* The polling point (enum piano_point) whose round runs the ltask callback
 * that calls this, or -1 outside a callback: lets a task tell which kind
 * of thread gave it its turn. */
PIANO_API int piano_point_current(void);
/* Prints the statistics table to stderr. */
PIANO_API int piano_stats_print(void);

struct piano_queue_info {
	int index;          /* 0 = machine (root) */
	int parent;         /* -1 for the root */
	int depth;          /* 0 for the root */
	int nchildren;
	const char *type;   /* hwloc object type name, e.g. "Package", "Core" */
	int logical_index;  /* hwloc logical index of the object */
	char cpuset[64];    /* hwloc list string, e.g. "0-3" (truncated) */
	uint64_t submitted; /* tasks submitted to it so far */
};

PIANO_API int piano_queue_count(int *n);
PIANO_API int piano_queue_info(int index, struct piano_queue_info *out);
/* Leaf queue the calling thread polls first (its cached location). */
PIANO_API int piano_queue_local(int *index);

/* Threads the engine started, by polling point (idle, timer, block). */
PIANO_API int piano_thread_count(int point, int *n);

/*
 * Pause the idle threads: each one finishes the round it is in, then
 * sleeps until piano_idle_resume() or piano_finalize(), polling nothing and
 * taking no CPU; explicit polls, waits, the timer and blocking helpers go
 * on. For a layer that finds idle threads doing harm (the MPI layer, when
 * they cannot leave SCHED_IDLE for calls over TCP: docs/mpi.md) or an
 * application entering a phase where no core is ever idle. Both calls are
 * idempotent, return at once (they do not wait for a round in progress)
 * and return 0 or PIANO_ENOTINIT.
 */
PIANO_API int piano_idle_pause(void);
PIANO_API int piano_idle_resume(void);

/*
 * The topology piano uses, an hwloc_topology_t (owned by piano, valid until
 * the last finalize).
 */
PIANO_API int piano_topology_get(struct hwloc_topology **out);

/* Settings: the registry of every layer's PIANO_* variables, <piano/settings.h>. */

#ifdef __cplusplus
}
#endif

#endif /* PIANO_PIANO_H */

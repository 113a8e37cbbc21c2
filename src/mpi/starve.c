/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Idle threads in the MPI. An idle thread polls at SCHED_IDLE so that it
 * only takes CPU time nobody else wants; but a thread at SCHED_IDLE that a
 * waking thread preempts in the middle of an MPI call keeps whatever the
 * call holds, and gets its CPU back only when nothing else wants it, which
 * may be hundreds of milliseconds:
 *
 * - a socket: Open MPI over TCP reads and writes its sockets in the
 *   progress call; preempted inside readv() or writev(), the thread owns
 *   the kernel's socket lock, so segments that arrive for that socket wait
 *   in its backlog, unseen by the application's poll(), and the kernel's
 *   retransmission timers find the socket busy too. Measured (a halo
 *   exchange over TCP, bench_meta): waits of 270-660 ms in about half of
 *   the runs, each with a TCP loss probe whose duplicate the receiver then
 *   reported (DSACK): the data had arrived, and sat in the backlog;
 * - a lock of the MPI's (a mutex, or Open MPI's event-loop swap lock, which
 *   the application's own wait then skips while it spins);
 * - a rendezvous taken over in that call: on Open MPI a probe that finds a
 *   large message receives it whole (vader's single-copy get of 16 MiB);
 *   MPICH's pt2pt/huge_dupcomm, 4 x 16 MiB, gave no result in 60 s in 2 of
 *   10 runs on a loaded 2-core node, 0 of 10 without piano.
 *
 * So an idle thread switches itself to SCHED_OTHER for the length of its
 * MPI calls (starve_raise()): a waking thread then does not preempt it at
 * once, and if it does, the scheduler gives the call its share like any
 * other thread's. Two system calls per round of the progress task (about
 * 3 us here), on a core nobody else wanted. Linux lets a thread leave
 * SCHED_IDLE only with CAP_SYS_NICE or an RLIMIT_NICE of at least 20 minus
 * its nice value; without them the thread stays at SCHED_IDLE (the local
 * rank 0 says so once).
 *
 * What remains for a thread that stays at SCHED_IDLE: it marks its
 * progress calls in a record of its own (starve_begin()), and a thread that
 * starts to wait natively raises it to SCHED_OTHER until its call returns
 * (starve_relieve()), or where that is not permitted either, gives it its
 * CPU for a while. Raised after the fact, a thread still waited 1-10 ms for
 * the CPU behind a spinning one (a two-thread measurement on this kernel);
 * the records live for the process (engine threads are few and created
 * once).
 */
#include "starve.h"
#include "sys.h"
#include "warn.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <unistd.h>

struct poker {
	pthread_mutex_t lock; /* orders raising against leaving the call */
	pid_t tid;
	_Atomic int inside; /* in a progress call at SCHED_IDLE */
	int boosted;        /* raised by a waiter (under lock) */
	_Atomic int raised; /* raised itself for its calls (written by its thread) */
	struct poker *next; /* immutable once published */
};

static _Atomic(struct poker *) pokers;
static _Atomic int boost_denied; /* leaving SCHED_IDLE is not permitted */
static _Atomic bool raise_calls; /* PIANO_MPI_RAISE_CALLS (relaxed: set once at set-up) */
static _Atomic bool tell_refusal;           /* this process reports a refusal (the node's rank 0) */
static _Atomic unsigned long long n_raised; /* PIANO_STATS (relaxed: it only counts) */

/* This thread's record, NULL when it does not poll at SCHED_IDLE (decided at
 * its first call: the engine sets an idle thread's policy before it polls,
 * and with PIANO_IDLE_BOOST=1 it polls at SCHED_OTHER). By the class the
 * thread put itself in, not only by its policy of the moment: the timer may
 * have raised it for a while (queue_rescue), and a thread recorded as not
 * polling at SCHED_IDLE would never be relieved again. */
static struct poker *my_poker(void)
{
	static _Thread_local int known;
	static _Thread_local struct poker *mine;
	if (known)
		return mine;
	known = 1;
	if (!sys_sched_home_idle() && sched_getscheduler(0) != SCHED_IDLE)
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

struct poker *starve_begin(void)
{
	struct poker *me = my_poker();
	if (me)
		atomic_store(&me->inside, 1); /* seq_cst: see starve.h */
	return me;
}

void starve_end(struct poker *me)
{
	if (!me)
		return;
	pthread_mutex_lock(&me->lock);
	atomic_store_explicit(&me->inside, 0, memory_order_relaxed);
	int back = me->boosted;
	me->boosted = 0;
	pthread_mutex_unlock(&me->lock);
	if (back)
		set_policy(0, SCHED_IDLE);
}

void starve_setup(bool raise, bool tell)
{
	atomic_store_explicit(&raise_calls, raise, memory_order_relaxed);
	atomic_store_explicit(&tell_refusal, tell, memory_order_relaxed);
}

bool starve_raising(void) { return atomic_load_explicit(&raise_calls, memory_order_relaxed); }

static void refused(void)
{
	if (atomic_exchange_explicit(&boost_denied, 1, memory_order_relaxed) ||
	    !atomic_load_explicit(&tell_refusal, memory_order_relaxed))
		return;
	warn_line("piano-mpi",
	          "idle threads cannot leave SCHED_IDLE for their MPI calls (no CAP_SYS_NICE, "
	          "RLIMIT_NICE below 20: `ulimit -e`): one preempted inside a call keeps what "
	          "the call holds (a socket, a lock) until its core is idle again (docs/mpi.md, "
	          "\"Idle threads in the MPI\"); PIANO_MPI_RAISE_CALLS=0 stops trying");
}

static _Thread_local bool raised_tl;

bool starve_raise(void)
{
	if (!atomic_load_explicit(&raise_calls, memory_order_relaxed) || raised_tl ||
	    atomic_load_explicit(&boost_denied, memory_order_relaxed))
		return false;
	struct poker *me = my_poker();
	if (!me)
		return false;
	/* Not sys_sched_normal(): that would record the thread as no longer
	 * at home in SCHED_IDLE (my_poker(), the timer's rescue). */
	if (set_policy(0, SCHED_OTHER) != 0) {
		refused();
		return false;
	}
	/* Relaxed: before the seq_cst store of `inside` in starve_begin(),
	 * so a waiter that sees this thread inside also sees it raised. */
	atomic_store_explicit(&me->raised, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&n_raised, 1, memory_order_relaxed);
	raised_tl = true;
	return true;
}

void starve_lower(bool raised)
{
	if (!raised)
		return;
	struct poker *me = my_poker();
	atomic_store_explicit(&me->raised, 0, memory_order_relaxed);
	raised_tl = false;
	set_policy(0, SCHED_IDLE);
}

unsigned long long starve_raised(bool *refused_out)
{
	*refused_out = atomic_load_explicit(&boost_denied, memory_order_relaxed);
	return atomic_load_explicit(&n_raised, memory_order_relaxed);
}

void starve_relieve(void)
{
	for (struct poker *p = atomic_load(&pokers); p; p = p->next) {
		/* A thread that raised itself for its call needs nothing. */
		if (!atomic_load(&p->inside) ||
		    atomic_load_explicit(&p->raised, memory_order_relaxed))
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
				sys_yield();
			else
				sys_sleep_ns(50000);
		}
	}
}

/* SPDX-License-Identifier: BSD-3-Clause */
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
 * SCHED_OTHER until its call returns (starve_relieve()); the thread takes
 * itself back to SCHED_IDLE as it leaves. Records live for the process
 * (engine threads are few and created once).
 */
#include "starve.h"
#include "sys.h"

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
	struct poker *next; /* immutable once published */
};

static _Atomic(struct poker *) pokers;
static _Atomic int boost_denied; /* leaving SCHED_IDLE is not permitted */

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

void starve_relieve(void)
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
				sys_yield();
			else
				sys_sleep_ns(50000);
		}
	}
}

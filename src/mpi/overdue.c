/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * A warning for a blocking call that may never return. A call that every
 * rank must join (MPI_Init's agreement, init.c) hangs when one never
 * does; a blocking call cannot say so itself, and a non-blocking one would
 * cost the rest of the job: Open MPI's libnbc, once any communicator has
 * run one of its collectives, polls its request list in every progress
 * call until that communicator is freed (for MPI_COMM_WORLD: at
 * MPI_Finalize). So the call blocks and a short-lived thread of its own
 * says why it may wait forever when it waits long.
 *
 * The thread sleeps on a condition variable of the monotonic clock, never
 * spins (it shares the cores with the call it watches), takes no signal
 * (the application's handlers run in its own threads), and is joined
 * before overdue_disarm() returns, so nothing of it outlives the call or
 * reaches a child process.
 */
#include "overdue.h"

#include <signal.h>
#include <time.h>

static void *overdue_main(void *p)
{
	struct overdue *o = p;
	pthread_setname_np(pthread_self(), "piano-overdue"); /* for top -H and gdb */
	struct timespec start, until;
	clock_gettime(CLOCK_MONOTONIC, &start);
	uint64_t end = (uint64_t)start.tv_sec * 1000000000u + (uint64_t)start.tv_nsec + o->after_ns;
	until.tv_sec = (time_t)(end / 1000000000u);
	until.tv_nsec = (long)(end % 1000000000u);
	pthread_mutex_lock(&o->lock);
	int rc = 0;
	while (!o->done && rc == 0)
		rc = pthread_cond_timedwait(&o->cond, &o->lock, &until);
	bool late = !o->done;
	pthread_mutex_unlock(&o->lock);
	if (late) {
		struct timespec now;
		clock_gettime(CLOCK_MONOTONIC, &now);
		uint64_t waited = (uint64_t)(now.tv_sec - start.tv_sec) * 1000000000u +
		                  (uint64_t)now.tv_nsec - (uint64_t)start.tv_nsec;
		o->warn(o->arg, waited);
	}
	return NULL;
}

void overdue_arm(struct overdue *o, uint64_t after_ns, void (*warn)(void *, uint64_t), void *arg)
{
	*o = (struct overdue){ .after_ns = after_ns, .warn = warn, .arg = arg };
	pthread_condattr_t ca;
	if (pthread_mutex_init(&o->lock, NULL))
		return;
	if (pthread_condattr_init(&ca))
		goto destroy_lock;
	bool cond_ok = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) == 0 &&
	               pthread_cond_init(&o->cond, &ca) == 0;
	pthread_condattr_destroy(&ca);
	if (!cond_ok)
		goto destroy_lock;
	/* The thread inherits this mask: every signal blocked. */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_t attr;
	bool created = pthread_attr_init(&attr) == 0;
	if (created) {
		pthread_attr_setstacksize(&attr, 256u << 10); /* a warning line; ASan's redzones */
		created = pthread_create(&o->thread, &attr, overdue_main, o) == 0;
		pthread_attr_destroy(&attr);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (created) {
		o->armed = true;
		return;
	}
	pthread_cond_destroy(&o->cond);
destroy_lock:
	pthread_mutex_destroy(&o->lock);
}

void overdue_disarm(struct overdue *o)
{
	if (!o->armed)
		return;
	pthread_mutex_lock(&o->lock);
	o->done = true;
	pthread_cond_signal(&o->cond);
	pthread_mutex_unlock(&o->lock);
	pthread_join(o->thread, NULL);
	pthread_cond_destroy(&o->cond);
	pthread_mutex_destroy(&o->lock);
	o->armed = false;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.mpi_starve — the MPI layer's starvation records (src/mpi/starve.c),
 * without MPI:
 *  - a thread that put itself at SCHED_IDLE is recorded at its first
 *    progress call even when the timer has raised it for a while
 *    (queue_rescue): recorded by its current policy alone, it was left out
 *    for good, and a native wait then waited for it starved;
 *  - a waiter's starve_relieve() raises a recorded thread inside a call to
 *    SCHED_OTHER, and starve_end() takes it back to SCHED_IDLE;
 *  - a thread at SCHED_OTHER is not recorded;
 *  - with PIANO_MPI_RAISE_CALLS (starve_setup), a SCHED_IDLE thread raises
 *    itself to SCHED_OTHER around its calls and back after them, once
 *    (no nesting), and not at all with the setting off.
 * Skipped (77) where a thread may not leave SCHED_IDLE.
 */
#include "common.h"

#include "starve.h" /* src/mpi */
#include "sys.h"    /* src/core */

#include <pthread.h>
#include <sched.h>

static _Atomic int step, tid;
static _Atomic int recorded = -1, policy_inside = -1, policy_after = -1;

static void wait_step(int s)
{
	while (atomic_load(&step) < s)
		sys_yield();
}

/* Thread A: SCHED_IDLE by its own call, raised by the main thread before
 * its first progress call, relieved inside a later one. */
static void *idle_like(void *arg)
{
	(void)arg;
	CHECK(sys_sched_idle() == 0, "sys_sched_idle failed");
	atomic_store(&tid, sys_gettid());
	atomic_store(&step, 1);
	wait_step(2); /* raised meanwhile */
	struct poker *p = starve_begin();
	atomic_store(&recorded, p != NULL);
	starve_end(p);
	CHECK(sys_sched_idle() == 0, "back to SCHED_IDLE"); /* as queue_unwatch does */
	p = starve_begin();
	atomic_store(&step, 3);
	wait_step(4); /* relieved */
	atomic_store(&policy_inside, sched_getscheduler(0));
	starve_end(p);
	atomic_store(&policy_after, sched_getscheduler(0));
	return NULL;
}

/* Thread C: the setting's two values, from a SCHED_IDLE thread. */
static void *raiser(void *arg)
{
	int *out = arg;
	CHECK(sys_sched_idle() == 0, "sys_sched_idle failed");
	starve_setup(false, false);
	bool r = starve_raise();
	out[0] = r;
	out[1] = sched_getscheduler(0);
	starve_lower(r);
	starve_setup(true, false);
	r = starve_raise();
	out[2] = r;
	out[3] = sched_getscheduler(0);
	out[4] = starve_raise(); /* nested: no second raise */
	starve_lower(r);
	out[5] = sched_getscheduler(0);
	return NULL;
}

static void *normal(void *arg)
{
	*(int *)arg = starve_begin() != NULL;
	return NULL;
}

int main(void)
{
	/* Raising A is also the check that leaving SCHED_IDLE is permitted. */
	pthread_t t;
	CHECK(pthread_create(&t, NULL, idle_like, NULL) == 0, "pthread_create");
	wait_step(1);
	if (sys_sched_normal_tid(atomic_load(&tid)) != 0) {
		printf("cannot raise a thread out of SCHED_IDLE here: skipped\n");
		return 77;
	}
	atomic_store(&step, 2);
	wait_step(3);
	CHECK(atomic_load(&recorded) == 1,
	      "a SCHED_IDLE thread raised by another was not recorded for relief");
	starve_relieve();
	atomic_store(&step, 4);
	pthread_join(t, NULL);
	CHECK(atomic_load(&policy_inside) == SCHED_OTHER, "not relieved: policy %d inside",
	      atomic_load(&policy_inside));
	CHECK(atomic_load(&policy_after) == SCHED_IDLE, "not back at SCHED_IDLE: policy %d",
	      atomic_load(&policy_after));

	int normal_recorded = -1;
	CHECK(pthread_create(&t, NULL, normal, &normal_recorded) == 0, "pthread_create");
	pthread_join(t, NULL);
	CHECK(normal_recorded == 0, "a SCHED_OTHER thread was recorded");

	int r[6];
	CHECK(pthread_create(&t, NULL, raiser, r) == 0, "pthread_create");
	pthread_join(t, NULL);
	CHECK(!r[0] && r[1] == SCHED_IDLE, "raised with the setting off (%d, policy %d)", r[0],
	      r[1]);
	CHECK(r[2] && r[3] == SCHED_OTHER, "not raised for its calls (%d, policy %d)", r[2], r[3]);
	CHECK(!r[4], "a nested raise was taken");
	CHECK(r[5] == SCHED_IDLE, "not back at SCHED_IDLE after its calls: policy %d", r[5]);
	printf("mpi_starve: passed\n");
	return 0;
}

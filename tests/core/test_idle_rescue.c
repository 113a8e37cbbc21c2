/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.idle_rescue — an idle thread preempted while it holds a queue does
 * not mask the queue for as long as the cores compute: the timer thread,
 * finding the queue held since a round that began two periods ago, raises
 * the holder from SCHED_IDLE to SCHED_OTHER, and the holder goes back to
 * SCHED_IDLE when it lets the queue go. The task, run by an idle thread,
 * waits (up to 10 s) to find itself raised while spinners keep every CPU
 * busy; without the rescue it stays at SCHED_IDLE (an MPI progress call
 * stalled that way for 8 s in one run of 3 under Open MPI).
 * PIANO_IDLE_BOOST=0: the rescue alone raises it.
 */
#include "common.h"

#include <sched.h>
#include <sys/syscall.h>

static atomic_int started, raised, finished;
static atomic_int holder_tid;

static unsigned cb(void *arg)
{
	(void)arg;
	if (sched_getscheduler(0) != SCHED_IDLE || atomic_load(&finished))
		return 0; /* the timer's or a raised thread's run: not the case under test */
	atomic_store(&holder_tid, (int)syscall(SYS_gettid));
	atomic_store(&started, 1);
	double end = test_now() + 10.0;
	while (test_now() < end) {
		if (sched_getscheduler(0) == SCHED_OTHER) {
			atomic_store(&raised, 1);
			break;
		}
	}
	atomic_store(&finished, 1);
	CHECK_OK(piano_ltask_complete(piano_ltask_current()));
	return 1;
}

/* Whether this process may leave SCHED_IDLE (the rescue needs it). */
static void *can_leave_idle(void *arg)
{
	struct sched_param p = { .sched_priority = 0 };
	*(int *)arg = sched_setscheduler(0, SCHED_IDLE, &p) == 0 &&
	              sched_setscheduler(0, SCHED_OTHER, &p) == 0;
	return NULL;
}

static int wait_flag(atomic_int *f, double seconds)
{
	double end = test_now() + seconds;
	while (!atomic_load(f) && test_now() < end)
		test_sleep_us(1000);
	return atomic_load(f);
}

int main(void)
{
	piano_ltask_t *t;
	struct test_spinners sp;
	pthread_t th;
	int can = 0;

	test_watchdog(60);
	test_thread_start(&th, can_leave_idle, &can);
	pthread_join(th, NULL);
	if (!can) {
		printf("SKIP: this process may not leave SCHED_IDLE (RLIMIT_NICE)\n");
		return TEST_SKIP;
	}
	test_setenv("PIANO_PROGRESSION", "1");
	test_setenv("PIANO_IDLE_BOOST", "0");
	test_setenv("PIANO_BLOCK_HELPERS", "0");
	test_setenv("PIANO_TIMER_PERIOD_US", "1000");
	test_setenv("PIANO_TIMER_MODE", "queues");
	CHECK_OK(piano_init());

	test_phase("an idle thread takes the task");
	CHECK_OK(piano_ltask_create(cb, NULL, PIANO_LTASK_REPEAT, &t));
	CHECK_OK(piano_ltask_submit(t));
	CHECK(wait_flag(&started, 10.0), "no idle thread ran the task in 10 s");

	test_phase("every CPU busy: the timer raises the holder");
	test_spinners_start(&sp, 2 * test_ncpus());
	CHECK(wait_flag(&finished, 20.0), "the task did not end in 20 s");
	test_spinners_stop(&sp);
	CHECK(atomic_load(&raised), "the holder stayed at SCHED_IDLE for 10 s while it held the "
	                            "queue and every CPU computed");

	test_phase("the holder is back at SCHED_IDLE");
	CHECK_OK(piano_ltask_wait(t));
	test_sleep_us(20000);
	int pol = sched_getscheduler((pid_t)atomic_load(&holder_tid));
	CHECK(pol == SCHED_IDLE, "the idle thread's policy is %d after its round, not SCHED_IDLE",
	      pol);
	CHECK_OK(piano_ltask_destroy(t));
	CHECK_OK(piano_finalize());
	printf("idle_rescue: passed\n");
	return TEST_PASS;
}

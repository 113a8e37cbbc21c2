/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.ltask_nowait — PIANO_LTASK_NOWAIT: the destructor is called exactly
 * once, after the task finished (completed or cancelled); a NOWAIT task
 * without destructor is refused by submit (PIANO_EINVAL); waiting on a NOWAIT
 * task is PIANO_ESTATE; cancelling a queued NOWAIT task calls the destructor
 * without running the callback.
 *
 * PIANO_PROGRESSION=0: a submitted task cannot finish (and its handle cannot
 * be freed) before this thread polls, so using the handle between submit and
 * the first poll is safe.
 */
#include "common.h"

struct ctx {
	atomic_int runs;
	atomic_int dtors;
	int runs_at_dtor;
	int complete_at; /* repeat tasks: complete themselves at this run */
};

static unsigned cb(void *arg)
{
	struct ctx *c = arg;
	int n = atomic_fetch_add(&c->runs, 1) + 1;
	CHECK(atomic_load(&c->dtors) == 0, "callback ran after the destructor");
	if (c->complete_at && n == c->complete_at)
		CHECK_OK(piano_ltask_complete(piano_ltask_current()));
	return 1;
}

static void dtor(void *arg)
{
	struct ctx *c = arg;
	c->runs_at_dtor = atomic_load(&c->runs);
	atomic_fetch_add(&c->dtors, 1);
}

static void poll_n(int n)
{
	for (int i = 0; i < n; i++) {
		int rc = piano_poll();
		CHECK(rc >= 0, "piano_poll() returned %d (%s)", rc, test_errname(rc));
	}
}

int main(void)
{
	piano_ltask_t *t;
	static struct ctx a, b, c, d;

	test_watchdog(50);
	test_setenv("PIANO_PROGRESSION", "0");
	CHECK_OK(piano_init());

	/* A: one-shot NOWAIT: dtor once after the run; wait -> ESTATE */
	CHECK_OK(piano_ltask_create(cb, &a, PIANO_LTASK_ONESHOT | PIANO_LTASK_NOWAIT, &t));
	CHECK_OK(piano_ltask_set_dtor(t, dtor));
	CHECK_OK(piano_ltask_submit(t));
	/* still queued: nothing polls in no-thread mode */
	CHECK_RC(piano_ltask_wait(t), PIANO_ESTATE);
	CHECK_EQ(atomic_load(&a.runs), 0);
	CHECK_EQ(atomic_load(&a.dtors), 0);
	test_phase("polling a one-shot NOWAIT task");
	poll_n(1);
	CHECK_EQ(atomic_load(&a.runs), 1);
	CHECK_EQ(atomic_load(&a.dtors), 1);
	CHECK_EQ(a.runs_at_dtor, 1);
	poll_n(10);
	CHECK_EQ(atomic_load(&a.runs), 1);
	CHECK_EQ(atomic_load(&a.dtors), 1);

	/* B: NOWAIT without destructor is refused and stays usable */
	CHECK_OK(piano_ltask_create(cb, &b, PIANO_LTASK_ONESHOT | PIANO_LTASK_NOWAIT, &t));
	CHECK_RC(piano_ltask_submit(t), PIANO_EINVAL);
	CHECK_STATE(t, PIANO_LTASK_INIT);
	poll_n(3);
	CHECK_EQ(atomic_load(&b.runs), 0);
	CHECK_OK(piano_ltask_destroy(t));
	CHECK_EQ(atomic_load(&b.dtors), 0);

	/* C: cancel of a queued NOWAIT task: no run, dtor once */
	CHECK_OK(piano_ltask_create(cb, &c, PIANO_LTASK_REPEAT | PIANO_LTASK_NOWAIT, &t));
	CHECK_OK(piano_ltask_set_dtor(t, dtor));
	CHECK_OK(piano_ltask_submit(t));
	CHECK_OK(piano_ltask_cancel(t));
	test_phase("polling a cancelled NOWAIT task");
	poll_n(10);
	CHECK_EQ(atomic_load(&c.runs), 0);
	CHECK_EQ(atomic_load(&c.dtors), 1);

	/* D: repeat NOWAIT completing itself at run 3: dtor once, after run 3 */
	d.complete_at = 3;
	CHECK_OK(piano_ltask_create(cb, &d, PIANO_LTASK_REPEAT | PIANO_LTASK_NOWAIT, &t));
	CHECK_OK(piano_ltask_set_dtor(t, dtor));
	CHECK_OK(piano_ltask_submit(t));
	test_phase("polling a repeat NOWAIT task");
	for (int i = 0; i < 1000 && atomic_load(&d.dtors) == 0; i++)
		poll_n(1);
	CHECK_EQ(atomic_load(&d.dtors), 1);
	CHECK_EQ(d.runs_at_dtor, 3);
	poll_n(10);
	CHECK_EQ(atomic_load(&d.runs), 3);
	CHECK_EQ(atomic_load(&d.dtors), 1);

	test_phase("piano_finalize");
	CHECK_OK(piano_finalize());
	/* finalize must not call any destructor a second time */
	CHECK_EQ(atomic_load(&a.dtors), 1);
	CHECK_EQ(atomic_load(&c.dtors), 1);
	CHECK_EQ(atomic_load(&d.dtors), 1);
	printf("ltask_nowait: ok\n");
	return TEST_PASS;
}

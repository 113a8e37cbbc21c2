/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.cond — completion objects (piano_cond_t):
 *  - init/signal/get/test/clear manipulate the status bits; the reserved bit
 *    31 is refused (PIANO_EINVAL);
 *  - a wait returns once another thread signals after a delay, both on the
 *    blocking path (PIANO_SPIN_US=0) and on the spinning path (PIANO_SPIN_US
 *    much longer than the delay); a wait only wakes for bits of its mask;
 *  - wait_timeout returns PIANO_ETIMEDOUT, not before the timeout;
 *  - wait_spin(0) blocks at once even when PIANO_SPIN_US is long (no
 *    explicit polling rounds while it waits); a negative spin is refused;
 *  - wait_all over 64 conds signalled by 4 threads in random order;
 *  - free-after-wake: a waiter frees its malloc'd cond as soon as the wait
 *    returns, many times (under AddressSanitizer a signal side touching the
 *    object after waking the waiter is reported as use-after-free).
 */
#include "common.h"

/* --------------------------------------------------------- basic bits */

static void basics(void)
{
	piano_cond_t c;

	CHECK_OK(piano_cond_init(&c, 0));
	CHECK_EQ(piano_cond_get(&c), 0);
	CHECK_RC(piano_cond_test(&c, PIANO_COND_MASK), PIANO_EAGAIN);
	CHECK_OK(piano_cond_signal(&c, 0x5));
	CHECK_EQ(piano_cond_get(&c), 0x5);
	CHECK_RC(piano_cond_test(&c, 0x1), 0);
	CHECK_RC(piano_cond_test(&c, 0x4), 0);
	CHECK_RC(piano_cond_test(&c, 0x6), 0);
	CHECK_RC(piano_cond_test(&c, 0x2), PIANO_EAGAIN);
	CHECK_OK(piano_cond_signal(&c, 0x2));
	CHECK_EQ(piano_cond_get(&c), 0x7);
	CHECK_OK(piano_cond_clear(&c, 0x1));
	CHECK_EQ(piano_cond_get(&c), 0x6);
	CHECK_RC(piano_cond_test(&c, 0x1), PIANO_EAGAIN);
	CHECK_OK(piano_cond_clear(&c, 0x6));
	CHECK_EQ(piano_cond_get(&c), 0);
	CHECK_OK(piano_cond_signal(&c, PIANO_COND_MASK));
	CHECK_EQ(piano_cond_get(&c), PIANO_COND_MASK);
	CHECK_OK(piano_cond_destroy(&c));

	CHECK_OK(piano_cond_init(&c, 0x30));
	CHECK_EQ(piano_cond_get(&c), 0x30);
	CHECK_RC(piano_cond_wait(&c, 0x10), 0); /* already set: immediate */
	CHECK_RC(piano_cond_wait_timeout(&c, 0x20, 1000), 0);
	/* bit 31 is reserved for the engine */
	CHECK_RC(piano_cond_signal(&c, 0x80000000u), PIANO_EINVAL);
	CHECK_RC(piano_cond_init(&c, 0x80000000u), PIANO_EINVAL);
	CHECK_OK(piano_cond_destroy(&c));
}

/* ------------------------------------------------ delayed signal */

struct delayed {
	piano_cond_t *c;
	uint32_t bits;
	long delay_us;
};

static void *signal_later(void *arg)
{
	struct delayed *d = arg;
	test_sleep_us(d->delay_us);
	CHECK_OK(piano_cond_signal(d->c, d->bits));
	return NULL;
}

static void delayed_wait(const char *path)
{
	piano_cond_t c;
	pthread_t th;
	struct delayed d = { &c, 0x4, 100000 };
	char phase[128];

	snprintf(phase, sizeof phase, "piano_cond_wait, signal after 100 ms (%s)", path);
	test_phase(phase);
	CHECK_OK(piano_cond_init(&c, 0));
	test_thread_start(&th, signal_later, &d);
	double t0 = test_now();
	CHECK_RC(piano_cond_wait(&c, 0x4), 0);
	double dt = test_now() - t0;
	CHECK(piano_cond_get(&c) == 0x4, "bits 0x%x after the wait, expected 0x4",
	      (unsigned)piano_cond_get(&c));
	/* cannot return before the signal: 100 ms minus clock slack */
	CHECK(dt >= 0.09, "%s: wait returned after %.3f s, before the signal", path, dt);
	pthread_join(th, NULL);

	/* a signal on other bits does not wake a wait on this mask */
	snprintf(phase, sizeof phase, "piano_cond_wait_timeout on a mask not signalled (%s)",
	         path);
	test_phase(phase);
	CHECK_OK(piano_cond_clear(&c, 0x4));
	CHECK_OK(piano_cond_signal(&c, 0x1));
	t0 = test_now();
	CHECK_RC(piano_cond_wait_timeout(&c, 0x2, 50000), PIANO_ETIMEDOUT);
	dt = test_now() - t0;
	CHECK(dt >= 0.049, "%s: ETIMEDOUT after %.4f s, timeout was 0.05 s", path, dt);

	/* a timed wait that is signalled in time returns 0 */
	snprintf(phase, sizeof phase, "piano_cond_wait_timeout signalled in time (%s)", path);
	test_phase(phase);
	CHECK_OK(piano_cond_clear(&c, 0x1));
	d.bits = 0x2;
	d.delay_us = 50000;
	test_thread_start(&th, signal_later, &d);
	CHECK_RC(piano_cond_wait_timeout(&c, 0x2, 20000000), 0);
	pthread_join(th, NULL);
	CHECK_OK(piano_cond_destroy(&c));
}

/* ------------------------------------------------ wait_spin */

static void wait_spin_zero(void)
{
	piano_cond_t c;
	pthread_t th;
	struct delayed d = { &c, 0x1, 50000 };

	test_phase("piano_cond_wait_spin(0) with PIANO_SPIN_US=5000000");
	CHECK_OK(piano_cond_init(&c, 0));
	CHECK_RC(piano_cond_wait_spin(&c, 0x1, -1), PIANO_EINVAL);
	CHECK_RC(piano_cond_wait_spin(NULL, 0x1, 0), PIANO_EINVAL);
	struct piano_stats before = test_stats(PIANO_POINT_EXPLICIT);
	test_thread_start(&th, signal_later, &d);
	double t0 = test_now();
	CHECK_RC(piano_cond_wait_spin(&c, 0x1, 0), 0);
	double dt = test_now() - t0;
	pthread_join(th, NULL);
	struct piano_stats after = test_stats(PIANO_POINT_EXPLICIT);
	CHECK(dt >= 0.045, "wait_spin returned after %.3f s, before the signal", dt);
	/* The spin phase checks its clock every 16 rounds: at most 16 rounds,
	 * where a 50 ms spin makes hundreds of thousands. */
	CHECK(after.rounds - before.rounds <= 16,
	      "wait_spin(0) polled %llu explicit rounds: it spun instead of blocking",
	      (unsigned long long)(after.rounds - before.rounds));
	CHECK_OK(piano_cond_destroy(&c));
}

/* ----------------------------------------------------------- wait_all */

#define NCONDS 64
#define NSIGNALLERS 4

static piano_cond_t conds[NCONDS];

static void *signal_some(void *arg)
{
	unsigned id = (unsigned)(uintptr_t)arg;
	unsigned seed = 12345u + id * 7919u;
	int mine[NCONDS / NSIGNALLERS];
	int n = NCONDS / NSIGNALLERS;
	for (int i = 0; i < n; i++)
		mine[i] = (int)id + i * NSIGNALLERS;
	for (int i = n - 1; i > 0; i--) {
		int j = rand_r(&seed) % (i + 1);
		int tmp = mine[i];
		mine[i] = mine[j];
		mine[j] = tmp;
	}
	for (int i = 0; i < n; i++) {
		test_sleep_us(rand_r(&seed) % 2000);
		CHECK_OK(piano_cond_signal(&conds[mine[i]], 1u << (mine[i] % 8)));
	}
	return NULL;
}

static void wait_all(void)
{
	piano_cond_t *ptrs[NCONDS];
	pthread_t th[NSIGNALLERS];

	test_phase("piano_cond_wait_all over 64 conds");
	for (int i = 0; i < NCONDS; i++) {
		CHECK_OK(piano_cond_init(&conds[i], 0));
		ptrs[i] = &conds[i];
	}
	/* nothing set yet: a short timed test on one of them */
	CHECK_RC(piano_cond_test(&conds[0], 0xff), PIANO_EAGAIN);
	for (int i = 0; i < NSIGNALLERS; i++)
		test_thread_start(&th[i], signal_some, (void *)(uintptr_t)i);
	CHECK_RC(piano_cond_wait_all(ptrs, NCONDS, 0xff), 0);
	for (int i = 0; i < NCONDS; i++)
		CHECK(piano_cond_test(&conds[i], 0xff) == 0,
		      "wait_all returned but cond %d is not set (0x%x)", i,
		      (unsigned)piano_cond_get(&conds[i]));
	for (int i = 0; i < NSIGNALLERS; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < NCONDS; i++)
		CHECK_OK(piano_cond_destroy(&conds[i]));
}

/* --------------------------------------------------- free after wake */

static _Atomic(piano_cond_t *) handoff;
static atomic_int fw_stop;
static long fw_iters;

static void *fw_signaller(void *arg)
{
	(void)arg;
	unsigned seed = 42;
	for (long i = 0; i < fw_iters; i++) {
		piano_cond_t *c;
		double deadline = test_now() + 30.0;
		while ((c = atomic_exchange(&handoff, NULL)) == NULL) {
			if (atomic_load(&fw_stop))
				return NULL;
			CHECK(test_now() < deadline, "free-after-wake: no cond to signal at iteration %ld", i);
			sched_yield();
		}
		/* sometimes let the waiter reach the blocking path */
		if (rand_r(&seed) % 16 == 0)
			test_sleep_us(rand_r(&seed) % 200);
		CHECK_OK(piano_cond_signal(c, 1));
		/* c may be freed from here on: never touched again */
	}
	return NULL;
}

static void *fw_waiter(void *arg)
{
	(void)arg;
	for (long i = 0; i < fw_iters; i++) {
		piano_cond_t *c = malloc(sizeof *c);
		CHECK(c != NULL, "malloc");
		CHECK_OK(piano_cond_init(c, 0));
		atomic_store(&handoff, c);
		int rc = piano_cond_wait(c, 1);
		if (rc != 0) {
			atomic_store(&fw_stop, 1);
			FAIL("free-after-wake: piano_cond_wait returned %d (%s) at iteration %ld",
			     rc, test_errname(rc), i);
		}
		CHECK_OK(piano_cond_destroy(c));
		memset(c, 0xa5, sizeof *c); /* a late writer would now corrupt or be caught */
		free(c);
	}
	return NULL;
}

static void free_after_wake(void)
{
	pthread_t ws, ww;
	test_phase("free-after-wake");
	fw_iters = test_scale(10000, 1000);
	atomic_store(&handoff, NULL);
	atomic_store(&fw_stop, 0);
	test_thread_start(&ww, fw_waiter, NULL);
	test_thread_start(&ws, fw_signaller, NULL);
	pthread_join(ww, NULL);
	pthread_join(ws, NULL);
}

/* ---------------------------------------------------------------- main */

int main(void)
{
	test_watchdog(110);

	/* blocking path */
	test_clear_env();
	test_setenv("PIANO_SPIN_US", "0");
	CHECK_OK(piano_init());
	basics();
	delayed_wait("PIANO_SPIN_US=0");
	wait_all();
	free_after_wake();
	CHECK_OK(piano_finalize());

	/* spinning path: the 100 ms delay is well within the spin */
	test_setenv("PIANO_SPIN_US", "5000000");
	CHECK_OK(piano_init());
	delayed_wait("PIANO_SPIN_US=5000000");
	wait_spin_zero();
	CHECK_OK(piano_finalize());

	/* default spin: a mix of both paths */
	unsetenv("PIANO_SPIN_US");
	CHECK_OK(piano_init());
	free_after_wake();
	CHECK_OK(piano_finalize());

	printf("cond: ok\n");
	return TEST_PASS;
}

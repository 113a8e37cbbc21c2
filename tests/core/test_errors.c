/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.errors — error reporting:
 *  - piano_strerror(): a non-empty string for every code, all distinct; a
 *    non-NULL non-empty string for unknown codes;
 *  - calls that need the engine return PIANO_ENOTINIT before piano_init()
 *    and after the last piano_finalize();
 *  - NULL pointer arguments return PIANO_EINVAL, out-of-range indexes
 *    PIANO_ERANGE (or PIANO_EINVAL where noted), never a crash;
 *  - piano_init()/piano_finalize() are reference counted; one finalize too
 *    many returns PIANO_ENOTINIT.
 */
#include "common.h"

#include <hwloc.h>

static unsigned cb(void *arg)
{
	(void)arg;
	return 0;
}

static int block(void *arg, int timeout_ms)
{
	(void)arg;
	(void)timeout_ms;
	return 0;
}

static void dtor(void *arg)
{
	(void)arg;
}

static void check_strerror(void)
{
	static const int codes[] = {
		PIANO_OK,       PIANO_EINVAL,   PIANO_ENOMEM,    PIANO_EBUSY,
		PIANO_EDEADLK,  PIANO_ECANCELED, PIANO_EAGAIN,   PIANO_ETIMEDOUT,
		PIANO_ECONFIG,  PIANO_ESYS,     PIANO_ENOTINIT, PIANO_ESTATE,
		PIANO_ERANGE,
	};
	const int n = (int)(sizeof codes / sizeof codes[0]);
	for (int i = 0; i < n; i++) {
		const char *s = piano_strerror(codes[i]);
		CHECK(s != NULL, "piano_strerror(%s) is NULL", test_errname(codes[i]));
		CHECK(s[0] != '\0', "piano_strerror(%s) is empty", test_errname(codes[i]));
		for (int j = 0; j < i; j++)
			CHECK(strcmp(s, piano_strerror(codes[j])) != 0,
			      "piano_strerror(%s) == piano_strerror(%s) == \"%s\"",
			      test_errname(codes[i]), test_errname(codes[j]), s);
	}
	static const int unknown[] = { 1, 42, -13, -1000, INT32_MIN };
	for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
		const char *s = piano_strerror(unknown[i]);
		CHECK(s != NULL && s[0] != '\0', "piano_strerror(%d) is NULL or empty",
		      unknown[i]);
	}
}

static void check_not_initialized(const char *when, piano_ltask_t *t)
{
	int n = -1;
	struct piano_queue_info qi;
	struct piano_stats st;
	hwloc_topology_t topo;

	printf("ENOTINIT checks %s\n", when);
	CHECK(piano_initialized() == 0, "piano_initialized() is %d %s", piano_initialized(),
	      when);
	CHECK_RC(piano_poll(), PIANO_ENOTINIT);
	CHECK_RC(piano_poll_all(), PIANO_ENOTINIT);
	CHECK_RC(piano_finalize(), PIANO_ENOTINIT);
	CHECK_RC(piano_queue_count(&n), PIANO_ENOTINIT);
	CHECK_RC(piano_queue_info(0, &qi), PIANO_ENOTINIT);
	CHECK_RC(piano_queue_local(&n), PIANO_ENOTINIT);
	CHECK_RC(piano_thread_count(PIANO_POINT_IDLE, &n), PIANO_ENOTINIT);
	CHECK_RC(piano_stats_get(PIANO_POINT_EXPLICIT, &st), PIANO_ENOTINIT);
	CHECK_RC(piano_stats_print(), PIANO_ENOTINIT);
	CHECK_RC(piano_topology_get(&topo), PIANO_ENOTINIT);
	if (t) {
		CHECK_RC(piano_ltask_submit(t), PIANO_ENOTINIT);
		CHECK_STATE(t, PIANO_LTASK_INIT);
	}
}

static void check_null_args(void)
{
	piano_ltask_t *t;
	piano_cond_t c;
	int n;
	struct piano_queue_info qi;
	struct piano_stats st;
	struct piano_setting set;

	CHECK_OK(piano_ltask_create(cb, NULL, PIANO_LTASK_ONESHOT, &t));

	CHECK_RC(piano_ltask_create(NULL, NULL, PIANO_LTASK_ONESHOT, &t), PIANO_EINVAL);
	CHECK_RC(piano_ltask_create(cb, NULL, PIANO_LTASK_ONESHOT, NULL), PIANO_EINVAL);
	CHECK_RC(piano_ltask_set_name(NULL, "x"), PIANO_EINVAL);
	CHECK_RC(piano_ltask_set_name(t, NULL), PIANO_EINVAL);
	CHECK_RC(piano_ltask_set_dtor(NULL, dtor), PIANO_EINVAL);
	CHECK_RC(piano_ltask_set_blocking(NULL, block, -1), PIANO_EINVAL);
	CHECK_RC(piano_ltask_set_blocking(t, NULL, -1), PIANO_EINVAL);
	CHECK_RC(piano_ltask_bind(NULL, NULL), PIANO_EINVAL);
	CHECK_RC(piano_ltask_bind(t, NULL), PIANO_EINVAL);
	CHECK_RC(piano_ltask_bind_queue(NULL, 0), PIANO_EINVAL);
	CHECK_RC(piano_ltask_queue(NULL, &n), PIANO_EINVAL);
	CHECK_RC(piano_ltask_queue(t, NULL), PIANO_EINVAL);
	CHECK_RC(piano_ltask_submit(NULL), PIANO_EINVAL);
	CHECK_RC(piano_ltask_complete(NULL), PIANO_EINVAL);
	CHECK_RC(piano_ltask_cancel(NULL), PIANO_EINVAL);
	CHECK_RC(piano_ltask_test(NULL), PIANO_EINVAL);
	CHECK_RC(piano_ltask_wait(NULL), PIANO_EINVAL);
	CHECK_RC(piano_ltask_state(NULL), PIANO_EINVAL);
	CHECK_RC(piano_ltask_destroy(NULL), PIANO_EINVAL);

	CHECK_RC(piano_cond_init(NULL, 0), PIANO_EINVAL);
	CHECK_RC(piano_cond_signal(NULL, 1), PIANO_EINVAL);
	CHECK_RC(piano_cond_clear(NULL, 1), PIANO_EINVAL);
	CHECK_RC(piano_cond_test(NULL, 1), PIANO_EINVAL);
	CHECK_RC(piano_cond_wait(NULL, 1), PIANO_EINVAL);
	CHECK_RC(piano_cond_wait_timeout(NULL, 1, 1000), PIANO_EINVAL);
	CHECK_RC(piano_cond_wait_all(NULL, 1, 1), PIANO_EINVAL);
	CHECK_RC(piano_cond_destroy(NULL), PIANO_EINVAL);
	{
		piano_cond_t *arr[2] = { &c, NULL };
		CHECK_OK(piano_cond_init(&c, 1));
		CHECK_RC(piano_cond_wait_all(arr, 2, 1), PIANO_EINVAL);
		CHECK_OK(piano_cond_destroy(&c));
	}

	CHECK_RC(piano_stats_get(PIANO_POINT_EXPLICIT, NULL), PIANO_EINVAL);
	CHECK_RC(piano_queue_count(NULL), PIANO_EINVAL);
	CHECK_RC(piano_queue_info(0, NULL), PIANO_EINVAL);
	CHECK_RC(piano_queue_local(NULL), PIANO_EINVAL);
	CHECK_RC(piano_thread_count(PIANO_POINT_IDLE, NULL), PIANO_EINVAL);
	CHECK_RC(piano_topology_get(NULL), PIANO_EINVAL);
	CHECK_RC(piano_setting_count(NULL), PIANO_EINVAL);
	CHECK_RC(piano_setting_get(0, NULL), PIANO_EINVAL);

	/* out-of-range indexes */
	CHECK_OK(piano_queue_count(&n));
	CHECK_RC(piano_queue_info(n, &qi), PIANO_ERANGE);
	CHECK_RC(piano_queue_info(-1, &qi), PIANO_ERANGE);
	CHECK_RC(piano_ltask_bind_queue(t, n), PIANO_ERANGE);
	CHECK_RC(piano_ltask_bind_queue(t, -2), PIANO_ERANGE);
	CHECK_OK(piano_setting_count(&n));
	CHECK_RC(piano_setting_get(n, &set), PIANO_ERANGE);
	CHECK_RC(piano_setting_get(-1, &set), PIANO_ERANGE);
	{
		/* a polling point is an enum value: EINVAL or ERANGE both fit */
		int rc = piano_stats_get(PIANO_POINT_COUNT, &st);
		CHECK(rc == PIANO_ERANGE || rc == PIANO_EINVAL,
		      "piano_stats_get(PIANO_POINT_COUNT) returned %d (%s)", rc,
		      test_errname(rc));
		rc = piano_thread_count(PIANO_POINT_COUNT, &n);
		CHECK(rc == PIANO_ERANGE || rc == PIANO_EINVAL,
		      "piano_thread_count(PIANO_POINT_COUNT) returned %d (%s)", rc,
		      test_errname(rc));
		rc = piano_stats_get(-1, &st);
		CHECK(rc == PIANO_ERANGE || rc == PIANO_EINVAL,
		      "piano_stats_get(-1) returned %d (%s)", rc, test_errname(rc));
	}
	/* unknown flag bits */
	{
		piano_ltask_t *t2 = NULL;
		CHECK_RC(piano_ltask_create(cb, NULL, 1u << 7, &t2), PIANO_EINVAL);
	}
	CHECK_OK(piano_ltask_destroy(t));
}

int main(void)
{
	piano_ltask_t *early = NULL;
	int rc;

	test_watchdog(50);
	test_setenv("PIANO_PROGRESSION", "0");

	check_strerror();

	/* before the first piano_init(): creating a task either works (it is
	 * plain memory) or says ENOTINIT; submitting one must say ENOTINIT */
	rc = piano_ltask_create(cb, NULL, PIANO_LTASK_ONESHOT, &early);
	CHECK(rc == 0 || rc == PIANO_ENOTINIT,
	      "piano_ltask_create before piano_init returned %d (%s)", rc, test_errname(rc));
	if (rc != 0)
		early = NULL;
	check_not_initialized("before piano_init", early);

	/* reference counting */
	CHECK_OK(piano_init());
	CHECK_EQ(piano_initialized(), 1);
	CHECK_OK(piano_init());
	CHECK_EQ(piano_initialized(), 1);
	check_null_args();
	CHECK_OK(piano_finalize());
	CHECK(piano_initialized() == 1, "engine gone after 1 of 2 finalize calls");
	CHECK(piano_poll() >= 0, "piano_poll after 1 of 2 finalize calls failed");
	CHECK_OK(piano_finalize());
	CHECK_EQ(piano_initialized(), 0);
	check_not_initialized("after the last piano_finalize", early);

	/* the engine can be initialised again */
	CHECK_OK(piano_init());
	CHECK_EQ(piano_initialized(), 1);
	if (early) {
		CHECK_OK(piano_ltask_submit(early));
		CHECK_RC(piano_ltask_wait(early), 0);
		CHECK_OK(piano_ltask_destroy(early));
	}
	CHECK_OK(piano_finalize());
	CHECK_RC(piano_finalize(), PIANO_ENOTINIT);
	CHECK_EQ(piano_initialized(), 0);
	printf("errors: ok\n");
	return TEST_PASS;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers shared by the core tests (header only).
 *
 * Exit codes: 0 = pass, 1 = fail, 77 = skip. A failed check prints
 * "file:line: FAIL: ..." on stderr and ends the process with _exit(1), so a
 * failure in any thread never hangs in atexit handlers or engine teardown.
 *
 * PIANO_TEST_SCALE=small (used by the sanitizer builds) makes the loop-heavy
 * tests run fewer iterations; see test_scale().
 */
#ifndef PIANO_TESTS_CORE_COMMON_H
#define PIANO_TESTS_CORE_COMMON_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <piano/piano.h>

#define TEST_PASS 0
#define TEST_FAIL 1
#define TEST_SKIP 77

#if defined(__GNUC__)
#define TEST_UNUSED __attribute__((unused))
#define TEST_PRINTF(f, a) __attribute__((format(printf, f, a)))
#define TEST_NORETURN __attribute__((noreturn))
#else
#define TEST_UNUSED
#define TEST_PRINTF(f, a)
#define TEST_NORETURN
#endif

/* ------------------------------------------------------------ messages */

static inline const char *test_errname(int rc)
{
	switch (rc) {
	case PIANO_OK: return "PIANO_OK";
	case PIANO_EINVAL: return "PIANO_EINVAL";
	case PIANO_ENOMEM: return "PIANO_ENOMEM";
	case PIANO_EBUSY: return "PIANO_EBUSY";
	case PIANO_EDEADLK: return "PIANO_EDEADLK";
	case PIANO_ECANCELED: return "PIANO_ECANCELED";
	case PIANO_EAGAIN: return "PIANO_EAGAIN";
	case PIANO_ETIMEDOUT: return "PIANO_ETIMEDOUT";
	case PIANO_ECONFIG: return "PIANO_ECONFIG";
	case PIANO_ESYS: return "PIANO_ESYS";
	case PIANO_ENOTINIT: return "PIANO_ENOTINIT";
	case PIANO_ESTATE: return "PIANO_ESTATE";
	case PIANO_ERANGE: return "PIANO_ERANGE";
	default: return rc > 0 ? "work count" : "unknown code";
	}
}

static inline const char *test_statename(int st)
{
	switch (st) {
	case PIANO_LTASK_INIT: return "INIT";
	case PIANO_LTASK_QUEUED: return "QUEUED";
	case PIANO_LTASK_RUNNING: return "RUNNING";
	case PIANO_LTASK_BLOCKED: return "BLOCKED";
	case PIANO_LTASK_COMPLETED: return "COMPLETED";
	case PIANO_LTASK_CANCELED: return "CANCELED";
	default: return st < 0 ? test_errname(st) : "(unknown state)";
	}
}

static inline TEST_NORETURN TEST_PRINTF(3, 4) void
test_fail_at(const char *file, int line, const char *fmt, ...)
{
	va_list ap;
	fflush(stdout);
	fprintf(stderr, "%s:%d: FAIL: ", file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(NULL);
	_exit(TEST_FAIL);
}

#define FAIL(...) test_fail_at(__FILE__, __LINE__, __VA_ARGS__)

/* CHECK(cond, "printf-like message", ...) */
#define CHECK(cond, ...)                                                      \
	do {                                                                  \
		if (!(cond)) {                                                \
			fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, \
			        __LINE__, #cond);                             \
			FAIL(__VA_ARGS__);                                    \
		}                                                             \
	} while (0)

/* The piano call `expr` must return `expect` (an int code). */
#define CHECK_RC(expr, expect)                                                \
	do {                                                                  \
		int rc_ = (expr);                                             \
		int ex_ = (expect);                                           \
		if (rc_ != ex_)                                               \
			FAIL("%s returned %d (%s), expected %d (%s)", #expr,  \
			     rc_, test_errname(rc_), ex_, test_errname(ex_));  \
	} while (0)

#define CHECK_OK(expr) CHECK_RC(expr, PIANO_OK)

/* A check that records the failure and goes on, for the tests that list
 * every failure of a matrix before exiting (test_soft_failures_ != 0). */
static int test_soft_failures_ TEST_UNUSED;
#define SOFT_FAIL(...)                                                          \
	do {                                                                    \
		fprintf(stderr, "%s:%d: FAIL: ", __FILE__, __LINE__);           \
		fprintf(stderr, __VA_ARGS__);                                   \
		fputc('\n', stderr);                                            \
		test_soft_failures_++;                                          \
	} while (0)

/* Integer equality with both values printed. */
#define CHECK_EQ(a, b)                                                        \
	do {                                                                  \
		long long a_ = (long long)(a);                                \
		long long b_ = (long long)(b);                                \
		if (a_ != b_)                                                 \
			FAIL("%s == %lld, expected %s == %lld", #a, a_, #b,   \
			     b_);                                             \
	} while (0)

/* The task must be in state `st`. */
#define CHECK_STATE(t, st)                                                    \
	do {                                                                  \
		int s_ = piano_ltask_state(t);                                \
		int e_ = (st);                                                \
		if (s_ != e_)                                                 \
			FAIL("state of %s is %s (%d), expected %s", #t,       \
			     test_statename(s_), s_, test_statename(e_));     \
	} while (0)

/* --------------------------------------------------------------- time */

static inline double test_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline void test_sleep_us(long us)
{
	struct timespec ts;
	ts.tv_sec = us / 1000000;
	ts.tv_nsec = (us % 1000000) * 1000;
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* ------------------------------------------------------------ watchdog */

/*
 * A hung engine call cannot be caught by a deadline loop; the watchdog turns
 * it into a failure that says what the test was doing (set with
 * test_phase()). CTest's TIMEOUT is the last resort behind it.
 */
static const char *volatile test_phase_ TEST_UNUSED = "start";

static inline void test_phase(const char *what)
{
	test_phase_ = what;
}

static inline void test_watchdog_handler_(int sig)
{
	const char *p = test_phase_;
	static const char a[] = "FAIL: watchdog expired (hang?) during: ";
	ssize_t r;
	(void)sig;
	r = write(2, a, sizeof a - 1);
	r = write(2, p, strlen(p));
	r = write(2, "\n", 1);
	(void)r;
	_exit(TEST_FAIL);
}

static inline void test_watchdog(unsigned seconds)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = test_watchdog_handler_;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	alarm(seconds);
}

/* ---------------------------------------------------------- environment */

/* The tests' own setting, registered like a layer's so that the registry
 * knows it (no unknown-variable report) and parses it by the same rules. */
static const struct piano_setting_spec test_settings_[] TEST_UNUSED = {
	{ "PIANO_TEST_SCALE", PIANO_SETTING_CHOICE, "full", 0, 0, "full,small", NULL, NULL,
	  "Read by the core tests only: `small` makes the loop-heavy tests run fewer "
	  "iterations (sanitizer builds)." },
};

__attribute__((constructor)) static void test_register_settings_(void)
{
	if (piano_settings_register("tests", test_settings_, 1) != 0) {
		fprintf(stderr, "FAIL: cannot register the tests' settings\n");
		_exit(1);
	}
}

static inline void test_setenv(const char *name, const char *value)
{
	if (setenv(name, value, 1) != 0)
		FAIL("setenv(%s, %s) failed: %s", name, value, strerror(errno));
}

/* Unsets every registered variable but PIANO_TEST_SCALE. */
static inline void test_clear_env(void)
{
	int n = 0;
	struct piano_setting st;
	if (piano_setting_count(&n) != 0)
		FAIL("piano_setting_count failed");
	for (int i = 0; i < n; i++)
		if (piano_setting_get(i, &st) == 0 && strcmp(st.name, "PIANO_TEST_SCALE") != 0)
			unsetenv(st.name);
	unsetenv("HWLOC_SYNTHETIC");
}
/* `full` normally (PIANO_TEST_SCALE unset, empty or "full"), `small` when
 * PIANO_TEST_SCALE=small (sanitizer builds). */
static inline long test_scale(long full, long small)
{
	long choice = 0;
	if (piano_setting_read("PIANO_TEST_SCALE", &choice, NULL, 0, NULL) != 0)
		FAIL("invalid PIANO_TEST_SCALE (reported above)");
	return choice == 1 ? small : full;
}
/* CPUs this process may run on. */
static inline int test_ncpus(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
		return CPU_COUNT(&set);
	long n = sysconf(_SC_NPROCESSORS_ONLN);
	return n > 0 ? (int)n : 1;
}

/* ------------------------------------------------------------- spinners */

/* Busy threads (no piano calls) that keep every CPU busy. */
struct test_spinners {
	int n;
	atomic_int stop;
	atomic_long spins;
	pthread_t th[256];
};

static inline void *test_spinner_main_(void *arg)
{
	struct test_spinners *s = arg;
	long local = 0;
	while (!atomic_load_explicit(&s->stop, memory_order_relaxed))
		local++;
	atomic_fetch_add(&s->spins, local);
	return NULL;
}

static inline void test_spinners_start(struct test_spinners *s, int n)
{
	if (n > 256)
		n = 256;
	s->n = n;
	atomic_init(&s->stop, 0);
	atomic_init(&s->spins, 0);
	for (int i = 0; i < n; i++) {
		int e = pthread_create(&s->th[i], NULL, test_spinner_main_, s);
		if (e)
			FAIL("pthread_create(spinner): %s", strerror(e));
	}
}

static inline void test_spinners_stop(struct test_spinners *s)
{
	atomic_store(&s->stop, 1);
	for (int i = 0; i < s->n; i++)
		pthread_join(s->th[i], NULL);
	s->n = 0;
}

/* ------------------------------------------------------- stderr capture */

/* Redirects fd 2 to a temporary file until test_capture_end(). */
struct test_capture {
	int saved;
	FILE *file;
};

static inline void test_capture_begin(struct test_capture *c)
{
	fflush(stderr);
	c->file = tmpfile();
	if (!c->file)
		FAIL("tmpfile: %s", strerror(errno));
	c->saved = dup(2);
	if (c->saved < 0 || dup2(fileno(c->file), 2) < 0)
		FAIL("dup/dup2: %s", strerror(errno));
}

/* Restores fd 2 and copies what was written to it into buf (NUL-ended). */
static inline void test_capture_end(struct test_capture *c, char *buf, size_t size)
{
	size_t n;
	fflush(stderr);
	if (dup2(c->saved, 2) < 0)
		abort();
	close(c->saved);
	rewind(c->file);
	n = fread(buf, 1, size - 1, c->file);
	buf[n] = '\0';
	fclose(c->file);
}

/* ---------------------------------------------------------------- misc */

static inline void test_thread_start(pthread_t *th, void *(*fn)(void *), void *arg)
{
	int e = pthread_create(th, NULL, fn, arg);
	if (e)
		FAIL("pthread_create: %s", strerror(e));
}

static inline struct piano_stats test_stats(int point)
{
	struct piano_stats st;
	memset(&st, 0, sizeof st);
	CHECK_OK(piano_stats_get(point, &st));
	return st;
}

static inline int test_thread_count(int point)
{
	int n = -1;
	CHECK_OK(piano_thread_count(point, &n));
	return n;
}

#endif /* PIANO_TESTS_CORE_COMMON_H */

/* SPDX-License-Identifier: BSD-3-Clause */
/* Linux implementation of sys.h. */
#include "sys.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

uint64_t sys_now_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
uint64_t sys_now_coarse_ns(void) { return clock_ns(CLOCK_MONOTONIC_COARSE); }
uint64_t sys_thread_cpu_ns(void) { return clock_ns(CLOCK_THREAD_CPUTIME_ID); }

int sys_schedstat_open(void) { return open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC); }

int64_t sys_run_delay_ns(int fd)
{
	/* "<ns on a CPU> <ns runnable, waiting> <slices>\n" */
	char buf[96];
	ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	unsigned long long run = 0, wait = 0;
	if (sscanf(buf, "%llu %llu", &run, &wait) != 2)
		return -1;
	return (int64_t)wait;
}

void sys_futex_wait(_Atomic uint32_t *addr, uint32_t val, uint64_t timeout_ns)
{
	struct timespec ts, *tsp = NULL;
	if (timeout_ns) {
		ts.tv_sec = (time_t)(timeout_ns / 1000000000u);
		ts.tv_nsec = (long)(timeout_ns % 1000000000u);
		tsp = &ts;
	}
	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, tsp, NULL, 0);
}

void sys_futex_wake(_Atomic uint32_t *addr, int n)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, n, NULL, NULL, 0);
}

int sys_current_cpu(void) { return sched_getcpu(); }
int sys_gettid(void) { return (int)syscall(SYS_gettid); }

static int set_policy(int policy)
{
	struct sched_param p = { .sched_priority = 0 };
	return -pthread_setschedparam(pthread_self(), policy, &p);
}

/* The class this thread last put itself in: another thread may raise it
 * for a while (queue_rescue), which does not change what it is. */
static _Thread_local bool home_idle;

int sys_sched_idle(void)
{
	int rc = set_policy(SCHED_IDLE);
	if (rc == 0)
		home_idle = true;
	return rc;
}

int sys_sched_normal(void)
{
	int rc = set_policy(SCHED_OTHER);
	if (rc == 0)
		home_idle = false;
	return rc;
}

bool sys_sched_home_idle(void) { return home_idle; }

int sys_sched_normal_tid(int tid)
{
	struct sched_param p = { .sched_priority = 0 };
	return sched_setscheduler((pid_t)tid, SCHED_OTHER, &p) == 0 ? 0 : -errno;
}

static void *idle_probe(void *arg)
{
	int *out = arg;
	*out = 0;
	if (sys_sched_idle() != 0)
		return NULL;
	*out = 1;
	if (sys_sched_normal() == 0)
		*out = 2;
	return NULL;
}

int sys_sched_idle_probe(void)
{
	int res = 0;
	pthread_t t;
	int err = pthread_create(&t, NULL, idle_probe, &res);
	if (err)
		return -err;
	pthread_join(t, NULL);
	return res;
}

int sys_sched_lowest(void)
{
	if (setpriority(PRIO_PROCESS, (id_t)sys_gettid(), 19) != 0)
		return -errno;
	return 0;
}

void sys_yield(void) { sched_yield(); }

void sys_thread_name(pthread_t t, const char *name) { pthread_setname_np(t, name); }

void sys_sleep_ns(uint64_t ns)
{
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000u),
	                       .tv_nsec = (long)(ns % 1000000000u) };
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Platform layer: the only place with Linux-specific calls (futex,
 * sched_getcpu, SCHED_IDLE, clocks). Everything else uses these helpers.
 */
#ifndef PIANO_SYS_H
#define PIANO_SYS_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* Monotonic time in nanoseconds (vDSO, ~20 ns). */
uint64_t sys_now_ns(void);
/* Coarse monotonic time (tick resolution, ~5 ns to read). */
uint64_t sys_now_coarse_ns(void);
/* CPU time the calling thread has used, in nanoseconds (a system call:
 * the vDSO does not serve thread clocks). */
uint64_t sys_thread_cpu_ns(void);
/* The calling thread's scheduler statistics (/proc/thread-self/schedstat,
 * close-on-exec), -1 where the kernel has none; and the time the thread
 * has spent runnable but waiting for a CPU, in nanoseconds (-1 on error). */
int sys_schedstat_open(void);
int64_t sys_run_delay_ns(int fd);

/*
 * Private futex on a 32-bit word. wait sleeps while *addr == val, for at
 * most timeout_ns (0 = forever); spurious returns are allowed. wake never
 * dereferences addr in user space, so it may be called on an object that
 * a woken waiter has already freed (the kernel only hashes the address).
 */
void sys_futex_wait(_Atomic uint32_t *addr, uint32_t val, uint64_t timeout_ns);
void sys_futex_wake(_Atomic uint32_t *addr, int n);

/* CPU the calling thread runs on (vDSO), or -1. */
int sys_current_cpu(void);

/* Kernel thread id of the caller. */
int sys_gettid(void);

/* Scheduling class of the calling thread. Return 0 or -errno. */
int sys_sched_idle(void);
int sys_sched_normal(void);
/* Whether the calling thread last put itself at SCHED_IDLE (through
 * sys_sched_idle, not undone by sys_sched_normal): its class even while
 * another thread has raised it (sys_sched_normal_tid). */
bool sys_sched_home_idle(void);
/* Another thread of the process to SCHED_OTHER: 0 or -errno. */
int sys_sched_normal_tid(int tid);
/* What a thread that puts itself at SCHED_IDLE may do in this process,
 * tried in a short-lived thread of its own (the answer depends on
 * CAP_SYS_NICE, RLIMIT_NICE and security modules, so it is asked, not
 * derived): 0 cannot enter SCHED_IDLE, 1 entered and cannot leave it, 2
 * entered and left; -errno if the thread could not be created. */
int sys_sched_idle_probe(void);
/* Lowest SCHED_OTHER priority (nice 19), the fallback for SCHED_IDLE. */
int sys_sched_lowest(void);

/* Names thread t (visible in /proc/self/task/TID/comm, top, gdb). Called by
 * the creator once pthread_create() returned, not by the thread: the name is
 * then set before piano_init() returns, and whoever looks for the engine's
 * threads by name finds each one that piano_thread_count() counts. */
void sys_thread_name(pthread_t t, const char *name);

void sys_yield(void);
/* Relative sleep in nanoseconds. */
void sys_sleep_ns(uint64_t ns);

static inline void sys_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield" ::: "memory");
#endif
}

#endif

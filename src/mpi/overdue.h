/* SPDX-License-Identifier: BSD-3-Clause */
/* A warning for a blocking call that may never return (overdue.c). */
#ifndef PIANO_MPI_OVERDUE_H
#define PIANO_MPI_OVERDUE_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* Owned by the thread that arms it; `lock` guards `done` between it and the
 * watching thread. */
struct overdue {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t thread;
	bool done;
	bool armed;
	uint64_t after_ns;
	void (*warn)(void *arg, uint64_t waited_ns);
	void *arg;
};

/* Calls warn(arg, waited) from another thread, once, if overdue_disarm()
 * has not been called after_ns from now. Without a thread (out of memory
 * or threads) nothing warns: the caller's call runs all the same. */
void overdue_arm(struct overdue *o, uint64_t after_ns, void (*warn)(void *, uint64_t), void *arg);

/* Ends the watch; returns when the watching thread is gone. */
void overdue_disarm(struct overdue *o);

#endif

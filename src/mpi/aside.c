/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The set-up's memory stays out of the application's heap. glibc's malloc
 * serves the main thread from the main arena (the brk heap) and every other
 * thread from an arena of its own. What piano's set-up allocates (the
 * settings registry, the engine, hwloc's topology, the MPI-layer tables)
 * would sit in the main arena between the MPI's blocks and move every block
 * the application allocates afterwards: by 20-290 KB on MPICH and up to
 * 570 KB on Open MPI, measured with the set-up in the application's thread.
 * Where an application's buffers land matters to it: MPICH's 64 KiB
 * ping-pong then ran 10-20 % slower than natively, and as fast as natively
 * with the set-up here (docs/mpi.md, "The application's heap"; tests
 * mpi.<mpi>.heap_offset_*).
 *
 * The caller waits for the thread, so the MPI sees the set-up's calls one
 * at a time, as from the caller. The thread inherits the caller's signal
 * mask and passes it on to the engine's threads it starts, as the caller
 * would have.
 */
#include "aside.h"

#include <pthread.h>
#include <stdbool.h>
#include <sys/mman.h>

struct aside_call {
	void (*fn)(void *);
	void *arg;
};

static void *aside_main(void *p)
{
	struct aside_call *c = p;
	pthread_setname_np(pthread_self(), "piano-setup"); /* for top -H and gdb */
	c->fn(c->arg);
	return NULL;
}

/* The thread's stack. A stack of piano's own, not one from glibc's cache:
 * pthread_create allocates the thread's TLS vector (about 400 B) in the
 * *calling* thread's arena, the one block of the set-up left there. glibc
 * keeps it as long as it caches the thread's stack, but frees it when it
 * joins a thread that runs on a stack of the caller's, so the application's
 * next block of that size takes its place. */
#define ASIDE_STACK (8u << 20)
#define ASIDE_GUARD (64u << 10)

void pmpi_aside(void (*fn)(void *), void *arg)
{
	struct aside_call c = { .fn = fn, .arg = arg };
	void *stack = mmap(NULL, ASIDE_STACK, PROT_READ | PROT_WRITE,
	                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_STACK, -1, 0);
	pthread_attr_t attr;
	bool ready = stack != MAP_FAILED && pthread_attr_init(&attr) == 0;
	if (ready && (mprotect(stack, ASIDE_GUARD, PROT_NONE) != 0 ||
	              pthread_attr_setstack(&attr, stack, ASIDE_STACK) != 0)) {
		pthread_attr_destroy(&attr);
		ready = false;
	}
	bool created = false;
	if (ready) {
		pthread_t t;
		created = pthread_create(&t, &attr, aside_main, &c) == 0;
		pthread_attr_destroy(&attr);
		if (created)
			pthread_join(t, NULL);
	}
	if (stack != MAP_FAILED)
		munmap(stack, ASIDE_STACK);
	if (!created)
		fn(arg); /* out of memory or threads: the engine's set-up reports it */
}

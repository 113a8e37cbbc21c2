/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Preloaded by the test mpi.<mpi>.degraded_nothreads: pthread_create fails
 * with EAGAIN for threads whose start routine lives in libpiano-mpi (as
 * under a process limit), and works for everybody else (the MPI's own
 * threads, the application's).
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <string.h>

typedef int create_fn(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);

__attribute__((visibility("default"))) int pthread_create(pthread_t *t, const pthread_attr_t *a,
                                                          void *(*fn)(void *), void *arg)
{
	static create_fn *real;
	Dl_info info;
	if (dladdr((void *)fn, &info) && info.dli_fname && strstr(info.dli_fname, "libpiano-mpi"))
		return EAGAIN;
	if (!real)
		real = (create_fn *)dlsym(RTLD_NEXT, "pthread_create");
	return real ? real(t, a, fn, arg) : ENOSYS;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The process's threads by name, for the tests of the core and of the MPI
 * layer (piano names its threads piano-idle, piano-timer, piano-block).
 */
#ifndef PIANO_TEST_THREADS_H
#define PIANO_TEST_THREADS_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

/* Calls fn(tid, arg) for each thread whose name starts with prefix, until
 * fn returns non-zero (then returns that value). Returns 0 after the last
 * thread, -1 if /proc/self/task cannot be read. */
static inline int test_each_thread(const char *prefix, int (*fn)(pid_t tid, void *arg),
                                   void *arg)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return -1;
	int rc = 0;
	for (struct dirent *de; !rc && (de = readdir(d));) {
		char path[300], comm[32] = "";
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
		FILE *f = fopen(path, "r");
		if (!f)
			continue;
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
		if (!strncmp(comm, prefix, strlen(prefix)))
			rc = fn((pid_t)atoi(de->d_name), arg);
	}
	closedir(d);
	return rc;
}

/* test_each_thread() callback: stores the thread's voluntary context
 * switches (its wake-ups, for a thread that sleeps between rounds) in
 * *(long *)arg and stops at the first matching thread. */
static inline int test_thread_wakeups(pid_t tid, void *arg)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/self/task/%d/status", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(buf, sizeof(buf), f))
		if (sscanf(buf, "voluntary_ctxt_switches: %ld", (long *)arg) == 1)
			break;
	fclose(f);
	return 1;
}

/* test_each_thread() callback: stores the CPU time the thread has used, in
 * ns (/proc/self/task/TID/schedstat's first field; -1 if unreadable), in
 * *(long long *)arg and stops at the first matching thread. */
static inline int test_thread_cpu_ns(pid_t tid, void *arg)
{
	char path[64];
	long long ns = -1;
	snprintf(path, sizeof(path), "/proc/self/task/%d/schedstat", (int)tid);
	FILE *f = fopen(path, "r");
	if (f) {
		if (fscanf(f, "%lld", &ns) != 1)
			ns = -1;
		fclose(f);
	}
	*(long long *)arg = ns;
	return 1;
}

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * piano-bench-duty ON_MS OFF_MS: computes for ON_MS, sleeps for OFF_MS, until
 * killed. bench/apps/lammps.sh's `-shared` cases bind one to a CPU, so that
 * the rank there gets about OFF/(ON+OFF) of it and the other ranks wait for
 * it: a core shared with another job or with the system's own work. There,
 * every wake-up of piano's threads that lands on the slower rank's CPU
 * delays all ranks, which a quiet node hides.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int ms_arg(const char *s, long *out)
{
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end || end == s || v < 0 || v > 10000)
		return -1;
	*out = v;
	return 0;
}

int main(int argc, char **argv)
{
	long on, off;
	if (argc != 3 || ms_arg(argv[1], &on) || ms_arg(argv[2], &off) || on + off == 0) {
		fprintf(stderr,
		        "usage: piano-bench-duty ON_MS OFF_MS (0..10000 each, not both 0)\n");
		return 2;
	}
	volatile unsigned long spin = 0;
	struct timespec pause = { .tv_sec = off / 1000, .tv_nsec = (off % 1000) * 1000000L };
	for (;;) {
		double end = now() + (double)on * 1e-3;
		while (now() < end)
			spin++;
		if (off)
			nanosleep(&pause, NULL);
	}
}

/* SPDX-License-Identifier: BSD-3-Clause */
/* The socket watcher's wake-up pipe and quiet flag (watch_wake.h). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "watch_wake.h"
#include "base.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <unistd.h>

/* Opened by watch_setup() before the watcher runs and closed by
 * watch_shutdown() after it stopped; written by any thread meanwhile. */
static int pipe_fds[2] = { -1, -1 };
_Atomic int watch_quiet_flag;
_Atomic int watch_rest_flag;
_Atomic bool watch_graphs_ticked;

int watch_wake_open(void)
{
	/* Close-on-exec: nothing of piano's leaks into the application's
	 * children. */
	return pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) ? PIANO_ESYS : 0;
}

void watch_wake_close(void)
{
	for (int i = 0; i < 2; i++)
		if (pipe_fds[i] >= 0) {
			close(pipe_fds[i]);
			pipe_fds[i] = -1;
		}
}

int watch_wake_fd(void) { return pipe_fds[0]; }

void watch_wake_drain(void)
{
	char drain[64];
	while (read(pipe_fds[0], drain, sizeof(drain)) > 0)
		;
}

bool watch_wake_write(void)
{
	if (pipe_fds[1] < 0)
		return false;
	/* EAGAIN: the pipe is full of wake-ups already. */
	return write(pipe_fds[1], "w", 1) == 1 || errno == EAGAIN;
}

void watch_nudge_slow(void)
{
	if (atomic_exchange_explicit(&watch_quiet_flag, 0, memory_order_relaxed))
		watch_wake_write();
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Kernel-blocking progress for socket transports (PIOMan-2008): when every
 * core computes, idle threads never run and only the timer would progress
 * the MPI. The socket watcher is an event-driven ltask (blocking option,
 * delay 0) that lives in a blocking helper thread, sleeping in poll() on the
 * process's sockets, and runs a progress round as soon as one becomes
 * readable. The timer thread remains the fallback (shared memory has no file
 * descriptor to sleep on).
 *
 * Sockets that MPI does not read (an application's own, a launcher's) would
 * wake the helper for nothing, forever. A socket still holding the same
 * number of unread bytes after a progress round gets a strike and is left
 * out until the next rescan; after STRIKES rounds in a row it is ignored for
 * good. One strike proves nothing: another thread may hold the MPI's
 * progress lock during our round, and Open MPI reads its TCP sockets only
 * every so many progress calls (its event-loop tick).
 *
 * The sending side needs wake-ups too: once the MPI has filled a socket's
 * send buffer it writes the rest of a large message only from a progress
 * round, and with POLLIN alone that round waits for the timer while the
 * link idles. The watcher also waits for POLLOUT on a TCP socket that was
 * written to since it last looked (the kernel's count of bytes sent,
 * TCP_INFO, moved: the MPI is sending and may have more to write); on one
 * that was not, POLLOUT would fire at once, every time, for nothing. The
 * send queue's length cannot tell: on a fast link the peer has read and
 * acknowledged everything by the end of the round that filled it.
 */
#include "watch.h"
#include "base.h"
#include "gate.h"
#include "graph_list.h"
#include "report.h"
#include "sys.h"
#include "track.h"
#include "waiters.h"

#include <dirent.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/tcp.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_FDS 256
#define MAX_IGNORED 64
#define STRIKES 5        /* undrained rounds in a row before a socket is ignored */
#define REFRESH_NS 10000000u /* connections appear lazily: rescan every 10 ms */
#define STANDBY_MS 1         /* look again this often while a native waiter drives */
#define SETTLE_MS 10         /* quiet time before serialized mode's fence goes (watch_block) */

/* All state below is owned by the watcher task, which runs on one thread
 * at a time (engine guarantee), except wake_pipe (written at shutdown). */
static struct pollfd fds[MAX_FDS + 1];
/* What the watcher knows of the socket polled in fds[i]. */
struct sock {
	unsigned long ino;
	int avail_before;      /* unread bytes when poll() returned, -1: none */
	unsigned char strikes; /* undrained rounds in a row */
	uint64_t sent_mark;    /* bytes_sent() when last looked at */
};
static struct sock socks[MAX_FDS + 1];
static int nfds;
static unsigned long ignored[MAX_IGNORED];
static int nignored;
static uint64_t refreshed_ns;
static int wake_pipe[2] = { -1, -1 };
static piano_ltask_t *watch_task;

static bool is_ignored(unsigned long ino)
{
	for (int i = 0; i < nignored; i++)
		if (ignored[i] == ino)
			return true;
	return false;
}

/* Bytes the kernel has sent on TCP socket fd; 0 for other sockets and on
 * kernels older than 4.19 (then only POLLIN wakes the watcher). */
static uint64_t bytes_sent(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0 ||
	    len < offsetof(struct tcp_info, tcpi_bytes_sent) + sizeof(ti.tcpi_bytes_sent))
		return 0;
	return ti.tcpi_bytes_sent;
}

/* POLLOUT only where the MPI wrote since the last look (see the top). */
static void choose_events(void)
{
	for (int i = 1; i < nfds; i++) {
		if (fds[i].fd < 0)
			continue; /* sitting out until the rescan */
		uint64_t sent = bytes_sent(fds[i].fd);
		fds[i].events = POLLIN | (sent != socks[i].sent_mark ? POLLOUT : 0);
		socks[i].sent_mark = sent;
	}
}

/* What was known of socket ino before a rescan (zero if it is new). */
static struct sock known(unsigned long ino, const struct sock *prev, int n)
{
	for (int i = 1; i < n; i++)
		if (prev[i].ino == ino)
			return (struct sock){ .ino = ino, .avail_before = -1, .strikes = prev[i].strikes,
			                      .sent_mark = prev[i].sent_mark };
	return (struct sock){ .ino = ino, .avail_before = -1 };
}

static void refresh(void)
{
	static struct sock prev[MAX_FDS + 1];
	int prev_n = nfds;
	memcpy(prev, socks, sizeof(socks));
	DIR *d = opendir("/proc/self/fd");
	nfds = 0;
	fds[nfds++] = (struct pollfd){ .fd = wake_pipe[0], .events = POLLIN };
	if (!d)
		return;
	int self = dirfd(d);
	struct dirent *de;
	while ((de = readdir(d)) && nfds <= MAX_FDS) {
		char path[64], link[64];
		int fd = atoi(de->d_name);
		if (de->d_name[0] == '.' || fd == self || fd == wake_pipe[0] || fd == wake_pipe[1])
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(path, link, sizeof(link) - 1);
		unsigned long ino;
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (sscanf(link, "socket:[%lu]", &ino) != 1 || is_ignored(ino))
			continue;
		socks[nfds] = known(ino, prev, prev_n);
		fds[nfds++] = (struct pollfd){ .fd = fd, .events = POLLIN };
	}
	closedir(d);
	refreshed_ns = sys_now_ns();
}

static int watch_block(void *arg, int timeout_ms)
{
	(void)arg;
	if (waiters_native()) {
		/* A thread waits in the MPI's own call and reads the sockets
		 * itself: a progress round here would only contend with it
		 * (MPICH's global lock, and a core taken from it: a graph
		 * Ialltoall of 1 MiB across two hosts waited 14-30 ms with the
		 * watcher, 8.7 ms without), and the bytes it has not read yet
		 * would wake us back to back. The shutdown pipe only, a while. */
		poll(fds, 1, timeout_ms < STANDBY_MS ? timeout_ms : STANDBY_MS);
		return 0;
	}
	if (sys_now_ns() - refreshed_ns > REFRESH_NS)
		refresh();
	choose_events();
	/* While serialized mode's fenced path is on, a short timeout: every
	 * application call pays the fence until we see a quiet one (below). */
	if (gate_fenced() && (timeout_ms < 0 || timeout_ms > SETTLE_MS))
		timeout_ms = SETTLE_MS;
	int r = poll(fds, (nfds_t)nfds, timeout_ms);
	if (r == 0 && !track_pending() && !waiters_pending() && !graphs_running()) {
		/* A whole timeout without a socket event, and nothing for the
		 * progress task to do: our last round (a socket that turned out
		 * not to be the MPI's, a message that needed no help) left
		 * serialized mode's application calls on the fenced path, and
		 * no progress task may come to take them off it (gate_quiet(),
		 * gate.c). */
		gate_quiet();
	}
	if (r <= 0)
		return 0;
	if (fds[0].revents)
		return 0; /* shutdown: the helper sees the cancel request */
	for (int i = 1; i < nfds; i++) {
		socks[i].avail_before = -1;
		if (fds[i].revents & POLLIN)
			ioctl(fds[i].fd, FIONREAD, &socks[i].avail_before);
	}
	return r;
}

/* After a progress round: a socket the MPI did not drain STRIKES times in
 * a row is not its own; after fewer strikes it sits out until the rescan
 * (poll() skips negative descriptors). */
static void ignore_undrained(void)
{
	for (int i = 1; i < nfds; i++) {
		int after = -1;
		struct sock *k = &socks[i];
		int before = k->avail_before;
		k->avail_before = -1;
		if (before <= 0 || ioctl(fds[i].fd, FIONREAD, &after))
			continue;
		if (after != before) {
			k->strikes = 0;
			continue;
		}
		if (++k->strikes < STRIKES) {
			fds[i].fd = -fds[i].fd - 1;
			continue;
		}
		if (nignored < MAX_IGNORED)
			ignored[nignored++] = k->ino;
		refreshed_ns = 0; /* drop it from the set at the next block */
	}
}

static unsigned watch_fn(void *arg)
{
	(void)arg;
	if (atomic_load(&pmpi_g.finalizing))
		return 0;
	if (waiters_native()) {
		/* Arrived since watch_block() looked (above): no round, so no
		 * strikes either. */
		for (int i = 1; i < nfds; i++)
			socks[i].avail_before = -1;
		return 0;
	}
	gate_poke();
	/* A graph collective's next node waits for a step, not for the MPI's
	 * progress alone: the message that woke us may have finished one of
	 * its receives or sends, whose successors (the next segment, the
	 * reduction, the forward) the progress task would otherwise post only
	 * at the timer's next tick, with every core computing. The poke above
	 * still drains the sockets when graphs_progress() finds the list
	 * taken by another thread. */
	if (graphs_running() > 0 && !graphs_driven() && gate_enter()) {
		graphs_progress();
		gate_leave();
	}
	report_round();
	ignore_undrained();
	return 0;
}

int watch_setup(void)
{
	if (pipe(wake_pipe))
		return PIANO_ESYS;
	refresh();
	int rc = piano_ltask_create(watch_fn, NULL, PIANO_LTASK_REPEAT, &watch_task);
	if (rc)
		goto undo_pipe;
	piano_ltask_set_name(watch_task, "mpi-socket-watch");
	rc = piano_ltask_set_blocking(watch_task, watch_block, 0);
	if (!rc)
		rc = piano_ltask_submit(watch_task);
	if (rc)
		goto undo_task;
	return 0;
undo_task:
	piano_ltask_destroy(watch_task);
	watch_task = NULL;
undo_pipe:
	close(wake_pipe[0]);
	close(wake_pipe[1]);
	wake_pipe[0] = wake_pipe[1] = -1;
	return rc;
}

void watch_shutdown(void)
{
	if (!watch_task)
		return;
	piano_ltask_cancel(watch_task);
	/* Wake the helper out of poll() so finalize does not wait a timeout. */
	if (write(wake_pipe[1], "x", 1) < 0)
		pmpi_warn("cannot wake the socket watcher; finalize may take up to "
		          "PIANO_BLOCK_TIMEOUT_MS");
	piano_ltask_wait(watch_task);
	piano_ltask_destroy(watch_task);
	watch_task = NULL;
	close(wake_pipe[0]);
	close(wake_pipe[1]);
	wake_pipe[0] = wake_pipe[1] = -1;
}

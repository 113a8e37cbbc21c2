/*
 * Kernel-blocking progress for socket transports (paper 004): when every
 * core computes, idle threads never run and only the timer would progress
 * the MPI. The socket watcher is an event-driven ltask (blocking option,
 * delay 0) that lives in a blocking helper thread, sleeping in poll() on the
 * process's sockets, and runs a progress round as soon as one becomes
 * readable. The timer thread remains the fallback (shared memory has no file
 * descriptor to sleep on).
 *
 * Sockets that MPI does not read (an application's own, a launcher's) would
 * wake the helper for nothing, forever: a socket still holding the same
 * number of unread bytes after a progress round is ignored from then on.
 *
 * The sending side needs wake-ups too: once the MPI has filled a socket's
 * send buffer it writes the rest of a large message only from a progress
 * round, and with POLLIN alone that round waits for the timer while the
 * link idles. The watcher also waits for POLLOUT on a socket whose send
 * queue grew since the helper last woke up (the MPI wrote to it, so it
 * likely has more to write); a socket whose queue only drains is watched
 * for input alone, since POLLOUT would then fire at once, every time, until
 * the peer acknowledged everything.
 */
#include "mpi_internal.h"

#include <dirent.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#define MAX_FDS 256
#define MAX_IGNORED 64
#define REFRESH_NS 10000000u /* connections appear lazily: rescan every 10 ms */

/* All state below is owned by the watcher task, which runs on one thread
 * at a time (engine guarantee), except wake_pipe (written at shutdown). */
static struct pollfd fds[MAX_FDS + 1];
static unsigned long inodes[MAX_FDS + 1];
static int avail_before[MAX_FDS + 1];
static int outq_mark[MAX_FDS + 1]; /* send-queue bytes when the helper last woke */
static int nfds;
static unsigned long ignored[MAX_IGNORED];
static int nignored;
static uint64_t refreshed_ns;
static int wake_pipe[2] = { -1, -1 };
static piano_ltask_t *watch_task;

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool is_ignored(unsigned long ino)
{
	for (int i = 0; i < nignored; i++)
		if (ignored[i] == ino)
			return true;
	return false;
}

/* Bytes in fd's send queue (not yet acknowledged); 0 if unknown. */
static int send_queued(int fd)
{
	int q = 0;
	return ioctl(fd, SIOCOUTQ, &q) == 0 ? q : 0;
}

static void refresh(void)
{
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
		inodes[nfds] = ino;
		outq_mark[nfds] = send_queued(fd);
		fds[nfds++] = (struct pollfd){ .fd = fd, .events = POLLIN };
	}
	closedir(d);
	refreshed_ns = mono_ns();
}

static int watch_block(void *arg, int timeout_ms)
{
	(void)arg;
	if (mono_ns() - refreshed_ns > REFRESH_NS)
		refresh();
	for (int i = 1; i < nfds; i++)
		fds[i].events = POLLIN | (send_queued(fds[i].fd) > outq_mark[i] ? POLLOUT : 0);
	int r = poll(fds, (nfds_t)nfds, timeout_ms);
	if (r <= 0)
		return 0;
	if (fds[0].revents)
		return 0; /* shutdown: the helper sees the cancel request */
	for (int i = 1; i < nfds; i++) {
		outq_mark[i] = send_queued(fds[i].fd);
		avail_before[i] = -1;
		if (fds[i].revents & POLLIN)
			ioctl(fds[i].fd, FIONREAD, &avail_before[i]);
	}
	return r;
}

/* After a progress round: sockets the MPI did not drain are not its own. */
static void ignore_undrained(void)
{
	for (int i = 1; i < nfds; i++) {
		int after = -1;
		if (avail_before[i] <= 0 || ioctl(fds[i].fd, FIONREAD, &after) ||
		    after != avail_before[i])
			continue;
		if (nignored < MAX_IGNORED)
			ignored[nignored++] = inodes[i];
		refreshed_ns = 0; /* drop it from the set at the next block */
	}
	memset(avail_before, 0, sizeof(avail_before));
}

static unsigned watch_fn(void *arg)
{
	(void)arg;
	if (atomic_load(&pmpi_g.finalizing))
		return 0;
	int flag = 0;
	PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, pmpi_g.progress_comm, &flag, MPI_STATUS_IGNORE);
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

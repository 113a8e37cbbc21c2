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
 * wake the helper for nothing, forever. A socket that held unread bytes
 * when a round began and from which nobody read since the last such look
 * gets a strike and is left out until the next rescan; after STRIKES in a
 * row it is ignored for good, unless it is a TCP socket that somebody in
 * the process has been seen reading: that one only sits out. A strike
 * proves little: the application's thread may hold the MPI's progress lock
 * during our round (Open MPI's event loop then skips ours) and read the
 * socket only when the scheduler lets it, and Open MPI reads its TCP
 * sockets only every so many progress calls (its event-loop tick). On a
 * TCP socket "nobody read" is exact: the kernel's count of bytes received
 * minus the unread ones did not move. The unread count alone cannot tell: a
 * peer streaming one segment per round refills what the round read. With
 * both ranks on one core, judging by the round alone or by that count
 * ignored the MPI's own connection, and a graph collective waited for the
 * timer.
 *
 * A round that read data is followed by one more round without waiting for
 * an event, and so on while the rounds read: what a progress call read may
 * complete a request only in a later call (Open MPI's Testsome checks
 * before it progresses), and bytes that arrive during a round and are read
 * by it raise no event afterwards; no socket event would come to run that
 * call while the peer waits for the answer this receive releases.
 *
 * The sending side needs wake-ups too: once the MPI has filled a socket's
 * send buffer it writes the rest of a large message only from a progress
 * round, and with POLLIN alone that round waits for the timer while the
 * link idles. The watcher also waits for POLLOUT on a TCP socket that was
 * written to since it last looked (the count of bytes the process wrote,
 * from TCP_INFO, moved: the MPI is sending and may have more to write); on one
 * that was not, POLLOUT would fire at once, every time, for nothing. The
 * send queue's length cannot tell: on a fast link the peer has read and
 * acknowledged everything by the end of the round that filled it. And on
 * one whose send buffer is full right now (a zero-timeout poll() says it
 * is not writable), POLLOUT comes only once the peer made room, so it is
 * awaited too: a round that fills the buffer while the peer's window is
 * closed moves no byte out, and by the count alone the rest of a 16 MiB
 * send waited a whole blocking timeout. POLLOUT asked for and not reported
 * is asked for again: the round after that poll() had no room to write
 * in, so whether the buffer is full by the next look or not, the MPI's
 * write is unfinished (choose_events()).
 *
 * Not every arrival needs a round. One that brings a small eager message
 * for a receive nobody waits on gains nothing from being read now: the
 * kernel keeps it, and the application's next MPI call reads it at the
 * same cost, while the wake-up took a CPU, on a computing core or on the
 * idle core another rank's engine works on (a receiver's watcher woken by
 * each message on the core where the sender's engine posts its offloaded
 * sends made the sender's step 25-63 us instead of 20; docs/mpi.md). A round
 * is useful when a thread waits for what it completes (a delegated wait),
 * when its step of the running graphs posted a transfer (a graph's next
 * segment, forward or reply: graph_posts()), or when it drained a window
 * about to close: the socket held at
 * least 1/HOLD_STREAM_SHARE of its receive buffer unread (window_pressed()),
 * and for HOLD_STREAM_NS after such a round, since the next rounds of a
 * large message may each read less while the sender's window must stay
 * open. Bytes the receive buffer keeps gain nothing from an early read,
 * however many: the application's wait copies them at the same cost. Nor
 * does an answer the round made the MPI write (a rendezvous reply, the
 * next piece of a message): the MPI writes it in the wait all the same.
 * Counted as useful, such rounds kept the watcher awake through every 64 KiB
 * collective across two hosts (UCX's TCP answers each 32 KiB piece; 1.4
 * wake-ups per operation at about 50 us each, on the computing cores) and
 * cost 40-60 points of overlap against native's (docs/performance.md). A
 * write is useful when the round filled a send buffer that had room
 * (round_filled()): the MPI has more to write than the socket takes, a
 * transfer is under way, and the answers that drive it (a rendezvous
 * acknowledgement) should not wait for a pause's end. A sender's own
 * continuation needs no judgement: a send buffer found full is awaited
 * even at rest. After a round that was none of
 * these the watcher stops listening for arrivals for a while: 64 us,
 * doubling while such rounds follow each other, up to
 * PIANO_MPI_WATCH_HOLD_US; the first useful round ends it. Then one round
 * reads what came meanwhile. An arrival that needs a round during a pause
 * (a rendezvous request) waits for its end, unless the progress task gets
 * to it first.
 *
 * Rest: a wake-up that finds the application inside the MPI (a native
 * waiter, or serialized mode's gate closed by its call) runs no round, and
 * one whose round was not useful as for the pause above helped nobody. A
 * process that calls the MPI right after each post and
 * computes only with nothing in flight (LAMMPS: Irecv, pack, Send, Wait)
 * gives every wake-up one of these ends; on a node with no idle core each
 * one takes a computing core for 50-100 us (LAMMPS over TCP: 1,500-1,950
 * per rank in 6.4 s, Comm 0.44-0.65 s against native's 0.32-0.48). When
 * at most 1 in REST_DULL of REST_BLOCK wake-ups in a row were useful, the
 * watcher rests: no arrivals, no POLLOUT after the MPI's own writes (a
 * send buffer found full still wakes it: that write is certainly
 * unfinished), no quiet nudge, for REST_MIN_NS; the first wake-up after a
 * rest decides the next: fruitless, twice as long (up to
 * PIANO_MPI_WATCH_REST_MS); fruitful, the doubling ends and a new block
 * is judged. A block and not a streak: a few fruitful wake-ups among many
 * (a round that ran in the moment between two of the application's
 * calls) must not keep the watcher awake, and the rare runs of 16
 * fruitless ones that collectives across two hosts showed (9 rests in 10
 * s of bench_nbc, overlap at 64 KiB down by up to 25 points in a round)
 * must not put it to sleep. Never while a delegated waiter sleeps: it
 * waits for the watcher's rounds, and one that starts during a rest ends
 * it (progress_kick() writes the pipe while watch_rest_flag is up). A
 * running graph is judged as the rest: a round that only completed its
 * receives (their data would wait in the kernel for the application's
 * wait at the same cost) is not useful, one that posted a transfer is; it
 * ends a rest only where the timer does not tick for it (no timer thread,
 * or a period above WATCH_GRAPH_TICK_US: watch_graphs_ticked), since
 * nothing else would advance it. Woken for graphs at every arrival, the
 * watcher runs a round for each piece of a collective across two hosts
 * (about 70 us each, 200 us of CPU per 64 KiB MPICH Iallreduce on a
 * computing core), and the graphs overlap 20-40 points less than with the
 * timer alone (docs/performance.md). A process that computes while a large message
 * arrives keeps a watcher that wakes for it: its rounds drain a filling
 * window.
 *
 * Quiet: while nothing a round can help is pending (no tracked operation,
 * no delegated waiter, no running graph: needed()), the watcher does not
 * listen for arrivals at all. Eager traffic, which the layer does not
 * track, is then read by the application's next MPI call, as without
 * piano, at the same cost, and no wake-up takes a computing core from it
 * (a TCP halo exchange of 4 KiB paid 8-34 % over native for them). The
 * watcher blocks on its wake-up pipe and POLLOUT; whoever makes something
 * pending kicks the progress task, whose progress_kick() calls
 * watch_nudge(), which writes the pipe if the flag is up (a Dekker pair of
 * seq_cst fences: go_quiet()).
 */
#include "watch.h"
#include "base.h"
#include "gate.h"
#include "graph_list.h"
#include "mpi_sock.h"
#include "progress.h"
#include "report.h"
#include "retire.h"
#include "sys.h"
#include "track.h"
#include "waiters.h"
#include "watch_wake.h"

#include <dirent.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_FDS 256
#define MAX_IGNORED 64
#define STRIKES 5                /* undrained rounds in a row before a socket is ignored */
#define REFRESH_NS 10000000u     /* connections appear lazily: look for new ones every 10 ms */
#define RESCAN_NS 1000000000u    /* ... and read the whole fd table at least this often */
#define STANDBY_MS 1             /* look again this often while a native waiter drives */
#define SETTLE_MS 10             /* quiet time before serialized mode's fence goes (watch_block) */
#define HOLD_MIN_NS 64000u       /* the first pause after a round nobody needed (see the top) */
#define HOLD_STREAM_SHARE 4      /* a stream: unread bytes >= 1/this of the receive buffer */
#define HOLD_STREAM_NS 10000000u /* ... and no pause for this long after it */
#define REST_BLOCK 64            /* wake-ups judged together before a rest (see the top) */
#define REST_DULL 8              /* ... of which at most 1 in this many were useful */
#define REST_MIN_NS 10000000u    /* the first rest */

/* All state below is owned by the watcher task, which runs on one thread
 * at a time (engine guarantee); the wake-up pipe and flag: watch_wake.h. */
static struct pollfd fds[MAX_FDS + 1];
/* What the watcher knows of the socket polled in fds[i]. */
struct sock {
	unsigned long ino;
	int avail_before;      /* unread bytes when poll() returned, -1: none */
	bool pressed;          /* ... at least 1/HOLD_STREAM_SHARE of its receive buffer */
	bool writable;         /* its send buffer had room when poll() returned */
	bool tcp_read;         /* read_before is valid (a TCP socket) */
	bool active;           /* the last round read from it */
	bool sit_after;        /* reports itself at every poll(): out after the round */
	bool marked;           /* read_mark is valid */
	bool seen_read;        /* read_mark moved once: somebody reads it */
	bool mpi;              /* a connection of the MPI's (mpi_sock_kind) */
	bool connecting;       /* a TCP connection being made when last asked */
	uint64_t read_before;  /* bytes_read() when poll() returned */
	uint64_t read_mark;    /* bytes_read() after the last round that looked */
	unsigned char strikes; /* undrained rounds in a row */
	uint64_t written_mark; /* bytes_written() when last looked at */
};
static struct sock socks[MAX_FDS + 1];
static int nfds;
static int nmpi;        /* sockets in fds that are the MPI's connections */
static int nconnecting; /* ... and TCP connections being made (recheck_connecting) */
static unsigned long ignored[MAX_IGNORED];
static int nignored;
static uint64_t refreshed_ns; /* the last look for new sockets; 0: rescan at the next block */
/* The last full scan of the fd table, the number of fds then (the size
 * /proc/self/fd reports, Linux 6.2 and later; 0 before), and the time to
 * the next one where that number is not reported. */
static uint64_t scanned_ns;
static long scanned_count;
static uint64_t scan_gap = REFRESH_NS;
/* A scan found other sockets than the one before (block_unconnected()
 * clears it). */
static bool sockets_changed;
static bool follow_up; /* the last round read data: one more round (see the top) */
/* The pause of arrivals (see the top): its longest (PIANO_MPI_WATCH_HOLD_US,
 * 0: never), the rounds nobody needed in a row, and its end. */
static uint64_t hold_max_ns;
static unsigned hold_streak;
static uint64_t hold_until;
static uint64_t stream_until; /* no pause before: a stream is moving */
static bool judging;          /* the round is judged (set by watch_block) */
static bool graph_moved;      /* the round's graph step finished a node (watch_fn) */
/* The rest (see the top): its longest (PIANO_MPI_WATCH_REST_MS, 0: never),
 * the wake-ups judged in the current block and the fruitful ones among
 * them, the current length (0: not doubling) and end; `woke`: the last
 * block returned for a socket event (set by watch_block). */
static uint64_t rest_max_ns;
static unsigned judged, fruitful_n;
static uint64_t rest_ns;
static uint64_t rest_until;
static bool woke;
static struct watch_stats stats;
static piano_ltask_t *watch_task;

static bool is_ignored(unsigned long ino)
{
	for (int i = 0; i < nignored; i++)
		if (ignored[i] == ino)
			return true;
	return false;
}

/* Bytes the process has written to TCP socket fd (mpi_sock_written); 0 for other
 * sockets and on kernels older than 4.19 (then only POLLIN and a full
 * send buffer wake the watcher). */
static uint64_t bytes_written(int fd)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
		return 0;
	return mpi_sock_written(&ti, len);
}

/* Bytes the process has read from TCP socket fd (received by the kernel,
 * minus those still unread; `unread` when the caller has just asked
 * FIONREAD, -1 to ask here): false for other sockets and on kernels older
 * than 4.1. */
static bool bytes_read(int fd, int unread, uint64_t *out)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) != 0)
		return false;
	if (len < offsetof(struct tcp_info, tcpi_bytes_received) + sizeof(ti.tcpi_bytes_received) ||
	    (unread < 0 && ioctl(fd, FIONREAD, &unread) != 0))
		return false;
	*out = ti.tcpi_bytes_received - (uint64_t)unread;
	return true;
}

/* Whether a socket's unread bytes fill enough of its receive buffer that
 * a sender with more to send will soon find the window closed (see the
 * top): at least 1/HOLD_STREAM_SHARE of it. The kernel grows the buffer
 * (SO_RCVBUF, bookkeeping included) as the application reads, and
 * advertises about half of it as the window. Reading bytes the buffer can
 * keep gains nothing: the application's own call copies them later at the
 * same cost. */
static bool window_pressed(int fd, int unread)
{
	int buf = 0;
	socklen_t len = sizeof(buf);
	if (getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, &len) != 0 || buf <= 0)
		return true; /* unknown: rather a stream than a stalled sender */
	return (int64_t)unread * HOLD_STREAM_SHARE >= buf;
}

/* POLLOUT only where the MPI wrote since the last look, the send buffer is
 * full, or POLLOUT was asked for and did not come (see the top); while
 * resting, only the latter two. */
static void choose_events(bool rest)
{
	static struct pollfd probe[MAX_FDS];
	static int at[MAX_FDS];
	int n = 0;
	for (int i = 1; i < nfds; i++) {
		if (fds[i].fd < 0)
			continue; /* sitting out until the rescan */
		uint64_t written = bytes_written(fds[i].fd);
		/* Asked for and not reported: the buffer had no room for the
		 * whole last poll(), so the round after it (a follow-up, or one
		 * woken by another socket) could not write, and the MPI's write
		 * is unfinished. By the count alone it is lost where the MPI
		 * fills the buffer in one round, the follow-up finds it still
		 * full, and the peer makes room before the next look: neither
		 * a write since the last look nor a full buffer is left to ask
		 * POLLOUT for, and the rest of the send waits for the timer
		 * (stress.openmpi.graph_progress_sockets_onecore). */
		bool unfinished = (fds[i].events & POLLOUT) && !(fds[i].revents & POLLOUT);
		fds[i].events = POLLIN | ((written != socks[i].written_mark && !rest) || unfinished
		                                  ? POLLOUT
		                                  : 0);
		socks[i].written_mark = written;
		if (!(fds[i].events & POLLOUT)) {
			probe[n] = (struct pollfd){ .fd = fds[i].fd, .events = POLLOUT };
			at[n++] = i;
		}
	}
	if (n == 0 || poll(probe, (nfds_t)n, 0) < 0)
		return;
	for (int j = 0; j < n; j++)
		if (!probe[j].revents)
			fds[at[j]].events |= POLLOUT; /* full: fires once there is room */
}

/* What was known of socket ino before a rescan (zero if it is new). */
static struct sock known(unsigned long ino, const struct sock *prev, int n)
{
	for (int i = 1; i < n; i++)
		if (prev[i].ino == ino)
			return (struct sock){ .ino = ino,
				              .avail_before = -1,
				              .marked = prev[i].marked,
				              .seen_read = prev[i].seen_read,
				              .mpi = prev[i].mpi,
				              .read_mark = prev[i].read_mark,
				              .strikes = prev[i].strikes,
				              .written_mark = prev[i].written_mark };
	return (struct sock){ .ino = ino, .avail_before = -1 };
}

/* The number of fds the process has open, or 0 where the kernel does not
 * say (before Linux 6.2): a stat() of a few microseconds, where reading
 * the table costs 2-3 us per fd (150 us with Open MPI's 46 over TCP). */
static long fd_count(void)
{
	struct stat st;
	return stat("/proc/self/fd", &st) == 0 && st.st_size > 0 ? (long)st.st_size : 0;
}

/* Reads the fd table: every socket the process has, but those ignored. */
static void refresh(void)
{
	static struct sock prev[MAX_FDS + 1];
	int prev_n = nfds;
	memcpy(prev, socks, sizeof(socks));
	long count = fd_count();
	DIR *d = opendir("/proc/self/fd");
	nfds = 0;
	nmpi = nconnecting = 0;
	fds[nfds++] = (struct pollfd){ .fd = watch_wake_fd(), .events = POLLIN };
	if (!d)
		return;
	int self = dirfd(d);
	struct dirent *de;
	bool same = true;
	while ((de = readdir(d)) && nfds <= MAX_FDS) {
		int fd = atoi(de->d_name);
		struct stat st;
		if (de->d_name[0] == '.' || fd == self || fstat(fd, &st) != 0 ||
		    !S_ISSOCK(st.st_mode) || is_ignored((unsigned long)st.st_ino))
			continue;
		/* A socket's inode number is the one /proc/self/fd's link names
		 * (socket:[ino]), which is_ignored() and known() use. */
		struct sock *k = &socks[nfds];
		*k = known((unsigned long)st.st_ino, prev, prev_n);
		if (!k->mpi) {
			enum mpi_sock_kind kind = mpi_sock_kind(fd);
			k->mpi = kind == MPI_SOCK_MPI;
			k->connecting = kind == MPI_SOCK_CONNECTING;
			nconnecting += k->connecting;
		}
		nmpi += k->mpi;
		if (k->mpi && retire_watching())
			retire_mpi_found();
		same = same && nfds < prev_n && prev[nfds].ino == (unsigned long)st.st_ino;
		fds[nfds++] = (struct pollfd){ .fd = fd, .events = POLLIN };
	}
	closedir(d);
	same = same && nfds == prev_n;
	refreshed_ns = scanned_ns = sys_now_ns();
	scanned_count = count;
	stats.scans++;
	/* Where the count is not reported: rescans further apart while they
	 * find the same sockets. */
	scan_gap = !same ? REFRESH_NS : scan_gap < RESCAN_NS / 2 ? scan_gap * 2 : RESCAN_NS;
	sockets_changed = sockets_changed || !same;
}

/* A connection the last scan found while it was being made is asked again
 * at each refresh: the next scan may be a second away, since completing a
 * connect() leaves the fd count as it was, and meanwhile the watcher would
 * take the MPI for one without a connection (the standby of watch_block).
 * A descriptor that no longer holds that socket asks for a rescan. */
static void recheck_connecting(void)
{
	nconnecting = 0;
	for (int i = 1; i < nfds; i++) {
		struct sock *k = &socks[i];
		if (!k->connecting)
			continue;
		int fd = fds[i].fd < 0 ? -fds[i].fd - 1 : fds[i].fd;
		struct stat st;
		if (fstat(fd, &st) != 0 || (unsigned long)st.st_ino != k->ino) {
			k->connecting = false;
			refreshed_ns = 0;
			continue;
		}
		enum mpi_sock_kind kind = mpi_sock_kind(fd);
		k->connecting = kind == MPI_SOCK_CONNECTING;
		nconnecting += k->connecting;
		if (kind != MPI_SOCK_MPI)
			continue;
		k->mpi = true;
		nmpi++;
		if (retire_watching())
			retire_mpi_found();
	}
}

/* Every REFRESH_NS: the sockets sitting out come back, and the fd table
 * is read again if it may hold a new socket (its size changed, or is not
 * reported and the gap has passed) or if a rescan was asked for
 * (refreshed_ns = 0: a socket closed or ignored for good); at least every
 * RESCAN_NS (an fd closed and another opened in between leave the size as
 * it was). */
static void maybe_refresh(void)
{
	uint64_t now = sys_now_ns();
	if (now - refreshed_ns <= REFRESH_NS)
		return;
	long count = refreshed_ns ? fd_count() : 0;
	bool keep = count ? count == scanned_count && now - scanned_ns < RESCAN_NS
	                  : refreshed_ns && now - scanned_ns < scan_gap;
	if (!keep) {
		refresh();
		return;
	}
	for (int i = 1; i < nfds; i++)
		if (fds[i].fd < 0)
			fds[i].fd = -fds[i].fd - 1;
	refreshed_ns = now;
	if (nconnecting)
		recheck_connecting();
}

/* What a round can help: a tracked operation (a transfer the MPI moves in
 * steps), a thread asleep on a delegated wait, a running graph. */
static bool needed(void)
{
	return track_pending() > 0 || waiters_pending() || graphs_running() > 0;
}

/* Raises `flag`, by which a poster wakes the watcher, unless `busy()`:
 * checked before and again after the flag is up. The seq_cst fence pairs
 * with the poster's (Dekker): either the watcher sees what the poster
 * published, or the poster sees the flag and writes the pipe. */
static bool flag_up_unless(_Atomic int *flag, bool (*busy)(void))
{
	if (busy())
		return false;
	atomic_store_explicit(flag, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	if (!busy())
		return true;
	atomic_store_explicit(flag, 0, memory_order_relaxed);
	return false;
}

/* Whether the watcher may block without listening for arrivals: nothing is
 * needed; the poster's side is watch_nudge(). */
static bool go_quiet(void) { return flag_up_unless(&watch_quiet_flag, needed); }

/* What a rest gives way to (see the top). */
static bool rounds_awaited(void)
{
	return waiters_pending() ||
	       (graphs_running() > 0 &&
	        !atomic_load_explicit(&watch_graphs_ticked, memory_order_relaxed));
}

/* Whether the watcher rests now (see the top), with the flag that lets
 * progress_kick() wake it for what awaits its rounds. */
static bool rest_begin(uint64_t now)
{
	return rest_until > now && flag_up_unless(&watch_rest_flag, rounds_awaited);
}

/* The next rest: REST_MIN_NS, or twice the last one (see the top). */
static void rest_again(void)
{
	rest_ns = !rest_ns ? REST_MIN_NS : rest_ns < rest_max_ns / 2 ? 2 * rest_ns : rest_max_ns;
	if (rest_ns > rest_max_ns)
		rest_ns = rest_max_ns;
	rest_until = sys_now_ns() + rest_ns;
	stats.rests++;
}

/* After a wake-up by a socket: did it move data? (See the top.) */
static void wake_judged(bool fruitful)
{
	if (!rest_max_ns)
		return;
	if (rest_ns) {
		/* The first wake-up after a rest decides the next one. */
		if (fruitful) {
			rest_ns = 0;
			judged = fruitful_n = 0;
		} else {
			rest_again();
		}
		return;
	}
	judged++;
	fruitful_n += fruitful;
	if (judged < REST_BLOCK)
		return;
	bool dull = fruitful_n * REST_DULL <= judged;
	judged = fruitful_n = 0;
	if (dull)
		rest_again();
}

/* poll() with a timeout in ns (negative: none): pauses are shorter than a
 * millisecond. */
static int poll_ns(struct pollfd *f, int n, int64_t ns)
{
	if (ns < 0)
		return ppoll(f, (nfds_t)n, NULL, NULL);
	struct timespec ts = { .tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000 };
	return ppoll(f, (nfds_t)n, &ts, NULL);
}

/*
 * No connection of the MPI's (shared memory only, or none made yet): no
 * socket whose events a round could serve, only the fd table to look at
 * again for a connection made meanwhile (maybe_refresh()). The pipe alone,
 * with neither the quiet nor the rest flag up, so that nobody writes to it
 * but watch_shutdown(): listening there, every tracked post nudged the
 * watcher out of its quiet and every native wait woke it every 10 ms, each
 * wake-up a CPU taken from a rank for nothing (LAMMPS peptide on shared
 * memory: 500-850 per rank in 14 s, docs/performance.md). The looks come
 * REFRESH_NS apart after a scan found other sockets (and at the start,
 * when the MPI opens its first connections), twice as far apart after each
 * look that found none, up to the blocking timeout (PIANO_BLOCK_TIMEOUT_MS): a
 * connection made later is found within that timeout, the timer
 * progressing it meanwhile. A look that finds serialized mode's fenced path
 * on with nothing pending takes it off, as the connected path does.
 */
static uint64_t look_gap_ns; /* the next look's distance (0: REFRESH_NS) */

static int block_unconnected(int timeout_ms)
{
	uint64_t cap = timeout_ms < 0 ? RESCAN_NS : (uint64_t)timeout_ms * 1000000u;
	look_gap_ns = sockets_changed || !look_gap_ns ? REFRESH_NS : 2 * look_gap_ns;
	sockets_changed = false;
	if (look_gap_ns > cap)
		look_gap_ns = cap;
	int r = poll(fds, 1, (int)((look_gap_ns + 999999u) / 1000000u));
	if (r > 0)
		watch_wake_drain();
	else if (r == 0 && gate_fenced() && !needed())
		gate_quiet(progress_pending);
	stats.unconnected++;
	return 0;
}

static int watch_block(void *arg, int timeout_ms)
{
	(void)arg;
	if (!nmpi && !nconnecting) {
		maybe_refresh();
		if (!nmpi && !nconnecting)
			return block_unconnected(timeout_ms);
	}
	uint64_t now = sys_now_ns();
	bool rest = rest_begin(now);
	woke = false;
	if (rest) {
		/* The wake-up pipe and a send buffer found full only (see the
		 * top), until the rest ends; no quiet flag, so only the kicks
		 * of delegated waits and graphs write the pipe. */
		int left = (int)((rest_until - now) / 1000000u) + 1;
		if (timeout_ms < 0 || timeout_ms > left)
			timeout_ms = left;
	}
	if (waiters_native()) {
		/* A thread waits in the MPI's own call and reads the sockets
		 * itself: a progress round here would only contend with it
		 * (MPICH's global lock, and a core taken from it: a graph
		 * Ialltoall of 1 MiB across two hosts waited 14-30 ms with the
		 * watcher, 8.7 ms without), and the bytes it has not read yet
		 * would wake us back to back. The wake-up pipe only, a while;
		 * until a nudge when nothing a round can help is pending.
		 * "A while": STANDBY_MS, so that the watcher listens again
		 * soon after the wait (the MPI has a connection here:
		 * block_unconnected() above serves the others). */
		int standby = STANDBY_MS;
		bool q = !rest && go_quiet();
		if (poll(fds, 1, q || rest || timeout_ms < standby ? timeout_ms : standby) > 0)
			watch_wake_drain();
		if (q)
			atomic_store_explicit(&watch_quiet_flag, 0, memory_order_relaxed);
		if (rest)
			atomic_store_explicit(&watch_rest_flag, 0, memory_order_relaxed);
		return 0;
	}
	maybe_refresh();
	choose_events(rest);
	/* While serialized mode's fenced path is on, a short timeout: every
	 * application call pays the fence until we see a quiet one (below). */
	if (gate_fenced() && (timeout_ms < 0 || timeout_ms > SETTLE_MS))
		timeout_ms = SETTLE_MS;
	/* A socket sitting out comes back at the rescan, not a whole timeout
	 * later (a stall of the MPI's own connection after a false strike). */
	for (int i = 1; i < nfds; i++)
		if (fds[i].fd < 0) {
			uint64_t age = sys_now_ns() - refreshed_ns;
			int left = age < REFRESH_NS ? (int)((REFRESH_NS - age) / 1000000u) + 1 : 1;
			if (timeout_ms < 0 || timeout_ms > left)
				timeout_ms = left;
			break;
		}
	/* While arrivals pause (see the top): POLLOUT and the wake-up pipe
	 * only, until the pause ends; while nothing a round can help is
	 * pending (quiet, see the top), until watch_nudge() or the timeout. */
	int64_t wait_ns = timeout_ms < 0 ? -1 : (int64_t)timeout_ms * 1000000;
	now = sys_now_ns();
	bool quiet_now = !rest && go_quiet();
	bool holding = !quiet_now && hold_until > now;
	if (holding || quiet_now || rest)
		for (int i = 1; i < nfds; i++)
			fds[i].events &= (short)~POLLIN;
	if (holding && (wait_ns < 0 || (uint64_t)wait_ns > hold_until - now))
		wait_ns = (int64_t)(hold_until - now);
	bool follow = follow_up;
	follow_up = false;
	int r = poll_ns(fds, nfds, follow ? 0 : wait_ns);
	if (quiet_now)
		atomic_store_explicit(&watch_quiet_flag, 0, memory_order_relaxed);
	if (rest)
		atomic_store_explicit(&watch_rest_flag, 0, memory_order_relaxed);
	if (holding && r == 0 && !follow)
		return 0; /* the pause is over: the next block listens again */
	if (r == 0 && !follow && !needed()) {
		/* A whole timeout without a socket event, and nothing for the
		 * progress task to do: our last round (a socket that turned out
		 * not to be the MPI's, a message that needed no help) left
		 * serialized mode's application calls on the fenced path, and
		 * no progress task may come to take them off it (gate_quiet(),
		 * gate.c). */
		gate_quiet(progress_pending);
	}
	if (r < 0 || (r == 0 && !follow))
		return 0;
	if (fds[0].revents) {
		watch_wake_drain();
		return 0;
	}
	int events = 0;
	judging = hold_max_ns || rest_max_ns;
	for (int i = 1; i < nfds; i++) {
		struct sock *k = &socks[i];
		k->avail_before = -1;
		k->pressed = false;
		k->writable = false;
		k->tcp_read = false;
		if (fds[i].fd < 0)
			continue; /* sitting out */
		if (fds[i].revents & POLLNVAL) {
			/* Closed since the rescan (a connection the MPI dropped):
			 * poll() would report it at once, every time. Out until
			 * the rescan, which comes at the next block. */
			fds[i].fd = -fds[i].fd - 1;
			refreshed_ns = 0;
			continue;
		}
		if (fds[i].revents)
			events++;
		/* Room: POLLOUT reported, or not asked for (choose_events()
		 * found room, or saw no write since its last look). */
		k->writable = !(fds[i].events & POLLOUT) || (fds[i].revents & POLLOUT);
		if (fds[i].revents & POLLIN)
			ioctl(fds[i].fd, FIONREAD, &k->avail_before);
		k->pressed = judging && k->avail_before > 0 &&
		             window_pressed(fds[i].fd, k->avail_before);
		/* Hung up, failed, at end of file or listening (readable with
		 * no byte to read): reported at every poll() until the MPI or
		 * its own thread acts on it. One round lets the MPI see it,
		 * then it sits out until the rescan. */
		k->sit_after = (fds[i].revents & (POLLHUP | POLLERR)) ||
		               ((fds[i].revents & POLLIN) && k->avail_before <= 0);
		if ((fds[i].revents & POLLIN) || k->active)
			k->tcp_read = bytes_read(fds[i].fd, k->avail_before, &k->read_before);
	}
	woke = events > 0;
	if (events)
		stats.woken++;
	else if (follow)
		stats.follow_ups++;
	return events || follow ? 1 : 0;
}

/* Whether the round filled a socket's send buffer that had room when poll()
 * returned (see the top): the MPI has more to write than the socket takes,
 * and a transfer is under way. One zero-timeout poll() for every socket. */
static bool round_filled(void)
{
	static struct pollfd probe[MAX_FDS];
	int n = 0;
	for (int i = 1; i < nfds; i++)
		if (fds[i].fd >= 0 && socks[i].writable)
			probe[n++] = (struct pollfd){ .fd = fds[i].fd, .events = POLLOUT };
	if (n == 0 || poll(probe, (nfds_t)n, 0) < 0)
		return false;
	for (int j = 0; j < n; j++)
		if (!(probe[j].revents & (POLLOUT | POLLERR | POLLHUP | POLLNVAL)))
			return true;
	return false;
}

/* After a round: whether arrivals pause (see the top). `read`: the round
 * read from a socket; `pressed`: from one whose window was about to close;
 * `useful`: it filled a send buffer (round_filled()), or read from a
 * socket whose bytes cannot be counted. */
static void judge_round(bool read, bool pressed, bool useful)
{
	if (!judging || !read || !hold_max_ns)
		return;
	uint64_t now = sys_now_ns();
	if (pressed)
		stream_until = now + HOLD_STREAM_NS;
	if (useful || now < stream_until || waiters_pending() || graph_moved) {
		hold_streak = 0;
		return;
	}
	unsigned shift = hold_streak < 16 ? hold_streak : 16;
	hold_streak++;
	uint64_t h = (uint64_t)HOLD_MIN_NS << shift;
	hold_until = now + (h < hold_max_ns ? h : hold_max_ns);
	follow_up = false; /* nobody waits for what it would complete */
	stats.holds++;
}

/* After a progress round: a socket nobody read from STRIKES times in a row
 * (see the top) is not the MPI's; after fewer strikes it sits out until the
 * rescan (poll() skips negative descriptors). A round that read asks for
 * the follow-up round (see the top). */
static void ignore_undrained(void)
{
	bool any_read = false, useful = judging && round_filled();
	bool pressed = false;
	for (int i = 1; i < nfds; i++) {
		int after = -1;
		uint64_t read_after;
		struct sock *k = &socks[i];
		int before = k->avail_before;
		bool measured = k->tcp_read && fds[i].fd >= 0 &&
		                bytes_read(fds[i].fd, -1, &read_after);
		k->avail_before = -1;
		k->tcp_read = false;
		/* Read during the round: one more (see the top). */
		k->active = measured && read_after != k->read_before;
		if (k->active) {
			follow_up = true;
			any_read = true;
			pressed |= k->pressed;
		}
		if (k->sit_after && fds[i].fd >= 0)
			fds[i].fd = -fds[i].fd - 1;
		k->sit_after = false;
		if (before <= 0 || fds[i].fd < 0)
			continue;
		bool read;
		if (measured) {
			read = read_after != (k->marked ? k->read_mark : k->read_before);
			k->seen_read |= read;
			k->read_mark = read_after;
			k->marked = true;
		} else if (ioctl(fds[i].fd, FIONREAD, &after) == 0) {
			read = after != before;
			if (read) {
				follow_up = true;
				any_read = useful = true;
			}
		} else {
			continue;
		}
		if (read) {
			k->strikes = 0;
			continue;
		}
		if (k->strikes < STRIKES)
			k->strikes++;
		if (k->strikes < STRIKES || k->seen_read) {
			fds[i].fd = -fds[i].fd - 1;
			continue;
		}
		if (nignored < MAX_IGNORED)
			ignored[nignored++] = k->ino;
		refreshed_ns = 0; /* drop it from the set at the next block */
	}
	judge_round(any_read, pressed, useful);
	/* Fruitful as for the pause: a window about to close was drained. A
	 * read the receive buffer could wait for is not: the application's
	 * next call reads it at the same cost, and the bytes counted may even
	 * be the application's own, read between poll() and the round. */
	if (woke)
		wake_judged(!judging || useful || pressed || graph_moved ||
		            sys_now_ns() < stream_until);
}

static unsigned watch_fn(void *arg)
{
	(void)arg;
	if (atomic_load(&pmpi_g.finalizing))
		return 0;
	/* No round, or one that made no MPI call (the gate is closed: the
	 * application is inside the MPI in serialized mode, or opens a file),
	 * proves nothing about who reads a socket: no strikes. A native
	 * waiter arrived since watch_block() looked (above). */
	if (waiters_native() || !gate_poke()) {
		/* The sockets that woke us sit out until the rescan: with the
		 * gate closed while a file is open, they would wake poll()
		 * back to back. */
		for (int i = 1; i < nfds; i++) {
			if ((socks[i].avail_before >= 0 || socks[i].sit_after) && fds[i].fd >= 0)
				fds[i].fd = -fds[i].fd - 1;
			socks[i].sit_after = false;
			socks[i].avail_before = -1;
			socks[i].tcp_read = false;
		}
		stats.held_off++;
		if (woke)
			wake_judged(false);
		return 0;
	}
	stats.rounds++;
	/* A graph collective's next node waits for a step, not for the MPI's
	 * progress alone: the message that woke us may have finished one of
	 * its receives or sends, whose successors (the next segment, the
	 * reduction, the forward) the progress task would otherwise post only
	 * at the timer's next tick, with every core computing. The poke above
	 * still drains the sockets when graphs_progress() finds the list
	 * taken by another thread. The round helped the graphs if the step
	 * posted a transfer (see the top). */
	graph_moved = false;
	if (graphs_running() > 0 && !graphs_driven() && gate_enter()) {
		unsigned long posts = graph_posts();
		graphs_progress();
		graph_moved = graph_posts() != posts;
		gate_leave();
	}
	report_round();
	ignore_undrained();
	return 0;
}

int watch_setup(void)
{
	hold_max_ns = (uint64_t)pmpi_setting("PIANO_MPI_WATCH_HOLD_US", NULL) * 1000u;
	int ntimer = 0;
	long period = pmpi_setting("PIANO_TIMER_PERIOD_US", NULL);
	atomic_store_explicit(&watch_graphs_ticked,
	                      !piano_thread_count(PIANO_POINT_TIMER, &ntimer) && ntimer > 0 &&
	                              period > 0 && period <= WATCH_GRAPH_TICK_US,
	                      memory_order_relaxed);
	rest_max_ns = (uint64_t)pmpi_setting("PIANO_MPI_WATCH_REST_MS", NULL) * 1000000u;
	if (watch_wake_open())
		return PIANO_ESYS;
	mpi_sock_setup();
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
	watch_wake_close();
	return rc;
}

void watch_stats(struct watch_stats *out) { *out = stats; }

void watch_shutdown(void)
{
	if (!watch_task)
		return;
	piano_ltask_cancel(watch_task);
	/* Wake the helper out of poll() so finalize does not wait a timeout. */
	if (!watch_wake_write())
		pmpi_warn("cannot wake the socket watcher; finalize may take up to "
		          "PIANO_BLOCK_TIMEOUT_MS");
	piano_ltask_wait(watch_task);
	piano_ltask_destroy(watch_task);
	watch_task = NULL;
	watch_wake_close();
}

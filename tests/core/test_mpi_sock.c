/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.mpi_sock — which sockets are the MPI's connections
 * (src/mpi/mpi_sock.c), alone, on loopback sockets of its own:
 *  - a connected TCP socket whose peer is not the run-time's: the MPI's,
 *    on both of its ends;
 *  - one connected to a port the environment advertises as the run-time's
 *    (PMIX_SERVER_URI4, as Open MPI sets it): not;
 *  - a listening socket, a UDP socket, a Unix socket pair: not;
 *  - a TCP socket neither connected nor listening: being connected (the
 *    watcher asks it again);
 *  - no descriptor: not;
 *  - the bytes the process wrote (mpi_sock_written): all it wrote while
 *    part of it waits unsent behind a peer that does not read, and the
 *    same once the peer read and the kernel sent the rest, where the
 *    kernel's own count of bytes sent moved.
 */
#include "common.h"

#include "mpi_sock.h" /* src/mpi */

#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

/* A loopback listener; its port in *port. */
static int listener(unsigned short *port)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t len = sizeof(a);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(fd >= 0, "socket");
	CHECK(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(fd, 4) == 0 &&
	              getsockname(fd, (struct sockaddr *)&a, &len) == 0,
	      "a loopback listener");
	*port = ntohs(a.sin_port);
	return fd;
}

static int connected(unsigned short port)
{
	struct sockaddr_in a = { .sin_family = AF_INET,
		                 .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
		                 .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0, "connect to %u",
	      (unsigned)port);
	return fd;
}

/* False where the kernel's TCP_INFO has no byte counts (before 4.19).
 * *sent counts new data only: tcpi_bytes_sent also counts retransmissions,
 * which a loaded machine makes even on loopback (tail loss probes while the
 * peer does not read). */
static bool tcp_counts(int fd, uint64_t *written, uint64_t *sent)
{
	struct tcp_info ti;
	socklen_t len = sizeof(ti);
	CHECK(getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == 0, "TCP_INFO");
	*written = mpi_sock_written(&ti, len);
	*sent = ti.tcpi_bytes_sent - ti.tcpi_bytes_retrans;
	return len >= offsetof(struct tcp_info, tcpi_bytes_retrans) + sizeof(ti.tcpi_bytes_retrans);
}

/* Writes to c until the socket is full, with a peer s that does not read,
 * then lets s read it all: mpi_sock_written() counts what was written. */
static int check_written(int c, int s)
{
	static char buf[1 << 16];
	uint64_t w0, s0, w1, s1, w2, s2;
	if (!tcp_counts(c, &w0, &s0)) {
		printf("mpi_sock: TCP_INFO without tcpi_bytes_sent (kernel < 4.19): "
		       "written bytes not checked\n");
		return 0;
	}
	CHECK(fcntl(c, F_SETFL, O_NONBLOCK) == 0, "O_NONBLOCK");
	uint64_t total = 0;
	for (;;) {
		ssize_t n = write(c, buf, sizeof(buf));
		if (n < 0) {
			CHECK(errno == EAGAIN || errno == EWOULDBLOCK, "write: %d", errno);
			break;
		}
		total += (uint64_t)n;
	}
	tcp_counts(c, &w1, &s1);
	CHECK_EQ(w1 - w0, total);
	CHECK(s1 - s0 < total, "the kernel sent %llu of %llu bytes written to a full socket",
	      (unsigned long long)(s1 - s0), (unsigned long long)total);
	for (uint64_t got = 0; got < total;) {
		ssize_t n = read(s, buf, sizeof(buf));
		CHECK(n > 0, "read");
		got += (uint64_t)n;
	}
	tcp_counts(c, &w2, &s2);
	CHECK_EQ(w2, w1);
	CHECK_EQ(s2 - s0, total);
	return 1;
}

int main(void)
{
	unsigned short mpi_port, rt_port;
	int mpi_l = listener(&mpi_port), rt_l = listener(&rt_port);
	char uri[64];
	snprintf(uri, sizeof(uri), "1150615552.0;tcp4://127.0.0.1:%u", (unsigned)rt_port);
	CHECK(setenv("PMIX_SERVER_URI4", uri, 1) == 0, "setenv");
	mpi_sock_setup();

	int c = connected(mpi_port), s = accept(mpi_l, NULL, NULL);
	CHECK(s >= 0, "accept");
	CHECK_EQ(mpi_sock_kind(c), MPI_SOCK_MPI);
	CHECK_EQ(mpi_sock_kind(s), MPI_SOCK_MPI);
	check_written(c, s);

	int rt = connected(rt_port);
	CHECK_EQ(mpi_sock_kind(rt), MPI_SOCK_OTHER);

	CHECK_EQ(mpi_sock_kind(mpi_l), MPI_SOCK_OTHER);
	int udp = socket(AF_INET, SOCK_DGRAM, 0), pair[2];
	CHECK(udp >= 0 && socketpair(AF_UNIX, SOCK_STREAM, 0, pair) == 0, "udp, socketpair");
	CHECK_EQ(mpi_sock_kind(udp), MPI_SOCK_OTHER);
	CHECK_EQ(mpi_sock_kind(pair[0]), MPI_SOCK_OTHER);

	int fresh = socket(AF_INET6, SOCK_STREAM, 0);
	if (fresh < 0)
		fresh = socket(AF_INET, SOCK_STREAM, 0);
	CHECK(fresh >= 0, "socket");
	CHECK_EQ(mpi_sock_kind(fresh), MPI_SOCK_CONNECTING);
	CHECK_EQ(mpi_sock_kind(-1), MPI_SOCK_OTHER);

	close(fresh);
	close(udp);
	close(pair[0]);
	close(pair[1]);
	close(rt);
	close(s);
	close(c);
	close(rt_l);
	close(mpi_l);
	printf("mpi_sock: ok\n");
	return TEST_PASS;
}

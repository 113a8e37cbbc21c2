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
 *  - no descriptor: not.
 */
#include "common.h"

#include "mpi_sock.h" /* src/mpi */

#include <netinet/in.h>
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

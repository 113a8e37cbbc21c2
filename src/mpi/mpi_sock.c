/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MPI's own connections (mpi_sock.h). State: the run-time's ports,
 * written once by mpi_sock_setup() in the set-up's thread before the
 * socket watcher's task is submitted (its first scan runs in that thread
 * too), then only read.
 */
#include "mpi_sock.h"
#include "runtime_addr.h"

#include <errno.h>
#include <netinet/in.h>
#include <stddef.h>
#include <sys/socket.h>

extern char **environ;

static struct runtime_ports runtime;

void mpi_sock_setup(void) { runtime_ports_read(environ, &runtime); }

enum mpi_sock_kind mpi_sock_kind(int fd)
{
	int domain = 0, type = 0, listening = 0;
	socklen_t len = sizeof(domain);
	if (getsockopt(fd, SOL_SOCKET, SO_DOMAIN, &domain, &len) != 0 ||
	    (domain != AF_INET && domain != AF_INET6))
		return MPI_SOCK_OTHER;
	len = sizeof(type);
	if (getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_STREAM)
		return MPI_SOCK_OTHER;
	struct sockaddr_storage peer;
	len = sizeof(peer);
	if (getpeername(fd, (struct sockaddr *)&peer, &len) != 0) {
		len = sizeof(listening);
		if (errno != ENOTCONN ||
		    getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &listening, &len) != 0 || listening)
			return MPI_SOCK_OTHER;
		return MPI_SOCK_CONNECTING;
	}
	unsigned short port = ntohs(peer.ss_family == AF_INET6
	                                    ? ((struct sockaddr_in6 *)&peer)->sin6_port
	                                    : ((struct sockaddr_in *)&peer)->sin_port);
	return runtime_port_is(&runtime, port) ? MPI_SOCK_OTHER : MPI_SOCK_MPI;
}

uint64_t mpi_sock_written(const struct tcp_info *ti, socklen_t len)
{
	if (len < offsetof(struct tcp_info, tcpi_bytes_retrans) + sizeof(ti->tcpi_bytes_retrans))
		return 0;
	return ti->tcpi_bytes_sent - ti->tcpi_bytes_retrans + ti->tcpi_notsent_bytes;
}

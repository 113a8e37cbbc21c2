/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MPI's own connections (mpi_sock.c): which of the process's sockets
 * carry the MPI's traffic rather than the run-time's. Open MPI keeps a
 * loopback TCP connection to its local daemon's PMIx server in every job,
 * shared memory or not, and MPICH's hydra a Unix socket (PMI_FD); on
 * shared memory these are the only connected sockets a rank has. The
 * retirement of idle threads (retire.c) and the socket watcher's standby
 * (watch.c) ask.
 */
#ifndef PIANO_MPI_MPI_SOCK_H
#define PIANO_MPI_MPI_SOCK_H

#include <linux/tcp.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

/* At set-up, before the socket watcher's first scan: reads the run-time's
 * endpoints from the environment (runtime_addr.h). */
void mpi_sock_setup(void);
enum mpi_sock_kind {
	MPI_SOCK_OTHER,      /* not a TCP stream, listening, or the run-time's */
	MPI_SOCK_MPI,        /* a connection of the MPI's */
	MPI_SOCK_CONNECTING, /* a TCP stream neither connected nor listening yet */
};

/* What fd is: MPI_SOCK_MPI for a connected TCP socket (IPv4 or IPv6) whose
 * peer does not listen on one of the run-time's endpoints. Unix sockets
 * never are: the MPIs here carry no rank-to-rank traffic on them. A
 * connection still being made is MPI_SOCK_CONNECTING: ask again later. */
enum mpi_sock_kind mpi_sock_kind(int fd);

/* Bytes the process has written to a TCP socket, from one TCP_INFO look of
 * `len` bytes (getsockopt's): those the kernel sent once (sent minus
 * retransmitted) plus those it has not sent yet; 0 on kernels older than
 * 4.19. It moves only when the process writes. The kernel's count of bytes
 * sent would not do: on a slow link a message written at once goes out
 * over hundreds of microseconds, so the socket watcher would take that for
 * the MPI writing, wake for POLLOUT back to back and judge every round
 * useful (a 64 KiB collective across two hosts at 1 Gbit/s: a wake-up and
 * a round per operation on a computing core). */
uint64_t mpi_sock_written(const struct tcp_info *ti, socklen_t len);

#endif

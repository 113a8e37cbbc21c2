/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_tcp_floor: what an exchange over TCP costs a computation when
 * nothing but the kernel moves the data, the bound of any progression
 * engine's overlap on the same link.
 *
 * Two processes, one per host (tools/netns/floor.sh runs them on the
 * harness's hosts), connected by one TCP socket. Per repetition each
 * computes a fixed amount of work (a dependent floating-point chain
 * calibrated to --compute-ms) twice: alone, and while two threads of its
 * own send and receive --bytes in both directions at once with blocking
 * calls (they sleep in the kernel until it has room or data; no polling,
 * no MPI). The difference of the medians is the CPU the exchange took from
 * the computation on a machine whose cores all compute: the kernel's TCP
 * work (on a veth link, the "wire" and the softirqs of both ends run on
 * the same CPUs) and the threads' wake-ups. A perfect engine can hide at
 * most t_wire - that per exchange: with the OSU formula, overlap <= 100 -
 * 100 x difference / t_pure.
 *
 * usage: bench_tcp_floor --listen PORT | --connect ADDR:PORT
 *                        [--bytes N] [--compute-ms T] [--reps N]
 * Output: one line per process; exit 0, 1 on a socket error, 2 usage.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_REPS 1000

static int sock = -1;
static char *sbuf, *rbuf;
static size_t nbytes = 1u << 20;
static volatile double sink;

static double now_ms(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec * 1e3 + (double)t.tv_nsec * 1e-6;
}

static void work(long n)
{
	double a = 1.0;
	for (long i = 0; i < n; i++)
		a = a * 1.0000001 + 1e-9;
	sink = a;
}

__attribute__((noreturn)) static void die(const char *what)
{
	perror(what);
	exit(1);
}

static void *receive(void *arg)
{
	(void)arg;
	for (size_t got = 0; got < nbytes;) {
		ssize_t k = recv(sock, rbuf + got, nbytes - got, 0);
		if (k <= 0)
			die("bench_tcp_floor: recv");
		got += (size_t)k;
	}
	return NULL;
}

static void *send_all(void *arg)
{
	(void)arg;
	for (size_t sent = 0; sent < nbytes;) {
		ssize_t k = send(sock, sbuf + sent, nbytes - sent, 0);
		if (k <= 0)
			die("bench_tcp_floor: send");
		sent += (size_t)k;
	}
	return NULL;
}

/* Both processes pass here together: one byte each way. */
static void sync_peer(void)
{
	char c = 0;
	if (send(sock, &c, 1, 0) != 1 || recv(sock, &c, 1, MSG_WAITALL) != 1)
		die("bench_tcp_floor: sync");
}

static int cmp(const void *x, const void *y)
{
	double a = *(const double *)x, b = *(const double *)y;
	return a < b ? -1 : a > b;
}

static int connect_to(const char *spec)
{
	char host[64];
	const char *colon = strrchr(spec, ':');
	if (!colon || (size_t)(colon - spec) >= sizeof(host))
		return -1;
	memcpy(host, spec, (size_t)(colon - spec));
	host[colon - spec] = '\0';
	struct sockaddr_in a = { .sin_family = AF_INET,
		                 .sin_port = htons((uint16_t)atoi(colon + 1)) };
	if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
		return -1;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		die("bench_tcp_floor: socket");
	/* The listener may not be up yet: retry for 10 s. */
	for (int i = 0; i < 100; i++) {
		if (!connect(fd, (struct sockaddr *)&a, sizeof(a)))
			return fd;
		usleep(100000);
	}
	die("bench_tcp_floor: connect");
	return -1;
}

static int listen_on(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), one = 1;
	struct sockaddr_in a = { .sin_family = AF_INET,
		                 .sin_port = htons((uint16_t)port),
		                 .sin_addr.s_addr = htonl(INADDR_ANY) };
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 1))
		die("bench_tcp_floor: listen");
	int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
	if (c < 0)
		die("bench_tcp_floor: accept");
	close(fd);
	return c;
}

int main(int argc, char **argv)
{
	const char *peer = NULL;
	int port = 0, reps = 30;
	double compute_ms = 20;
	for (int i = 1; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--listen"))
			port = atoi(argv[i + 1]);
		else if (!strcmp(argv[i], "--connect"))
			peer = argv[i + 1];
		else if (!strcmp(argv[i], "--bytes"))
			nbytes = (size_t)strtoul(argv[i + 1], NULL, 0);
		else if (!strcmp(argv[i], "--compute-ms"))
			compute_ms = atof(argv[i + 1]);
		else if (!strcmp(argv[i], "--reps"))
			reps = atoi(argv[i + 1]);
		else
			port = -1;
	}
	if ((argc - 1) % 2 || (!peer) == (port <= 0) || nbytes == 0 || !(compute_ms > 0) ||
	    reps < 1 || reps > MAX_REPS) {
		fprintf(stderr,
		        "usage: bench_tcp_floor --listen PORT | --connect ADDR:PORT "
		        "[--bytes N] [--compute-ms T] [--reps N (1..%d)]\n",
		        MAX_REPS);
		return 2;
	}
	sbuf = malloc(nbytes);
	rbuf = malloc(nbytes);
	if (!sbuf || !rbuf)
		die("bench_tcp_floor: malloc");
	memset(sbuf, 1, nbytes);
	sock = peer ? connect_to(peer) : listen_on(port);
	if (sock < 0) {
		fprintf(stderr, "bench_tcp_floor: bad address '%s' (want A.B.C.D:PORT)\n", peer);
		return 2;
	}

	double t0 = now_ms();
	work(10000000);
	long n = (long)(compute_ms / ((now_ms() - t0) / 1e7));
	static double alone[MAX_REPS], beside[MAX_REPS];
	for (int i = 0; i < reps; i++) {
		sync_peer();
		double a = now_ms();
		work(n);
		alone[i] = now_ms() - a;
		sync_peer();
		pthread_t r, s;
		a = now_ms();
		if (pthread_create(&r, NULL, receive, NULL) ||
		    pthread_create(&s, NULL, send_all, NULL))
			die("bench_tcp_floor: pthread_create");
		work(n);
		beside[i] = now_ms() - a;
		pthread_join(r, NULL);
		pthread_join(s, NULL);
	}
	qsort(alone, (size_t)reps, sizeof(double), cmp);
	qsort(beside, (size_t)reps, sizeof(double), cmp);
	printf("%s: compute alone %.3f ms, beside an exchange of %zu B each way %.3f ms "
	       "(+%.3f ms), medians of %d\n",
	       peer ? "connecting side" : "listening side", alone[reps / 2], nbytes,
	       beside[reps / 2], beside[reps / 2] - alone[reps / 2], reps);
	close(sock);
	return 0;
}

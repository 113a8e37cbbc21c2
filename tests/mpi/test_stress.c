/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Stress: every rank runs T threads; thread t of rank r talks to thread t of
 * rank r^1 for a bounded time with random sizes (1 B .. 1 MiB, log-uniform)
 * and a random mix of blocking Send/Recv, Isend/Irecv + Wait, two messages
 * + Waitall, Issend + Test loop, Sendrecv and Irecv + Waitany; the main
 * thread also joins a blocking Allreduce every few hundred milliseconds.
 * Both sides of a pair draw the same random sequence, so the receiver knows
 * every size and every byte: any loss or corruption fails the test, and so
 * does RSS growth (leaked requests or tracking entries) past a bound.
 * Prints "stress: N messages ... rate R msg/s" for the wrapper that compares
 * native and piano (tests/mpi/stress.sh).
 *
 * usage: test_stress [SECONDS [THREADS]]   (even number of ranks)
 */
#include "mpitest.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAXLEN (1 << 20)
#define CHECK_EVERY 32 /* iterations between "go on?" messages */

static int rank, nthreads;
static double seconds;
static _Atomic long total_msgs, total_bytes;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* splitmix64: the pair's shared sequence. */
static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static int draw_len(uint64_t *s)
{
	int bits = (int)(next(s) % 21); /* 2^0 .. 2^20 */
	long len = 1L << bits;
	len += (long)(next(s) % (uint64_t)len);
	return (int)(len > MAXLEN ? MAXLEN : len);
}

static void fill(unsigned char *b, int len, uint64_t seed)
{
	uint64_t s = seed;
	for (int i = 0; i < len; i += 8) {
		uint64_t v = next(&s);
		memcpy(b + i, &v, (size_t)(len - i < 8 ? len - i : 8));
	}
}

/* Whether b holds the len bytes of seed's stream; if not, says which bytes
 * differ (a corruption is rare: its shape is all there is to go on). */
static int verify_msg(const unsigned char *b, int len, uint64_t seed, int kind, int line)
{
	uint64_t s = seed;
	long bad = 0, first = -1, last = -1;
	for (int i = 0; i < len; i += 8) {
		uint64_t v = next(&s);
		if (memcmp(b + i, &v, (size_t)(len - i < 8 ? len - i : 8))) {
			bad++;
			last = i;
			if (first < 0)
				first = i;
		}
	}
	if (bad)
		fprintf(stderr,
		        "rank %d: line %d: message of kind %d, %d bytes: %ld of its 8-byte words "
		        "differ, offsets %ld to %ld\n",
		        rank, line, kind, len, bad, first, last);
	return bad == 0;
}
#define verify(b, len, seed) verify_msg(b, len, seed, kind, __LINE__)

struct worker {
	int tid;
	long msgs, bytes;
	unsigned char *sbuf, *rbuf, *sbuf2, *rbuf2;
};

/* One exchange of iteration `it`: the pair's lower rank sends on even
 * iterations, the upper one on odd ones; kinds 4 and 5 go both ways. */
static void exchange(struct worker *w, uint64_t *rng, long it)
{
	int peer = rank ^ 1, tag = w->tid;
	int kind = (int)(next(rng) % 6), len = draw_len(rng), len2 = draw_len(rng);
	uint64_t seed = next(rng), seed2 = next(rng);
	int sender = ((it & 1) == 0) == (rank < peer);
	MPI_Request r[2];
	MPI_Status st;
	int flag = 0, idx = -1;

	if (kind == 4) { /* Sendrecv, both ways */
		fill(w->sbuf, len, rank < peer ? seed : seed2);
		int rlen = len;
		CHECK_MPI(MPI_Sendrecv(w->sbuf, len, MPI_BYTE, peer, tag, w->rbuf, rlen, MPI_BYTE, peer,
		                       tag, MPI_COMM_WORLD, &st));
		CHECK(verify(w->rbuf, rlen, rank < peer ? seed2 : seed));
		w->msgs += 2;
		w->bytes += 2L * len;
		return;
	}
	if (kind == 5) { /* Irecv + Isend, Waitany twice */
		fill(w->sbuf, len, rank < peer ? seed : seed2);
		CHECK_MPI(MPI_Irecv(w->rbuf, len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r[0]));
		CHECK_MPI(MPI_Isend(w->sbuf, len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r[1]));
		for (int k = 0; k < 2; k++)
			CHECK_MPI(MPI_Waitany(2, r, &idx, MPI_STATUS_IGNORE));
		CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL);
		CHECK(verify(w->rbuf, len, rank < peer ? seed2 : seed));
		w->msgs += 2;
		w->bytes += 2L * len;
		return;
	}
	if (sender) {
		fill(w->sbuf, len, seed);
		switch (kind) {
		case 0:
			CHECK_MPI(MPI_Send(w->sbuf, len, MPI_BYTE, peer, tag, MPI_COMM_WORLD));
			break;
		case 1:
			CHECK_MPI(MPI_Isend(w->sbuf, len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r[0]));
			CHECK_MPI(MPI_Wait(&r[0], MPI_STATUS_IGNORE));
			break;
		case 2:
			fill(w->sbuf2, len2, seed2);
			CHECK_MPI(MPI_Isend(w->sbuf, len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r[0]));
			CHECK_MPI(MPI_Isend(w->sbuf2, len2, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r[1]));
			CHECK_MPI(MPI_Waitall(2, r, MPI_STATUSES_IGNORE));
			break;
		case 3:
			CHECK_MPI(MPI_Issend(w->sbuf, len, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r[0]));
			while (!flag)
				CHECK_MPI(MPI_Test(&r[0], &flag, MPI_STATUS_IGNORE));
			break;
		}
	} else {
		int got = -1;
		switch (kind) {
		case 0:
			CHECK_MPI(MPI_Recv(w->rbuf, MAXLEN, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &st));
			break;
		case 1:
		case 3:
			CHECK_MPI(MPI_Irecv(w->rbuf, MAXLEN, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r[0]));
			CHECK_MPI(MPI_Wait(&r[0], &st));
			break;
		case 2: {
			MPI_Status sts[2];
			CHECK_MPI(MPI_Irecv(w->rbuf, MAXLEN, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r[0]));
			CHECK_MPI(MPI_Irecv(w->rbuf2, MAXLEN, MPI_BYTE, peer, tag, MPI_COMM_WORLD, &r[1]));
			CHECK_MPI(MPI_Waitall(2, r, sts));
			MPI_Get_count(&sts[1], MPI_BYTE, &got);
			CHECK(got == len2 && verify(w->rbuf2, len2, seed2));
			st = sts[0];
			break;
		}
		}
		MPI_Get_count(&st, MPI_BYTE, &got);
		CHECK(got == len);
		CHECK(verify(w->rbuf, len, seed));
	}
	w->msgs += kind == 2 ? 2 : 1;
	w->bytes += len + (kind == 2 ? len2 : 0);
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	int peer = rank ^ 1;
	uint64_t rng = 0x51ed2701ull * (uint64_t)(1 + (rank & ~1)) + (uint64_t)w->tid;
	double end = now() + seconds;
	for (long it = 0;; it++) {
		if (it % CHECK_EVERY == 0) {
			/* The lower rank decides when to stop; both follow. */
			int go = now() < end;
			if (rank < peer)
				CHECK_MPI(MPI_Send(&go, 1, MPI_INT, peer, 1000 + w->tid, MPI_COMM_WORLD));
			else
				CHECK_MPI(MPI_Recv(&go, 1, MPI_INT, peer, 1000 + w->tid, MPI_COMM_WORLD,
				                   MPI_STATUS_IGNORE));
			if (!go)
				break;
		}
		exchange(w, &rng, it);
	}
	total_msgs += w->msgs;
	total_bytes += w->bytes;
	return NULL;
}

static long rss_kib(void)
{
	long pages = 0, resident = 0;
	FILE *f = fopen("/proc/self/statm", "r");
	if (f) {
		if (fscanf(f, "%ld %ld", &pages, &resident) != 2)
			resident = 0;
		fclose(f);
	}
	return resident * (sysconf(_SC_PAGESIZE) / 1024);
}

int main(int argc, char **argv)
{
	int provided, size;
	seconds = argc > 1 ? atof(argv[1]) : 10.0;
	nthreads = argc > 2 ? atoi(argv[2]) : 2;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (provided < MPI_THREAD_MULTIPLE || size % 2 || seconds <= 0 || nthreads < 1 ||
	    nthreads > 64) {
		if (rank == 0)
			fprintf(stderr, "needs MPI_THREAD_MULTIPLE, an even number of ranks, "
			                "SECONDS > 0 and 1..64 THREADS\n");
		MPI_Finalize();
		return 77;
	}
	struct worker *ws = calloc((size_t)nthreads, sizeof(*ws));
	pthread_t *ts = calloc((size_t)nthreads, sizeof(*ts));
	CHECK(ws && ts);
	for (int t = 0; t < nthreads; t++) {
		ws[t].tid = t;
		ws[t].sbuf = malloc(MAXLEN);
		ws[t].rbuf = malloc(MAXLEN);
		ws[t].sbuf2 = malloc(MAXLEN);
		ws[t].rbuf2 = malloc(MAXLEN);
		CHECK(ws[t].sbuf && ws[t].rbuf && ws[t].sbuf2 && ws[t].rbuf2);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = now();
	for (int t = 0; t < nthreads; t++)
		CHECK(pthread_create(&ts[t], NULL, worker_main, &ws[t]) == 0);

	/* Collectives from the main thread meanwhile; RSS once warmed up. */
	long rss_warm = 0;
	int rounds = 0;
	for (;;) {
		usleep(200000);
		int go = now() - t0 < seconds, all = 0;
		CHECK_MPI(MPI_Allreduce(&go, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD));
		if (++rounds == 3)
			rss_warm = rss_kib();
		if (!all)
			break;
	}
	for (int t = 0; t < nthreads; t++)
		pthread_join(ts[t], NULL);
	double dt = now() - t0;
	long rss_end = rss_kib(), growth = rss_warm ? rss_end - rss_warm : 0;

	long msgs = total_msgs, bytes = total_bytes, all_msgs = 0, all_bytes = 0, max_growth = 0;
	MPI_Reduce(&msgs, &all_msgs, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(&bytes, &all_bytes, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
	MPI_Reduce(&growth, &max_growth, 1, MPI_LONG, MPI_MAX, 0, MPI_COMM_WORLD);
	int ok = 1;
	if (rank == 0) {
		printf("stress: %d ranks x %d threads, %ld messages, %.1f MiB in %.1f s, "
		       "rate %.0f msg/s, RSS growth %ld KiB\n",
		       size, nthreads, all_msgs / 2, (double)all_bytes / 2 / (1 << 20), dt,
		       (double)all_msgs / 2 / dt, max_growth);
		/* Buffers are allocated before the warm-up point: growth after
		 * it is the MPI's and piano's state, which must stay bounded. */
		if (max_growth > 64 * 1024) {
			printf("stress: RSS grew by %ld KiB after warm-up\n", max_growth);
			ok = 0;
		}
		if (all_msgs == 0)
			ok = 0;
	}
	MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
	for (int t = 0; t < nthreads; t++) {
		free(ws[t].sbuf);
		free(ws[t].rbuf);
		free(ws[t].sbuf2);
		free(ws[t].rbuf2);
	}
	free(ws);
	free(ts);
	MPI_Finalize();
	return ok ? 0 : 1;
}

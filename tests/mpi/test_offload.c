/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Submission offload (PIANO_OFFLOAD, src/mpi/offload.c) keeps MPI's
 * non-overtaking rule and sends the data the application gave, whatever mix
 * of deferred sends, other sends, completion calls, probes, cancels and
 * frees the application makes, from several threads.
 *
 * Rank 0 runs NT threads; each sends to rank 1, on its own duplicate of
 * MPI_COMM_WORLD, a random (seeded) sequence of small MPI_Isend (deferred
 * under offload), large MPI_Isend (above every eager limit: never
 * deferred), MPI_Issend, persistent sends, blocking MPI_Send, MPI_Ssend,
 * MPI_Bsend and MPI_Sendrecv, and completes the pending ones at random
 * points with every completion call (MPI_Wait, Waitall, Waitany, Test,
 * Testall, Testany, Testsome, Request_get_status, Request_free), with an
 * MPI_Iprobe now and then and MPI_Cancel of some sends right after posting
 * them. Each message carries its sequence number and a payload derived
 * from it; a completed send's buffer is overwritten at once, so a send
 * posted after its completion call would carry the wrong bytes. Rank 1's
 * thread for that communicator receives with MPI_ANY_TAG: the sequence
 * numbers must come in order, with no gap (a cancelled send gives its
 * number to the next one), and every payload must be right. Some steps are
 * a pause without MPI calls (a computation), in which piano's engine posts
 * the queued sends; in the others the application's next call does.
 * Last, the main threads exchange LONE_SENDS messages, each sent by an
 * MPI_Isend followed by 3 ms without MPI calls, then MPI_Wait: the engine
 * posts those (the test's pass expression wants its statistics line to
 * count at least 10 sends posted by the engine).
 */
#include "mpitest.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#define NT 3
#define STEPS 2000
#define SLOTS 8
#define SMALL_MAX 1024
#define LARGE (512 << 10)
#define TAG_END 99
#define LONE_SENDS 100

struct hdr {
	uint32_t seq, len;
};

static uint64_t next(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

static unsigned char pattern(int t, uint32_t seq, uint32_t i)
{
	return (unsigned char)(t * 131 + seq * 7 + i * 13 + (i >> 8));
}

static void fill(unsigned char *b, int t, uint32_t seq, uint32_t len)
{
	struct hdr h = { seq, len };
	memcpy(b, &h, sizeof(h));
	for (uint32_t i = sizeof(h); i < len; i++)
		b[i] = pattern(t, seq, i);
}

struct slot {
	MPI_Request req;
	unsigned char *buf;
	int persistent; /* the request is a persistent send: freed after completion */
	int busy;
};

struct sender {
	int t;
	MPI_Comm comm;
	uint64_t rng;
	uint32_t seq;
	struct slot slot[SLOTS];
	long cancelled;
};

/* A computation: no MPI call for that long. */
static void pause_us(long us)
{
	struct timespec t0, t;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000L + (t.tv_nsec - t0.tv_nsec) / 1000 < us);
}

/* The send's buffer is the MPI's until completion: poison it after. */
static void retire(struct slot *s)
{
	memset(s->buf, 0xee, LARGE);
	if (s->persistent)
		CHECK_MPI(MPI_Request_free(&s->req));
	s->busy = s->persistent = 0;
	s->req = MPI_REQUEST_NULL;
}

static uint32_t draw_len(struct sender *w, int large)
{
	return large ? LARGE : sizeof(struct hdr) + (uint32_t)(next(&w->rng) % SMALL_MAX);
}

static void post(struct sender *w, struct slot *s)
{
	int kind = (int)(next(&w->rng) % 10);
	uint32_t len = draw_len(w, kind == 6);
	int tag = (int)(next(&w->rng) % 4);
	fill(s->buf, w->t, w->seq, len);
	s->busy = 1;
	if (kind == 7) {
		CHECK_MPI(MPI_Issend(s->buf, (int)len, MPI_BYTE, 1, tag, w->comm, &s->req));
	} else if (kind == 8) {
		CHECK_MPI(MPI_Send_init(s->buf, (int)len, MPI_BYTE, 1, tag, w->comm, &s->req));
		s->persistent = 1;
		CHECK_MPI(MPI_Start(&s->req));
	} else if (kind == 9) {
		/* Cancelled at once: either nothing arrives or all of it. */
		MPI_Status st;
		int cancelled = 0;
		CHECK_MPI(MPI_Isend(s->buf, (int)len, MPI_BYTE, 1, tag, w->comm, &s->req));
		CHECK_MPI(MPI_Cancel(&s->req));
		CHECK_MPI(MPI_Wait(&s->req, &st));
		CHECK_MPI(MPI_Test_cancelled(&st, &cancelled));
		retire(s);
		if (cancelled) {
			w->cancelled++;
			return; /* the number goes to the next send */
		}
	} else {
		CHECK_MPI(MPI_Isend(s->buf, (int)len, MPI_BYTE, 1, tag, w->comm, &s->req));
	}
	w->seq++;
}

static void blocking(struct sender *w, unsigned char *b)
{
	int kind = (int)(next(&w->rng) % 4);
	uint32_t len = draw_len(w, 0);
	int tag = (int)(next(&w->rng) % 4);
	fill(b, w->t, w->seq++, len);
	if (kind == 0)
		CHECK_MPI(MPI_Send(b, (int)len, MPI_BYTE, 1, tag, w->comm));
	else if (kind == 1)
		CHECK_MPI(MPI_Ssend(b, (int)len, MPI_BYTE, 1, tag, w->comm));
	else if (kind == 2)
		CHECK_MPI(MPI_Bsend(b, (int)len, MPI_BYTE, 1, tag, w->comm));
	else
		CHECK_MPI(MPI_Sendrecv(b, (int)len, MPI_BYTE, 1, tag, NULL, 0, MPI_BYTE,
		                       MPI_PROC_NULL, 0, w->comm, MPI_STATUS_IGNORE));
	memset(b, 0xee, len);
}

/* Completes some of the pending sends with one of the completion calls. */
static void complete(struct sender *w)
{
	MPI_Request reqs[SLOTS];
	int idx[SLOTS], done[SLOTS], n = 0, flag = 0, out = 0, one;
	for (int i = 0; i < SLOTS; i++)
		if (w->slot[i].busy)
			idx[n] = i, reqs[n++] = w->slot[i].req;
	if (!n)
		return;
	int how = (int)(next(&w->rng) % 9);
	struct slot *first = &w->slot[idx[0]];
	switch (how) {
	case 0:
		CHECK_MPI(MPI_Wait(&first->req, MPI_STATUS_IGNORE));
		retire(first);
		return;
	case 1: CHECK_MPI(MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE)); break;
	case 2: CHECK_MPI(MPI_Waitany(n, reqs, &one, MPI_STATUS_IGNORE)); break;
	case 3:
		while (!flag)
			CHECK_MPI(MPI_Test(&first->req, &flag, MPI_STATUS_IGNORE));
		retire(first);
		return;
	case 4:
		while (!flag)
			CHECK_MPI(MPI_Testall(n, reqs, &flag, MPI_STATUSES_IGNORE));
		break;
	case 5:
		while (!flag)
			CHECK_MPI(MPI_Testany(n, reqs, &one, &flag, MPI_STATUS_IGNORE));
		break;
	case 6:
		while (!out)
			CHECK_MPI(MPI_Testsome(n, reqs, &out, done, MPI_STATUSES_IGNORE));
		break;
	case 7:
		while (!flag)
			CHECK_MPI(MPI_Request_get_status(first->req, &flag, MPI_STATUS_IGNORE));
		CHECK_MPI(MPI_Wait(&first->req, MPI_STATUS_IGNORE));
		retire(first);
		return;
	default:
		/* Freed while pending: its buffer is never reused. */
		if (first->persistent) {
			CHECK_MPI(MPI_Wait(&first->req, MPI_STATUS_IGNORE));
			retire(first);
			return;
		}
		CHECK_MPI(MPI_Request_free(&first->req));
		first->buf = malloc(LARGE);
		CHECK(first->buf);
		first->busy = 0;
		first->req = MPI_REQUEST_NULL;
		return;
	}
	/* The calls on the array: retire what they completed (inactive
	 * persistent requests stay handles; the others became null). */
	for (int k = 0, j = 0; k < SLOTS; k++) {
		struct slot *s = &w->slot[k];
		if (!s->busy)
			continue;
		MPI_Request r = reqs[j++];
		if (r == MPI_REQUEST_NULL) {
			retire(s);
		} else if (s->persistent) {
			int active_done = 0;
			CHECK_MPI(MPI_Request_get_status(r, &active_done, MPI_STATUS_IGNORE));
			if (active_done) { /* inactive now: the call completed it */
				retire(s);
			}
		}
	}
}

static void *send_main(void *arg)
{
	struct sender *w = arg;
	unsigned char *b = malloc(LARGE);
	CHECK(b);
	for (int i = 0; i < SLOTS; i++) {
		w->slot[i].buf = malloc(LARGE);
		CHECK(w->slot[i].buf);
		w->slot[i].req = MPI_REQUEST_NULL;
	}
	for (int step = 0; step < STEPS; step++) {
		int op = (int)(next(&w->rng) % 10);
		struct slot *free_slot = NULL;
		for (int i = 0; i < SLOTS && !free_slot; i++)
			if (!w->slot[i].busy)
				free_slot = &w->slot[i];
		if (op < 5 && free_slot) {
			post(w, free_slot);
		} else if (op < 7) {
			blocking(w, b);
		} else if (op < 8 && (next(&w->rng) & 1)) {
			pause_us(20 + (long)(next(&w->rng) % 60));
		} else if (op < 8) {
			int flag;
			CHECK_MPI(MPI_Iprobe(1, 0, w->comm, &flag, MPI_STATUS_IGNORE));
			CHECK(!flag);
		} else {
			complete(w);
		}
	}
	for (int i = 0; i < SLOTS; i++)
		if (w->slot[i].busy) {
			CHECK_MPI(MPI_Wait(&w->slot[i].req, MPI_STATUS_IGNORE));
			retire(&w->slot[i]);
		}
	struct hdr end = { w->seq, sizeof(end) };
	CHECK_MPI(MPI_Send(&end, sizeof(end), MPI_BYTE, 1, TAG_END, w->comm));
	return NULL;
}

static void *recv_main(void *arg)
{
	struct sender *w = arg;
	unsigned char *b = malloc(LARGE);
	CHECK(b);
	for (uint32_t expect = 0;; expect++) {
		MPI_Status st;
		int n;
		CHECK_MPI(MPI_Recv(b, LARGE, MPI_BYTE, 0, MPI_ANY_TAG, w->comm, &st));
		CHECK_MPI(MPI_Get_count(&st, MPI_BYTE, &n));
		struct hdr h;
		CHECK(n >= (int)sizeof(h));
		memcpy(&h, b, sizeof(h));
		if (h.seq != expect || h.len != (uint32_t)n)
			fprintf(stderr, "thread %d: message %u (%d bytes) where %u was due\n", w->t,
			        h.seq, n, expect);
		CHECK(h.seq == expect && h.len == (uint32_t)n);
		if (st.MPI_TAG == TAG_END)
			break;
		for (int i = sizeof(h); i < n; i++)
			if (b[i] != pattern(w->t, h.seq, (uint32_t)i)) {
				fprintf(stderr, "thread %d: message %u: byte %d of %d wrong\n",
				        w->t, h.seq, i, n);
				CHECK(0);
			}
		w->seq = expect + 1;
	}
	free(b);
	return NULL;
}

int main(int argc, char **argv)
{
	int rank;
	if ((rank = init_pair_multiple(&argc, &argv)) < 0)
		return 77;
	int bsize = 256 * (SMALL_MAX + 64 + MPI_BSEND_OVERHEAD);
	void *bbuf = malloc((size_t)bsize);
	CHECK(bbuf);
	CHECK_MPI(MPI_Buffer_attach(bbuf, bsize));
	struct sender w[NT];
	pthread_t th[NT];
	for (int t = 0; t < NT; t++) {
		memset(&w[t], 0, sizeof(w[t]));
		w[t].t = t;
		w[t].rng = 0x9e3779b97f4a7c15ull * (uint64_t)(t + 1);
		CHECK_MPI(MPI_Comm_dup(MPI_COMM_WORLD, &w[t].comm));
	}
	for (int t = 0; t < NT; t++)
		CHECK(!pthread_create(&th[t], NULL, rank == 0 ? send_main : recv_main, &w[t]));
	long msgs = 0, cancelled = 0;
	for (int t = 0; t < NT; t++) {
		CHECK(!pthread_join(th[t], NULL));
		msgs += w[t].seq;
		cancelled += w[t].cancelled;
		CHECK_MPI(MPI_Comm_free(&w[t].comm));
	}
	for (int i = 0; i < LONE_SENDS; i++) {
		int v = i, got = -1;
		if (rank == 0) {
			MPI_Request r;
			CHECK_MPI(MPI_Isend(&v, 1, MPI_INT, 1, 5, MPI_COMM_WORLD, &r));
			pause_us(3000);
			CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
		} else {
			CHECK_MPI(MPI_Recv(&got, 1, MPI_INT, 0, 5, MPI_COMM_WORLD,
			                   MPI_STATUS_IGNORE));
			CHECK(got == i);
		}
	}
	CHECK_MPI(MPI_Buffer_detach(&bbuf, &bsize));
	free(bbuf);
	printf("rank %d: %ld messages in order, %ld cancelled\n", rank, msgs, cancelled);
	MPI_Finalize();
	return 0;
}

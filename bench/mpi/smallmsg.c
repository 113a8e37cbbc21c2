/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_smallmsg: the small-message kernels of real codes, where a
 * progression engine has nothing to overlap and can only cost time (the
 * "do no harm" cases of docs/performance.md):
 *
 *  ring    a token of --ring-bytes goes round the ranks: each rank receives
 *          it from the left with MPI_Recv and passes it to the right with
 *          MPI_Send (rank 0 starts each lap). One sample is --laps laps,
 *          reported per hop, in µs.
 *  random  random-access updates (the pattern of HPCC's RandomAccess): in
 *          each phase every rank sends --batch updates of 16 bytes (index,
 *          value), each with its own MPI_Isend to a peer drawn from a
 *          generator every rank runs identically (so each rank knows how
 *          many updates it will receive), posts one MPI_Irecv from
 *          MPI_ANY_SOURCE per expected update, and completes all of them
 *          with sweeps of MPI_Test, applying each update to its table the
 *          moment it arrives. One sample is --phases phases, reported per
 *          update a rank sends, in µs. At the end the XOR of every table
 *          must equal the XOR of every value sent (checked; a mismatch
 *          aborts).
 *
 * The thread level is MPI_THREAD_SINGLE unless --thread-level says
 * otherwise: plain MPI_Init is what most applications call, and piano asks
 * the MPI for MPI_THREAD_MULTIPLE whatever the application asked, so the
 * native single-threaded run is the baseline a user compares with.
 * Each kernel runs --reps samples (after one untimed sample); the table
 * gives their median, quartiles and minimum.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "bench_mpi_common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define TAG_RING 7811
#define TAG_UPDATE 7812
#define TABLE_WORDS 4096 /* the random-access table: 32 KiB, in L1/L2 */

static const char usage_text[] =
        "usage: bench_smallmsg [options]   (2 or more MPI processes)\n"
        "  small-message kernels: a ring of blocking sends and random-access updates\n"
        "  (MPI_Isend/MPI_Irecv + MPI_Test sweeps); time per hop / per update\n"
        "  --kernels LIST       ring,random (default both)\n"
        "  --reps N             timed samples per kernel (default 15; --quick 5)\n"
        "  --laps N             ring laps per sample (default 2000; --quick 500)\n"
        "  --ring-bytes N       size of the ring's token (default 8)\n"
        "  --phases N           random-access phases per sample (default 200; --quick 50)\n"
        "  --batch N            updates each rank sends per phase (default 64)\n";

enum { K_RING = 1, K_RANDOM = 2 };

struct opts {
	struct bm_opts c;
	int kernels;
	long reps, laps, ring_bytes, phases, batch;
	int have_reps, have_laps, have_phases;
};

static enum bm_arg smallmsg_arg(void *prog, const char *a, const char *v)
{
	struct opts *o = prog;
	if (!v)
		return BM_ARG_UNKNOWN;
	if (!strcmp(a, "--kernels")) {
		o->kernels = 0;
		char buf[64];
		snprintf(buf, sizeof buf, "%s", v);
		for (char *save = NULL, *k = strtok_r(buf, ",", &save); k;
		     k = strtok_r(NULL, ",", &save)) {
			if (!strcmp(k, "ring"))
				o->kernels |= K_RING;
			else if (!strcmp(k, "random"))
				o->kernels |= K_RANDOM;
			else
				return BM_ARG_BAD;
		}
		return o->kernels ? BM_ARG_VALUE : BM_ARG_BAD;
	}
	struct {
		const char *name;
		long *val;
		long min, max;
		int *given;
	} const ints[] = {
		{ "--reps", &o->reps, 1, 100000, &o->have_reps },
		{ "--laps", &o->laps, 1, 100000000, &o->have_laps },
		{ "--ring-bytes", &o->ring_bytes, 1, 1 << 20, NULL },
		{ "--phases", &o->phases, 1, 100000000, &o->have_phases },
		{ "--batch", &o->batch, 1, 100000, NULL },
	};
	for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++) {
		if (strcmp(a, ints[i].name))
			continue;
		if (bm_parse_size(v, ints[i].min, ints[i].max, ints[i].val))
			return BM_ARG_BAD;
		if (ints[i].given)
			*ints[i].given = 1;
		return BM_ARG_VALUE;
	}
	return BM_ARG_UNKNOWN;
}

static int parse_args(int argc, char **argv, struct opts *o, char *err, size_t errlen)
{
	memset(o, 0, sizeof *o);
	bm_opts_init(&o->c);
	o->c.thread_level = MPI_THREAD_SINGLE;
	o->c.can_level = 1;
	o->kernels = K_RING | K_RANDOM;
	o->ring_bytes = 8;
	o->batch = 64;
	if (bm_opts_parse(&o->c, argc, argv, smallmsg_arg, o, err, errlen))
		return -1;
	if (!o->have_reps)
		o->reps = o->c.quick ? 5 : 15;
	if (!o->have_laps)
		o->laps = o->c.quick ? 500 : 2000;
	if (!o->have_phases)
		o->phases = o->c.quick ? 50 : 200;
	return 0;
}

/* One sample of the ring: µs per hop, on rank 0 (0 elsewhere). */
static double ring_sample(const struct bm_ctx *c, char *token, int bytes, long laps)
{
	const int left = (c->rank + c->size - 1) % c->size, right = (c->rank + 1) % c->size;
	MPI_Barrier(MPI_COMM_WORLD);
	double t0 = bm_now_us();
	for (long l = 0; l < laps; l++) {
		if (c->rank == 0) {
			MPI_Send(token, bytes, MPI_BYTE, right, TAG_RING, MPI_COMM_WORLD);
			MPI_Recv(token, bytes, MPI_BYTE, left, TAG_RING, MPI_COMM_WORLD,
			         MPI_STATUS_IGNORE);
		} else {
			MPI_Recv(token, bytes, MPI_BYTE, left, TAG_RING, MPI_COMM_WORLD,
			         MPI_STATUS_IGNORE);
			MPI_Send(token, bytes, MPI_BYTE, right, TAG_RING, MPI_COMM_WORLD);
		}
	}
	return (bm_now_us() - t0) / ((double)laps * c->size);
}

/* splitmix64: the updates' generator, the same on every rank. */
static uint64_t mix(uint64_t x)
{
	x += 0x9e3779b97f4a7c15ULL;
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

/* Update j of rank s in phase p. */
static uint64_t update_word(uint64_t p, int s, long j)
{
	return mix((p << 40) ^ ((uint64_t)s << 20) ^ (uint64_t)j);
}

static int update_peer(uint64_t w, int s, int size)
{
	return (int)((s + 1 + (w >> 32) % (uint64_t)(size - 1)) % (uint64_t)size);
}

struct random_state {
	uint64_t *table;    /* TABLE_WORDS words */
	uint64_t (*out)[2]; /* batch updates sent */
	uint64_t (*in)[2];  /* up to the most any rank receives in a phase */
	MPI_Request *req;   /* batch sends, then the receives */
	long cap_in;
	uint64_t sent_xor; /* XOR of every value this rank sent */
	uint64_t phase;    /* phases run so far (the generator's input) */
};

/* Updates rank r receives in phase p. */
static long expected(const struct bm_ctx *c, uint64_t p, long batch)
{
	long n = 0;
	for (int s = 0; s < c->size; s++)
		for (long j = 0; s != c->rank && j < batch; j++)
			n += update_peer(update_word(p, s, j), s, c->size) == c->rank;
	return n;
}

static void random_phase(const struct bm_ctx *c, struct random_state *st, long batch)
{
	const uint64_t p = st->phase++;
	long nin = expected(c, p, batch);
	if (nin > st->cap_in)
		bm_die(c, "random: %ld updates to receive, room for %ld", nin, st->cap_in);
	MPI_Request *rreq = st->req + batch;
	for (long i = 0; i < nin; i++)
		MPI_Irecv(st->in[i], 2, MPI_UINT64_T, MPI_ANY_SOURCE, TAG_UPDATE, MPI_COMM_WORLD,
		          &rreq[i]);
	for (long j = 0; j < batch; j++) {
		uint64_t w = update_word(p, c->rank, j);
		st->out[j][0] = w % TABLE_WORDS;
		st->out[j][1] = mix(w);
		st->sent_xor ^= st->out[j][1];
		MPI_Isend(st->out[j], 2, MPI_UINT64_T, update_peer(w, c->rank, c->size), TAG_UPDATE,
		          MPI_COMM_WORLD, &st->req[j]);
	}
	for (long left = batch + nin; left > 0;) {
		for (long i = 0; i < batch + nin; i++) {
			if (st->req[i] == MPI_REQUEST_NULL)
				continue;
			int flag = 0;
			MPI_Test(&st->req[i], &flag, MPI_STATUS_IGNORE);
			if (!flag)
				continue;
			left--;
			if (i >= batch) {
				const uint64_t *u = st->in[i - batch];
				st->table[u[0] % TABLE_WORDS] ^= u[1];
			}
		}
	}
}

/* The most updates any rank can receive in one phase: every other rank's
 * whole batch. */
static int random_init(struct random_state *st, const struct bm_ctx *c, long batch)
{
	memset(st, 0, sizeof *st);
	st->cap_in = batch * (c->size - 1);
	st->table = calloc(TABLE_WORDS, sizeof *st->table);
	st->out = calloc((size_t)batch, sizeof *st->out);
	st->in = calloc((size_t)st->cap_in, sizeof *st->in);
	st->req = malloc(((size_t)batch + (size_t)st->cap_in) * sizeof *st->req);
	if (!st->table || !st->out || !st->in || !st->req)
		return -1;
	for (long i = 0; i < batch + st->cap_in; i++)
		st->req[i] = MPI_REQUEST_NULL;
	return 0;
}

static void random_check(const struct bm_ctx *c, const struct random_state *st)
{
	uint64_t mine = 0, got = 0, sent = 0;
	for (long i = 0; i < TABLE_WORDS; i++)
		mine ^= st->table[i];
	MPI_Allreduce(&mine, &got, 1, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD);
	MPI_Allreduce(&st->sent_xor, &sent, 1, MPI_UINT64_T, MPI_BXOR, MPI_COMM_WORLD);
	if (got != sent)
		bm_die(c, "random: the tables' XOR %016llx differs from the updates' %016llx",
		       (unsigned long long)got, (unsigned long long)sent);
}

int main(int argc, char **argv)
{
	struct opts o;
	char err[256] = "";
	int prc = parse_args(argc, argv, &o, err, sizeof err);
	struct bm_ctx c;
	bm_init(&c, "smallmsg", &o.c, 0, &argc, &argv);
	if (prc || o.c.help)
		return bm_usage_exit(&c, usage_text, err);
	int rc = bm_require_ranks(&c, 2, 0);
	if (rc)
		return rc;

	char *token = calloc((size_t)o.ring_bytes, 1);
	double *v = malloc((size_t)o.reps * sizeof *v);
	struct random_state st;
	if (!token || !v || random_init(&st, &c, o.batch))
		bm_die(&c, "out of memory");

	bm_header(&c, "piano small-message benchmark: ring of MPI_Send/MPI_Recv, random-access "
	              "updates (MPI_Isend/MPI_Irecv + MPI_Test)");
	bm_hline(&c, "ring: %ld B token, %ld laps per sample, us per hop", o.ring_bytes, o.laps);
	bm_hline(&c,
	         "random: %ld updates of 16 B per rank and phase, %ld phases per sample, us "
	         "per update sent",
	         o.batch, o.phases);

	static const struct bm_col cols[] = {
		{ "kernel", BM_COL_STR, 8, NULL },  { "bytes", BM_COL_INT, 6, NULL },
		{ "samples", BM_COL_INT, 7, NULL }, { "median_us", BM_COL_F4, 0, NULL },
		{ "p25_us", BM_COL_F4, 0, NULL },   { "p75_us", BM_COL_F4, 0, NULL },
		{ "min_us", BM_COL_F4, 0, NULL },
	};
	struct bm_table t;
	bm_table_begin(&t, &c, cols, (int)(sizeof cols / sizeof cols[0]));
	struct bm_stats s;

	if (o.kernels & K_RING) {
		ring_sample(&c, token, (int)o.ring_bytes, o.laps); /* warm-up */
		for (long r = 0; r < o.reps; r++)
			v[r] = ring_sample(&c, token, (int)o.ring_bytes, o.laps);
		if (c.rank == 0) {
			bm_stats(v, o.reps, &s);
			bm_table_row(&t, "ring", o.ring_bytes, o.reps, s.median, s.p25, s.p75,
			             s.min);
		}
	}
	if (o.kernels & K_RANDOM) {
		for (long ph = 0; ph < o.phases; ph++) /* warm-up */
			random_phase(&c, &st, o.batch);
		for (long r = 0; r < o.reps; r++) {
			MPI_Barrier(MPI_COMM_WORLD);
			double t0 = bm_now_us();
			for (long ph = 0; ph < o.phases; ph++)
				random_phase(&c, &st, o.batch);
			v[r] = (bm_now_us() - t0) / ((double)o.phases * o.batch);
		}
		random_check(&c, &st);
		if (c.rank == 0) {
			bm_stats(v, o.reps, &s);
			bm_table_row(&t, "random", 16L, o.reps, s.median, s.p25, s.p75, s.min);
		}
	}

	MPI_Barrier(MPI_COMM_WORLD);
	free(token);
	free(v);
	free(st.table);
	free(st.out);
	free(st.in);
	free(st.req);
	MPI_Finalize();
	return 0;
}

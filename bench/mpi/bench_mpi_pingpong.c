/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * bench_mpi_pingpong: the timed ping-pong loop of latency, mthreads and
 * reactivity (see bm_pingpong in bench_mpi_common.h).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* nanosleep */
#endif
#include "bench_mpi_common.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>

static uint64_t xorshift(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s;
}

long bm_pingpong(const struct bm_pp *p)
{
	const long total = p->warmup + (p->iters > 0 ? p->iters : 1);
	long min_total = p->warmup + (p->min_timed > 0 ? p->min_timed : 1);
	if (min_total > total)
		min_total = total;
	long timed = 0;
	int last = 0;
	const long cap = p->lat_cap > 0 ? p->lat_cap : total - p->warmup;
	uint64_t rng = 0x9e3779b97f4a7c15ull ^ (uint64_t)(unsigned)p->tag;
	if (p->initiator) {
		const double deadline = bm_now_us() + p->budget_s * 1e6;
		double t_first = 0;
		for (long i = 0; !last; i++) {
			if (p->gap_us > 0 && i > 0) {
				double g = 2 * p->gap_us * (double)(xorshift(&rng) >> 11) * 0x1p-53;
				struct timespec ts = { (time_t)(g / 1e6), (long)(fmod(g, 1e6) * 1e3) };
				while (nanosleep(&ts, &ts) != 0)
					;
			}
			if (i == p->warmup && p->mark)
				p->mark(p->mark_arg, 0);
			double t0 = bm_now_us();
			if (i == p->warmup)
				t_first = t0;
			last = bm_is_last(i, total, min_total, t0, deadline) &&
			       (p->min_time_s <= 0 ||
			        (i >= p->warmup && t0 - t_first >= p->min_time_s * 1e6));
			p->sbuf[0] = last ? BM_MSG_LAST : BM_MSG_MORE;
			if (p->nonblocking) {
				MPI_Request r[2];
				MPI_Irecv(p->rbuf, p->count, MPI_CHAR, p->peer, p->tag, p->comm, &r[1]);
				MPI_Isend(p->sbuf, p->count, MPI_CHAR, p->peer, p->tag, p->comm, &r[0]);
				MPI_Wait(&r[0], MPI_STATUS_IGNORE);
				MPI_Wait(&r[1], MPI_STATUS_IGNORE);
			} else {
				MPI_Send(p->sbuf, p->count, MPI_CHAR, p->peer, p->tag, p->comm);
				MPI_Recv(p->rbuf, p->count, MPI_CHAR, p->peer, p->tag, p->comm,
				         MPI_STATUS_IGNORE);
			}
			double t1 = bm_now_us();
			if (i < p->warmup)
				continue;
			if (timed < cap) {
				p->lat[timed] = (t1 - t0) / 2;
			} else { /* reservoir sampling */
				uint64_t j = xorshift(&rng) % (uint64_t)(timed + 1);
				if (j < (uint64_t)cap)
					p->lat[j] = (t1 - t0) / 2;
			}
			timed++;
		}
	} else {
		p->sbuf[0] = BM_MSG_MORE;
		for (long i = 0; !last; i++) {
			if (i == p->warmup && p->mark)
				p->mark(p->mark_arg, 0);
			if (p->nonblocking) {
				MPI_Request r;
				MPI_Irecv(p->rbuf, p->count, MPI_CHAR, p->peer, p->tag, p->comm, &r);
				MPI_Wait(&r, MPI_STATUS_IGNORE);
				MPI_Isend(p->sbuf, p->count, MPI_CHAR, p->peer, p->tag, p->comm, &r);
				MPI_Wait(&r, MPI_STATUS_IGNORE);
			} else {
				MPI_Recv(p->rbuf, p->count, MPI_CHAR, p->peer, p->tag, p->comm,
				         MPI_STATUS_IGNORE);
				MPI_Send(p->sbuf, p->count, MPI_CHAR, p->peer, p->tag, p->comm);
			}
			if (i >= p->warmup)
				timed++;
			if (p->rbuf[0] == BM_MSG_LAST) {
				last = 1;
			} else if (p->rbuf[0] != BM_MSG_MORE) {
				fprintf(stderr, "bench: corrupted ping-pong message (first byte %d)\n",
				        p->rbuf[0]);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
		}
	}
	if (p->mark)
		p->mark(p->mark_arg, 1);
	return timed;
}

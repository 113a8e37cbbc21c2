/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Submission offload (offload.c, docs/mpi.md, "Submission offload"):
 * with PIANO_OFFLOAD=1 an eager-size MPI_Isend is not posted by the
 * application's call but queued, and an ltask posts it from a core the
 * application leaves idle; the call returns a generalized request at once.
 *
 * Ordering: one FIFO for the process, posted in order under its lock by
 * whoever posts (the ltask, or an application thread that must not wait
 * for it). Every other send of the process, and every call that may wait
 * for something a queued send makes happen (completion calls, blocking
 * calls, probes), first posts the whole queue (offload_flush): MPI's
 * non-overtaking rule holds for every (communicator, destination) pair,
 * and no wait can depend on a send that is not posted.
 *
 * The handle: the application holds the generalized request G; the MPI's
 * own request R exists once the send is posted. A completion call that
 * finds G passes R to the MPI in its place (offload_swap), so the status
 * and the error are the MPI's own, and completes and frees G when R
 * completed (offload_unswap). An ltask that finds R complete right after
 * posting it completes G itself; G is then an ordinary completed request.
 */
#ifndef PIANO_MPI_OFFLOAD_H
#define PIANO_MPI_OFFLOAD_H

#include "hidden.h"
#include "base.h"

/* Set-up (PIANO_OFFLOAD read; the ltask created) and shutdown (the queue
 * posted, the ltask stopped; sends still pending get G completed, so that
 * PMPI_Finalize sees only the MPI's own requests). */
int offload_setup(void);
void offload_shutdown(void);

/* Takes an MPI_Isend (large: the _c form's MPI_Count count) when it may be
 * deferred: offload on, eager size, a valid destination other than
 * MPI_PROC_NULL; then *req is the generalized request and the result is
 * true. False: the caller posts it (after offload_flush()). */
extern PIANO_HIDDEN int offload_enabled;
bool offload_isend_slow(const void *buf, MPI_Count count, MPI_Datatype dt, int dest, int tag,
                        MPI_Comm comm, bool large, MPI_Request *req);
static inline bool offload_isend(const void *buf, MPI_Count count, MPI_Datatype dt, int dest,
                                 int tag, MPI_Comm comm, bool large, MPI_Request *req)
{
	/* Checked inline: off by default, and every MPI_Isend asks. */
	return offload_enabled && offload_isend_slow(buf, count, dt, dest, tag, comm, large, req);
}

/* Posts every queued send in the calling thread, in order. */
extern PIANO_HIDDEN _Atomic long offload_queued_n;
void offload_flush_slow(void);
static inline void offload_flush(void)
{
	/* Acquire, partner: the release decrement after a send was posted:
	 * a thread that reads 0 makes its own send after every queued one was
	 * handed to the MPI. A send queued by another thread and not yet seen
	 * is ordered with this call by nothing but chance, as in the MPI. */
	if (atomic_load_explicit(&offload_queued_n, memory_order_acquire))
		offload_flush_slow();
}

/* Requests a completion call must see through: a copy of the caller's
 * array with each G replaced by its R (queued sends posted first), or the
 * caller's own array when none is a G. */
struct offload_swap {
	MPI_Request small[16];
	void *small_recs[16];
	MPI_Request *use;
	void **recs; /* recs[i]: the record of a swapped G, else NULL */
	int n;
};
extern PIANO_HIDDEN _Atomic long offload_live_n;
MPI_Request *offload_swap_slow(MPI_Request *reqs, int n, struct offload_swap *s);
static inline MPI_Request *offload_swap(MPI_Request *reqs, int n, struct offload_swap *s)
{
	s->use = reqs;
	s->recs = NULL;
	if (!atomic_load_explicit(&offload_live_n, memory_order_relaxed))
		return reqs;
	return offload_swap_slow(reqs, n, s);
}
/* After the call: each swapped G whose R the call completed is completed
 * and freed, its handle in reqs set to MPI_REQUEST_NULL; the others keep
 * their G. */
void offload_unswap_slow(struct offload_swap *s, MPI_Request *reqs);
static inline void offload_unswap(struct offload_swap *s, MPI_Request *reqs)
{
	if (s->recs) /* set by offload_swap_slow() only */
		offload_unswap_slow(s, reqs);
}

/* MPI_Request_free, MPI_Cancel and MPI_Request_get_status on a G: true
 * when req was one (*rc is then the call's result). */
bool offload_free(MPI_Request *req, int *rc);
bool offload_cancel(MPI_Request req, int *rc);
bool offload_get_status(MPI_Request req, int *flag, MPI_Status *status, int *rc);

/* Counters for PIANO_STATS. */
struct offload_stats {
	uint64_t deferred, by_engine, by_app, late, direct;
	/* runs of direct sends begun: after late sends, prompt ones, cheap
	 * posts to one peer */
	uint64_t off_late, off_prompt, off_cheap;
};
void offload_stats(struct offload_stats *out);

#endif

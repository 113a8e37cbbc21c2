/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Point-to-point operations. Non-blocking and persistent calls go straight
 * to the MPI; the request is tracked when the message may need the peer's
 * cooperation (larger than the eager limit).
 *
 * Synchronous sends (Issend, Ssend_init) follow the same rule, though a
 * small one also completes only once the receiver has matched it: matching
 * takes the receiver's progress, which piano gives when the receive is
 * tracked (a receive larger than the eager limit), never the sender's.
 * The sender's MPI then only has the acknowledgement to read, which its
 * own Test or Wait does; tracking the send would run the progress task
 * for nothing (docs/mpi.md, "Tracking"; test mpi.<mpi>.ssend).
 */
#include "base.h"
#include "init.h"
#include "progress.h"
#include "track.h"
#include "waitop.h"

static int track_new(int rc, MPI_Count count, MPI_Datatype dt, MPI_Request *req, bool persistent)
{
	if (rc != MPI_SUCCESS || !pmpi_g.threaded)
		return rc;
	long bytes;
	if (pmpi_type_bytes(count, dt, &bytes) == 0 && bytes <= pmpi_g.eager_limit) {
		atomic_fetch_add_explicit(&pmpi_g.bypassed, 1, memory_order_relaxed);
		return rc;
	}
	if (track_add(*req, persistent, !persistent))
		progress_kick();
	return rc;
}

/* Every call in both forms (BOTH_FORMS, base.h): a program that uses the
 * _c ones, or Fortran 2008 procedures that call them, is tracked the same
 * way. */
#define SEND_ARGS(C) const void *buf, C count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm
#define SEND_NAMES() buf, count, dt, dest, tag, comm
#define RECV_ARGS(C) void *buf, C count, MPI_Datatype dt, int src, int tag, MPI_Comm comm
#define RECV_NAMES() buf, count, dt, src, tag, comm
#define MRECV_ARGS(C) void *buf, C count, MPI_Datatype dt, MPI_Message *msg
#define MRECV_NAMES() buf, count, dt, msg

/* A call that creates a request: tracked as track_new decides. */
#define STARTS(sfx, C, name, ARGS, NAMES, persistent)                                         \
	PMPI_EXPORT int MPI_##name##sfx(ARGS(C), MPI_Request *req)                            \
	{                                                                                     \
		pmpi_ensure();                                                                \
		return track_new(PMPI_##name##sfx(NAMES(), req), count, dt, req, persistent); \
	}

BOTH_FORMS(STARTS, Isend, SEND_ARGS, SEND_NAMES, false)
BOTH_FORMS(STARTS, Ibsend, SEND_ARGS, SEND_NAMES, false)
BOTH_FORMS(STARTS, Issend, SEND_ARGS, SEND_NAMES, false)
BOTH_FORMS(STARTS, Irsend, SEND_ARGS, SEND_NAMES, false)
BOTH_FORMS(STARTS, Irecv, RECV_ARGS, RECV_NAMES, false)
BOTH_FORMS(STARTS, Imrecv, MRECV_ARGS, MRECV_NAMES, false)
BOTH_FORMS(STARTS, Send_init, SEND_ARGS, SEND_NAMES, true)
BOTH_FORMS(STARTS, Bsend_init, SEND_ARGS, SEND_NAMES, true)
BOTH_FORMS(STARTS, Ssend_init, SEND_ARGS, SEND_NAMES, true)
BOTH_FORMS(STARTS, Rsend_init, SEND_ARGS, SEND_NAMES, true)
BOTH_FORMS(STARTS, Recv_init, RECV_ARGS, RECV_NAMES, true)

PMPI_EXPORT int MPI_Start(MPI_Request *req)
{
	pmpi_ensure();
	int rc = PMPI_Start(req);
	if (rc == MPI_SUCCESS && pmpi_g.threaded && track_start(*req))
		progress_kick();
	return rc;
}

PMPI_EXPORT int MPI_Startall(int n, MPI_Request reqs[])
{
	pmpi_ensure();
	int rc = PMPI_Startall(n, reqs);
	if (rc != MPI_SUCCESS || !pmpi_g.threaded)
		return rc;
	bool kick = false;
	for (int i = 0; i < n; i++)
		kick |= track_start(reqs[i]);
	if (kick)
		progress_kick();
	return rc;
}

/*
 * Blocking Send/Recv: the MPI's own call when the thread waits alone (or
 * without background progress); with other threads already waiting, the
 * non-blocking call and a delegated wait, so that the thread sleeps while
 * one poller serves them all.
 */
static int delegated(int rc, MPI_Request *r, MPI_Status *status)
{
	if (rc != MPI_SUCCESS)
		return rc;
	struct waitop op = { .kind = WAIT_ONE, .n = 1, .reqs = r };
	waitop_block(&op);
	return PMPI_Wait(r, status);
}

#define SEND(sfx, C, unused)                                                                       \
	PMPI_EXPORT int MPI_Send##sfx(SEND_ARGS(C))                                                \
	{                                                                                          \
		pmpi_ensure();                                                                     \
		struct waitop op = { .kind = WAIT_ONE, .n = 0 };                                   \
		MPI_Request r = MPI_REQUEST_NULL;                                                  \
		enum wait_mode mode = wait_enter(&op);                                             \
		int rc = mode != WAIT_DELEGATED ? PMPI_Send##sfx(SEND_NAMES())                     \
		                                : delegated(PMPI_Isend##sfx(SEND_NAMES(), &r), &r, \
		                                            MPI_STATUS_IGNORE);                    \
		wait_leave(mode);                                                                  \
		return rc;                                                                         \
	}
#define RECV(sfx, C, unused)                                                                 \
	PMPI_EXPORT int MPI_Recv##sfx(RECV_ARGS(C), MPI_Status *status)                      \
	{                                                                                    \
		pmpi_ensure();                                                               \
		struct waitop op = { .kind = WAIT_ONE, .n = 0 };                             \
		MPI_Request r = MPI_REQUEST_NULL;                                            \
		enum wait_mode mode = wait_enter(&op);                                       \
		int rc = mode != WAIT_DELEGATED                                              \
		                 ? PMPI_Recv##sfx(RECV_NAMES(), status)                      \
		                 : delegated(PMPI_Irecv##sfx(RECV_NAMES(), &r), &r, status); \
		wait_leave(mode);                                                            \
		return rc;                                                                   \
	}

BOTH_FORMS(SEND, -)
BOTH_FORMS(RECV, -)

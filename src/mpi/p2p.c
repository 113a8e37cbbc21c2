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

static int track_new(int rc, int count, MPI_Datatype dt, MPI_Request *req, bool persistent)
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

#define SEND_ARGS const void *buf, int count, MPI_Datatype dt, int dest, int tag, MPI_Comm comm
#define SEND_NAMES buf, count, dt, dest, tag, comm
#define RECV_ARGS void *buf, int count, MPI_Datatype dt, int src, int tag, MPI_Comm comm
#define RECV_NAMES buf, count, dt, src, tag, comm

PMPI_EXPORT int MPI_Isend(SEND_ARGS, MPI_Request *req)
{
	pmpi_ensure();
	return track_new(PMPI_Isend(SEND_NAMES, req), count, dt, req, false);
}

PMPI_EXPORT int MPI_Ibsend(SEND_ARGS, MPI_Request *req)
{
	pmpi_ensure();
	return track_new(PMPI_Ibsend(SEND_NAMES, req), count, dt, req, false);
}

PMPI_EXPORT int MPI_Issend(SEND_ARGS, MPI_Request *req)
{
	pmpi_ensure();
	return track_new(PMPI_Issend(SEND_NAMES, req), count, dt, req, false);
}

PMPI_EXPORT int MPI_Irsend(SEND_ARGS, MPI_Request *req)
{
	pmpi_ensure();
	return track_new(PMPI_Irsend(SEND_NAMES, req), count, dt, req, false);
}

PMPI_EXPORT int MPI_Irecv(RECV_ARGS, MPI_Request *req)
{
	pmpi_ensure();
	return track_new(PMPI_Irecv(RECV_NAMES, req), count, dt, req, false);
}

PMPI_EXPORT int MPI_Imrecv(void *buf, int count, MPI_Datatype dt, MPI_Message *msg,
                           MPI_Request *req)
{
	pmpi_ensure();
	return track_new(PMPI_Imrecv(buf, count, dt, msg, req), count, dt, req, false);
}

PMPI_EXPORT int MPI_Send_init(SEND_ARGS, MPI_Request *req)
{
	pmpi_ensure();
	return track_new(PMPI_Send_init(SEND_NAMES, req), count, dt, req, true);
}

PMPI_EXPORT int MPI_Bsend_init(SEND_ARGS, MPI_Request *req)
{
	pmpi_ensure();
	return track_new(PMPI_Bsend_init(SEND_NAMES, req), count, dt, req, true);
}

PMPI_EXPORT int MPI_Ssend_init(SEND_ARGS, MPI_Request *req)
{
	pmpi_ensure();
	return track_new(PMPI_Ssend_init(SEND_NAMES, req), count, dt, req, true);
}

PMPI_EXPORT int MPI_Rsend_init(SEND_ARGS, MPI_Request *req)
{
	pmpi_ensure();
	return track_new(PMPI_Rsend_init(SEND_NAMES, req), count, dt, req, true);
}

PMPI_EXPORT int MPI_Recv_init(RECV_ARGS, MPI_Request *req)
{
	pmpi_ensure();
	return track_new(PMPI_Recv_init(RECV_NAMES, req), count, dt, req, true);
}

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
PMPI_EXPORT int MPI_Send(SEND_ARGS)
{
	pmpi_ensure();
	struct waitop op = { .kind = WAIT_ONE, .n = 0 };
	MPI_Request r = MPI_REQUEST_NULL;
	enum wait_mode mode = wait_enter(&op);
	int rc;
	if (mode != WAIT_DELEGATED) {
		rc = PMPI_Send(SEND_NAMES);
	} else if ((rc = PMPI_Isend(SEND_NAMES, &r)) == MPI_SUCCESS) {
		op = (struct waitop){ .kind = WAIT_ONE, .n = 1, .reqs = &r };
		waitop_block(&op);
		rc = PMPI_Wait(&r, MPI_STATUS_IGNORE);
	}
	wait_leave(mode);
	return rc;
}

PMPI_EXPORT int MPI_Recv(RECV_ARGS, MPI_Status *status)
{
	pmpi_ensure();
	struct waitop op = { .kind = WAIT_ONE, .n = 0 };
	MPI_Request r = MPI_REQUEST_NULL;
	enum wait_mode mode = wait_enter(&op);
	int rc;
	if (mode != WAIT_DELEGATED) {
		rc = PMPI_Recv(RECV_NAMES, status);
	} else if ((rc = PMPI_Irecv(RECV_NAMES, &r)) == MPI_SUCCESS) {
		op = (struct waitop){ .kind = WAIT_ONE, .n = 1, .reqs = &r };
		waitop_block(&op);
		rc = PMPI_Wait(&r, status);
	}
	wait_leave(mode);
	return rc;
}

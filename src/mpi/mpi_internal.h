/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Internal interface of libpiano-mpi, the PMPI interposition layer.
 *
 * Design (docs/mpi.md): piano tracks the MPI's own requests; it never hands
 * proxy requests to the application. One progress ltask per process drives
 * the MPI with PMPI_Iprobe (progress_poke), which progresses every pending
 * operation without touching any application request. A request is
 * only ever tested by the engine while an application thread is blocked in a
 * wait call on it and has handed it over (a "wait op"); the MPI standard
 * forbids two threads to use one request at once, and this rule keeps the
 * application and the engine from ever doing so.
 */
#ifndef PIANO_MPI_INTERNAL_H
#define PIANO_MPI_INTERNAL_H

#include <mpi.h>
#include <piano/piano.h>

#include "warn.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define PMPI_EXPORT __attribute__((visibility("default")))

/* The layer's diagnostics: one line each, "piano-mpi (rank R): ..." (warn.h). */
#define pmpi_warn(...) warn_line("piano-mpi", __VA_ARGS__)

/* ------------------------------------------------------------- state */

struct pmpi_state {
	int ready;               /* piano set up (after MPI_Init or lazily) */
	int threaded;            /* MPI gave THREAD_MULTIPLE and the engine has threads */
	int provided_app;        /* thread level reported to the application */
	long eager_limit;        /* bytes; sends up to this size are not tracked */
	const char *eager_source;
	piano_ltask_t *progress;
	int stats;
	uint64_t linger_ns;      /* PIANO_MPI_LINGER_US */
	const char *blocking;    /* PIANO_MPI_BLOCKING: auto, timer or block */
	int watching;            /* the socket watcher runs */
	int local_rank, local_size;
	int node_cpus;           /* CPUs the node's ranks may use (0: unknown) */
	int oversubscribed;      /* local_size > node_cpus: no idle threads (init.c) */
	_Atomic int finalizing;
	/* counters */
	_Atomic uint64_t tracked, bypassed, delegated_waits;
};

extern struct pmpi_state pmpi_g;

/* Sets piano up if MPI is initialised and we are not yet (library loaded or
 * linked after MPI_Init). Cheap when ready. */
void pmpi_ensure(void);

/* -------------------------------------------------------- tracking */

/* Records a request the engine must keep progressing. persistent requests
 * stay in the table while inactive. */
void track_add(MPI_Request req, bool persistent, bool active);
/* A tracked persistent request was started. */
void track_start(MPI_Request req);
/* The request completed (non-persistent: forgotten; persistent: inactive). */
void track_done(MPI_Request req);
/* The request was freed by the application. */
void track_forget(MPI_Request req);
/* A request of a kind piano leaves to the MPI (generalized, one-sided,
 * partitioned, file): never counted pending, and a wait that includes one
 * is the MPI's own, in the caller's thread (the engine would run a
 * generalized request's query function, or drive a module that is not safe
 * against the application's concurrent calls). Forgotten like the others
 * when it completes. */
void track_foreign(MPI_Request req, bool persistent);
bool track_any_foreign(const MPI_Request *reqs, int n);
long track_pending(void);

/* One progress call of the MPI that touches no application request:
 * PMPI_Iprobe(ANY_SOURCE, ANY_TAG, MPI_COMM_WORLD). A probe never receives,
 * so it cannot take a message from the application (MPICH does not progress
 * from a probe on MPI_COMM_SELF; a private duplicate of MPI_COMM_WORLD made
 * MPICH's point-to-point slower: docs/mpi.md). */
void progress_poke(void);

/* Keeps the progress task submitted while anything is pending. */
void progress_kick(void);
int progress_setup(void);
void progress_shutdown(void);

/* -------------------------------------------------------- waits */

enum waitop_kind { WAIT_ONE, WAIT_ANY, WAIT_SOME, WAIT_ALL };

/*
 * A blocking completion call (MPI_Wait*, blocking Send/Recv) goes one of
 * three ways (waitop.c):
 * - plain: no background progress, or called from inside an ltask: the
 *   MPI's own call, nothing counted;
 * - native: no other thread is waiting, or one of the requests is of a kind
 *   piano leaves to the MPI (track_foreign): the MPI's own call, exactly as
 *   without piano (cost, errors, which thread runs the error handler), and
 *   the progress task stands back meanwhile (the waiter drives the MPI);
 * - delegated: other threads already wait: the thread registers a wait op
 *   and blocks; the progress task watches its requests without completing
 *   them and wakes it when the MPI has finished them; the thread then makes
 *   the MPI's own completion call, which returns at once. N waiting threads
 *   cost one poller, and every request is completed, and every error raised,
 *   by the application's thread in the call it made.
 */
enum wait_mode { WAIT_PLAIN, WAIT_NATIVE, WAIT_DELEGATED };

/*
 * A delegated wait. Owned by the waiting thread (on its stack); linked in
 * the wait-op list while pending (`linked`, protected by the list's lock);
 * the progress task checks it with PMPI_Request_get_status and signals
 * `cond` when it is ready. After the signal the progress task never touches
 * it again.
 */
struct waitop {
	enum waitop_kind kind;
	int n;
	const MPI_Request *reqs;
	int first_open;        /* WAIT_ALL: requests before it are finished (the
	                        * waiter's until linked, then under the list lock) */
	bool linked;
	piano_cond_t cond;
	struct waitop *next, *prev;
};

/* Decides how a blocking completion call on op's requests goes and, when it
 * is delegated, blocks until the MPI has finished them. The caller then
 * makes the MPI's own call and passes the mode to wait_leave(). */
enum wait_mode wait_enter(struct waitop *op);
void wait_leave(enum wait_mode mode);
/* Delegated mode: blocks until op's requests are finished (wait_enter()
 * does it for op; blocking Send/Recv call it for the request they post). */
void waitop_block(struct waitop *op);
/* Called by the progress task: checks every registered wait op. */
unsigned waitops_serve(void);
bool waitops_empty(void);
/* A thread waits natively in the MPI (which it progresses itself). */
bool waiter_native(void);

/* Bookkeeping after a completion call that succeeded: for each completed
 * index i, the handle it had before the call is marked done. */
void track_completed(const MPI_Request *before, int n, const int *done_idx, int ndone);
/* Bookkeeping after a completion call that returned an error, where the MPI
 * does not say which requests it completed: a non-persistent request whose
 * handle is now MPI_REQUEST_NULL is done; a persistent one is inactive unless
 * its status (when the caller asked for statuses, else NULL) says
 * MPI_ERR_PENDING. */
void track_settle(const MPI_Request *before, const MPI_Request *after, int n,
                  const MPI_Status *statuses);

/* Socket watcher (watch.c): kernel-blocking progress for socket transports. */
int watch_setup(void);
void watch_shutdown(void);

/* ------------------------------------------------------------ misc */

/* preload.c: in a process that did not look like the rank when piano was
 * loaded, removes piano's entry from LD_PRELOAD now that it is the rank
 * (MPI_Init), so that its children do not load piano. */
void pmpi_preload_drop(void);

long eager_detect(const char **source);
/* cvar.c: an integer control variable of the MPI (MPI_T), 0 when read,
 * between cvar_open() and cvar_close() (set-up only). */
void cvar_open(void);
void cvar_close(void);
bool cvar_available(void);
int cvar_read(int index, MPI_Datatype dt, long *out);
int cvar_read_named(const char *name, long *out);
/* A registered setting of either layer (live after piano_init); `source`
 * (PIANO_SOURCE_*) may be NULL. An invalid value aborts the job after the
 * registry named the variable and its accepted values. */
long pmpi_setting(const char *name, int *source);
int pmpi_type_bytes(int count, MPI_Datatype type, long *bytes);

/* --------------------------------------------------------- the gate */

/*
 * gate.c: piano's threads call the MPI in the background (progress_poke)
 * only between a gate_enter() that returned true and gate_leave().
 * Application threads close the gate around what the MPI cannot run beside
 * such a call (on Open MPI: an open MPI file, file.c); gate_close() returns
 * once no thread is inside, `why` ends the one-line notice printed when
 * background progress stays off for long. Armed on Open MPI only.
 */
bool gate_enter(void);
void gate_leave(void);
void gate_close(const char *why);
void gate_open(void);

#endif

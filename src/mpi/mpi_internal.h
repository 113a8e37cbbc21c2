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

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define PMPI_EXPORT __attribute__((visibility("default")))

/* ------------------------------------------------------------- state */

struct pmpi_state {
	int ready;               /* piano set up (after MPI_Init or lazily) */
	int threaded;            /* MPI gave THREAD_MULTIPLE and the engine has threads */
	int provided_app;        /* thread level reported to the application */
	long eager_limit;        /* bytes; sends up to this size are not tracked */
	const char *eager_source;
	piano_ltask_t *progress;
	int stats;
	uint64_t spin_ns;        /* PIANO_SPIN_US: native spin of a lone waiter */
	uint64_t linger_ns;      /* PIANO_MPI_LINGER_US */
	const char *blocking;    /* PIANO_MPI_BLOCKING: auto, timer or block */
	int watching;            /* the socket watcher runs */
	int local_rank, local_size;
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
bool track_contains(MPI_Request req);
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
 * A wait call handed to the engine. Owned by the waiting thread (on its
 * stack); linked in the waitop list while pending; the progress task tests
 * it with the matching PMPI_Test* call and signals `cond` when it is done.
 * After the signal the progress task never touches it again.
 */
struct waitop {
	enum waitop_kind kind;
	int n;
	MPI_Request *reqs;
	MPI_Status *statuses;  /* or MPI_STATUS(ES)_IGNORE */
	int *index;            /* WAIT_ANY: index; WAIT_SOME: outcount */
	int *indices;          /* WAIT_SOME */
	int rc;
	piano_cond_t cond;
	struct waitop *next, *prev;
};

/* Runs op's PMPI_Test* once. Returns 1 when complete. */
int waitop_test(struct waitop *op);
/* Hands op to the engine and waits for it (spin then block). */
int waitop_delegate(struct waitop *op);
/* Called by the progress task: tests every registered wait op. */
unsigned waitops_serve(void);
bool waitops_empty(void);

/* Bookkeeping after a completion call: for each completed index i, the
 * handle it had before the call is marked done. */
void track_completed(const MPI_Request *before, int n, const int *done_idx, int ndone);

/* Socket watcher (watch.c): kernel-blocking progress for socket transports. */
int watch_setup(void);
void watch_shutdown(void);

/* ------------------------------------------------------------ misc */

long eager_detect(const char **source);
/* Validated integer environment variable; aborts the job with a message
 * naming the variable and the accepted range when it is invalid. */
long pmpi_env_long(const char *name, long def, long min, long max, const char *unit);
void pmpi_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
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

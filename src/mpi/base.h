/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MPI layer's shared ground (base.c): its state, its diagnostics, its
 * access to the settings registry, and a datatype's size. Every file of the
 * layer may use it; it calls nothing else of the layer (docs/mpi.md,
 * "Layers").
 *
 * Design (docs/mpi.md): piano tracks the MPI's own requests; it hands the
 * application proxy requests only for operations it makes itself (file
 * transfers, offloaded sends). One progress ltask per process drives
 * the MPI with PMPI_Iprobe (gate_poke), which progresses every pending
 * operation without touching any application request. A request is only
 * ever tested by the engine while an application thread is blocked in a
 * wait call on it and has handed it over (a "wait op", waiters.h); the MPI
 * standard forbids two threads to use one request at once, and this rule
 * keeps the application and the engine from ever doing so.
 */
#ifndef PIANO_MPI_BASE_H
#define PIANO_MPI_BASE_H

#include "hidden.h"
#include <mpi.h>
#include <piano/piano.h>

#include "warn.h"

#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

/* The MPI functions the layer intercepts; everything else stays hidden. */
#define PMPI_EXPORT __attribute__((visibility("default")))

/* The layer's diagnostics: one line each, "piano-mpi (rank R): ..." (warn.h). */
#define pmpi_warn(...) warn_line("piano-mpi", __VA_ARGS__)

struct pmpi_state {
	int ready;             /* piano set up (after MPI_Init or lazily) */
	int threaded;          /* background progress: the engine has threads, and the MPI gave
	                   * THREAD_MULTIPLE or piano serializes the calls (serial) */
	int serial;            /* serialized mode (serial.h): set before piano's threads exist */
	const char *level_why; /* PIANO_MPI_THREAD_LEVEL=auto: why not serialized mode */
	int provided_app;      /* thread level reported to the application */
	long eager_limit;      /* bytes; sends up to this size are not tracked */
	const char *eager_source;
	piano_ltask_t *progress;
	int stats;
	uint64_t linger_ns;  /* PIANO_MPI_LINGER_US */
	unsigned coll_graph; /* PIANO_COLL: collectives run as graphs (pmpi_coll_bit) */
	/* PIANO_COLL=auto agreed by every rank (init.c), and its
	 * PIANO_COLL_AUTO_MIN; with coll_graph, written by MPI_Init_thread
	 * before it returns, read by the application's calls after. */
	int coll_auto;
	long coll_auto_min;
	long coll_segment;    /* PIANO_COLL_SEGMENT */
	const char *blocking; /* PIANO_MPI_BLOCKING: auto, timer or block */
	int watching;         /* the socket watcher runs */
	int file_helper;      /* piano runs non-blocking file transfers (fileio.c) */
	const char *file_why; /* why not, when the user should be told */
	long file_chunk;      /* PIANO_MPI_FILE_CHUNK */
	int local_rank, local_size;
	int node_cpus;      /* CPUs the node's ranks may use (0: unknown) */
	int oversubscribed; /* local_size > node_cpus: no idle threads (init.c) */
	_Atomic int finalizing;
	/* counters */
	_Atomic uint64_t tracked, bypassed, delegated_waits, graph_colls;
	_Atomic uint64_t finished_early; /* tracked requests the MPI finished first (track.c) */
	_Atomic uint64_t graph_reused;       /* graph collectives run on a kept graph (coll_op.c) */
	_Atomic uint64_t graph_window_edges; /* edges PIANO_COLL_WINDOW added (coll_op.c) */
	_Atomic uint64_t graph_redscat;      /* allreduces built as reduce-scatter + allgather */
	_Atomic uint64_t graph_halving;      /* reduce-scatters built by recursive halving */
	_Atomic uint64_t graph_pairwise;     /* reduce-scatters built by pairwise messages */
	_Atomic uint64_t graph_persistent; /* persistent collectives made graphs (coll_persist.c) */
	_Atomic uint64_t graph_bcast_scatter; /* broadcasts built as scatter + allgather */
	_Atomic uint64_t graph_staged_blocks; /* in-place all-to-alls staged block by block */
	_Atomic uint64_t graph_shares;        /* reductions and copies shared (graph_share.c) */
	_Atomic uint64_t graph_pieces_helped; /* their pieces run by idle threads */
};

/* Written by set-up (init.c) under its lock before `ready` is published;
 * the counters and `finalizing` by anyone, atomically. */
extern PIANO_HIDDEN struct pmpi_state pmpi_g;

/* What a completion call must look past the MPI for, in one word (the test
 * calls' plain path, wait.c, reads it alone): the tracking table's entries,
 * live graph collectives and persistent graph handles, sends deferred for
 * offload (from before they are queued until their request is freed, so
 * also every queued one), and 1 for an overlap report. Each is changed
 * where its own count is, under the same lock; the offload's decrements
 * come after the send was posted. */
extern PIANO_HIDDEN _Atomic long pmpi_watch_n;
static inline void pmpi_watch_add(long n)
{
	atomic_fetch_add_explicit(&pmpi_watch_n, n, memory_order_release);
}

/* A registered setting of either layer (live after piano_init, from the
 * environment before); `source` (PIANO_SOURCE_*) may be NULL; a text
 * setting's value goes to `text` (len bytes) when it is not NULL. An invalid
 * value ends the job (pmpi_die) after the registry named the variable and its
 * accepted values: no rank can run with it. */
long pmpi_setting(const char *name, int *source);
long pmpi_setting_text(const char *name, char *text, size_t len, int *source);

/* Ends the process after a set-up error was reported (pmpi_warn): exit(1),
 * not PMPI_Abort. On an abort MPICH's launcher kills the job before its
 * proxies drained the ranks' stderr, and the line that says what is wrong
 * was lost in 5 of 20 runs; after a plain non-zero exit both MPIs' launchers
 * read the rank's output to its end, then end the whole job
 * (mpi.<mpi>.fatal_output). */
_Noreturn void pmpi_die(void);

/*
 * A wrapper in its two forms: with int counts, and as the MPI-4 large-count
 * call (name_c, MPI_Count counts) where the MPI has those. The two are one
 * operation to the MPI (a receive posted by one matches a send of the
 * other), so piano treats them alike. DEFINE(sfx, C, ...) defines the
 * wrapper named MPI_<name><sfx> with counts of type C.
 */
#if MPI_VERSION >= 4
#define LARGE_COUNT(...) __VA_ARGS__
#else
#define LARGE_COUNT(...)
#endif
#define BOTH_FORMS(DEFINE, ...)    \
	DEFINE(, int, __VA_ARGS__) \
	LARGE_COUNT(DEFINE(_c, MPI_Count, __VA_ARGS__))

/*
 * The sizes of the MPI's predefined datatypes, found without a call into
 * the MPI (base.c): every MPI_Isend and MPI_Irecv asks for its message's
 * size (posted(), p2p.c). Open addressing on the handle's bits; a slot
 * with size 0 is empty. Written by set-up before pmpi_ready is released,
 * read-only afterwards; a predefined handle is never freed, so an entry
 * never goes stale. Inline: out of line, the call, its frame and a 64-bit
 * division were 35 of the 140 instructions piano added to an MPI_Irecv.
 */
#define PMPI_TYPE_SLOTS 256 /* a power of two, about 7 times the types cached: one probe, mostly */
#define PMPI_TYPE_PROBES 4
struct pmpi_type_slot {
	MPI_Datatype dt;
	int size;
};
/* The probes of the last slots run on into PMPI_TYPE_PROBES - 1 more
 * instead of wrapping: a probe is then a pointer step, and the inline
 * lookup needs no register the MPI call's arguments hold nor a saved one
 * (with a slot index and a probe count, an eager MPI_Irecv saved four). */
extern PIANO_HIDDEN struct pmpi_type_slot pmpi_type_cache[PMPI_TYPE_SLOTS + PMPI_TYPE_PROBES - 1];

static inline unsigned pmpi_type_slot(MPI_Datatype dt)
{
	/* 32-bit arithmetic: the multiplier is then an immediate, and the
	 * inline lookup needs no register beyond the call's own scratch ones
	 * (Open MPI's handles are addresses 8-aligned objects apart, MPICH's
	 * small integers: both mix within the low 32 bits). */
	uint64_t x = (uint64_t)(uintptr_t)dt;
	uint32_t h = (uint32_t)(x ^ (x >> 17));
	h *= 0x9e3779b1u;
	return (h >> 24) % PMPI_TYPE_SLOTS;
}

/* The size of a cached predefined type, or -1. */
static inline int pmpi_type_cached(MPI_Datatype dt)
{
	const struct pmpi_type_slot *p = &pmpi_type_cache[pmpi_type_slot(dt)];
	for (const struct pmpi_type_slot *end = p + PMPI_TYPE_PROBES; p != end && p->size; p++)
		if (p->dt == dt)
			return p->size;
	return -1;
}

/* pmpi_type_bytes() for a type not cached: asks the MPI. */
int pmpi_type_bytes_slow(MPI_Count count, MPI_Datatype type, long *bytes);

/* count elements of type in bytes (LONG_MAX past it): 0, or -1 when the MPI
 * cannot say. MPI_Count: the large-count calls (_c) pass theirs as it is. */
static inline int pmpi_type_bytes(MPI_Count count, MPI_Datatype type, long *bytes)
{
	int size = pmpi_type_cached(type);
	if (size < 0 || count < 0)
		return pmpi_type_bytes_slow(count, type, bytes);
	long b;
	*bytes = __builtin_mul_overflow((long)count, (long)size, &b) ? LONG_MAX : b;
	return 0;
}
/* Set-up: caches the predefined datatypes' sizes for pmpi_type_bytes(). */
void pmpi_type_cache_setup(void);
/* Whether type is one of the predefined datatypes that set-up cached (not
 * the pair types such as MPI_DOUBLE_INT): a handle that always means the
 * same layout. */
bool pmpi_type_predefined(MPI_Datatype type);
/* Whether op is one of MPI's predefined reduction operations (MPI_SUM ...):
 * a handle that always means the same operation. */
bool pmpi_op_predefined(MPI_Op op);

/* Whether a task of the layer that found no work left stays a little
 * longer (PIANO_MPI_LINGER_US from the first such call, *since holding its
 * time, 0 when not lingering): resubmitting a task wakes the engine's
 * parked threads, which a pattern of short bursts would pay at every burst.
 * Resets *since when the time is up. */
bool pmpi_linger(uint64_t *since);

/* A Fortran string argument of len characters as a C string, leading and
 * trailing blanks dropped as both MPIs do; NULL when out of memory. The
 * caller frees it. */
char *pmpi_fortran_string(const char *f, size_t len);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPI_Init / MPI_Init_thread / MPI_Query_thread / MPI_Finalize, and the lazy
 * set-up used when the library is loaded after MPI_Init.
 */
#include "init.h"
#include "aside.h"
#include "base.h"
#include "coll_algo.h"
#include "coll_op.h"
#include "coll_shadow.h"
#include "graph_share.h"
#include "cvar.h"
#include "eager.h"
#include "fileio.h"
#include "fortran_gate.h"
#include "gate.h"
#include "imports.h"
#include "offload.h"
#include "op_hold.h"
#include "overdue.h"
#include "preload.h"
#include "progress.h"
#include "report.h"
#include "report_out.h"
#include "settings.h"
#include "track.h"
#include "sys.h"
#include "watch.h"
#include "serial.h"
#include "retire.h"
#include "sched_groups.h"
#include "starve.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <link.h>
#include <hwloc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Extra context for a piano_init failure (set by placement()). */
static const char *pmpi_warn_hint = "";

/* What the MPI layer decides for the engine, passed to piano_init_with(). */
struct overrides {
	struct piano_override ov[12];
	int n;
	char bind[256];
};

static void override(struct overrides *o, const char *name, const char *value)
{
	for (int i = 0; i < o->n; i++)
		if (strcmp(o->ov[i].name, name) == 0) {
			o->ov[i].value = value;
			return;
		}
	if (o->n == (int)(sizeof(o->ov) / sizeof(o->ov[0]))) {
		pmpi_warn("internal error: more than %d settings overridden at set-up; exiting",
		          o->n);
		pmpi_die();
	}
	o->ov[o->n++] = (struct piano_override){ name, value };
}

static pthread_mutex_t setup_lock = PTHREAD_MUTEX_INITIALIZER;

/* PIANO_COLL=auto: asked (set-up), and why it is off (PIANO_STATS; NULL once
 * on); written by set-up and MPI_Init_thread, read at MPI_Finalize. */
static bool coll_auto_asked;
static const char *coll_auto_why =
        "piano was set up after MPI_Init, where the ranks could not agree";
_Atomic int pmpi_ready;
_Atomic int pmpi_post_plain;

/* The layer's table, registered before any of its settings is read. */
static int register_settings(void)
{
	int rc = piano_settings_register(PMPI_LAYER, pmpi_settings_table, pmpi_settings_count);
	if (rc)
		pmpi_warn("cannot register the MPI layer's settings: %s", piano_strerror(rc));
	return rc;
}

static const char *level_name(int level)
{
	switch (level) {
	case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
	case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
	case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
	case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
	default: return "unknown";
	}
}

/* A launcher's variable holding a non-negative integer, or -1. */
static long launcher_int(const char *name)
{
	const char *v = getenv(name);
	char *end;
	if (!v || !*v)
		return -1;
	long n = strtol(v, &end, 10);
	return *end || n < 0 ? -1 : n;
}

/*
 * Local rank and size, from the launcher when it says (Open MPI's
 * OMPI_COMM_WORLD_LOCAL_*, hydra's MPI_LOCALRANKID/MPI_LOCALNRANKS), else
 * from MPI_Comm_split_type. The launcher is preferred because creating any
 * communicator at init, even one freed at once, made MPICH 4.0.2's 64 KiB
 * ping-pong 3-5x slower in most runs (docs/performance.md).
 */
static void local_rank(void)
{
	static const char *vars[][2] = { { "OMPI_COMM_WORLD_LOCAL_RANK",
		                           "OMPI_COMM_WORLD_LOCAL_SIZE" },
		                         { "MPI_LOCALRANKID", "MPI_LOCALNRANKS" } };
	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		long r = launcher_int(vars[i][0]), n = launcher_int(vars[i][1]);
		if (r >= 0 && r < n && n <= INT32_MAX) {
			pmpi_g.local_rank = (int)r;
			pmpi_g.local_size = (int)n;
			return;
		}
	}
	MPI_Comm node;
	pmpi_g.local_rank = 0;
	pmpi_g.local_size = 1;
	if (PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node) !=
	    MPI_SUCCESS)
		return;
	PMPI_Comm_rank(node, &pmpi_g.local_rank);
	PMPI_Comm_size(node, &pmpi_g.local_size);
	PMPI_Comm_free(&node);
}

/* PIANO_MPI_BLOCKING: auto (watch sockets when a blocking helper exists),
 * timer (never: the timer thread alone bounds reaction when cores are busy),
 * block (always; an error without helpers). */
static void blocking_setup(void)
{
	static const char *const names[] = { [PMPI_BLOCKING_AUTO] = "auto",
		                             [PMPI_BLOCKING_TIMER] = "timer",
		                             [PMPI_BLOCKING_BLOCK] = "block" };
	long mode = pmpi_setting("PIANO_MPI_BLOCKING", NULL);
	pmpi_g.blocking = names[mode];
	long helpers = pmpi_setting("PIANO_BLOCK_HELPERS", NULL);
	if (mode == PMPI_BLOCKING_BLOCK && (helpers < 1 || !pmpi_g.threaded)) {
		pmpi_warn("PIANO_MPI_BLOCKING=block needs background progress and "
		          "PIANO_BLOCK_HELPERS >= 1 (it is %ld); exiting",
		          helpers);
		pmpi_die();
	}
	if (!pmpi_g.threaded || helpers < 1 || mode == PMPI_BLOCKING_TIMER)
		return;
	int rc = watch_setup();
	if (rc)
		pmpi_warn("cannot start the socket watcher (%s): the timer alone bounds "
		          "reaction when every core is busy",
		          piano_strerror(rc));
	pmpi_g.watching = rc == 0;
}

/*
 * PIANO_MPI_CPU_LIST="A_B_C": local rank i places its engine threads on CPU
 * list element i modulo the count (APSM-2013, section 3.5); each element is
 * an hwloc list ("0", "0-3,8"), the syntax checked by the registry. It sets
 * PIANO_BIND_CPUS for this process.
 */
static void placement(struct overrides *o)
{
	char list[256];
	int src = 0, bind_src = 0;
	pmpi_setting_text("PIANO_MPI_CPU_LIST", list, sizeof(list), &src);
	if (!list[0])
		return;
	pmpi_setting("PIANO_BIND_CPUS", &bind_src);
	if (bind_src != PIANO_SOURCE_DEFAULT) {
		pmpi_warn("PIANO_MPI_CPU_LIST and PIANO_BIND_CPUS are both set: set only one; "
		          "exiting");
		pmpi_die();
	}
	int n = 1;
	for (const char *p = list; *p; p++)
		n += *p == '_';
	const char *start = list;
	for (int i = 0; i < pmpi_g.local_rank % n; i++)
		start = strchr(start, '_') + 1;
	size_t len = strcspn(start, "_");
	memcpy(o->bind, start, len);
	o->bind[len] = '\0';
	pmpi_warn_hint = "; PIANO_BIND_CPUS came from PIANO_MPI_CPU_LIST for this local rank";
	override(o, "PIANO_BIND_CPUS", o->bind); /* piano_init checks the CPUs exist */
}

/* CPUs this process may use at all (the cgroup's cpuset, not the launcher's
 * binding of the rank: a rank bound to one core of a node that has one core
 * per rank is not oversubscribed). 0 if unknown. Only the PUs are loaded:
 * a few ms, against tens for the core's full topology. */
static int node_cpus(void)
{
	hwloc_topology_t topo;
	int n = 0;
	if (hwloc_topology_init(&topo))
		return 0;
	hwloc_topology_set_all_types_filter(topo, HWLOC_TYPE_FILTER_KEEP_NONE);
	hwloc_topology_set_type_filter(topo, HWLOC_OBJ_PU, HWLOC_TYPE_FILTER_KEEP_ALL);
	if (hwloc_topology_load(topo) == 0)
		n = hwloc_bitmap_weight(hwloc_topology_get_allowed_cpuset(topo));
	hwloc_topology_destroy(topo);
	return n > 0 ? n : 0;
}

/*
 * More ranks on this node than CPUs: whenever they run, the ranks' own
 * threads keep every CPU busy (MPICH's blocking calls spin on sched_yield),
 * so an idle thread gets a CPU only in a gap and the next wake-up of a
 * normal thread preempts it, often in the middle of a progress round. It
 * then holds the progress task's queue, sometimes while queued for MPICH's
 * global lock, until the next gap, and the waiters that handed their waits
 * to that queue sleep meanwhile (a trace: idle threads' progress calls of
 * up to 0.6 s, waits for a CPU of up to 1.7 s; MPICH, 4 ranks x 4 threads
 * on 2 cores, 11x slower than the MPI alone, docs/performance.md).
 * Held at SCHED_OTHER (PIANO_IDLE_BOOST=1) it still waited behind the
 * spinning threads. Without idle threads the timer and the waiters poll.
 *
 * Nor does the socket watcher run there: its thread wakes every
 * STANDBY_MS while a native waiter drives the MPI over a TCP connection
 * (watch.c; without one, at each look at the fd table), and each
 * wake-up, like each of its progress rounds, takes a CPU from a rank's
 * runnable thread; rounds that enter the MPI are preempted in turn and
 * wait hundreds of ms for a CPU again (a scheduler trace of MPICH's
 * threads/pt2pt/multisend4 -mode=1, 5 ranks x 5 threads on 2 cores: the
 * watcher's and the timer's threads waited up to 0.46 s runnable). That
 * test took 86-116 s with the watcher against 31-34 s natively and 36-51 s
 * without it; bench_oversub ran as fast or faster without it on both MPIs
 * (docs/performance.md, "More ranks than cores"). The timer bounds the
 * reaction instead, with a 5 ms period: each tick preempts a rank's thread
 * the same way, and with 1 ms ticks multisend4 still took 31-51 s, 21 s
 * with 5 ms, while bench_oversub kept most of its gain over the MPI alone
 * (MPICH 1,030 iterations/s against 1,228 with 1 ms and 767 natively;
 * Open MPI 12,500 against 13,000 and 3,100). Explicit PIANO_IDLE_LEVEL,
 * PIANO_MPI_BLOCKING and PIANO_TIMER_PERIOD_US are left alone.
 */
static void oversubscription(struct overrides *o)
{
	int src = 0;
	pmpi_g.node_cpus = node_cpus();
	pmpi_g.oversubscribed = pmpi_g.node_cpus > 0 && pmpi_g.local_size > pmpi_g.node_cpus;
	if (!pmpi_g.oversubscribed)
		return;
	pmpi_setting("PIANO_IDLE_LEVEL", &src);
	if (src == PIANO_SOURCE_DEFAULT)
		override(o, "PIANO_IDLE_LEVEL", "none");
	pmpi_setting("PIANO_MPI_BLOCKING", &src);
	if (src == PIANO_SOURCE_DEFAULT)
		override(o, "PIANO_MPI_BLOCKING", "timer");
	pmpi_setting("PIANO_TIMER_PERIOD_US", &src);
	if (src == PIANO_SOURCE_DEFAULT)
		override(o, "PIANO_TIMER_PERIOD_US", "5000");
}

/*
 * The timer ticks on demand: only while a tracked request, a delegated wait
 * or a graph is in flight (track.c, waiters.c, graph_list.c hold it), not
 * while the progress task merely lingers between bursts. On a node where
 * every core computes, each tick preempts a rank: ticking whenever the task
 * was queued cost LAMMPS's peptide 5-8 % (docs/mpi.md, "Do no harm"). An
 * explicit PIANO_TIMER_MODE is left alone, and so is an oversubscribed
 * node (no idle threads: the timer is the engine's only thread there; a
 * run of mpi.openmpi.oversub_idle hung once in demand mode under load, not
 * understood yet, so that case keeps the timer ticking for queued tasks).
 */
static void timer_mode(struct overrides *o)
{
	int src = 0;
	pmpi_setting("PIANO_TIMER_MODE", &src);
	if (src == PIANO_SOURCE_DEFAULT && !pmpi_g.oversubscribed)
		override(o, "PIANO_TIMER_MODE", "demand");
}

/*
 * The timer backs off (PIANO_TIMER_MAX_US) while its ticks find nothing to
 * do: an operation held in flight by a late peer cost a memory-bound
 * kernel 3-5 % at one tick per millisecond on every core (docs/performance.md,
 * "A memory-bound kernel"). Two things keep it from delaying transfers:
 * a tick whose progress call moved data counts as work (progress.c), and
 * every newly tracked request or started graph renews the period
 * (piano_timer_renew), so the first tick of an operation is never late
 * because earlier ones waited. Left alone when set, and on an
 * oversubscribed node (its 5 ms period is above the limit: no back-off).
 */
static void timer_back_off(struct overrides *o)
{
	int src = 0;
	pmpi_setting("PIANO_TIMER_MAX_US", &src);
	if (src == PIANO_SOURCE_DEFAULT && !pmpi_g.oversubscribed)
		override(o, "PIANO_TIMER_MAX_US", "4000");
}

/*
 * The back-off still left a kernel 1.2-2 % slower while a peer was late
 * (bench_interference): on a virtual machine an empty tick beside a
 * computing rank takes 27-100 µs of the timer's CPU, plus what it costs
 * the rank in caches, 4 ms apart and in the 8 rounds at the period that
 * come before the back-off. PIANO_TIMER_BUDGET bounds those
 * rounds by what they cost, measured (timer.c): 0.2 % of a core, which on
 * bare metal, where a tick costs a few µs, does not bind. A tick costs the
 * computation it preempts more than the timer's CPU time (its caches): at
 * 0.5 % a dgemm beside a late receive was still 1.3-1.8 % slower, at 0.2 %
 * 0.5 %. Same conditions as the back-off, and only where every rank of the
 * job shares the node. Across nodes the ticks drive transfers whose rounds
 * look empty: a progress call that writes the next piece of a message over
 * TCP (MPICH's UCX moves 32 KiB a call) lasts a few µs and ends no
 * request, so the budget puts most ticks off while the transfer waits for
 * them. Two namespaces joined at 1 Gbit/s, one rank each (bench_nbc, MPICH's
 * own 1 MiB MPI_Ibcast, OSU overlap): 14-22 % with the budget against
 * 75-76 % without it (docs/performance.md, "Across two hosts"); where a
 * tick costs bare metal's few µs the budget would not bind there anyway.
 */
static void timer_budget(struct overrides *o)
{
	int src = 0, world = 0;
	pmpi_setting("PIANO_TIMER_BUDGET", &src);
	bool one_node = PMPI_Comm_size(MPI_COMM_WORLD, &world) == MPI_SUCCESS &&
	                world <= pmpi_g.local_size;
	if (src == PIANO_SOURCE_DEFAULT && !pmpi_g.oversubscribed && one_node)
		override(o, "PIANO_TIMER_BUDGET", "2");
}

/*
 * PIANO_MPI_FILE=piano: the file transfer task (fileio.c) needs a blocking
 * helper of its own beside the socket watcher's. Left unset,
 * PIANO_BLOCK_HELPERS gets one more; set by the user, it is kept, and the
 * transfers run natively if it leaves none to spare (file_helper_check).
 * A helper without a task sleeps and costs nothing.
 */
static void file_helpers(struct overrides *o)
{
	static char more[24];
	int src = 0;
	long helpers = pmpi_setting("PIANO_BLOCK_HELPERS", &src);
	if (pmpi_setting("PIANO_MPI_FILE", NULL) != PMPI_FILE_PIANO ||
	    src != PIANO_SOURCE_DEFAULT || pmpi_g.serial)
		return;
	snprintf(more, sizeof(more), "%ld", helpers + 1);
	override(o, "PIANO_BLOCK_HELPERS", more);
}

static void file_helper_check(void)
{
	pmpi_g.file_chunk = pmpi_setting("PIANO_MPI_FILE_CHUNK", NULL);
	if (pmpi_setting("PIANO_MPI_FILE", NULL) != PMPI_FILE_PIANO || !pmpi_g.threaded)
		return; /* chosen, or announced at set-up (explicit-polling mode) */
	if (pmpi_g.serial) {
		/* The helper's file calls would run beside the application's
		 * MPI calls, which only the MPI's MPI_THREAD_MULTIPLE allows.
		 * The program's imports showed no such call at MPI_Init
		 * (serial_wanted): a library opened later makes them. */
		pmpi_g.file_why =
		        "piano serializes this process's MPI calls (serialized mode: the "
		        "application asked for less than MPI_THREAD_MULTIPLE and showed no "
		        "non-blocking file call at MPI_Init); "
		        "PIANO_MPI_THREAD_LEVEL=multiple keeps piano's transfers";
		return;
	}
	int src = 0;
	long helpers = pmpi_setting("PIANO_BLOCK_HELPERS", &src);
	if (helpers - pmpi_g.watching >= 1) {
		pmpi_g.file_helper = 1;
		return;
	}
	pmpi_g.file_why = pmpi_g.watching ? "PIANO_BLOCK_HELPERS leaves no blocking helper beside "
	                                    "the socket watcher's"
	                                  : "PIANO_BLOCK_HELPERS=0";
}

/* Called with setup_lock held, MPI initialised, thread level `real`. */
/* PIANO_MPI_RAISE_CALLS: 0, 1, or auto (raise only where the process is
 * not a scheduling group of its own: sched_groups.h). Set once in setup(),
 * read by print_stats() at finalize. */
enum { RAISE_OFF, RAISE_ON, RAISE_AUTO };
static long raise_setting;
static char raise_why[160] = "not probed";
static int nidle_started;

static bool raise_decide(void)
{
	raise_setting = pmpi_setting("PIANO_MPI_RAISE_CALLS", NULL);
	if (raise_setting != RAISE_AUTO)
		return raise_setting == RAISE_ON;
	return sched_groups_probe("", raise_why, sizeof raise_why) == 0;
}

static const char *raise_setting_name(void)
{
	return raise_setting == RAISE_ON ? "1" : raise_setting == RAISE_OFF ? "0" : "auto";
}

static void setup(int real)
{
	int rank = 0;
	char tag[32];
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	snprintf(tag, sizeof(tag), "rank %d", rank);
	warn_set_tag(tag); /* before piano_init starts any thread */
	if (register_settings())
		pmpi_die();
	struct overrides o = { .n = 0 };
	/* The MPI_T session before any other allocation of the set-up, and
	 * kept until MPI_Finalize: MPI_T_finalize frees what MPI_T_init
	 * allocated between its own long-lived blocks, and those holes then
	 * take the application's next small allocations (MPICH: 160 free
	 * chunks after MPI_Init instead of 4). The application's MPI_Alloc_mem
	 * blocks then landed on scattered pages, which Open MPI's osc/rdma
	 * cannot merge: MPICH's test rma/linked_list_bench_lock_shr on Open MPI
	 * ran out of its 64 attachable regions (docs/mpi.md, "The
	 * application's heap"). The first read opens it: on MPICH the next
	 * line; on Open MPI none when its registry gives the eager limits
	 * (eager.c), which saves MPI_T_init_thread's 0.21 s. */
	cvar_open(real);
#if defined(OPEN_MPI)
	bool async_on = false; /* MPICH's variable */
#else
	long async = 0;
	bool async_on = cvar_read_named("MPIR_CVAR_ASYNC_PROGRESS", &async) == 0 && async;
#endif
	pmpi_g.eager_limit = eager_detect(&pmpi_g.eager_source);
	pmpi_type_cache_setup();
	local_rank();
	placement(&o);
	oversubscription(&o);
	timer_mode(&o);
	timer_back_off(&o);
	timer_budget(&o);
	file_helpers(&o);
	/* Background calls are allowed by the MPI, or serialized by piano. */
	const bool concurrent = real == MPI_THREAD_MULTIPLE || pmpi_g.serial;
	if (!concurrent) {
		pmpi_warn("the MPI library provides %s, not MPI_THREAD_MULTIPLE: piano runs in "
		          "explicit-polling mode, without background progress",
		          level_name(real));
		override(&o, "PIANO_PROGRESSION", "0");
	} else if (async_on) {
		/* Two progress engines on the same cores only compete: MPICH's
		 * pt2pt/sendrecv2 with both ran 10x slower than with its own.
		 * The user chose MPICH's thread, so this is no degradation to
		 * announce on every rank (a line there fails MPICH's own tests,
		 * which compare the output): only with PIANO_STATS=1. */
		if (pmpi_setting("PIANO_STATS", NULL))
			pmpi_warn("MPICH's progress thread is on (MPIR_CVAR_ASYNC_PROGRESS): "
			          "piano runs in explicit-polling mode, without threads");
		override(&o, "PIANO_PROGRESSION", "0");
	}
	int rc = piano_init_with(o.ov, o.n);
	if (rc == PIANO_ESYS && concurrent) {
		/* Threads could not be created (process limit, memory): the
		 * application still runs correctly with explicit polling. */
		pmpi_warn("cannot start piano's threads (%s, reported above): piano runs in "
		          "explicit-polling mode, without background progress",
		          piano_strerror(rc));
		override(&o, "PIANO_PROGRESSION", "0");
		rc = piano_init_with(o.ov, o.n);
	}
	if (rc) {
		pmpi_warn("piano_init failed: %s; exiting%s%s", piano_strerror(rc),
		          rc == PIANO_ECONFIG ? " (fix the setting reported above)" : "",
		          pmpi_warn_hint);
		pmpi_die();
	}
	int nidle = 0, ntimer = 0;
	piano_thread_count(PIANO_POINT_IDLE, &nidle);
	piano_thread_count(PIANO_POINT_TIMER, &ntimer);
	pmpi_g.threaded = concurrent && (nidle + ntimer) > 0;
	nidle_started = nidle;
	pmpi_g.stats = pmpi_setting("PIANO_STATS", NULL) != 0;
	starve_setup(raise_decide(), pmpi_g.local_rank == 0);
	if (pmpi_g.threaded)
		retire_setup(starve_raising(), pmpi_g.local_rank == 0);
	pmpi_g.linger_ns = (uint64_t)pmpi_setting("PIANO_MPI_LINGER_US", NULL) * 1000u;
	char coll[256];
	pmpi_setting_text("PIANO_COLL", coll, sizeof(coll), NULL);
	char why[128];
	if (pmpi_coll_parse(coll, &pmpi_g.coll_graph, why, sizeof(why))) /* checked already */
		pmpi_g.coll_graph = 0;
	if (pmpi_g.coll_graph == PMPI_COLL_AUTO) {
		/* Off until every rank agrees (coll_auto_agree()). */
		coll_auto_asked = true;
		pmpi_g.coll_graph = 0;
		pmpi_g.coll_auto_min = pmpi_setting("PIANO_COLL_AUTO_MIN", NULL);
	}
	/* Never in serialized mode: PIANO_COLL other than native or auto keeps
	 * the MPI at MPI_THREAD_MULTIPLE (serial_wanted), and auto agrees to
	 * graphs only where it runs there (coll_auto_agree()). */
	{
		int seg_src = 0, node_src = 0, scatter_src = 0, wsize = 0;
		pmpi_g.coll_segment = pmpi_setting("PIANO_COLL_SEGMENT", &seg_src);
		long node_segment = pmpi_setting("PIANO_COLL_SEGMENT_NODE", &node_src);
		/* A segment the user chose applies everywhere unless the node's
		 * is chosen too. */
		if (seg_src != PIANO_SOURCE_DEFAULT && node_src == PIANO_SOURCE_DEFAULT)
			node_segment = 0;
		PMPI_Comm_size(MPI_COMM_WORLD, &wsize);
		struct coll_tuning t = {
			.redscat_min = pmpi_setting("PIANO_COLL_REDSCAT_MIN", NULL),
			.node_segment = node_segment,
			.world_one_node = pmpi_g.local_size == wsize,
			.cache_max = (int)pmpi_setting("PIANO_COLL_CACHE", NULL),
			.window = (int)pmpi_setting("PIANO_COLL_WINDOW", NULL),
			.bruck_max = pmpi_setting("PIANO_COLL_BRUCK_MAX", NULL),
			.bruck_min_ranks = (int)pmpi_setting("PIANO_COLL_BRUCK_MIN_RANKS", NULL),
			.bcast_scatter_min = pmpi_setting("PIANO_COLL_BCAST_SCATTER_MIN",
			                                  &scatter_src),
			.bcast_scatter_min_ranks = (int)
			        pmpi_setting("PIANO_COLL_BCAST_SCATTER_MIN_RANKS", NULL),
		};
		/* The threshold applies on one node too once the user chose it. */
		t.bcast_scatter_node = scatter_src != PIANO_SOURCE_DEFAULT;
		coll_tune(&t);
		const struct graph_share_hooks hooks = { starve_raise, starve_lower, starve_begin,
			                                 starve_end, starve_relieve };
		graph_share_setup(pmpi_setting("PIANO_COLL_SHARE", NULL), &hooks);
	}
	rc = progress_setup();
	gate_serial_setup(); /* after progress_setup()'s probes */
	if (rc) {
		pmpi_warn("cannot create the progress task: %s; exiting", piano_strerror(rc));
		pmpi_die();
	}
	rc = offload_setup();
	if (rc) {
		pmpi_warn("cannot create the offload task: %s; exiting", piano_strerror(rc));
		pmpi_die();
	}
	blocking_setup();
	file_helper_check();
	report_open(); /* without a report when it cannot, as it said */
	pmpi_g.ready = 1;
	atomic_store_explicit(&pmpi_ready, 1, memory_order_release);
	int plain = report_on || pmpi_g.stats || offload_enabled ? PMPI_POST_FULL
	            : pmpi_g.threaded                            ? PMPI_POST_PLAIN_TRACKING
	                                                         : PMPI_POST_PLAIN_ALL;
	atomic_store_explicit(&pmpi_post_plain, plain, memory_order_release);
}

/*
 * PIANO_COLL=auto (settings.h): PMPI_COLL_AUTO_SET runs as graphs only if
 * every rank of MPI_COMM_WORLD can run them and may call them: background
 * progress at MPI_THREAD_MULTIPLE (not serialized mode, whose level auto
 * does not raise) and a program that imports one of them (imports.h), so
 * that a program that never calls them pays nothing (not even
 * MPI_COMM_WORLD's shadow, coll_shadow.h). Ranks that decided alone, say
 * the executables of one job at different thread levels, would run a graph
 * against the MPI's own schedule in the same collective. One allreduce of
 * an int in MPI_Init, on every rank whose PIANO_COLL is auto (the setting
 * must be the same on every rank); in serialized mode inside the gate, as
 * the application's own calls.
 */
/* How long a rank waits for the others in the agreement before it says
 * why it may wait forever. Launchers start the ranks of one job within
 * seconds; a wait this long is an MPMD job with piano on some ranks only
 * or a rank that died. */
#define AGREE_WARN_NS (10ull * 1000000000ull)

static void agree_overdue(void *arg, uint64_t waited_ns)
{
	pmpi_warn("rank %d has waited %llu s in MPI_Init for every rank's piano "
	          "(PIANO_COLL=auto agrees once across MPI_COMM_WORLD) and waits on: "
	          "if some ranks of this job run without piano-run (MPMD), set "
	          "PIANO_COLL=native on the ranks that run it (docs/mpi.md, \"Known "
	          "limits\")",
	          *(const int *)arg, (unsigned long long)(waited_ns / 1000000000ull));
}

/*
 * *all = the minimum of every rank's `mine` over MPI_COMM_WORLD: one
 * blocking MPI_Allreduce, watched (overdue.h) so that a rank whose peers
 * never join says so instead of hanging in silence. Not MPI_Iallreduce:
 * on Open MPI one non-blocking collective on MPI_COMM_WORLD keeps libnbc's
 * progress callback in every progress call of the job (overdue.c), 5 % of
 * a blocking ring's time (docs/performance.md, "Small messages"). A rank
 * without piano (an MPMD job) may instead match it with a blocking
 * collective of its own: the second element, INT_MAX on every rank of
 * piano's, comes back lower then, and the rank says so and exits rather
 * than run on with another rank's data.
 */
static int agree_min(int mine, int *all)
{
	int rank = 0;
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int in[2] = { mine, INT_MAX }, out[2] = { 0, 0 };
	struct overdue watch;
	overdue_arm(&watch, AGREE_WARN_NS, agree_overdue, &rank);
	int rc = PMPI_Allreduce(in, out, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
	overdue_disarm(&watch);
	if (rc != MPI_SUCCESS)
		return rc;
	if (out[1] != INT_MAX) {
		pmpi_warn("PIANO_COLL=auto's agreement in MPI_Init met another "
		          "collective: some ranks of this job run without piano-run (MPMD), set "
		          "PIANO_COLL=native on the ranks that run it (docs/mpi.md, \"Known "
		          "limits\"); exiting");
		pmpi_die();
	}
	*all = out[0];
	return MPI_SUCCESS;
}

static void coll_auto_agree(void)
{
	if (!coll_auto_asked)
		return;
	int mine = 0, all = 0;
	if (!pmpi_g.threaded)
		coll_auto_why = "this rank runs without background progress";
	else if (pmpi_g.serial)
		coll_auto_why = "this rank runs in serialized mode (docs/mpi.md)";
	else if (!(imports_scan() & IMPORTS_REDUCE_SCATTER))
		coll_auto_why = "the program imports no MPI_Ireduce_scatter(_block)";
	else
		mine = 1;
	if (pmpi_g.serial)
		gate_app_close();
	int rc = agree_min(mine, &all);
	if (pmpi_g.serial)
		gate_app_open();
	if (rc != MPI_SUCCESS) {
		pmpi_warn("PIANO_COLL=auto: the ranks' agreement failed (MPI error %d): the MPI's "
		          "collectives run",
		          rc);
		coll_auto_why = "the ranks' agreement failed";
		return;
	}
	if (!all) {
		if (mine)
			coll_auto_why = "another rank cannot run them or its program imports none";
		return;
	}
	pmpi_g.coll_auto = 1;
	pmpi_g.coll_graph = PMPI_COLL_AUTO_SET;
	coll_auto_why = NULL;
}

/* setup() through placed(): `arg` points to the thread level. */
static void setup_call(void *arg) { setup(*(const int *)arg); }

/*
 * fn(arg), piano's work with the MPI in the application's call, where its
 * memory stays out of the application's heap (aside.c), when the MPI allows
 * calls from another thread: at MPI_THREAD_SERIALIZED and above (the caller
 * waits meanwhile), or in serialized mode, where piano's threads call it
 * anyway. Below that, in the calling thread.
 */
static void placed(void (*fn)(void *), void *arg, int real)
{
	if (real >= MPI_THREAD_SERIALIZED || pmpi_g.serial)
		pmpi_aside(fn, arg);
	else
		fn(arg);
}

static void setup_placed(int real) { placed(setup_call, &real, real); }

/*
 * MPI_Init_thread's work with the MPI after set-up, through placed() (the
 * MPI allocates for its first collective and for a communicator: test
 * heap_offset): PIANO_COLL=auto's agreement, then MPI_COMM_WORLD's shadow
 * where graph collectives run (coll_shadow.h), here where every rank is in
 * the same call.
 */
static void init_collectives(void *arg)
{
	(void)arg;
	coll_auto_agree();
	int rc;
	if (pmpi_g.coll_graph && pmpi_g.threaded && (rc = coll_shadow_make(MPI_COMM_WORLD, false)))
		pmpi_warn("cannot duplicate MPI_COMM_WORLD for graph collectives (MPI error %d): "
		          "its collectives stay the MPI's",
		          rc);
}

void pmpi_ensure_slow(void)
{
	pthread_mutex_lock(&setup_lock);
	int init = 0, fin = 0;
	PMPI_Initialized(&init);
	PMPI_Finalized(&fin);
	if (!pmpi_g.ready && init && !fin) {
		int real = MPI_THREAD_SINGLE;
		PMPI_Query_thread(&real);
		pmpi_g.provided_app = real;
		setup_placed(real);
	}
	pthread_mutex_unlock(&setup_lock);
}

/*
 * PIANO_MPI_THREAD_LEVEL: the level piano asks the MPI for (default
 * multiple, which background progress needs). A lower level keeps piano
 * loaded in explicit-polling mode, e.g. for an MPI whose MULTIPLE mode is
 * slow or broken; `auto` chooses serialized mode where it can.
 */
static long piano_thread_choice(void)
{
	long choice = 0;
	/* The registry said what is wrong. */
	if (register_settings() ||
	    piano_setting_read("PIANO_MPI_THREAD_LEVEL", &choice, NULL, 0, NULL)) {
		pmpi_warn("exiting");
		pmpi_die();
	}
	return choice;
}

/*
 * PIANO_MPI_THREAD_LEVEL=auto: serialized mode when the application asks
 * for less than MPI_THREAD_MULTIPLE and nothing it uses needs piano's
 * threads to call the MPI while an application thread is inside it: graph
 * collectives (a graph needs its steps while the application blocks in the
 * MPI, a tree's inner rank forwarding while it waits in MPI_Recv), offload
 * (the engine posts sends) and piano's file transfers (the helper's calls
 * run beside the application's), and piano's graph API, for the same
 * reason as graph collectives. Those are chosen by setting, except the file
 * transfers, which are on by default, and the graph API: for them, what the
 * program imports. Otherwise the MPI runs at MPI_THREAD_MULTIPLE and `why` (for
 * PIANO_STATS) says what decided it.
 */
static bool serial_wanted(int required, const char **why)
{
	char coll[256] = "";
	int file_src = 0;
	unsigned imported = 0;
	pmpi_setting_text("PIANO_COLL", coll, sizeof(coll), NULL);
	bool file_piano = pmpi_setting("PIANO_MPI_FILE", &file_src) == PMPI_FILE_PIANO;
	if (required >= MPI_THREAD_MULTIPLE)
		*why = "the application asked for it";
	else if (!fortran_gate_covers(why))
		return false; /* *why names the Fortran way past the gate */
	else if (strcmp(coll, "native") && strcmp(coll, "auto"))
		*why = "PIANO_COLL asks for graph collectives";
	else if (pmpi_setting("PIANO_OFFLOAD", NULL))
		*why = "PIANO_OFFLOAD is on";
	else if (file_piano && file_src != PIANO_SOURCE_DEFAULT)
		*why = "PIANO_MPI_FILE=piano was set";
	else if ((imported = imports_scan()) & IMPORTS_GRAPH_API)
		*why = "the program calls piano's graph API";
	else if (file_piano && (imported & IMPORTS_FILE_NONBLOCKING))
		*why = "the program calls non-blocking file functions";
	else
		return true;
	return false;
}

/* Serialized mode's level: the cheapest at which the MPI allows calls
 * from several threads one at a time. Open MPI turns its thread safety
 * (and its cost) on for every level above single, and serializes nothing
 * itself at single: piano's gate orders every call, with seq_cst
 * operations between them. */
#if defined(OPEN_MPI)
#define SERIAL_LEVEL MPI_THREAD_SINGLE
#else
#define SERIAL_LEVEL MPI_THREAD_SERIALIZED
#endif

/* What MPI_Init_thread asks the MPI for: PIANO_MPI_THREAD_LEVEL and, for
 * `auto`, whether serialized mode applies to a request of `required`. */
struct level_choice {
	int required;
	long choice;
	bool serial;
};

static void level_choose(void *arg)
{
	struct level_choice *lc = arg;
	lc->choice = piano_thread_choice();
	lc->serial = lc->choice == PMPI_LEVEL_AUTO &&
	             serial_wanted(lc->required, &pmpi_g.level_why);
}

PMPI_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	PMPI_APP_SCOPE();
	static const int levels[] = { [PMPI_LEVEL_SINGLE] = MPI_THREAD_SINGLE,
		                      [PMPI_LEVEL_FUNNELED] = MPI_THREAD_FUNNELED,
		                      [PMPI_LEVEL_SERIALIZED] = MPI_THREAD_SERIALIZED,
		                      [PMPI_LEVEL_MULTIPLE] = MPI_THREAD_MULTIPLE,
		                      [PMPI_LEVEL_AUTO] = MPI_THREAD_MULTIPLE };
	/* Aside (aside.c): the settings registry is the first memory piano
	 * keeps, and the MPI allocates next. */
	struct level_choice lc = { .required = required };
	pmpi_aside(level_choose, &lc);
	long choice = lc.choice;
	bool serial = lc.serial;
	int want = levels[choice], real = MPI_THREAD_SINGLE;
	/* Before PMPI_Init_thread: the MPI has no thread yet that could read the
	 * environment while it changes (an application that runs threads of its
	 * own before MPI_Init must not read it from them meanwhile). */
	pmpi_preload_drop();
	int rc = PMPI_Init_thread(argc, argv,
	                          serial            ? SERIAL_LEVEL
	                          : required > want ? required
	                                            : want,
	                          &real);
	if (rc != MPI_SUCCESS)
		return rc;
	/* The application gets the level it asked for, as far as MPI gives it;
	 * in serialized mode piano gives it (below MPI_THREAD_MULTIPLE). */
	pmpi_g.provided_app = serial || required < real ? required : real;
	if (provided)
		*provided = pmpi_g.provided_app;
	pthread_mutex_lock(&setup_lock);
	/* Before set-up starts piano's threads (serial.h), when the MPI gave
	 * what serialized mode needs. */
	pmpi_g.serial = serial && real >= SERIAL_LEVEL;
	setup_placed(real);
	pthread_mutex_unlock(&setup_lock);
	placed(init_collectives, NULL, real);
	return MPI_SUCCESS;
}

PMPI_EXPORT int MPI_Init(int *argc, char ***argv)
{
	PMPI_APP_SCOPE();
	int provided;
	return MPI_Init_thread(argc, argv, MPI_THREAD_SINGLE, &provided);
}

PMPI_EXPORT int MPI_Query_thread(int *provided)
{
	PMPI_APP_SCOPE();
	pmpi_ensure();
	if (!pmpi_g.ready)
		return PMPI_Query_thread(provided);
	*provided = pmpi_g.provided_app;
	return MPI_SUCCESS;
}

/* PIANO_STATS: the CPU time of the process's threads, piano's by name and
 * the application's summed (/proc/self/task/TID/schedstat: ns on CPU,
 * ns runnable but waiting, times scheduled): what the engine took from
 * the computation. */
static void print_thread_cpu(int rank)
{
	DIR *d = opendir("/proc/self/task");
	if (!d)
		return;
	char line[512];
	int at = snprintf(line, sizeof(line),
	                  "# piano-mpi rank %d: threads' CPU ms (waiting ms, "
	                  "slices):",
	                  rank);
	unsigned long long app_run = 0, app_wait = 0, app_slices = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char path[64], comm[32] = "";
		unsigned long long run = 0, wait = 0, slices = 0;
		snprintf(path, sizeof(path), "/proc/self/task/%.16s/comm", e->d_name);
		FILE *f = fopen(path, "re");
		if (f) {
			if (!fgets(comm, sizeof(comm), f))
				comm[0] = '\0';
			fclose(f);
		}
		comm[strcspn(comm, "\n")] = '\0';
		snprintf(path, sizeof(path), "/proc/self/task/%.16s/schedstat", e->d_name);
		f = fopen(path, "re");
		if (!f)
			continue;
		int n = fscanf(f, "%llu %llu %llu", &run, &wait, &slices);
		fclose(f);
		if (n != 3)
			continue;
		if (strncmp(comm, "piano-", 6) != 0) {
			app_run += run;
			app_wait += wait;
			app_slices += slices;
			continue;
		}
		if (at > 0 && (size_t)at < sizeof(line))
			at += snprintf(line + at, sizeof(line) - (size_t)at,
			               " %s %.1f (%.1f, %llu)", comm, run / 1e6, wait / 1e6,
			               slices);
	}
	closedir(d);
	fprintf(stderr, "%s; application %.1f (%.1f, %llu)\n", line, app_run / 1e6, app_wait / 1e6,
	        app_slices);
}

static void print_stats(void)
{
	int rank = 0;
	PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
	fprintf(stderr,
	        "# piano-mpi rank %d (local %d/%d): tracked %llu, bypassed %llu, "
	        "delegated waits %llu, graph collectives %llu, reused %llu, window edges %llu, "
	        "reduce-scatter allreduces %llu, halving reduce-scatters %llu, "
	        "pairwise reduce-scatters %llu, persistent graphs %llu, "
	        "scatter-allgather broadcasts %llu, in-place exchanges staged by block %llu, "
	        "shared reductions %llu (pieces by idle threads %llu), still pending %ld, "
	        "finished before their completion call %llu, "
	        "eager limit %ld "
	        "B "
	        "(%s), background "
	        "progress %s%s%s%s, "
	        "socket watcher %s (PIANO_MPI_BLOCKING=%s), %s (%d local ranks, %d CPUs)\n",
	        rank, pmpi_g.local_rank, pmpi_g.local_size,
	        (unsigned long long)atomic_load(&pmpi_g.tracked),
	        (unsigned long long)atomic_load(&pmpi_g.bypassed),
	        (unsigned long long)atomic_load(&pmpi_g.delegated_waits),
	        (unsigned long long)atomic_load(&pmpi_g.graph_colls),
	        (unsigned long long)atomic_load(&pmpi_g.graph_reused),
	        (unsigned long long)atomic_load(&pmpi_g.graph_window_edges),
	        (unsigned long long)atomic_load(&pmpi_g.graph_redscat),
	        (unsigned long long)atomic_load(&pmpi_g.graph_halving),
	        (unsigned long long)atomic_load(&pmpi_g.graph_pairwise),
	        (unsigned long long)atomic_load(&pmpi_g.graph_persistent),
	        (unsigned long long)atomic_load(&pmpi_g.graph_bcast_scatter),
	        (unsigned long long)atomic_load(&pmpi_g.graph_staged_blocks),
	        (unsigned long long)atomic_load(&pmpi_g.graph_shares),
	        (unsigned long long)atomic_load(&pmpi_g.graph_pieces_helped), track_active(),
	        (unsigned long long)atomic_load(&pmpi_g.finished_early),
	        pmpi_g.eager_limit, pmpi_g.eager_source,
	        !pmpi_g.threaded ? "off"
	        : pmpi_g.serial  ? "on (serialized mode)"
	                         : "on",
	        pmpi_g.threaded && pmpi_g.level_why ? " (not serialized: " : "",
	        pmpi_g.threaded && pmpi_g.level_why ? pmpi_g.level_why : "",
	        pmpi_g.threaded && pmpi_g.level_why ? ")" : "", pmpi_g.watching ? "on" : "off",
	        pmpi_g.blocking ? pmpi_g.blocking : "-",
	        pmpi_g.oversubscribed ? "oversubscribed" : "not oversubscribed", pmpi_g.local_size,
	        pmpi_g.node_cpus);
	if (coll_auto_asked && coll_auto_why)
		fprintf(stderr,
		        "# piano-mpi rank %d: PIANO_COLL=auto: the MPI's collectives (%s)\n", rank,
		        coll_auto_why);
	else if (coll_auto_asked)
		fprintf(stderr,
		        "# piano-mpi rank %d: PIANO_COLL=auto: graph reduce-scatters of "
		        "commutative operations on communicators within MPI_COMM_WORLD from "
		        "%ld B\n",
		        rank, pmpi_g.coll_auto_min);
	if (pmpi_g.serial) {
		struct gate_stats gs;
		gate_stats(&gs);
		fprintf(stderr,
		        "# piano-mpi rank %d: serialized mode: gate turned on %llu times, %llu "
		        "application calls through it, %llu of them fenced\n",
		        rank, gs.activations, gs.closed_calls, gs.fenced_calls);
	}
	print_thread_cpu(rank);
	if (pmpi_g.watching) {
		struct watch_stats ws;
		watch_stats(&ws);
		fprintf(stderr,
		        "# piano-mpi rank %d: socket watcher: woken %llu times by sockets, %llu "
		        "follow-ups, %llu rounds, %llu held off, arrivals paused %llu times, "
		        "rested "
		        "%llu times, %llu fd-table scans, %llu blocks without the MPI's "
		        "connections\n",
		        rank, ws.woken, ws.follow_ups, ws.rounds, ws.held_off, ws.holds, ws.rests,
		        ws.scans, ws.unconnected);
	}
	bool refused = false;
	unsigned long long raised = starve_raised(&refused);
	if (raised || refused)
		fprintf(stderr,
		        "# piano-mpi rank %d: idle threads raised to SCHED_OTHER for %llu rounds "
		        "of MPI calls%s\n",
		        rank, raised, refused ? " (refused from then on: not permitted)" : "");
	if (nidle_started)
		fprintf(stderr,
		        "# piano-mpi rank %d: idle threads' MPI calls %s "
		        "(PIANO_MPI_RAISE_CALLS=%s; scheduling groups: %s)\n",
		        rank, starve_raising() ? "raised to SCHED_OTHER" : "at SCHED_IDLE",
		        raise_setting_name(), raise_why);
	if (retire_done())
		fprintf(stderr,
		        "# piano-mpi rank %d: idle threads retired (the MPI's traffic goes over "
		        "TCP, no CPU spare, SCHED_IDLE for their calls)\n",
		        rank);
	struct offload_stats os;
	offload_stats(&os);
	if (os.deferred || os.direct)
		fprintf(stderr,
		        "# piano-mpi rank %d: offload: %llu sends deferred (%llu posted by the "
		        "engine, %llu by the application, %llu of them late), %llu posted at once "
		        "(in %llu runs after late sends, %llu after prompt ones, %llu to cheap "
		        "peers)\n",
		        rank, (unsigned long long)os.deferred, (unsigned long long)os.by_engine,
		        (unsigned long long)os.by_app, (unsigned long long)os.late,
		        (unsigned long long)os.direct, (unsigned long long)os.off_late,
		        (unsigned long long)os.off_prompt, (unsigned long long)os.off_cheap);
}

/*
 * MPICH 4.0.2 over UCX 1.13 (TCP) hangs in MPI_Finalize now and then when
 * other threads called MPI just before (one rank stays in the UCX endpoint
 * close, the other in the PMI barrier; likely openucx/ucx#8738). It happens
 * without piano too (2 of 92 runs asking for MPI_THREAD_MULTIPLE, and a
 * 10-line program with one thread calling MPI_Iprobe hangs 11 times in 30),
 * but piano's threads make it frequent: 7 of 30 runs across two network
 * namespaces. Letting UCX settle for 1 ms after the engine has stopped took
 * it to 0 of 30 in four series (docs/netns.md). A workaround for a timing
 * bug we do not control, not a fix: 1 ms per process, MPICH builds only.
 */
static void settle_before_finalize(bool had_threads)
{
#if defined(MPICH_VERSION)
	if (had_threads)
		sys_sleep_ns(1000000);
#else
	(void)had_threads;
#endif
}

PMPI_EXPORT int MPI_Finalize(void)
{
	PMPI_APP_SCOPE();
	bool had_threads = false;
	pthread_mutex_lock(&setup_lock);
	if (pmpi_g.ready) {
		/* Stop and drain the engine first: after PMPI_Finalize no ltask
		 * may call MPI. Requests still pending are completed by
		 * PMPI_Finalize itself as the standard requires. */
		atomic_store_explicit(&pmpi_post_plain, PMPI_POST_FULL, memory_order_relaxed);
		offload_shutdown();
		fileio_shutdown();
		watch_shutdown();
		progress_shutdown();
		coll_op_reap(); /* before the shadows: it may drop their last references */
		coll_shadow_reap();
		report_finish();
		if (pmpi_g.stats)
			print_stats();
		piano_finalize();
		op_hold_finalize();
		cvar_close();
		had_threads = pmpi_g.threaded;
		pmpi_g.ready = 0;
		pmpi_g.threaded = 0;
	}
	pthread_mutex_unlock(&setup_lock);
	settle_before_finalize(had_threads);
	return PMPI_Finalize();
}

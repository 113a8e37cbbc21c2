/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Idle threads retired over TCP. An idle thread that stays at SCHED_IDLE
 * for its MPI calls (PIANO_MPI_RAISE_CALLS=0, or raising not permitted:
 * no CAP_SYS_NICE, RLIMIT_NICE below 20, the usual unprivileged user) can
 * be preempted inside readv()/writev() on the MPI's socket, owning the
 * kernel's socket lock until its core is idle again (starve.c). Where no
 * CPU is spare, that is whenever a rank's thread wakes: a TCP halo
 * exchange as an unprivileged user stalled in 3 to 9 runs of 12-16
 * (300-3,000 us steps instead of 80, never natively), and none without
 * idle threads (docs/performance.md, "A halo exchange over TCP"). There the
 * idle threads add nothing the socket watcher and the timer, both at
 * SCHED_OTHER, do not (a 16 MiB receive over TCP with the receiver
 * computing overlapped as well or better without them). So once the
 * watcher sees a TCP connection of the MPI's, the idle threads are paused
 * for the rest of the run (piano_idle_pause()).
 *
 * Only where every condition holds, checked at set-up (retire_setup) but
 * the last, which only a thread can tell and which costs a thread
 * creation, checked when the connection is found:
 *  - PIANO_MPI_IDLE_RETIRE=1 and the process has idle threads;
 *  - no spare CPU: at least one rank per CPU of the node, or ranks bound
 *    to equal shares that add up to the node exactly (local ranks x own
 *    CPUs = node CPUs: a rank per share, its threads on its share); with a
 *    spare CPU an idle thread runs there unpreempted. Shares that add up
 *    to more overlap (Open MPI binds more than 2 ranks to a package: 8
 *    ranks x 32 CPUs on a 64-CPU node), and say nothing of spare CPUs;
 *  - an idle thread could not leave SCHED_IDLE for its calls.
 * "The MPI's": as mpi_sock_kind() says (mpi_sock.h): Open MPI keeps a loopback
 * connection to its daemon in every job, shared memory or not, and there
 * the idle threads do copy for a rank whose core computes.
 *
 * State: `armed` is set at set-up and cleared once by the watcher's fd-table
 * scans, which call retire_mpi_found one at a time (the first at set-up, in
 * the set-up's thread, before the watcher's task is submitted; then in the
 * task); `done` is written there and read at MPI_Finalize after the engine
 * stopped. Relaxed: nothing is published with either.
 */
#include "retire.h"
#include "base.h"
#include "sys.h"

#include <sched.h>
#include <stdatomic.h>

static _Atomic bool armed, done;
static bool tell, raise_calls;

/* Whether the node has no CPU the ranks leave spare (see the top). */
static bool node_full(void)
{
	cpu_set_t own;
	long node = pmpi_g.node_cpus;
	if (node <= 0)
		return false;
	if (pmpi_g.local_size >= node)
		return true;
	return sched_getaffinity(0, sizeof(own), &own) == 0 &&
	       (long)pmpi_g.local_size * CPU_COUNT(&own) == node;
}

void retire_setup(bool raising, bool tell_it)
{
	int nidle = 0;
	piano_thread_count(PIANO_POINT_IDLE, &nidle);
	tell = tell_it;
	raise_calls = raising;
	if (!pmpi_setting("PIANO_MPI_IDLE_RETIRE", NULL) || nidle == 0 || !node_full())
		return;
	atomic_store_explicit(&armed, true, memory_order_relaxed);
}

bool retire_watching(void) { return atomic_load_explicit(&armed, memory_order_relaxed); }

void retire_mpi_found(void)
{
	if (!retire_watching())
		return;
	atomic_store_explicit(&armed, false, memory_order_relaxed);
	/* 2: a thread may go to SCHED_IDLE and back (starve.c raises). */
	if (raise_calls && sys_sched_idle_probe() == 2)
		return;
	if (piano_idle_pause() != 0)
		return;
	atomic_store_explicit(&done, true, memory_order_relaxed);
	if (tell)
		pmpi_warn("the MPI's traffic goes over TCP, no CPU is spare and idle threads must "
		          "stay at SCHED_IDLE for their MPI calls (%s): idle threads are retired "
		          "for this run, the socket watcher and the timer progress the MPI "
		          "(docs/mpi.md, \"Idle threads in the MPI\"; PIANO_MPI_IDLE_RETIRE=0 "
		          "keeps them)",
		          raise_calls ? "no CAP_SYS_NICE, RLIMIT_NICE below 20: `ulimit -e`"
		                      : "PIANO_MPI_RAISE_CALLS=0, or auto in a scheduling group of "
		                        "its own");
}

bool retire_done(void) { return atomic_load_explicit(&done, memory_order_relaxed); }

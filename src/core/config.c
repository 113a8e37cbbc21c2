/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The core engine's settings: its table for the registry (settings.c) and
 * the struct piano_config the engine reads them into at piano_init().
 * The help texts are the documentation: docs/configuration.md's table is
 * generated from them (piano-info --markdown).
 */
#include "config.h"
#include "settings_internal.h"

#include <stdio.h>
#include <string.h>

#include <hwloc.h>

#define LEVELS "machine,package,core,pu"

/* The timer takes 0 (off) or at least 10 us: a shorter period would turn
 * the safety net into a busy thread. */
static int check_timer(const char *value, long number, char *why, size_t len)
{
	(void)value;
	if (number > 0 && number < 10) {
		snprintf(why, len, "a period under 10 us would keep a core busy");
		return -1;
	}
	return 0;
}

/* Syntax only here: whether the machine has the CPUs is known once the
 * topology is loaded (topo.c). */
static int check_cpus(const char *value, long number, char *why, size_t len)
{
	(void)number;
	hwloc_bitmap_t b = hwloc_bitmap_alloc();
	int rc = (!b || hwloc_bitmap_list_sscanf(b, value) < 0 || hwloc_bitmap_iszero(b)) ? -1 : 0;
	hwloc_bitmap_free(b);
	if (rc)
		snprintf(why, len, "not an hwloc CPU list");
	return rc;
}

const struct piano_setting_spec config_core_table[] = {
	{ "PIANO_PROGRESSION", PIANO_SETTING_BOOL, "1", 0, 1, NULL, NULL, NULL,
	  "`0`: no progression threads at all, ltasks run only in explicit polls and waits (the "
	  "behaviour of most MPI implementations); every explicit poll then polls every queue, "
	  "and waits never sleep. `1`: idle, timer and blocking-helper threads as configured "
	  "below." },
	{ "PIANO_QUEUE_LEVEL", PIANO_SETTING_CHOICE, "core", 0, 0, LEVELS, NULL, NULL,
	  "Deepest topology level that gets a queue. Every object of the kept levels gets one, "
	  "except objects without siblings (same cpuset as their parent queue), which share "
	  "their parent's queue: on a single-package machine there is no package queue." },
	{ "PIANO_IDLE_LEVEL", PIANO_SETTING_CHOICE, "package", 0, 0, "none," LEVELS, NULL, NULL,
	  "One idle thread per object of this level, bound to the object's cpuset and run with "
	  "`SCHED_IDLE`. It polls the queues inside its object every round and the ancestor "
	  "queues at a divided frequency. `none`: no idle threads. Unset, the MPI layer makes "
	  "it `none` on a node with more ranks than CPUs (docs/mpi.md, \"Oversubscription\")." },
	{ "PIANO_IDLE_PERIOD_US", PIANO_SETTING_INT, "5", 0, 1000000, NULL, NULL, NULL,
	  "Pause of an idle thread between two rounds, in µs, while its branch holds tasks. "
	  "`0`: a `sched_yield()` only." },
	{ "PIANO_IDLE_COEF", PIANO_SETTING_INT, "20", 1, 100000, NULL, NULL, NULL,
	  "Multiplier of the pause after a round in which the thread's branch (its queues and "
	  "their ancestors) held no task while other queues did. When no queue holds a task, "
	  "idle threads park (sleep until the next submission) instead." },
	{ "PIANO_IDLE_YIELD_US", PIANO_SETTING_INT, "50", 0, 1000000, NULL, NULL, NULL,
	  "Pauses shorter than this are a `sched_yield()` loop until the time has passed instead "
	  "of a sleep: the kernel's timer slack (~50 µs) makes shorter sleeps last far longer "
	  "than asked. `0`: always sleep (slower reaction: 72–133 µs instead of 18–44 µs after a "
	  "waiter slept). An idle thread bound to a single CPU (`PIANO_IDLE_LEVEL=core` or `pu`, "
	  "or a one-CPU `PIANO_BIND_CPUS`/`PIANO_MPI_CPU_LIST`) sleeps anyway after 10 ms "
	  "without work: on a CPU shared with a computation the yield loop could starve it "
	  "(docs/architecture.md)." },
	{ "PIANO_IDLE_BOOST", PIANO_SETTING_BOOL, "0", 0, 1, NULL, NULL, NULL,
	  "`1`: an idle thread switches to `SCHED_OTHER` while it holds a queue and back to "
	  "`SCHED_IDLE` after the round, so that a preempted idle thread cannot mask a queue for "
	  "long while every core is busy. `0`: idle threads stay at `SCHED_IDLE` (measured "
	  "better on every benchmark: the boosted rounds took the cores of computing threads "
	  "and of other processes' idle threads; see docs/performance.md)." },
	{ "PIANO_TIMER_PERIOD_US", PIANO_SETTING_INT, "1000", 0, 10000000, NULL,
	  "0, or 10..10000000", check_timer,
	  "Period of the timer thread, in µs, which polls every queue that nobody polled during "
	  "the last period; it bounds the reaction time when every core is busy. `0`: no timer "
	  "thread. Unset, the MPI layer makes it 5000 on a node with more ranks than CPUs "
	  "(docs/mpi.md, \"Oversubscription\")." },
	{ "PIANO_TIMER_MODE", PIANO_SETTING_CHOICE, "queues", 0, 0, "queues,demand", NULL, NULL,
	  "When the timer thread ticks. `queues`: while any queue holds a task. `demand`: only "
	  "while a layer holds it (`piano_timer_hold()`), first one period after the hold: a "
	  "layer holds while an operation is in flight, so tasks that merely stay queued cost no "
	  "wake-up of a busy core. Unset, the MPI layer makes it `demand` (on a node with no "
	  "more ranks than CPUs) and holds while a "
	  "tracked request, a delegated wait or a graph is pending (docs/mpi.md, \"Do no "
	  "harm\")." },
	{ "PIANO_TIMER_MAX_US", PIANO_SETTING_INT, "0", 0, 10000000, NULL, NULL, NULL,
	  "Back-off limit of the timer thread, in µs. Above `PIANO_TIMER_PERIOD_US`, the period "
	  "doubles after every timer round that did no work once 8 rounds in a row did none, "
	  "up to this value, and returns to "
	  "`PIANO_TIMER_PERIOD_US` after a round that did some (or after the engine parked): "
	  "fewer wake-ups on busy cores while pending operations wait for a peer, but a "
	  "reaction bounded by this value instead of the period when every core is busy; "
	  "`piano_timer_renew()` (new work) brings the period back at once. `0`, "
	  "or any value not above the period: fixed period. Unset, the MPI layer makes it 4000 "
	  "on a node with no more ranks than CPUs, renews at each new tracked request or graph "
	  "and counts a tick whose MPI call moved data as work (docs/mpi.md, \"Do no harm\")." },
	{ "PIANO_TIMER_BUDGET", PIANO_SETTING_INT, "0", 0, 1000, NULL, NULL, NULL,
	  "Share of a core, in per mille, that the timer thread's rounds without work may take, "
	  "averaged over 100 ms; a round's cost is the thread's own CPU time from the end of its "
	  "previous round (the wake-up included: 27-100 µs on a virtual machine whose core was "
	  "computing, a few µs on bare metal). Once the rounds without work have taken more, the "
	  "next tick waits until the average is back under the budget (at most 64 periods), "
	  "whatever `PIANO_TIMER_MAX_US` and new work (`piano_timer_renew()`) say; a round that "
	  "did work restores the whole credit. So where a wake-up is cheap the period stays, and "
	  "where it is dear a timer waiting for a late peer takes at most this share of a core "
	  "(what its ticks cost the computations they preempt, in caches, comes on top). `0`: no "
	  "budget. Unset, the MPI layer makes it 2 (0.2 %) on a node with no more ranks than "
	  "CPUs where the whole job runs on that node (docs/mpi.md, \"Do no harm\")." },
	{ "PIANO_SPIN_US", PIANO_SETTING_INT, "20", 0, 10000000, NULL, NULL, NULL,
	  "How long `piano_ltask_wait()` and `piano_cond_wait*()` (except "
	  "`piano_cond_wait_spin()`, which takes its own) poll explicitly before sleeping on a "
	  "futex, in µs; in the MPI layer, how long a waiter polls through the engine before "
	  "blocking when other threads wait too (a thread waiting alone uses the MPI's own "
	  "wait, docs/mpi.md). Longer spins kept a core from the peer a waiter had just "
	  "answered (docs/performance.md). Without progression threads (`PIANO_PROGRESSION=0` "
	  "or no idle/timer thread) waits never sleep." },
	{ "PIANO_BLOCK_HELPERS", PIANO_SETTING_INT, "1", 0, 64, NULL, NULL, NULL,
	  "Number of blocking-helper threads, which call the blocking callbacks of tasks set up "
	  "with `piano_ltask_set_blocking()`. `0`: such tasks are only polled." },
	{ "PIANO_BLOCK_DELAY_US", PIANO_SETTING_INT, "1000", 0, 10000000, NULL, NULL, NULL,
	  "Default time a blocking-capable task is polled without progress before it is handed "
	  "to a free helper, in µs (a task's own `delay_us` overrides it)." },
	{ "PIANO_BLOCK_TIMEOUT_MS", PIANO_SETTING_INT, "100", 1, 10000, NULL, NULL, NULL,
	  "Longest sleep of one blocking callback, in ms; it bounds how long cancellation and "
	  "finalize wait for a helper." },
	{ "PIANO_LOCATION_REFRESH_US", PIANO_SETTING_INT, "100000", 1, 10000000, NULL, NULL, NULL,
	  "How often a thread refreshes its cached location (current CPU, binding), in µs: "
	  "asking the OS on every poll would cost more than the poll." },
	{ "PIANO_FINALIZE_TIMEOUT_MS", PIANO_SETTING_INT, "5000", 0, 3600000, NULL, NULL, NULL,
	  "How long the last `piano_finalize()` keeps running pending ltasks, in ms. Tasks still "
	  "pending then are reported on stderr and left unrun." },
	{ "PIANO_STATS", PIANO_SETTING_BOOL, "0", 0, 1, NULL, NULL, NULL,
	  "`1`: print the per-polling-point counters (rounds, ltasks run, empty rounds, time) on "
	  "stderr at the last `piano_finalize()` (in the MPI layer: at `MPI_Finalize`, with the "
	  "layer's own counters)." },
	{ "PIANO_BIND_CPUS", PIANO_SETTING_TEXT, "", 0, 0, NULL,
	  "empty, or an hwloc CPU list (`0-3,8`) of CPUs of the machine", check_cpus,
	  "CPUs for piano's own threads. Idle threads are created only for the "
	  "`PIANO_IDLE_LEVEL` objects that contain one of these CPUs, each bound to its object's "
	  "CPUs within the list; the timer thread and the blocking helpers are bound to the "
	  "list. Empty: idle threads on every object, timer and helpers allowed on every CPU of "
	  "the machine (never left with the binding they would inherit, e.g. an MPI rank's "
	  "core)." },
	{ "PIANO_WARN_UNKNOWN", PIANO_SETTING_BOOL, "1", 0, 1, NULL, NULL, NULL,
	  "`1`: the first `piano_init()` reports every `PIANO_*` environment variable that no "
	  "layer has but that is a few typing errors away from a setting, with its name (`did "
	  "you mean PIANO_SPIN_US?`); `piano-info` also lists the unknown names far from every "
	  "setting (scripts' own variables, e.g. `PIANO_SKIP_STRESS`). `0`: silent." },
};
const int config_core_count = (int)(sizeof(config_core_table) / sizeof(config_core_table[0]));

static const char *level_names[] = { "machine", "package", "core", "pu" };

const char *config_level_name(int level)
{
	if (level < 0 || level > LEVEL_PU)
		return "none";
	return level_names[level];
}

/* Where each setting goes in struct piano_config; `add` maps a choice's
 * index to the field's value (the idle level's list starts with "none"). */
struct field {
	const char *name;
	size_t offset;
	int is_int;
	long add;
};

#define F(field) offsetof(struct piano_config, field)

static const struct field fields[] = {
	{ "PIANO_PROGRESSION", F(progression), 1, 0 },
	{ "PIANO_QUEUE_LEVEL", F(queue_level), 1, LEVEL_MACHINE },
	{ "PIANO_IDLE_LEVEL", F(idle_level), 1, LEVEL_NONE },
	{ "PIANO_IDLE_PERIOD_US", F(idle_period_us), 0, 0 },
	{ "PIANO_IDLE_COEF", F(idle_coef), 0, 0 },
	{ "PIANO_IDLE_YIELD_US", F(idle_yield_us), 0, 0 },
	{ "PIANO_IDLE_BOOST", F(idle_boost), 1, 0 },
	{ "PIANO_TIMER_PERIOD_US", F(timer_period_us), 0, 0 },
	{ "PIANO_TIMER_MAX_US", F(timer_max_us), 0, 0 },
	{ "PIANO_TIMER_BUDGET", F(timer_budget), 0, 0 },
	{ "PIANO_TIMER_MODE", F(timer_demand), 1, 0 },
	{ "PIANO_SPIN_US", F(spin_us), 0, 0 },
	{ "PIANO_BLOCK_HELPERS", F(block_helpers), 0, 0 },
	{ "PIANO_BLOCK_DELAY_US", F(block_delay_us), 0, 0 },
	{ "PIANO_BLOCK_TIMEOUT_MS", F(block_timeout_ms), 0, 0 },
	{ "PIANO_LOCATION_REFRESH_US", F(location_refresh_us), 0, 0 },
	{ "PIANO_FINALIZE_TIMEOUT_MS", F(finalize_timeout_ms), 0, 0 },
	{ "PIANO_STATS", F(stats), 1, 0 },
};

int config_load(struct piano_config *cfg)
{
	struct piano_config tmp;
	memset(&tmp, 0, sizeof(tmp));
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
		long v;
		int rc = piano_setting_read(fields[i].name, &v, NULL, 0, NULL);
		if (rc)
			return rc;
		char *p = (char *)&tmp + fields[i].offset;
		if (fields[i].is_int)
			*(int *)p = (int)(v + fields[i].add);
		else
			*(long *)p = v + fields[i].add;
	}
	long unused;
	int rc = piano_setting_read("PIANO_BIND_CPUS", &unused, tmp.bind_cpus,
	                            sizeof(tmp.bind_cpus), NULL);
	if (rc)
		return rc;
	*cfg = tmp;
	return 0;
}

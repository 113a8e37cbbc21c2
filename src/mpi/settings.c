/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MPI layer's settings, registered with the core's registry
 * (include/piano/settings.h) before the layer reads any of them. The help
 * texts are the documentation (docs/configuration.md is generated from
 * them by piano-info --markdown).
 */
#include "settings.h"

#include <stdio.h>
#include <string.h>

#include <hwloc.h>

/* PIANO_MPI_CPU_LIST: hwloc CPU lists separated by '_'. */
static int check_cpu_list(const char *value, long number, char *why, size_t len)
{
	(void)number;
	hwloc_bitmap_t b = hwloc_bitmap_alloc();
	int rc = b ? 0 : -1;
	for (const char *p = value; b && rc == 0;) {
		char elem[256];
		size_t n = strcspn(p, "_");
		if (n == 0 || n >= sizeof(elem)) {
			snprintf(why, len, "an empty or overlong element");
			rc = -1;
			break;
		}
		memcpy(elem, p, n);
		elem[n] = '\0';
		if (hwloc_bitmap_list_sscanf(b, elem) < 0 || hwloc_bitmap_iszero(b)) {
			snprintf(why, len, "'%s' is not an hwloc CPU list", elem);
			rc = -1;
		}
		if (!p[n])
			break;
		p += n + 1;
	}
	hwloc_bitmap_free(b);
	return rc;
}

static const struct {
	const char *name;
	unsigned bit;
} coll_names[] = { { "ibarrier", PMPI_COLL_IBARRIER },
	           { "ibcast", PMPI_COLL_IBCAST },
	           { "iallreduce", PMPI_COLL_IALLREDUCE },
	           { "ireduce", PMPI_COLL_IREDUCE },
	           { "ialltoall", PMPI_COLL_IALLTOALL },
	           { "iallgather", PMPI_COLL_IALLGATHER },
	           { "igather", PMPI_COLL_IGATHER },
	           { "iscatter", PMPI_COLL_ISCATTER },
	           { "ireduce_scatter", PMPI_COLL_IREDUCE_SCATTER },
	           { "ireduce_scatter_block", PMPI_COLL_IREDUCE_SCATTER_BLOCK },
	           { "iscan", PMPI_COLL_ISCAN },
	           { "iexscan", PMPI_COLL_IEXSCAN },
	           { "ineighbor_allgather", PMPI_COLL_INEIGHBOR_ALLGATHER },
	           { "ineighbor_alltoall", PMPI_COLL_INEIGHBOR_ALLTOALL } };
enum { NCOLL = sizeof(coll_names) / sizeof(coll_names[0]) };

int pmpi_coll_parse(const char *value, unsigned *mask, char *why, size_t len)
{
	if (!strcmp(value, "native")) {
		*mask = 0;
		return 0;
	}
	if (!strcmp(value, "auto")) {
		*mask = PMPI_COLL_AUTO;
		return 0;
	}
	unsigned all = 0;
	for (int i = 0; i < NCOLL; i++)
		all |= coll_names[i].bit;
	if (!strcmp(value, "graph")) {
		*mask = all;
		return 0;
	}
	if (strncmp(value, "graph:", 6) || !value[6]) {
		snprintf(why, len, "not auto, native, graph or graph:LIST");
		return -1;
	}
	unsigned m = 0;
	for (const char *p = value + 6;;) {
		size_t n = strcspn(p, ",");
		int found = -1;
		for (int i = 0; i < NCOLL; i++)
			if (strlen(coll_names[i].name) == n && !strncmp(p, coll_names[i].name, n))
				found = i;
		if (found < 0) {
			snprintf(why, len,
			         "'%.*s' is not one of ibarrier, ibcast, ireduce, iallreduce, "
			         "ialltoall, iallgather, igather, iscatter, ireduce_scatter, "
			         "ireduce_scatter_block, iscan, iexscan, ineighbor_allgather, "
			         "ineighbor_alltoall",
			         (int)(n < 64 ? n : 64), p);
			return -1;
		}
		m |= coll_names[found].bit;
		if (!p[n])
			break;
		p += n + 1;
	}
	*mask = m;
	return 0;
}

static int check_coll(const char *value, long number, char *why, size_t len)
{
	(void)number;
	unsigned mask;
	return pmpi_coll_parse(value, &mask, why, len);
}

const struct piano_setting_spec pmpi_settings_table[] = {
	{ "PIANO_MPI_THREAD_LEVEL", PIANO_SETTING_CHOICE, "auto", 0, 0,
	  "single,funneled,serialized,multiple,auto", NULL, NULL,
	  "The thread level piano asks the MPI for (the application still gets the level it "
	  "asked for). `auto`: `multiple` when the application asks for it, calls Fortran "
	  "procedures that enter the MPI past piano's gate (MPICH's profiling names), sets "
	  "`PIANO_COLL` to `graph` or a list or sets `PIANO_OFFLOAD`, or calls "
	  "non-blocking file functions or "
	  "piano's graph API (its imports at `MPI_Init`); otherwise serialized mode: piano "
	  "serializes "
	  "the application's MPI calls with its own background calls and asks for the cheapest "
	  "level that allows it (MPICH `serialized`, Open MPI `single`: Open MPI makes every call "
	  "thread-safe, and slower, at any higher level; docs/mpi.md, \"Serialized mode\"). "
	  "`multiple`: always. Below `multiple` piano runs in explicit-polling mode, without "
	  "background progress, e.g. for an MPI whose `MPI_THREAD_MULTIPLE` is slow or broken." },
	{ "PIANO_MPI_BLOCKING", PIANO_SETTING_CHOICE, "auto", 0, 0, "auto,timer,block", NULL, NULL,
	  "Socket watcher (docs/mpi.md): `auto` = on when a blocking helper exists and the node "
	  "has no more ranks than CPUs; `timer` = "
	  "never (the timer thread alone bounds reaction when every core is busy); `block` = "
	  "always (an error without background progress or without blocking helpers)." },
	{ "PIANO_MPI_CPU_LIST", PIANO_SETTING_TEXT, "", 0, 0, NULL,
	  "empty, or hwloc CPU lists separated by `_`", check_cpu_list,
	  "Local rank *i* runs its engine threads on element *i* modulo the count, e.g. `0_2_4` "
	  "or `0-1_2-3` (it sets `PIANO_BIND_CPUS` for that rank, so the two cannot both be "
	  "set). Empty: no placement." },
	{ "PIANO_MPI_WATCH_HOLD_US", PIANO_SETTING_INT, "1000", 0, 1000000, NULL, NULL, NULL,
	  "Longest pause, in µs, of the socket watcher's wake-ups on arriving data after rounds "
	  "nobody needed: rounds that completed nothing a thread waits for, drained no window "
	  "about to close (a quarter of the socket's receive buffer unread, or within 10 ms of "
	  "such a round) and filled no send buffer: messages the receive buffer keeps, which "
	  "the application's wait reads at the same cost, and the answers the MPI writes to "
	  "them, which it writes in the wait all the same. An arrival that needs a round waits "
	  "for the pause's end. The pause starts at 64 µs and doubles while such rounds follow "
	  "each other; a useful round ends it (docs/mpi.md, \"Every core busy: the socket "
	  "watcher\"). `0`: a round at every arrival." },
	{ "PIANO_MPI_WATCH_REST_MS", PIANO_SETTING_INT, "160", 0, 10000, NULL, NULL, NULL,
	  "Longest rest, in ms, of the socket watcher once at most 8 of 64 wake-ups in a row "
	  "were useful (the others found the application inside the MPI, which reads its "
	  "sockets itself, or their round was not needed, as for `PIANO_MPI_WATCH_HOLD_US`). "
	  "Resting, it wakes for neither arrivals nor the MPI's finished writes (a full send "
	  "buffer still wakes it). The first rest lasts 10 ms; a fruitless wake-up after a rest "
	  "starts one twice as long, a fruitful one ends the doubling; never while a delegated "
	  "wait needs the watcher, nor while a graph collective runs where the timer does not "
	  "tick for it (docs/mpi.md, \"Every core busy: the socket watcher\"). `0`: never "
	  "rests." },
	{ "PIANO_MPI_RAISE_CALLS", PIANO_SETTING_CHOICE, "auto", 0, 0, "0,1,auto", NULL, NULL,
	  "`1`: an idle thread switches from `SCHED_IDLE` to `SCHED_OTHER` for each round of MPI "
	  "calls it makes and back after it (two system calls), so that a thread waking on its "
	  "core does not preempt it inside the MPI, where it may hold a socket or a lock the "
	  "application then waits for. `auto`: only where the process is not a scheduling group "
	  "of its own (no autogroups, no cgroup with the cpu controller; `PIANO_STATS=1` says "
	  "which): `SCHED_IDLE` ranks a thread only within its group, and there the switches "
	  "made whole ranks wait for the CPU for 0.2-170 s while other groups computed "
	  "(docs/mpi.md, \"Idle threads in the MPI\"). Needs `CAP_SYS_NICE` or an `RLIMIT_NICE` "
	  "of 20 (`ulimit -e 20`); without them the local rank 0 says so once. `0`: idle threads "
	  "stay at `SCHED_IDLE` in their calls; a thread starting a native wait raises one "
	  "caught inside a call until it returns, and over TCP on a node with no spare CPU they "
	  "retire (`PIANO_MPI_IDLE_RETIRE`)." },
	{ "PIANO_MPI_IDLE_RETIRE", PIANO_SETTING_BOOL, "1", 0, 1, NULL, NULL, NULL,
	  "`1`: where idle threads must stay at `SCHED_IDLE` for their MPI calls (see "
	  "`PIANO_MPI_RAISE_CALLS`) and the node has no spare CPU, they are retired for the rest "
	  "of the run once the socket watcher sees a TCP connection of the MPI's (not the "
	  "run-time's): preempted inside a call there, an idle thread holds the socket and stalls "
	  "the peer (docs/mpi.md, \"Idle threads in the MPI\"); the local rank 0 says so. `0`: "
	  "they keep polling." },
	{ "PIANO_MPI_LINGER_US", PIANO_SETTING_INT, "10000", 0, 10000000, NULL, NULL, NULL,
	  "How long the progress task stays after the last pending operation completed, in µs: "
	  "an application that posts again soon does not pay the task's restart." },
	{ "PIANO_EAGER_LIMIT", PIANO_SETTING_INT, "", 0, 2147483647L, NULL, NULL, NULL,
	  "Messages up to this size in bytes are not tracked (the MPI sends them at once). "
	  "Empty: detected from the MPI's own settings (its control variables, "
	  "`UCX_RNDV_THRESH`); `PIANO_STATS=1` prints the value and where it came from." },
	{ "PIANO_COLL", PIANO_SETTING_TEXT, "auto", 0, 0, NULL,
	  "`auto`, `native`, `graph`, or `graph:` and a comma-separated list of ibarrier, "
	  "ibcast, ireduce, iallreduce, ialltoall, iallgather, igather, iscatter, "
	  "ireduce_scatter, ireduce_scatter_block, iscan, iexscan, ineighbor_allgather, "
	  "ineighbor_alltoall",
	  check_coll,
	  "Which non-blocking collectives run as piano's graphs (docs/coll.md) instead of the "
	  "MPI's own. `auto`: `MPI_Ireduce_scatter` and `MPI_Ireduce_scatter_block` (and their "
	  "persistent forms) with a commutative operation, from `PIANO_COLL_AUTO_MIN` bytes, "
	  "on `MPI_COMM_WORLD` and the communicators made from it (not on one made by "
	  "`MPI_Comm_idup` or joined with spawned or connected processes), where the process "
	  "runs at `MPI_THREAD_MULTIPLE` anyway and every rank agrees at `MPI_Init` (its "
	  "program imports one of them, and then pays a duplicate per communicator it creates; "
	  "docs/coll.md, "
	  "\"The default\"); nothing else. `native`: none. `graph` = every one piano has "
	  "(`MPI_Ibarrier`, `MPI_Ibcast`, "
	  "`MPI_Ireduce`, `MPI_Iallreduce`, `MPI_Ialltoall`, `MPI_Iallgather`, `MPI_Igather`, "
	  "`MPI_Iscatter`, the `v` forms of these four under the same names and "
	  "`MPI_Ialltoallw` under `ialltoall`, `MPI_Ireduce_scatter`, "
	  "`MPI_Ireduce_scatter_block`, `MPI_Iscan`, `MPI_Iexscan`, "
	  "`MPI_Ineighbor_allgather(v)`, `MPI_Ineighbor_alltoall(v,w)`; their persistent "
	  "`MPI_*_init` forms under the same names, but for the `w` ones), "
	  "`graph:ibcast,iallreduce` = those. Graphs need background "
	  "progress (`MPI_THREAD_MULTIPLE`) and an intra-communicator; otherwise the MPI's own "
	  "run. Must be the same on every rank." },
	{ "PIANO_COLL_AUTO_MIN", PIANO_SETTING_INT, "262144", 0, 2147483647L, NULL, NULL, NULL,
	  "With `PIANO_COLL=auto`, the smallest reduce-scatter, in bytes of the whole vector "
	  "(the sum of the counts times the datatype's size), that runs as a graph; smaller "
	  "ones stay the MPI's (on MPICH the two are even below 64 KiB on shared memory, and "
	  "across hosts at 64 KiB the MPI's own wins; docs/coll.md, \"The default\"). Must be "
	  "the same on every rank." },
	{ "PIANO_COLL_SEGMENT", PIANO_SETTING_INT, "65536", 1024, 1073741824L, NULL, NULL, NULL,
	  "Pipeline segment of the graph collectives, in bytes: a message is cut into segments "
	  "of whole elements of about this size, each forwarded as soon as it arrived. Must be "
	  "the same on every rank." },
	{ "PIANO_COLL_SEGMENT_NODE", PIANO_SETTING_INT, "262144", 1024, 1073741824L, NULL, NULL,
	  NULL,
	  "Pipeline segment of the graph collectives on a communicator whose ranks all share "
	  "this node (every rank of `MPI_COMM_WORLD` on one node): there each message costs the "
	  "MPI a copy and a handshake of its own, so segments are larger than across hosts "
	  "(docs/coll.md). When `PIANO_COLL_SEGMENT` is set and this is not, that one applies "
	  "there too. Must be the same on every rank." },
	{ "PIANO_COLL_REDSCAT_MIN", PIANO_SETTING_INT, "16384", 0, 2147483647L, NULL, NULL, NULL,
	  "Smallest `MPI_Iallreduce` vector, in bytes, that the graphs run as a reduce-scatter "
	  "then an allgather (each rank reduces its share only) instead of recursive doubling, "
	  "on a power of two of ranks with a commutative operation (docs/coll.md). Must be the "
	  "same on every rank." },
	{ "PIANO_COLL_WINDOW", PIANO_SETTING_INT, "8", 0, 4096, NULL, NULL, NULL,
	  "Segments of a graph collective in flight at once, per peer and direction: the "
	  "receive (or send) of segment j waits for that of segment j - N, and an "
	  "`MPI_Ialltoall` (or a non-commutative reduce-scatter) posts its exchange with the "
	  "rank at distance i once the one at distance i - N has completed (docs/coll.md, "
	  "\"Window\"). Bounds the requests a "
	  "large message or a large communicator posts at once. `0`: no bound." },
	{ "PIANO_COLL_BRUCK_MAX", PIANO_SETTING_INT, "256", 0, 65536, NULL, NULL, NULL,
	  "`MPI_Ialltoall` and `MPI_Iallgather` as graphs exchange blocks of at most this many "
	  "bytes by Bruck's algorithms (ceil(log2(size)) messages per rank) on a communicator "
	  "of at least `PIANO_COLL_BRUCK_MIN_RANKS` ranks, instead of one message per peer "
	  "(docs/coll.md). `0`: never. Must be the same on every rank." },
	{ "PIANO_COLL_BRUCK_MIN_RANKS", PIANO_SETTING_INT, "8", 2, 1048576, NULL, NULL, NULL,
	  "Smallest communicator on which `MPI_Ialltoall` and `MPI_Iallgather` may use Bruck's "
	  "algorithms (see "
	  "`PIANO_COLL_BRUCK_MAX`). Must be the same on every rank." },
	{ "PIANO_COLL_BCAST_SCATTER_MIN", PIANO_SETTING_INT, "524288", 0, 2147483647L, NULL, NULL,
	  NULL,
	  "`MPI_Ibcast` as a graph sends messages of at least this many bytes by a scatter down "
	  "the binomial tree then a ring allgather (each rank sends about twice the message, "
	  "where the tree's root sends it once per child) on a communicator of at least "
	  "`PIANO_COLL_BCAST_SCATTER_MIN_RANKS` ranks that spans more than one node, instead of "
	  "the pipelined tree (docs/coll.md). Set by the user, it applies on one node too. Must "
	  "be the same on every rank." },
	{ "PIANO_COLL_BCAST_SCATTER_MIN_RANKS", PIANO_SETTING_INT, "8", 2, 1048576, NULL, NULL,
	  NULL,
	  "Smallest communicator on which `MPI_Ibcast` may scatter then allgather (see "
	  "`PIANO_COLL_BCAST_SCATTER_MIN`). Must be the same on every rank." },
	{ "PIANO_COLL_SHARE", PIANO_SETTING_INT, "16777216", 0, 2147483647L, NULL, NULL, NULL,
	  "Smallest total, in bytes, of the reductions and copies that the thread stepping a graph "
	  "(a collective or `piano_graph_*`) finds ready at once and shares with piano's idle "
	  "threads: it cuts them in pieces of 64 KiB, which idle threads take beside it, so they "
	  "run on every idle core at once (docs/coll.md, \"Shared reductions\"). Below it, and "
	  "for nodes under 4 KiB, the stepping thread runs them alone: data in the caches "
	  "reduces no faster on two cores. `0`: never." },
	{ "PIANO_COLL_CACHE", PIANO_SETTING_INT, "16", 0, 1024, NULL, NULL, NULL,
	  "Finished graph collectives the process keeps for reuse: a collective called again "
	  "with the same arguments (buffers, counts, predefined datatypes and operation, root) on "
	  "the same communicator restarts the graph built for the earlier call instead of "
	  "building one (docs/coll.md, \"Reuse\"). Operations whose scratch memory exceeds "
	  "1 MiB are not kept. `0`: every call builds its graph." },
	{ "PIANO_OFFLOAD", PIANO_SETTING_CHOICE, "0", 0, 0, "0,1,always", NULL, NULL,
	  "`1`: an `MPI_Isend` of at most the eager limit returns at once and an idle core posts "
	  "it (docs/mpi.md, \"Submission offload\"); every other send, completion, blocking or "
	  "probing call of the process first posts the sends still queued, so MPI's ordering "
	  "holds. The process turns it off for a while by itself when sends are cheap to post "
	  "(shared memory) or when no core was idle to post them; `always` never does (for "
	  "measurements and tests). Needs background progress." },
	{ "PIANO_MPI_FILE", PIANO_SETTING_CHOICE, "piano", 0, 0, "piano,native", NULL, NULL,
	  "Non-blocking file calls (`MPI_File_iwrite`, `iread`, the `_at`, `_shared` and `_all` "
	  "forms, the split collectives): "
	  "`piano` = the transfer runs on a blocking helper thread while the application "
	  "computes (on MPICH but those contiguous in memory and file, which ROMIO's POSIX AIO "
	  "overlaps; docs/mpi.md, \"Non-blocking file I/O\"; it takes one more helper than "
	  "`PIANO_BLOCK_HELPERS` asks for when that is left unset); `native` = the MPI's own." },
	{ "PIANO_MPI_FILE_CHUNK", PIANO_SETTING_INT, "4194304", 4096, 1073741824L, NULL, NULL, NULL,
	  "Bytes a non-blocking file transfer moves per call (whole elements): the "
	  "application's own file calls wait at most one such call." },
	{ "PIANO_REPORT", PIANO_SETTING_TEXT, "", 0, 0, NULL, "empty, or a file path", NULL,
	  "Writes the overlap report (docs/report.md) at `MPI_Finalize`: per call site of the "
	  "application and kind of operation, how much of its non-blocking operations' time was "
	  "hidden behind computation, how long the completion calls blocked, who completed "
	  "them, and diagnoses; rank 0 writes the text table to this path and the same numbers "
	  "as JSON to the path with `.json` appended (`tools/piano-report` reads it). Recorded "
	  "with or without background progress. Must be the same on every rank. Empty: nothing "
	  "is recorded." },
	{ "PIANO_MPI_LIBDIR", PIANO_SETTING_TEXT, "", 0, 0, NULL, "empty, or a directory", NULL,
	  "Read by `piano-run` only: the directory it takes `libpiano-mpi-<mpi>.so` from. "
	  "Empty: the directory the build or the installation put them in." },
};
const int pmpi_settings_count = (int)(sizeof(pmpi_settings_table) / sizeof(pmpi_settings_table[0]));

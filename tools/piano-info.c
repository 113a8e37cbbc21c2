/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * piano-info: prints what the piano engine sees and how it is configured.
 *
 * Initialises the engine with the current environment, then prints the
 * version, the hwloc topology, the queue tree, the progression threads,
 * whether idle threads may leave SCHED_IDLE here, the calling thread's
 * local queue and every setting (live value, default,
 * accepted range). With --stats it also runs a small ltask and a few explicit
 * polls, then prints the per-polling-point counters.
 *
 * Exit status: 0 on success, 1 when piano_init() or another call fails
 * (e.g. an invalid PIANO_* variable: the engine names it on stderr), 2 on a
 * usage error.
 */
#include <piano/piano.h>

#include "sched_groups.h" /* src/mpi: PIANO_MPI_RAISE_CALLS=auto's probe */
#include "settings.h" /* the MPI layer's table: listed even without an MPI */
#include "sys.h"      /* src/core: the platform layer */

#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

static const char *prog = "piano-info";

static void usage(FILE *f)
{
	fprintf(f,
	        "Usage: %s [--stats] [--markdown] [--help]\n"
	        "\n"
	        "Initialises piano with the current environment and prints its version,\n"
	        "the hwloc topology, the queue tree, the progression threads, the local\n"
	        "queue of the calling thread and every PIANO_* setting of the core and the\n"
	        "MPI layer (live value, default, accepted values). See\n"
	        "docs/configuration.md.\n"
	        "\n"
	        "  --stats   also run a small ltask and a few piano_poll() calls, then\n"
	        "            print the per-polling-point statistics (on stderr)\n"
	        "  --markdown  print the settings of every layer as the markdown table\n"
	        "            of docs/configuration.md (defaults, not live values) and exit\n"
	        "  --help    print this help and exit\n"
	        "\n"
	        "Exit status: 0 on success, 1 if piano fails (e.g. an invalid PIANO_*\n"
	        "variable, reported on stderr), 2 on a usage error.\n",
	        prog);
}

/* Reports a failed piano call and returns 1 (the exit status). */
static int fail(const char *what, int rc)
{
	fflush(stdout);
	fprintf(stderr, "%s: %s failed: %s (%d)\n", prog, what, piano_strerror(rc), rc);
	return 1;
}

static int count_type(hwloc_topology_t topo, hwloc_obj_type_t type)
{
	int n = hwloc_get_nbobjs_by_type(topo, type);
	return n < 0 ? 0 : n;
}

static void print_topology(hwloc_topology_t topo)
{
	unsigned api = hwloc_get_api_version();
	printf("Topology (hwloc API %u.%u)\n", api >> 16, (api >> 8) & 0xffu);
	printf("  machines: %d, packages: %d, cores: %d, PUs: %d\n",
	       count_type(topo, HWLOC_OBJ_MACHINE), count_type(topo, HWLOC_OBJ_PACKAGE),
	       count_type(topo, HWLOC_OBJ_CORE), count_type(topo, HWLOC_OBJ_PU));
	if (hwloc_topology_is_thissystem(topo))
		printf("  source: this system\n");
	else
		printf("  source: synthetic or XML topology (not this system): "
		       "binding is not effective\n");
}

static int print_queues(void)
{
	int n, rc;
	if ((rc = piano_queue_count(&n)))
		return fail("piano_queue_count", rc);
	printf("Queue tree (%d queue%s)\n", n, n == 1 ? "" : "s");
	printf("  %-24s %-7s %-8s %s\n", "index type", "logical", "children", "cpuset");
	for (int i = 0; i < n; i++) {
		struct piano_queue_info qi;
		if ((rc = piano_queue_info(i, &qi)))
			return fail("piano_queue_info", rc);
		char label[64];
		int depth = qi.depth < 0 ? 0 : (qi.depth > 8 ? 8 : qi.depth);
		snprintf(label, sizeof(label), "%*s%d %s", 2 * depth, "", qi.index,
		         qi.type ? qi.type : "?");
		printf("  %-24s L#%-5d %-8d %s\n", label, qi.logical_index, qi.nchildren,
		       qi.cpuset);
	}
	return 0;
}

static int print_threads(void)
{
	static const int points[] = { PIANO_POINT_IDLE, PIANO_POINT_TIMER, PIANO_POINT_BLOCK };
	printf("Progression threads\n");
	for (size_t i = 0; i < sizeof(points) / sizeof(points[0]); i++) {
		int n, rc;
		if ((rc = piano_thread_count(points[i], &n)))
			return fail("piano_thread_count", rc);
		const char *name = piano_point_name(points[i]);
		printf("  %-10s %d\n", name ? name : "?", n);
	}
	return 0;
}

/* Idle threads run at SCHED_IDLE; the timer's rescue of a queue holder,
 * PIANO_IDLE_BOOST and the MPI layer's PIANO_MPI_RAISE_CALLS take them
 * back to SCHED_OTHER, which Linux allows only with CAP_SYS_NICE or an
 * RLIMIT_NICE of 20 or more: say which holds before a job finds out. */
static int print_scheduling(void)
{
	int res = sys_sched_idle_probe(); /* the engine's own calls (src/core/sys.c) */
	if (res < 0) {
		fprintf(stderr, "%s: pthread_create: %s\n", prog, strerror(-res));
		return 1;
	}
	struct rlimit rl;
	char nice[32] = "unknown";
	if (getrlimit(RLIMIT_NICE, &rl) == 0)
		snprintf(nice, sizeof(nice), "%llu", (unsigned long long)rl.rlim_cur);
	printf("Scheduling of idle threads\n");
	printf("  %-21s%s\n",
	       "SCHED_IDLE:", res > 0 ? "available" : "not available (nice 19 instead)");
	if (res > 0)
		printf("  %-21s%s (RLIMIT_NICE %s; needs CAP_SYS_NICE or 20)\n",
		       "back to SCHED_OTHER:", res == 2 ? "permitted" : "not permitted", nice);
	/* PIANO_MPI_RAISE_CALLS=auto raises only without such a group. */
	char why[160];
	int groups = sched_groups_probe("", why, sizeof why);
	printf("  %-21s%s%s\n", "scheduling groups:", why,
	       groups ? " (SCHED_IDLE ranks idle threads within this group only)" : "");
	return 0;
}

static int print_local(void)
{
	int q, rc;
	struct piano_queue_info qi;
	if ((rc = piano_queue_local(&q)))
		return fail("piano_queue_local", rc);
	if ((rc = piano_queue_info(q, &qi)))
		return fail("piano_queue_info", rc);
	printf("Local queue of this thread: %d (%s L#%d, cpuset %s)\n", q,
	       qi.type ? qi.type : "?", qi.logical_index, qi.cpuset);
	return 0;
}

static const char *str(const char *s)
{
	return s ? s : "";
}

/* Values and defaults: an empty string is shown as '' so it reads as one. */
static const char *val(const char *s)
{
	return s && *s ? s : "''";
}

/* The first sentence of a help text: the table shows it, the docs the rest. */
static int summary_len(const char *help)
{
	const char *end = help;
	/* "e.g. " does not end a sentence. */
	while ((end = strstr(end, ". ")) && end - help >= 3 &&
	       (strncmp(end - 3, "e.g", 3) == 0 || strncmp(end - 3, "i.e", 3) == 0))
		end += 2;
	return end ? (int)(end - help) : (int)strlen(help);
}

static int print_settings(void)
{
	int n, rc;
	if ((rc = piano_setting_count(&n)))
		return fail("piano_setting_count", rc);
	int wname = (int)strlen("name"), wval = (int)strlen("value");
	int wdef = (int)strlen("default"), wrange = (int)strlen("range");
	for (int i = 0; i < n; i++) {
		struct piano_setting s;
		if ((rc = piano_setting_get(i, &s)))
			return fail("piano_setting_get", rc);
		int l;
		if ((l = (int)strlen(str(s.name))) > wname)
			wname = l;
		if ((l = (int)strlen(val(s.value))) > wval)
			wval = l;
		if ((l = (int)strlen(val(s.def))) > wdef)
			wdef = l;
		if ((l = (int)strlen(str(s.range))) > wrange)
			wrange = l;
	}
	printf("Settings (%d)\n", n);
	printf("  %-5s  %-*s  %-*s  %-*s  %-*s  %s\n", "layer", wname, "name", wval, "value",
	       wdef, "default", wrange, "range", "help");
	for (int i = 0; i < n; i++) {
		struct piano_setting s;
		if ((rc = piano_setting_get(i, &s)))
			return fail("piano_setting_get", rc);
		printf("  %-5s  %-*s  %-*s  %-*s  %-*s  %.*s\n", str(s.layer), wname, str(s.name),
		       wval, val(s.value), wdef, val(s.def), wrange, str(s.range),
		       summary_len(str(s.help)), str(s.help));
	}
	return 0;
}

extern char **environ;

/* PIANO_* variables of the environment that no layer has: a misspelling
 * the engine already reported, or a script's own variable. */
static int print_unknown(void)
{
	int n, rc, count = 0;
	if ((rc = piano_setting_count(&n)))
		return fail("piano_setting_count", rc);
	for (char **e = environ; *e; e++) {
		size_t len = strcspn(*e, "=");
		if (strncmp(*e, "PIANO_", 6) != 0)
			continue;
		int known = 0;
		for (int i = 0; i < n && !known; i++) {
			struct piano_setting s;
			if (piano_setting_get(i, &s) == 0 && strlen(s.name) == len &&
			    strncmp(s.name, *e, len) == 0)
				known = 1;
		}
		if (known)
			continue;
		if (!count++)
			printf("\nPIANO_* variables no layer has (ignored by piano):\n");
		printf("  %.*s\n", (int)len, *e);
	}
	return 0;
}

/* A markdown table cell: '|' would end the cell, a newline the row. */
static void cell(const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", stdout);
		else if (*s == '\n')
			fputc(' ', stdout);
		else
			fputc(*s, stdout);
	}
}

/* --markdown: docs/configuration.md's table, from the registry alone (no
 * init, no environment: the same output on every machine). */
static int print_markdown(void)
{
	int n, rc;
	if ((rc = piano_setting_count(&n)))
		return fail("piano_setting_count", rc);
	printf("| Variable | Layer | Default | Accepted values | Meaning |\n");
	printf("| --- | --- | --- | --- | --- |\n");
	for (int i = 0; i < n; i++) {
		struct piano_setting s;
		if ((rc = piano_setting_get(i, &s)))
			return fail("piano_setting_get", rc);
		printf("| `%s` | %s | ", str(s.name), str(s.layer));
		if (*str(s.def)) {
			fputc('`', stdout);
			cell(s.def);
			fputc('`', stdout);
		} else {
			fputs("empty", stdout);
		}
		fputs(" | ", stdout);
		cell(str(s.range));
		fputs(" | ", stdout);
		cell(str(s.help));
		fputs(" |\n", stdout);
	}
	return 0;
}

/* --stats: a repeating ltask that completes itself after a few runs. */
struct counter {
	unsigned runs;
	unsigned limit;
};

static unsigned counter_fn(void *arg)
{
	struct counter *c = arg;
	if (++c->runs >= c->limit)
		piano_ltask_complete(piano_ltask_current());
	return 1;
}

static int run_stats(void)
{
	struct counter c = { 0, 100 };
	piano_ltask_t *t;
	int rc;
	if ((rc = piano_ltask_create(counter_fn, &c, PIANO_LTASK_REPEAT, &t)))
		return fail("piano_ltask_create", rc);
	piano_ltask_set_name(t, "piano-info counter");
	if ((rc = piano_ltask_submit(t))) {
		piano_ltask_destroy(t);
		return fail("piano_ltask_submit", rc);
	}
	for (int i = 0; i < 10; i++) {
		rc = piano_poll();
		if (rc < 0)
			break;
	}
	int wrc = piano_ltask_wait(t);
	piano_ltask_destroy(t);
	if (rc < 0)
		return fail("piano_poll", rc);
	if (wrc)
		return fail("piano_ltask_wait", wrc);
	printf("Statistics (on stderr) after one ltask (%u runs), 10 piano_poll() calls "
	       "and a piano_ltask_wait()\n", c.runs);
	fflush(stdout);
	if ((rc = piano_stats_print()))
		return fail("piano_stats_print", rc);
	fflush(stderr);
	return 0;
}

int main(int argc, char **argv)
{
	int stats = 0, markdown = 0;
	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--stats") == 0) {
			stats = 1;
		} else if (strcmp(argv[i], "--markdown") == 0) {
			markdown = 1;
		} else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "%s: unknown option '%s'\n", prog, argv[i]);
			usage(stderr);
			return 2;
		}
	}

	int rc = piano_settings_register(PMPI_LAYER, pmpi_settings_table, pmpi_settings_count);
	if (rc)
		return fail("piano_settings_register", rc);
	if (markdown)
		return print_markdown();

	rc = piano_init();
	if (rc)
		return fail("piano_init", rc);

	printf("piano %s (library API %d.%d.%d)\n\n", PIANO_VERSION_STRING,
	       PIANO_VERSION_MAJOR, PIANO_VERSION_MINOR, PIANO_VERSION_PATCH);

	int status = 0;
	hwloc_topology_t topo;
	if ((rc = piano_topology_get(&topo)))
		status = fail("piano_topology_get", rc);
	else
		print_topology(topo);
	if (!status) {
		printf("\n");
		status = print_queues();
	}
	if (!status) {
		printf("\n");
		status = print_threads();
	}
	if (!status) {
		printf("\n");
		status = print_scheduling();
	}
	if (!status) {
		printf("\n");
		status = print_local();
	}
	if (!status) {
		printf("\n");
		status = print_settings();
	}
	if (!status)
		status = print_unknown();
	if (!status && stats) {
		printf("\n");
		status = run_stats();
	}

	fflush(stdout);
	if ((rc = piano_finalize()))
		return fail("piano_finalize", rc);
	if (!status)
		printf("\npiano-info: done\n");
	return status;
}

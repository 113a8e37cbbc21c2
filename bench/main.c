/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * piano-bench-core: micro-benchmarks of the core engine.
 *
 *   piano-bench-core [--quick] [--csv] [--only NAME[,NAME...]] [--list]
 *
 * Every benchmark configures the engine itself (setenv() then piano_init()),
 * prints a header block of "# " lines and a table of medians over
 * repetitions. The exit status says whether every selected benchmark ran and
 * printed its table; it never depends on performance.
 */
#include "benches.h"
#include "common.h"

#include <stdlib.h>
#include <string.h>

struct bench {
	const char *name;
	const char *desc;
	int (*run)(void);
	/* Run only when named (--only): it keeps every CPU busy for seconds
	 * with processes of its own, which would disturb the tests that
	 * ctest runs beside the smoke run. */
	bool opt_in;
};

static const struct bench benches[] = {
	{ "poll", "explicit poll cost per ltask, submit+poll+complete throughput", bench_poll,
	  false },
	{ "submit", "submission throughput under contention vs a mutex queue", bench_submit,
	  false },
	{ "reaction", "submit-to-execution latency per polling point", bench_reaction, false },
	{ "interference", "slowdown of a compute loop caused by idle/timer threads",
	  bench_interference, false },
	{ "cond", "piano_cond wake-up latency, spinning vs blocked waiter", bench_cond, false },
	{ "groups",
	  "other processes' CPU beside an engine, each process its own scheduling group "
	  "(only with --only)",
	  bench_groups, true },
};
#define NBENCH ((int)(sizeof(benches) / sizeof(benches[0])))

static void usage(FILE *f)
{
	fprintf(f, "usage: piano-bench-core [--quick] [--csv] [--only NAME[,NAME...]] [--list]\n"
	           "  --quick   small sample counts (whole suite < 60 s on 2 cores)\n"
	           "  --csv     print CSV rows (header lines still start with '#')\n"
	           "  --only    run only the named benchmarks\n"
	           "  --list    list the benchmarks and exit\n"
	           "benchmarks:\n");
	for (int i = 0; i < NBENCH; i++)
		fprintf(f, "  %-13s %s\n", benches[i].name, benches[i].desc);
}

/* Marks the benchmarks named in a comma-separated list. */
static int select_benches(const char *list, bool *sel)
{
	char *copy = strdup(list);
	if (!copy)
		return -1;
	int rc = 0;
	char *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		int found = 0;
		for (int i = 0; i < NBENCH; i++)
			if (strcmp(tok, benches[i].name) == 0) {
				sel[i] = true;
				found = 1;
			}
		if (!found) {
			fprintf(stderr, "piano-bench-core: unknown benchmark '%s'\n", tok);
			rc = -1;
		}
	}
	free(copy);
	return rc;
}

int main(int argc, char **argv)
{
	bool sel[NBENCH] = { false };
	bool any = false;
	for (int i = 1; i < argc; i++) {
		const char *a = argv[i];
		if (strcmp(a, "--quick") == 0) {
			bench_opt.quick = true;
		} else if (strcmp(a, "--csv") == 0) {
			bench_opt.csv = true;
		} else if (strcmp(a, "--only") == 0 || strncmp(a, "--only=", 7) == 0) {
			const char *list = a[6] == '=' ? a + 7 : (i + 1 < argc ? argv[++i] : NULL);
			if (!list || select_benches(list, sel) != 0) {
				usage(stderr);
				return 2;
			}
			any = true;
		} else if (strcmp(a, "--list") == 0) {
			for (int b = 0; b < NBENCH; b++)
				printf("%s\n", benches[b].name);
			return 0;
		} else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
			usage(stdout);
			return 0;
		} else {
			fprintf(stderr, "piano-bench-core: unknown option '%s'\n", a);
			usage(stderr);
			return 2;
		}
	}
	uint64_t t0 = now_ns();
	for (int i = 0; i < NBENCH; i++) {
		if (any ? !sel[i] : benches[i].opt_in)
			continue;
		int before = bench_rows_printed;
		struct load_sample l0, l1;
		load_sample(&l0);
		uint64_t b0 = now_ns();
		if (benches[i].run() != 0) {
			fprintf(stderr, "piano-bench-core: benchmark '%s' failed\n",
			        benches[i].name);
			return 1;
		}
		if (bench_rows_printed == before) {
			fprintf(stderr, "piano-bench-core: benchmark '%s' printed no rows\n",
			        benches[i].name);
			return 1;
		}
		double secs = (double)(now_ns() - b0) / 1e9, other, steal;
		load_sample(&l1);
		if (load_delta(&l0, &l1, &other, &steal))
			printf("# %s: done in %.1f s; meanwhile other processes used %.1f %% of "
			       "the "
			       "machine's CPU time, steal %.1f %%\n\n",
			       benches[i].name, secs, other, steal);
		else
			printf("# %s: done in %.1f s\n\n", benches[i].name, secs);
		fflush(stdout);
	}
	printf("# piano-bench-core: all done in %.1f s\n", (double)(now_ns() - t0) / 1e9);
	return 0;
}

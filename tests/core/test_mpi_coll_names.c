/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * PIANO_COLL's parser (src/mpi/settings.c, no MPI): every collective name
 * is accepted alone and selects a bit of its own, `graph` selects all of
 * them and nothing else, and malformed values are rejected with a reason.
 * A name missing from the parser's table (its collective would silently
 * stay the MPI's under `graph`) fails here.
 */
#include "settings.h"

#include <stdio.h>
#include <string.h>

static const char *const names[] = { "ibarrier",
	                             "ibcast",
	                             "ireduce",
	                             "iallreduce",
	                             "ialltoall",
	                             "iallgather",
	                             "igather",
	                             "iscatter",
	                             "ireduce_scatter",
	                             "ireduce_scatter_block",
	                             "iscan",
	                             "iexscan",
	                             "ineighbor_allgather",
	                             "ineighbor_alltoall" };
enum { N = sizeof(names) / sizeof(names[0]) };

static int fails;

static void expect(int cond, const char *what)
{
	if (!cond) {
		printf("FAIL: %s\n", what);
		fails++;
	}
}

int main(void)
{
	char why[256], value[512];
	unsigned mask = 0, all = 0, seen = 0;
	expect(pmpi_coll_parse("native", &mask, why, sizeof(why)) == 0 && mask == 0, "native");
	expect(pmpi_coll_parse("graph", &all, why, sizeof(why)) == 0, "graph");
	snprintf(value, sizeof(value), "graph:");
	for (int i = 0; i < N; i++) {
		char one[64];
		snprintf(one, sizeof(one), "graph:%s", names[i]);
		mask = 0;
		int rc = pmpi_coll_parse(one, &mask, why, sizeof(why));
		expect(rc == 0, one);
		expect(rc || (mask && !(mask & (mask - 1))), "one bit per name");
		expect(rc || !(mask & seen), "a bit of its own");
		expect(rc || (mask & all) == mask, "graph selects it");
		seen |= mask;
		strcat(value, names[i]);
		if (i + 1 < N)
			strcat(value, ",");
	}
	expect(seen == all, "graph selects the named ones and nothing else");
	expect(pmpi_coll_parse(value, &mask, why, sizeof(why)) == 0 && mask == all,
	       "the full list equals graph");
	static const char *const bad[] = { "",
		                           "Graph",
		                           "graph:",
		                           "graph:ibcast,",
		                           "graph:bogus",
		                           "graph:ibcast,,iscan",
		                           "natives",
		                           "graph:ibcastx" };
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		why[0] = '\0';
		expect(pmpi_coll_parse(bad[i], &mask, why, sizeof(why)) != 0 && why[0], bad[i]);
	}
	if (!fails)
		printf("PIANO_COLL names: all checks passed\n");
	return fails ? 1 : 0;
}

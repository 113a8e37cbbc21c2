/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * piano stays out of the processes a rank starts. Run through piano-run
 * with LD_PRELOAD already naming the user's own libraries; every rank
 * checks that piano is loaded in itself, then starts a shell (popen) that
 * reports its LD_PRELOAD and whether piano is mapped in it: the shell must
 * see exactly the user's entries, in order (no LD_PRELOAD at all when the
 * user had none), and no piano. It also times system("/bin/true") children
 * (reported, not checked: the machine is shared).
 * usage: test_preload [ENTRY...]: the LD_PRELOAD entries the child must see.
 */
#include "mpitest.h"

#include <stdbool.h>
#include <string.h>
#include <time.h>

#define NTRUE 20

/* True if /proc/self/maps names a libpiano-mpi library. */
static bool piano_mapped(void)
{
	FILE *f = fopen("/proc/self/maps", "r");
	if (!f)
		return false;
	char line[4096];
	bool found = false;
	while (!found && fgets(line, sizeof line, f))
		found = strstr(line, "libpiano-mpi-") != NULL;
	fclose(f);
	return found;
}

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (!piano_mapped()) {
		fprintf(stderr, "rank %d: piano is not loaded: run this test through piano-run\n",
		        rank);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}

	/* Line 1: "unset" or "=<LD_PRELOAD>"; line 2: how many lines of the
	 * shell's own maps name piano. */
	FILE *p = popen("if [ -n \"${LD_PRELOAD+x}\" ]; then printf '=%s\\n' \"$LD_PRELOAD\"; "
	                "else echo unset; fi; grep -c libpiano-mpi- /proc/$$/maps",
	                "r");
	CHECK(p != NULL);
	char env[8192] = "", maps[64] = "";
	CHECK(fgets(env, sizeof env, p) != NULL);
	CHECK(fgets(maps, sizeof maps, p) != NULL);
	pclose(p);
	env[strcspn(env, "\n")] = '\0';
	maps[strcspn(maps, "\n")] = '\0';

	bool ok = true;
	if (strcmp(maps, "0") != 0) {
		fprintf(stderr, "rank %d: piano is loaded in the child (%s lines of its maps)\n",
		        rank, maps);
		ok = false;
	}
	if (argc == 1) {
		if (strcmp(env, "unset") != 0) {
			fprintf(stderr, "rank %d: child LD_PRELOAD '%s', expected none\n", rank,
			        env + 1);
			ok = false;
		}
	} else if (env[0] != '=') {
		fprintf(stderr, "rank %d: child has no LD_PRELOAD; expected the user's entries\n",
		        rank);
		ok = false;
	} else {
		/* The loader separates entries by ':' or ' '. */
		int i = 1;
		for (char *save, *e = strtok_r(env + 1, ": ", &save); e;
		     e = strtok_r(NULL, ": ", &save), i++) {
			if (i >= argc || strcmp(e, argv[i]) != 0) {
				fprintf(stderr, "rank %d: child LD_PRELOAD entry %d is '%s', expected '%s'\n",
				        rank, i, e, i < argc ? argv[i] : "(none)");
				ok = false;
			}
		}
		if (i != argc) {
			fprintf(stderr, "rank %d: child LD_PRELOAD has %d entries, expected %d\n",
			        rank, i - 1, argc - 1);
			ok = false;
		}
	}

	double t0 = now_ms();
	for (int i = 0; i < NTRUE; i++)
		CHECK(system("/bin/true") == 0);
	printf("rank %d: system(\"/bin/true\") %.1f ms on average (%d runs)\n", rank,
	       (now_ms() - t0) / NTRUE, NTRUE);

	int all = 0, mine = ok;
	MPI_Allreduce(&mine, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
	MPI_Finalize();
	if (all && rank == 0)
		printf("preload: children start without piano\n");
	return all ? 0 : 1;
}

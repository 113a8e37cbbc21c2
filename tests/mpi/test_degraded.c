/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * piano without its threads must say so once on stderr (a line tagged with
 * the rank), start no thread (explicit-polling mode), and keep MPI working:
 *   level      an MPI that does not give MPI_THREAD_MULTIPLE (simulated
 *              with PIANO_MPI_THREAD_LEVEL=serialized);
 *   nothreads  threads cannot be created (fail_threads.so preloaded by
 *              CTest): piano degrades instead of aborting the job;
 *   async      MPICH's own progress thread is on (CTest sets
 *              MPIR_CVAR_ASYNC_PROGRESS=1): piano does not add its own,
 *              and says so only with PIANO_STATS=1 (CTest sets it): the
 *              user chose that thread, and a line on every rank would
 *              change the program's output (MPICH's own test suite fails
 *              pt2pt/sendrecv2 on it);
 *   async_quiet  the same without PIANO_STATS: no line at all.
 */
#include "mpitest.h"

#include <dirent.h>
#include <string.h>
#include <unistd.h>

#define LEN (1 << 20)

static int count_piano_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;
	while (d && (de = readdir(d))) {
		char path[300], name[32] = "";
		snprintf(path, sizeof(path), "/proc/self/task/%s/comm", de->d_name);
		FILE *f = fopen(path, "r");
		if (f && fgets(name, sizeof(name), f) && strncmp(name, "piano-", 6) == 0)
			n++;
		if (f)
			fclose(f);
	}
	if (d)
		closedir(d);
	return n;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "level";
	int level = strcmp(mode, "level") == 0;
	if (level)
		setenv("PIANO_MPI_THREAD_LEVEL", "serialized", 1);
	/* Capture what MPI_Init_thread prints on stderr. */
	char path[] = "/tmp/piano-degraded-XXXXXX";
	int fd = mkstemp(path), saved = dup(2);
	if (fd < 0 || saved < 0 || dup2(fd, 2) < 0)
		return 1;
	int provided, rank;
	MPI_Init_thread(&argc, &argv, level ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE, &provided);
	fflush(stderr);
	dup2(saved, 2);
	char log[4096] = "";
	ssize_t n = pread(fd, log, sizeof(log) - 1, 0);
	log[n > 0 ? n : 0] = '\0';
	close(fd);
	unlink(path);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	if (strcmp(mode, "async_quiet") == 0) {
		if (log[0])
			fprintf(stderr, "rank %d: expected no output; got: '%s'\n", rank, log);
		CHECK(log[0] == '\0');
	} else {
		if (!strstr(log, "explicit-polling mode"))
			fprintf(stderr, "rank %d: no warning on stderr; got: '%s'\n", rank, log);
		CHECK(strstr(log, "explicit-polling mode") != NULL);
		CHECK(strstr(strstr(log, "explicit-polling mode") + 1, "explicit-polling mode") ==
		      NULL);
		CHECK(strstr(log, "(rank ") != NULL);
	}
	CHECK(provided == (level ? MPI_THREAD_SINGLE : MPI_THREAD_MULTIPLE));
	CHECK(count_piano_threads() == 0);

	char *buf = malloc(LEN);
	CHECK(buf);
	memset(buf, rank ? 0 : 'd', LEN);
	MPI_Request r;
	if (rank == 0)
		MPI_Isend(buf, LEN, MPI_CHAR, 1, 5, MPI_COMM_WORLD, &r);
	else
		MPI_Irecv(buf, LEN, MPI_CHAR, 0, 5, MPI_COMM_WORLD, &r);
	CHECK_MPI(MPI_Wait(&r, MPI_STATUS_IGNORE));
	if (rank == 1)
		CHECK(buf[0] == 'd' && buf[LEN - 1] == 'd');
	free(buf);
	if (rank == 0)
		printf("degraded (%s): warned once, no piano thread, traffic works\n",
		       mode);
	MPI_Finalize();
	return 0;
}

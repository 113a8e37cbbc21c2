/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Tracking stays exact on every completion path: after success, errors
 * (MPI_ERR_IN_STATUS from Waitall and Testall, a failed Wait, Waitany and
 * Waitsome), cancel, Request_free and persistent requests, once the
 * application has completed its requests (those an error left
 * MPI_ERR_PENDING too) nothing is left pending, so the progress task stops and the process uses no CPU while the
 * application sleeps. Receives are larger than any eager limit (tracked);
 * truncation makes the errors. Two ranks, errors returned.
 */
#include "mpitest.h"

#include <string.h>
#include <time.h>

#define BUF (1 << 20)       /* receive buffer: tracked */
#define MSG (2 << 20)       /* message: truncated into BUF */
#define QUIET_MS 250

static int rank;
static char *sbuf, *rbuf, *rbuf2;

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* After `what`, the process must be idle: a progress task left running
 * (something still counted pending) keeps an idle thread polling. */
static int check_idle(const char *what)
{
	MPI_Barrier(MPI_COMM_WORLD);
	sleep_ms(50); /* past PIANO_MPI_LINGER_US */
	double c0 = cpu_s();
	sleep_ms(QUIET_MS);
	double used = (cpu_s() - c0) * 1000.0;
	int bad = used > 0.3 * QUIET_MS;
	printf("rank %d: after %-22s %6.1f ms of CPU in %d ms%s\n", rank, what, used, QUIET_MS,
	       bad ? "  <- engine still busy" : "");
	fflush(stdout);
	return bad;
}

/* Rank 0 sends `n` messages of MSG bytes (too large for rank 1's buffers). */
static void send_big(int n, int tag)
{
	for (int i = 0; i < n; i++)
		CHECK_MPI(MPI_Send(sbuf, MSG, MPI_CHAR, 1, tag, MPI_COMM_WORLD));
}

static void recv2(MPI_Request r[2], int tag)
{
	CHECK_MPI(MPI_Irecv(rbuf, BUF, MPI_CHAR, 0, tag, MPI_COMM_WORLD, &r[0]));
	CHECK_MPI(MPI_Irecv(rbuf2, BUF, MPI_CHAR, 0, tag, MPI_COMM_WORLD, &r[1]));
}

/* Waitall again on what an MPI_ERR_IN_STATUS left MPI_ERR_PENDING (the MPI
 * stops at the first failure): the application owns those requests. */
static void finish_pending(MPI_Request r[2])
{
	for (int i = 0; i < 3 && (r[0] != MPI_REQUEST_NULL || r[1] != MPI_REQUEST_NULL); i++)
		MPI_Waitall(2, r, MPI_STATUSES_IGNORE);
	CHECK(r[0] == MPI_REQUEST_NULL && r[1] == MPI_REQUEST_NULL);
}

static int truncated(int rc)
{
	int cls = MPI_SUCCESS;
	MPI_Error_class(rc, &cls);
	return cls == MPI_ERR_TRUNCATE;
}

int main(int argc, char **argv)
{
	int size, bad = 0;
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "needs 2 ranks\n");
		MPI_Finalize();
		return 77;
	}
	MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
	sbuf = calloc(MSG, 1);
	rbuf = malloc(BUF);
	rbuf2 = malloc(BUF);
	CHECK(sbuf && rbuf && rbuf2);
	MPI_Request r[2];
	MPI_Status st[2];
	int rc, flag, idx, out, ids[2];

	bad |= check_idle("start");

	/* Success. */
	if (rank == 0) {
		for (int i = 0; i < 2; i++)
			CHECK_MPI(MPI_Send(sbuf, BUF, MPI_CHAR, 1, 1, MPI_COMM_WORLD));
	} else {
		recv2(r, 1);
		CHECK_MPI(MPI_Waitall(2, r, st));
	}
	bad |= check_idle("Waitall");

	/* Waitall: MPI_ERR_IN_STATUS, both truncated. */
	if (rank == 0) {
		send_big(2, 2);
	} else {
		recv2(r, 2);
		rc = MPI_Waitall(2, r, st);
		CHECK(rc == MPI_ERR_IN_STATUS && truncated(st[0].MPI_ERROR));
		CHECK(st[1].MPI_ERROR == MPI_ERR_PENDING || truncated(st[1].MPI_ERROR));
		finish_pending(r);
	}
	bad |= check_idle("Waitall error");

	/* Same, statuses ignored. */
	if (rank == 0) {
		send_big(2, 3);
	} else {
		recv2(r, 3);
		CHECK(MPI_Waitall(2, r, MPI_STATUSES_IGNORE) == MPI_ERR_IN_STATUS);
		finish_pending(r);
	}
	bad |= check_idle("Waitall error, ignored");

	/* Testall. */
	if (rank == 0) {
		send_big(2, 4);
	} else {
		recv2(r, 4);
		do
			rc = MPI_Testall(2, r, &flag, st);
		while (rc == MPI_SUCCESS && !flag);
		CHECK(rc == MPI_ERR_IN_STATUS);
		finish_pending(r);
	}
	bad |= check_idle("Testall error");

	/* Wait, Waitany, Waitsome on one truncated receive each. */
	if (rank == 0) {
		send_big(3, 5);
	} else {
		CHECK_MPI(MPI_Irecv(rbuf, BUF, MPI_CHAR, 0, 5, MPI_COMM_WORLD, &r[0]));
		CHECK(truncated(MPI_Wait(&r[0], &st[0])));
		CHECK_MPI(MPI_Irecv(rbuf, BUF, MPI_CHAR, 0, 5, MPI_COMM_WORLD, &r[0]));
		CHECK(truncated(MPI_Waitany(1, r, &idx, &st[0])));
		CHECK_MPI(MPI_Irecv(rbuf, BUF, MPI_CHAR, 0, 5, MPI_COMM_WORLD, &r[0]));
		rc = MPI_Waitsome(1, r, &out, ids, st);
		CHECK(rc == MPI_ERR_IN_STATUS || truncated(rc));
	}
	bad |= check_idle("Wait/any/some error");

	/* Cancel of a receive nothing matches. */
	if (rank == 1) {
		CHECK_MPI(MPI_Irecv(rbuf, BUF, MPI_CHAR, 0, 6, MPI_COMM_WORLD, &r[0]));
		CHECK_MPI(MPI_Cancel(&r[0]));
		CHECK_MPI(MPI_Wait(&r[0], &st[0]));
		MPI_Test_cancelled(&st[0], &flag);
		CHECK(flag);
	}
	bad |= check_idle("Cancel");

	/* Request_free of an active receive; the message still lands. */
	if (rank == 1) {
		CHECK_MPI(MPI_Irecv(rbuf, BUF, MPI_CHAR, 0, 7, MPI_COMM_WORLD, &r[0]));
		CHECK_MPI(MPI_Request_free(&r[0]));
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0)
		CHECK_MPI(MPI_Send(sbuf, BUF, MPI_CHAR, 1, 7, MPI_COMM_WORLD));
	bad |= check_idle("Request_free");

	/* Persistent: success, then an error, then freed. */
	if (rank == 0) {
		CHECK_MPI(MPI_Send(sbuf, BUF, MPI_CHAR, 1, 8, MPI_COMM_WORLD));
		send_big(1, 8);
	} else {
		CHECK_MPI(MPI_Recv_init(rbuf, BUF, MPI_CHAR, 0, 8, MPI_COMM_WORLD, &r[0]));
		CHECK_MPI(MPI_Start(&r[0]));
		CHECK_MPI(MPI_Wait(&r[0], &st[0]));
		CHECK_MPI(MPI_Start(&r[0]));
		CHECK(truncated(MPI_Wait(&r[0], &st[0])));
	}
	bad |= check_idle("persistent error");
	/* Open MPI 4.1 frees a persistent request whose wait failed. */
	if (rank == 1 && r[0] != MPI_REQUEST_NULL)
		CHECK_MPI(MPI_Request_free(&r[0]));

	int any = 0;
	MPI_Allreduce(&bad, &any, 1, MPI_INT, MPI_LOR, MPI_COMM_WORLD);
	free(sbuf);
	free(rbuf);
	free(rbuf2);
	MPI_Finalize();
	if (rank == 0)
		printf(any ? "idle_after: FAILED\n" : "idle_after: all checks passed\n");
	return any ? 1 : 0;
}

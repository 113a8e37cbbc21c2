/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Graph engine: COPY nodes, on one rank (MPI_COMM_SELF). A copy between
 * two dense layouts (no gap inside or between elements) is one memmove at
 * the types' true lower bounds; any other goes through MPI_Pack and
 * MPI_Unpack. Each case is checked against what MPI_Pack/MPI_Unpack give,
 * byte for byte, gaps included (they must stay untouched):
 *   - MPI_INT to MPI_INT, and MPI_INT to MPI_BYTE (different types, same
 *     bytes);
 *   - a dense derived type whose data lies below its start (an hindexed
 *     type at displacement -8: true lower bound -8);
 *   - a dense type shifted by MPI_Type_create_resized (lb != true lb);
 *   - MPI_DOUBLE_INT, whose elements have a gap (size 12, extent 16);
 *   - a vector (gaps between blocks) to a contiguous layout and back;
 *   - overlapping source and destination (as an in-place collective may
 *     give): the result of copying the whole source first, dense layouts
 *     and a vector packed onto itself as ints (a copy that packs straight
 *     into its destination would read what it already wrote);
 *   - zero elements: nothing written.
 */
#include "mpitest.h"

#include <piano/graph.h>
#include <string.h>

#define N 64
#define BYTES 1024

/* Runs a one-node graph copying (src, sc, st) to (dst, dc, dt). */
static void graph_copy(const void *src, int sc, MPI_Datatype st, void *dst, int dc, MPI_Datatype dt)
{
	piano_graph_t *g;
	int node;
	CHECK(piano_graph_create(MPI_COMM_SELF, &g) == 0);
	CHECK(piano_graph_add_copy(g, src, sc, st, dst, dc, dt, &node) == 0);
	CHECK(piano_graph_commit(g) == 0);
	CHECK(piano_graph_start(g) == 0);
	CHECK(piano_graph_wait(g) == 0);
	CHECK(piano_graph_free(g) == 0);
}

/* The same copy by MPI_Pack and MPI_Unpack. */
static void mpi_copy(const void *src, int sc, MPI_Datatype st, void *dst, int dc, MPI_Datatype dt)
{
	static char pack[BYTES];
	int pos = 0, upos = 0;
	CHECK_MPI(MPI_Pack(src, sc, st, pack, BYTES, &pos, MPI_COMM_SELF));
	CHECK_MPI(MPI_Unpack(pack, pos, &upos, dst, dc, dt, MPI_COMM_SELF));
}

/* Source bytes 0, 1, 2...; both destinations filled with 0xEE (the gaps'
 * sentinel); both copies made from offset `so` to offset `dof` of the
 * arrays; the destinations must be equal, and the copy must have written
 * something unless it moves 0 bytes. */
static void check_case(const char *name, int so, int sc, MPI_Datatype st, int dof, int dc,
                       MPI_Datatype dt)
{
	static char src[BYTES], got[BYTES], want[BYTES];
	for (int i = 0; i < BYTES; i++)
		src[i] = (char)i;
	memset(got, 0xEE, BYTES);
	memset(want, 0xEE, BYTES);
	graph_copy(src + so, sc, st, got + dof, dc, dt);
	mpi_copy(src + so, sc, st, want + dof, dc, dt);
	int size;
	CHECK_MPI(MPI_Type_size(st, &size));
	char untouched[BYTES];
	memset(untouched, 0xEE, BYTES);
	if (memcmp(got, want, BYTES) || (size * sc > 0 && !memcmp(got, untouched, BYTES))) {
		fprintf(stderr, "copy '%s': graph and MPI_Pack/MPI_Unpack differ\n", name);
		exit(1);
	}
}

/* Overlap: copy ints [0, N) of a buffer to ints [4, N + 4) of the same
 * buffer; the result must be the original values shifted. */
static void check_overlap(void)
{
	int buf[N + 4];
	for (int i = 0; i < N + 4; i++)
		buf[i] = i;
	graph_copy(buf, N, MPI_INT, buf + 4, N, MPI_INT);
	for (int i = 0; i < 4; i++)
		CHECK(buf[i] == i);
	for (int i = 0; i < N; i++)
		if (buf[i + 4] != i) {
			fprintf(stderr, "overlapping copy: element %d is %d, want %d\n", i + 4,
			        buf[i + 4], i);
			exit(1);
		}
}

/* A vector of 8 blocks of 2 ints, stride 3, copied as 16 ints into its
 * own span, 8 ints ahead (element 9 is written by the first block and read
 * by the fourth). */
static void check_overlap_packed(MPI_Datatype vec)
{
	int buf[N], want[N];
	for (int i = 0; i < N; i++)
		buf[i] = want[i] = i;
	int pos = 0;
	char packed[16 * sizeof(int)];
	CHECK_MPI(MPI_Pack(buf, 1, vec, packed, sizeof(packed), &pos, MPI_COMM_SELF));
	memcpy(want + 8, packed, sizeof(packed));
	graph_copy(buf, 1, vec, buf + 8, 16, MPI_INT);
	for (int i = 0; i < N; i++)
		if (buf[i] != want[i]) {
			fprintf(stderr, "vector packed onto itself: element %d is %d, want %d\n", i,
			        buf[i], want[i]);
			exit(1);
		}
}

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);

	check_case("int to int", 0, N, MPI_INT, 16, N, MPI_INT);
	check_case("int to byte", 4, N, MPI_INT, 0, N * 4, MPI_BYTE);

	/* Dense, data below the start: one block of 4 ints at byte -8. */
	MPI_Datatype below;
	int len = 4;
	MPI_Aint disp = -8;
	CHECK_MPI(MPI_Type_create_hindexed(1, &len, &disp, MPI_INT, &below));
	CHECK_MPI(MPI_Type_commit(&below));
	check_case("true lower bound -8", 64, 8, below, 128, 8, below);
	check_case("true lower bound -8 to char", 64, 8, below, 0, 128, MPI_CHAR);

	/* Dense, resized: lb -4, extent 4, data at 0. */
	MPI_Datatype shifted;
	CHECK_MPI(MPI_Type_create_resized(MPI_INT, -4, 4, &shifted));
	CHECK_MPI(MPI_Type_commit(&shifted));
	check_case("resized int", 8, N, shifted, 300, N, shifted);

	/* Gaps inside each element. */
	check_case("double_int", 0, 16, MPI_DOUBLE_INT, 8, 16, MPI_DOUBLE_INT);
	check_case("double_int to bytes", 0, 16, MPI_DOUBLE_INT, 0, 16 * 12, MPI_BYTE);

	/* Gaps between blocks. */
	MPI_Datatype vec;
	CHECK_MPI(MPI_Type_vector(8, 2, 3, MPI_INT, &vec));
	CHECK_MPI(MPI_Type_commit(&vec));
	check_case("vector to ints", 0, 2, vec, 0, 32, MPI_INT);
	check_case("ints to vector", 0, 32, MPI_INT, 4, 2, vec);

	check_case("zero elements", 0, 0, MPI_INT, 0, 0, MPI_INT);
	check_overlap();
	check_overlap_packed(vec);

	MPI_Type_free(&vec);
	MPI_Type_free(&shifted);
	MPI_Type_free(&below);
	MPI_Finalize();
	printf("graph COPY nodes: dense, shifted, gapped and overlapping layouts as "
	       "MPI_Pack/MPI_Unpack\n");
	return 0;
}

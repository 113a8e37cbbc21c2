/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Graph engine: one step goes as far as the graph can without waiting. On
 * one rank (MPI_COMM_SELF), a chain of 16 links, each a receive from self
 * and the send to self that the previous link's receive releases: every
 * message is a few bytes, so each send and its receive complete at their
 * first test, and the whole chain can finish without waiting for anyone.
 * piano_graph_start's own step must therefore end the graph, and a single
 * piano_graph_test must report it done. A step that made one pass (one
 * PMPI_Testsome) finished one link per call. piano's background steps are
 * off (no idle thread, no timer), so only the application's calls advance
 * the graph.
 */
#include "mpitest.h"

#include <piano/graph.h>

#define LINKS 16

int main(int argc, char **argv)
{
	int provided;
	MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
	if (provided < MPI_THREAD_MULTIPLE) {
		MPI_Finalize();
		return 77;
	}
	int in[LINKS], out[LINKS];
	piano_graph_t *g;
	CHECK(piano_graph_create(MPI_COMM_SELF, &g) == 0);
	int prev_recv = -1;
	for (int k = 0; k < LINKS; k++) {
		int s, r;
		out[k] = 100 + k;
		in[k] = -1;
		CHECK(piano_graph_add_recv(g, &in[k], 1, MPI_INT, 0, k, &r) == 0);
		CHECK(piano_graph_add_send(g, &out[k], 1, MPI_INT, 0, k, &s) == 0);
		if (prev_recv >= 0)
			CHECK(piano_graph_add_edge(g, prev_recv, s) == 0);
		prev_recv = r;
	}
	CHECK(piano_graph_commit(g) == 0);
	CHECK(piano_graph_start(g) == 0);
	int flag = 0;
	CHECK(piano_graph_test(g, &flag) == 0);
	if (!flag) {
		fprintf(stderr, "graph step: the chain did not finish in one test\n");
		return 1;
	}
	for (int k = 0; k < LINKS; k++)
		CHECK(in[k] == 100 + k);
	CHECK(piano_graph_free(g) == 0);
	printf("graph step: the chain finished in one step\n");
	MPI_Finalize();
	return 0;
}

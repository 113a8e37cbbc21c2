/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The running graphs of the process (graph_list.c), which the MPI layer's
 * progress task advances in the background.
 */
#ifndef PIANO_COLL_GRAPH_LIST_H
#define PIANO_COLL_GRAPH_LIST_H

#include <piano/graph.h>

/* How many graphs run; one background step of each that no other thread is
 * advancing (returns the nodes finished). The caller goes through the gate. */
long graphs_running(void);
unsigned graphs_progress(void);

/* A started graph is listed until a step ends its run; the step's caller
 * unlists it before publishing the final state. */
void graph_list_add(piano_graph_t *g);
void graph_list_remove(piano_graph_t *g);

#endif

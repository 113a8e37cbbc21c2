/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Where the calling thread runs (location.c), cached per thread: calls the
 * topology.
 */
#ifndef PIANO_LOCATION_H
#define PIANO_LOCATION_H

#include "state.h"

/* Leaf queue of the CPU the calling thread runs on. */
int location_leaf(struct piano_engine *e);
/* Smallest queue containing the calling thread's binding. */
int location_bind_queue(struct piano_engine *e);

#endif

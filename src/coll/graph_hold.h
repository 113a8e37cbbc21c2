/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The running graphs' hold on piano's timer (PIANO_TIMER_MODE=demand,
 * docs/mpi.md, "Do no harm"): wanted while a graph runs that no thread is
 * busy with. A thread that runs a graph's large local work (reductions,
 * copies) holds the graph's lock throughout, so a tick meanwhile could only
 * find the graph taken (graphs_progress() uses trylock) and take the core
 * from that work: such a graph is set aside for the duration.
 *
 * Protocol: the counts and `held` change under one mutex (a leaf: callers
 * may hold a graph's lock or the running list's), so the hold follows the
 * transitions in order and the last update reflects the final counts.
 */
#ifndef PIANO_COLL_GRAPH_HOLD_H
#define PIANO_COLL_GRAPH_HOLD_H

#include <stdbool.h>
#include <stddef.h>

/* A graph starts running (+1) or stops (-1) (graph_list.c). A graph that
 * starts while others keep the hold renews the timer's period: a timer
 * backed off while they waited for their peers ticks for it at once. */
void graph_hold_run(int delta);

/* Local work of at least this many bytes ready in one step is set aside.
 * Setting aside may cost two timerfd updates (2.7 us here, when the timer
 * ticks periodically and nothing else holds it); a tick, due with the
 * probability work / period (1 ms), takes the core for tens of us
 * (46 us measured beside a triad). A sum of 4 MiB of doubles took 104 us
 * here (bench_share), 1 MiB 23 us: at 1 MiB the updates would cost more
 * than the ticks they save. */
#define GRAPH_ASIDE_MIN ((size_t)4 << 20)

/* The calling thread, holding a running graph's lock, begins or ends its
 * large local work. */
void graph_hold_aside_begin(void);
void graph_hold_aside_end(void);

#endif

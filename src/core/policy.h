/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Polling policy (policy.c): which queues each polling point runs, and the
 * bookkeeping of a round.
 */
#ifndef PIANO_POLICY_H
#define PIANO_POLICY_H

#include "queue.h"

#include <stdbool.h>
#include <stdint.h>

void poller_init(struct poller *p, struct piano_engine *e, int point);
void poller_end_round(struct poller *p, unsigned work);
unsigned poll_branch(struct poller *p, int leaf);
unsigned poll_all(struct poller *p);
/* The queues an idle thread polls, for an object's cpuset. */
struct poll_span {
	int *down;     /* queues inside the cpuset, polled every round */
	int ndown;
	int cover;     /* deepest queue covering the cpuset: the thread's own level */
	int anchor;    /* first ancestor queue polled at a divided frequency */
};
int poll_span_init(struct piano_engine *e, hwloc_const_cpuset_t set, struct poll_span *s);
void poll_span_free(struct poll_span *s);
/* Round r of an idle thread; *busy: whether a queue of the span held a task. */
unsigned poll_idle(struct poller *p, const struct poll_span *s, uint64_t r, bool *busy);
/* The queues that nobody polled during the last period_ns. */
unsigned poll_unpolled(struct poller *p, uint64_t period_ns);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Light tasks (ltask.c): the task object, how a queue owner or a helper
 * runs it, and where it goes when submitted (queue_push and park_notify,
 * or the hand-off list).
 */
#ifndef PIANO_LTASK_H
#define PIANO_LTASK_H

#include "state.h"

#include <piano/piano.h>

#include <stdatomic.h>
#include <stdint.h>

/* Bits of piano_ltask.req, set by any thread, read by whoever runs the task. */
#define REQ_COMPLETE 1u
#define REQ_CANCEL 2u

/* Bits of piano_ltask.done: the final status, published last (see ltask.c). */
#define DONE_COMPLETED 1u
#define DONE_CANCELED 2u
#define DONE_ANY (DONE_COMPLETED | DONE_CANCELED)

struct piano_ltask {
	/* Immutable while in flight. */
	piano_ltask_fn fn;
	void *arg;
	piano_ltask_block_fn block;
	piano_ltask_dtor_fn dtor;
	uint64_t block_delay_ns;
	unsigned flags;
	int bound_queue;           /* -1 = follow the submitting thread */
	/* Queue it was submitted to; written by the submitter before the push. */
	int queue;
	_Atomic int state;         /* enum piano_ltask_state, diagnostics + CAS at submit */
	_Atomic unsigned req;      /* REQ_* requests */
	piano_cond_t done;         /* DONE_* bits: the only thing waiters trust */
	/* Owned by the submitter until the push (release), then by the queue owner. */
	struct piano_ltask *next;
	uint64_t first_poll_ns;    /* owner: when polling without completion began */
	char name[32];
};

struct poller;

void ltask_finish(struct piano_ltask *t, unsigned done);
/* Pushes t on its queue (t->queue) and wakes parked threads. */
void ltask_enqueue(struct piano_engine *e, struct piano_ltask *t);
unsigned ltask_run(struct poller *p, struct piano_ltask *t);
/* The ltask this thread runs, NULL outside one. Initial-exec: the MPI
 * layer reads it on every blocking call (waitop.h), where the default
 * model's __tls_get_addr() call was 1 % of a ring's samples. 8 bytes of
 * the static TLS block, which glibc keeps also for a library opened
 * after start-up. */
#define LTASK_TLS __attribute__((tls_model("initial-exec")))
extern _Thread_local struct piano_ltask *ltask_current_tls LTASK_TLS;

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The hand-off list (handoff.c): tasks a poller gives to a blocking helper.
 * Calls nothing of piano.
 */
#ifndef PIANO_HANDOFF_H
#define PIANO_HANDOFF_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>

struct piano_engine;
struct piano_ltask;

struct handoff {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct piano_ltask *head;    /* handed-off tasks, protected by lock */
	_Atomic long nfree;          /* helpers ready to take a task */
};

void handoff_init(struct handoff *h);
void handoff_destroy(struct handoff *h);
/* Gives t to a free helper; false if none is free or the engine stops. */
bool handoff_offer(struct piano_engine *e, struct piano_ltask *t);
/* Waits for a task; NULL once the engine stops and none is left. */
struct piano_ltask *handoff_take(struct piano_engine *e);
/* A helper is ready to take a task. */
void handoff_ready(struct handoff *h);
/* Wakes the helpers waiting in handoff_take (the engine stops). */
void handoff_close(struct handoff *h);

#endif

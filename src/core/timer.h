/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The timer thread (timer.c), a polling point: started by piano_init,
 * stopped by piano_finalize after engine->stopping is set.
 */
#ifndef PIANO_TIMER_H
#define PIANO_TIMER_H

#include "state.h"

/* timer_init before the engine is published (holds may come from then
 * on), timer_destroy after it is withdrawn and the thread stopped. */
void timer_init(struct piano_engine *e);
void timer_destroy(struct piano_engine *e);
int timer_start(struct piano_engine *e);
void timer_stop(struct piano_engine *e);
/* With PIANO_STATS or PIANO_TIMER_BUDGET: what the rounds without work
 * cost, and how many ticks the budget put off (stderr). */
void timer_stats_print(struct piano_engine *e);

#endif

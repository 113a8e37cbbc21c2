/*
 * The polling points that are threads: idle threads (idle.c), the timer
 * thread (timer.c) and the blocking helpers (helpers.c). engine.c starts
 * them in this order and stops them after setting engine->stopping.
 */
#ifndef PIANO_THREADS_H
#define PIANO_THREADS_H

#include "state.h"

int idle_start(struct piano_engine *e);
void idle_stop(struct piano_engine *e);
int timer_start(struct piano_engine *e);
void timer_stop(struct piano_engine *e);
int helpers_start(struct piano_engine *e);
void helpers_stop(struct piano_engine *e);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The timer thread (timer.c), a polling point: started by piano_init,
 * stopped by piano_finalize after engine->stopping is set.
 */
#ifndef PIANO_TIMER_H
#define PIANO_TIMER_H

#include "state.h"

int timer_start(struct piano_engine *e);
void timer_stop(struct piano_engine *e);

#endif

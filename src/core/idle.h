/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Idle threads (idle.c), a polling point: started by piano_init, stopped
 * by piano_finalize after engine->stopping is set.
 */
#ifndef PIANO_IDLE_H
#define PIANO_IDLE_H

#include "state.h"

/* Values of engine->idle_state. */
enum { IDLE_RUN, IDLE_PAUSED, IDLE_STOP };

int idle_start(struct piano_engine *e);
void idle_stop(struct piano_engine *e);

#endif

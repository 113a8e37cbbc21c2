/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Blocking helpers (helpers.c), a polling point: started by piano_init,
 * stopped by piano_finalize after engine->stopping is set.
 */
#ifndef PIANO_HELPERS_H
#define PIANO_HELPERS_H

#include "state.h"

int helpers_start(struct piano_engine *e);
void helpers_stop(struct piano_engine *e);

#endif

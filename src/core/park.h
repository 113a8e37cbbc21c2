/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Parking (park.c): idle and timer threads sleep while no queue holds a
 * task; a submission wakes them. Both halves are in park.c.
 */
#ifndef PIANO_PARK_H
#define PIANO_PARK_H

#include "state.h"

#include <stdint.h>

/* Sleeper half. */
void park_wait(struct piano_engine *e, uint64_t timeout_ns);
void park_nap(struct piano_engine *e, uint64_t ns);
/* Waker half: park_notify right after queue_push; park_wake to stop. */
void park_notify(struct piano_engine *e);
void park_wake(struct piano_engine *e);

#endif

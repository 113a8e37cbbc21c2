/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Completion objects (cond.c): the public piano_cond_* calls on the status
 * word, and the futex sleep a waiter ends with. Calls only the platform.
 */
#ifndef PIANO_COND_H
#define PIANO_COND_H

#include <piano/piano.h>

#include <stdint.h>

/* Sleeps until a bit of mask is set or the deadline (sys_now_ns, UINT64_MAX
 * = none) passes: 0 or PIANO_ETIMEDOUT. */
int cond_block(piano_cond_t *c, uint32_t mask, uint64_t deadline);

#endif

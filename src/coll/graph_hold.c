/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The running graphs' hold on the timer (graph_hold.h): one predicted hold
 * (piano_timer_hold(PIANO_TIMER_PREDICTED): a graph's wait drives it, so
 * most runs end within a period), taken while more graphs run than are set
 * aside.
 */
#include "graph_hold.h"

#include <piano/piano.h>
#include <pthread.h>

static pthread_mutex_t hold_lock = PTHREAD_MUTEX_INITIALIZER;
static long running; /* under hold_lock: graphs listed as running */
static long aside;   /* under hold_lock: of those, busy with local work */
static bool held;    /* under hold_lock: the predicted hold is taken */

static void hold_sync(void)
{
	bool want = running > aside;
	if (want && !held)
		piano_timer_hold(PIANO_TIMER_PREDICTED);
	else if (!want && held)
		piano_timer_release(PIANO_TIMER_PREDICTED);
	held = want;
}

void graph_hold_run(int delta)
{
	pthread_mutex_lock(&hold_lock);
	running += delta;
	if (delta > 0 && held)
		piano_timer_renew();
	hold_sync();
	pthread_mutex_unlock(&hold_lock);
}

void graph_hold_aside_begin(void)
{
	pthread_mutex_lock(&hold_lock);
	aside++;
	hold_sync();
	pthread_mutex_unlock(&hold_lock);
}

void graph_hold_aside_end(void)
{
	pthread_mutex_lock(&hold_lock);
	aside--;
	hold_sync();
	pthread_mutex_unlock(&hold_lock);
}

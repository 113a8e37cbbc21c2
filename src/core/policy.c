/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Polling policy: which queues each polling point runs.
 * - explicit (piano_poll, waits, finalize's drain): the local leaf queue,
 *   then every ancestor (poll_branch); in no-thread mode every queue
 *   (poll_all), since nobody else polls;
 * - idle threads: the queues inside their object every round, and the
 *   ancestors above at a frequency divided by the number of branches
 *   sharing them (poll_idle);
 * - timer: every queue that nobody polled during the last period
 *   (poll_unpolled);
 * - blocking helpers: no queue, only the task handed to them (helpers.c).
 * A round's bookkeeping (statistics, end of a priority boost) is in
 * poller_init and poller_end_round.
 */
#include "policy.h"
#include "location.h"
#include "ltask.h"
#include "stats.h"
#include "topo.h"
#include "sys.h"
#include "warn.h"

#include <stdlib.h>
#include <string.h>

void poller_init(struct poller *p, struct piano_engine *e, int point)
{
	memset(p, 0, sizeof(*p));
	p->e = e;
	p->point = point;
	p->st = stats_local(e);
}

void poller_end_round(struct poller *p, unsigned work)
{
	if (p->boosted) {
		sys_sched_idle();
		p->boosted = false;
	}
	stats_add(p->st, p->point, STAT_ROUNDS, 1);
	if (!work)
		stats_add(p->st, p->point, STAT_EMPTY, 1);
	if (p->t0) {
		stats_add(p->st, p->point, STAT_TIME, sys_now_ns() - p->t0);
		p->t0 = 0;
	}
}

unsigned poll_all(struct poller *p)
{
	unsigned work = 0;
	for (int i = p->e->nqueues - 1; i >= 0; i--)
		work += queue_poll(p, &p->e->queues[i]);
	return work;
}

unsigned poll_branch(struct poller *p, int leaf)
{
	struct piano_engine *e = p->e;
	if (!e->cfg.progression)
		return poll_all(p);
	unsigned work = 0;
	for (int q = leaf; q >= 0; q = e->queues[q].parent)
		work += queue_poll(p, &e->queues[q]);
	return work;
}

static int poll_point(bool all)
{
	struct piano_engine *e = engine_get();
	if (!e)
		return PIANO_ENOTINIT;
	if (ltask_current_tls)
		return 0; /* not re-entrant: we may hold the queue of the caller */
	struct poller p;
	poller_init(&p, e, PIANO_POINT_EXPLICIT);
	unsigned work = all ? poll_all(&p) : poll_branch(&p, location_leaf(e));
	poller_end_round(&p, work);
	return work > (unsigned)INT32_MAX ? INT32_MAX : (int)work;
}

PIANO_API int piano_poll(void) { return poll_point(false); }
PIANO_API int piano_poll_all(void) { return poll_point(true); }

int poll_span_init(struct piano_engine *e, hwloc_const_cpuset_t set, struct poll_span *s)
{
	s->down = calloc((size_t)e->nqueues, sizeof(int));
	if (!s->down)
		return PIANO_ENOMEM;
	s->ndown = 0;
	for (int i = 0; i < e->nqueues; i++)
		if (hwloc_bitmap_isincluded(e->queues[i].cpuset, set))
			s->down[s->ndown++] = i;
	int cover = topo_queue_for_set(e, set);
	s->cover = cover;
	bool cover_down = hwloc_bitmap_isincluded(e->queues[cover].cpuset, set);
	s->anchor = cover_down ? e->queues[cover].parent : cover;
	return 0;
}

void poll_span_free(struct poll_span *s)
{
	free(s->down);
	s->down = NULL;
}

unsigned poll_idle(struct poller *p, const struct poll_span *s, uint64_t r, bool *busy)
{
	struct piano_engine *e = p->e;
	unsigned work = 0;
	*busy = false;
	for (int i = 0; i < s->ndown; i++) {
		struct piano_queue *q = &e->queues[s->down[i]];
		*busy |= queue_busy(q);
		work += queue_poll(p, q);
	}
	uint64_t base = e->queues[s->cover].div;
	for (int a = s->anchor; a >= 0; a = e->queues[a].parent) {
		struct piano_queue *q = &e->queues[a];
		*busy |= queue_busy(q);
		/* A parent is shared by all its children's pollers: each polls it
		 * 1/nsiblings of the time (div(own) / div(ancestor) rounds), so the
		 * parent sees about one poll per round (PIOMan-2015, IV-A). */
		if (r % (base / q->div) == 0)
			work += queue_poll(p, q);
	}
	return work;
}

/*
 * The safety net polls only the queues that nobody polled during the last
 * period: where idle threads or waiters keep a queue moving, a timer round
 * would add nothing but a preemption of whatever computes on its core.
 */
static atomic_flag warned_rescue = ATOMIC_FLAG_INIT;

unsigned poll_unpolled(struct poller *p, uint64_t period)
{
	struct piano_engine *e = p->e;
	uint64_t now = sys_now_ns();
	unsigned work = 0;
	for (int i = e->nqueues - 1; i >= 0; i--) {
		struct piano_queue *q = &e->queues[i];
		uint64_t polled = atomic_load_explicit(&q->polled_ns, memory_order_relaxed);
		if (polled + period > now)
			continue;
		/* Held since a round that began two periods ago: a holder at
		 * SCHED_IDLE was preempted on a busy core (its rounds take µs to
		 * a few ms), and masks the queue for everybody until the
		 * scheduler runs it again, seconds later while the cores compute.
		 * Raised, it ends its round at once. */
		if (polled + 2 * period <= now && queue_rescue(q) < 0 &&
		    !atomic_flag_test_and_set(&warned_rescue))
			piano_warn(
			        "the timer cannot raise an idle thread out of SCHED_IDLE (no "
			        "CAP_SYS_NICE, RLIMIT_NICE too low): while every core is busy, an "
			        "idle thread holding a queue may delay it until the scheduler runs "
			        "it again");
		work += queue_poll(p, q);
	}
	return work;
}

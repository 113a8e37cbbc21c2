/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The timer thread: a regular thread (not a POSIX timer, whose signal
 * handler context cannot take locks) that sleeps for a period and polls the
 * queues nobody polled meanwhile (poll_unpolled, policy.c), the safety net
 * when every core is busy.
 *
 * Two modes (PIANO_TIMER_MODE). `queues`: it ticks while any queue holds a
 * task and parks (park.c) otherwise. `demand`: it ticks only while a layer
 * holds it (piano_timer_hold), because on a node where every core computes
 * each tick preempts a computation (tens of µs on a virtual machine): a
 * task that stays queued while nothing is in flight (the MPI layer's
 * progress task lingers between bursts) made the timer wake every period
 * and cost LAMMPS 5-8 % (docs/performance.md). The thread then blocks on a
 * timerfd that holders arm and disarm: changing the deadline of a timerfd
 * does not wake the thread, so a hold taken and dropped within one period
 * costs two system calls in the holder and no wake-up at all.
 *
 * Demand protocol: `timer_holds` and `timer_sure` count the predicted and
 * the other holds (atomic); the thread whose increment takes one from 0,
 * or whose decrement takes it to 0, takes timer_lock and sets the timerfd
 * from the counts it reads under the lock (disarmed when both are 0; armed
 * with the period when one is not, unless a predicted hold was predicted
 * short). Every transition is followed by such a
 * locked update that reads the count after the transition, so the last
 * update reflects the final count, whatever the interleaving, with two
 * exceptions that take no lock: a predicted hold that finds the timer
 * armed already (a seq_cst pair with the disarms, hold_first()), and the
 * release of a predicted hold while a rescue is pending (left to expire,
 * hold_last()). The timer thread changes the interval (back-off) under
 * the same lock, only while armed.
 */
#include "timer.h"
#include "park.h"
#include "policy.h"
#include "queue.h"
#include "topo.h"
#include "warn.h"
#include "sys.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

/*
 * With PIANO_TIMER_MAX_US above the period, the period doubles after each
 * round that did no work once EMPTY_ROUNDS rounds in a row did none, up to
 * that limit, and is back to PIANO_TIMER_PERIOD_US after a round that did
 * some or a park. A wake-up that preempts a computing thread costs tens of
 * µs on a virtual machine: while the pending tasks wait for a remote peer,
 * the timer then wakes less often, at the price of a longer reaction when
 * every core is busy. The streak: a transfer that moves in steps (each
 * progress call moves what the peer has produced so far) gives rounds
 * with and without work in turn, and doubling at every empty one left
 * such a transfer half the ticks it needed (test core.timer_backoff).
 * `*empty` counts the empty rounds in a row; owned by the timer thread.
 */
#define EMPTY_ROUNDS 8

static uint64_t timer_next(const struct piano_engine *e, uint64_t cur, unsigned work,
                           unsigned *empty)
{
	uint64_t period = (uint64_t)e->cfg.timer_period_us * 1000u;
	uint64_t max = (uint64_t)e->cfg.timer_max_us * 1000u;
	if (work || max <= period) {
		*empty = 0;
		return period;
	}
	if (++*empty < EMPTY_ROUNDS)
		return cur;
	return cur * 2 < max ? cur * 2 : max;
}

/*
 * PIANO_TIMER_BUDGET: the rounds that find no work may take at most that
 * many per mille of a core, averaged over BUDGET_WINDOW_NS. A round's cost
 * is the timer thread's CPU time since the end of its previous round: the
 * wake-up, the polls, the way back to sleep. On this project's virtual
 * machines an empty tick beside a computing thread took 27-100 µs of it
 * (docs/performance.md, "While a receive is pending"), so the back-off
 * alone (4 ms) still cost a kernel 1-2 % while a peer was late; on bare
 * metal a tick costs a few µs and a budget of a few per mille does not
 * bind. The
 * budget is a credit: it grows with time at the budget's rate up to one
 * window's worth, each round without work spends its cost, and while it
 * is owed no tick comes (`timer_budget_until`, applied by timer_set() and
 * the queues-mode nap, so new work does not bring the period back
 * early). A round that did work fills it: a transfer moving in steps keeps
 * its ticks. The wait is bounded by BUDGET_MAX_PERIODS periods, the debt
 * beyond it forgiven. Only the timer thread touches a struct budget.
 */
#define BUDGET_WINDOW_NS 100000000u
#define BUDGET_MAX_PERIODS 64u

struct budget {
	uint64_t cpu_ns;   /* the thread's CPU time at the end of its last round */
	uint64_t at_ns;    /* the time then */
	int64_t credit_ns; /* CPU the next rounds without work may take; < 0: owed */
	bool measure;      /* a budget, or PIANO_STATS (which prints the costs) */
};

static void budget_start(const struct piano_engine *e, struct budget *b)
{
	b->measure = e->cfg.timer_budget > 0 || e->cfg.stats;
	b->cpu_ns = b->measure ? sys_thread_cpu_ns() : 0;
	b->at_ns = sys_now_ns();
	b->credit_ns = (int64_t)(BUDGET_WINDOW_NS / 1000u * (uint64_t)e->cfg.timer_budget);
}

/* A statistics counter only the timer thread writes: a relaxed load and
 * store, no locked instruction. */
static void count_add(_Atomic uint64_t *c, uint64_t v)
{
	atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
	                      memory_order_relaxed);
}

/* After a round that did `work` (or not): the time before which the next
 * tick may not come, 0 for none. */
static uint64_t budget_round(struct piano_engine *e, struct budget *b, unsigned work,
                             uint64_t period)
{
	if (!b->measure)
		return 0;
	uint64_t permille = (uint64_t)e->cfg.timer_budget;
	uint64_t cpu = sys_thread_cpu_ns(), now = sys_now_ns();
	uint64_t cost = cpu - b->cpu_ns;
	int64_t cap = (int64_t)(BUDGET_WINDOW_NS / 1000u * permille);
	b->credit_ns += (int64_t)((now - b->at_ns) / 1000u * permille);
	b->cpu_ns = cpu;
	b->at_ns = now;
	if (work || b->credit_ns > cap)
		b->credit_ns = cap;
	if (work)
		return 0;
	count_add(&e->timer_empty_rounds, 1);
	count_add(&e->timer_empty_cpu_ns, cost);
	if (!permille)
		return 0;
	b->credit_ns -= (int64_t)cost;
	if (b->credit_ns >= 0)
		return 0;
	uint64_t wait = (uint64_t)(-b->credit_ns) / permille * 1000u;
	uint64_t most = BUDGET_MAX_PERIODS * period;
	if (wait > most) {
		wait = most;
		b->credit_ns = -(int64_t)(most / 1000u * permille);
	}
	if (wait > period)
		count_add(&e->timer_budget_waits, 1);
	return now + wait;
}

/* Sets the timerfd: first expiry and interval ns, or disarmed for 0. Under
 * timer_lock: the first expiry not before `timer_budget_until` (unless
 * stopping: timer_stop()'s expiry ends the thread). */
static void timer_set(struct piano_engine *e, uint64_t ns)
{
	struct itimerspec its = { 0 };
	uint64_t first = ns;
	if (ns && e->timer_budget_until && !engine_stopping(e)) {
		uint64_t now = sys_now_ns();
		if (e->timer_budget_until > now + ns)
			first = e->timer_budget_until - now;
	}
	its.it_value.tv_sec = (time_t)(first / 1000000000u);
	its.it_value.tv_nsec = (long)(first % 1000000000u);
	its.it_interval.tv_sec = (time_t)(ns / 1000000000u);
	its.it_interval.tv_nsec = (long)(ns % 1000000000u);
	timerfd_settime(e->timer_fd, 0, &its, NULL);
}

/* Sets the timerfd to expire once, ns from now. */
static void timer_set_once(struct piano_engine *e, uint64_t ns)
{
	struct itimerspec its = { 0 };
	its.it_value.tv_sec = (time_t)(ns / 1000000000u);
	its.it_value.tv_nsec = (long)(ns % 1000000000u);
	timerfd_settime(e->timer_fd, 0, &its, NULL);
}

/* A hold predicted short that turns out long is found by a rescue expiry
 * RESCUE_PERIODS periods after it began (hold_first()). Each expiry that
 * finds no long hold doubles that distance, up to RESCUE_PERIODS <<
 * RESCUE_MAX_SHIFT (64 periods): while short holds come and go without
 * end (LAMMPS posts and completes ~4,000 tracked requests a second), a
 * rescue every 4 periods woke the timer thread 250 times a second on a
 * core that computes, every 16 periods still ~50 times, each finding no
 * hold at all (docs/mpi.md, "Do no harm"). The price: the first tick of a
 * hold mispredicted short comes up to 64 periods late. A hold that proved
 * long starts again at RESCUE_PERIODS. */
#define RESCUE_PERIODS 4
#define RESCUE_MAX_SHIFT 4

static uint64_t rescue_ns(struct piano_engine *e, uint64_t period)
{
	return ((uint64_t)RESCUE_PERIODS
	        << atomic_load_explicit(&e->timer_rescue_shift, memory_order_relaxed)) *
	       period;
}

/* An expiry that found no long hold: the next rescue comes later. Relaxed:
 * a prediction, like the streak. */
static void rescue_back_off(struct piano_engine *e)
{
	int shift = atomic_load_explicit(&e->timer_rescue_shift, memory_order_relaxed);
	if (shift < RESCUE_MAX_SHIFT)
		atomic_store_explicit(&e->timer_rescue_shift, shift + 1, memory_order_relaxed);
}

/* Whether a hold is taken. seq_cst: after a disarm's seq_cst store of
 * `timer_armed`, the other half of the pair with hold_first()'s fast path. */
static bool held_now(struct piano_engine *e)
{
	return atomic_load(&e->timer_holds) > 0 || atomic_load(&e->timer_sure) > 0;
}

/* Under timer_lock. Relaxed: its lock-free reader (hold_last()) only skips
 * a call that would have changed nothing, or at worst leaves one expiry to
 * the thread's own check of the holds. */
static void rescue_set(struct piano_engine *e, int on)
{
	atomic_store_explicit(&e->timer_rescue, on, memory_order_relaxed);
}

static bool rescue_pending(struct piano_engine *e)
{
	return atomic_load_explicit(&e->timer_rescue, memory_order_relaxed);
}

/* Under timer_lock: disarmed when no hold is taken; armed with the period
 * when one is and `may_arm` (demand mode with a timer thread only:
 * timer_fd >= 0). A rescue (timer_rescue) counts as not armed for a hold
 * that arms, and is left to expire when the holds end (its expiry costs
 * one wake-up; disarming it would cost a system call per short hold). */
static void timer_update(struct piano_engine *e, bool may_arm)
{
	pthread_mutex_lock(&e->timer_lock);
	/* Once stopping, timer_stop() owns the timerfd (its last expiry ends
	 * the thread's loop and must not be disarmed). */
	if (e->timer_fd < 0 || engine_stopping(e)) {
		pthread_mutex_unlock(&e->timer_lock);
		return;
	}
	bool held = held_now(e);
	bool armed = atomic_load_explicit(&e->timer_armed, memory_order_relaxed);
	if (held && (!armed || rescue_pending(e)) && may_arm) {
		e->timer_interval_ns = (uint64_t)e->cfg.timer_period_us * 1000u;
		timer_set(e, e->timer_interval_ns);
		rescue_set(e, 0);
		atomic_store_explicit(&e->timer_armed, 1, memory_order_relaxed);
	} else if (!held && armed && !rescue_pending(e)) {
		/* seq_cst store, then the holds again: a hold that began since
		 * and saw the timer armed took no lock (hold_first()), and the
		 * ticks stay for it. */
		atomic_store(&e->timer_armed, 0);
		if (held_now(e))
			atomic_store_explicit(&e->timer_armed, 1, memory_order_relaxed);
		else
			timer_set(e, 0);
	}
	pthread_mutex_unlock(&e->timer_lock);
}

/*
 * A rescue expiry (hold_first()): no hold left, or a hold younger than a
 * period (the one predicted short has ended, another began), ends or
 * re-arms the rescue without a tick (returns true); a hold older than a
 * period is a long one: the streak ends, the timer ticks with the period
 * from now on, and this expiry is a tick (returns false) unless
 * PIANO_TIMER_BUDGET's wait is still on (the tick comes at its end).
 */
static bool rescue_expired(struct piano_engine *e, uint64_t period)
{
	bool tick = false;
	pthread_mutex_lock(&e->timer_lock);
	if (!rescue_pending(e)) {
		pthread_mutex_unlock(&e->timer_lock);
		return false;
	}
	bool held = held_now(e);
	uint64_t age = sys_now_ns() -
	               atomic_load_explicit(&e->timer_hold_start, memory_order_relaxed);
	if (!held) {
		rescue_set(e, 0); /* a one-shot that expired: nothing to disarm */
		rescue_back_off(e);
		/* seq_cst store, then the holds again: a hold that began since
		 * and saw the rescue armed took no lock (hold_first()); it gets
		 * a rescue of its own. */
		atomic_store(&e->timer_armed, 0);
		if (held_now(e)) {
			timer_set_once(e, rescue_ns(e, period));
			rescue_set(e, 1);
			atomic_store_explicit(&e->timer_armed, 1, memory_order_relaxed);
		}
	} else if (age < period) {
		rescue_back_off(e);
		timer_set_once(e, rescue_ns(e, period) - age);
	} else {
		atomic_store_explicit(&e->timer_short_streak, 0, memory_order_relaxed);
		atomic_store_explicit(&e->timer_rescue_shift, 0, memory_order_relaxed);
		rescue_set(e, 0);
		e->timer_interval_ns = period;
		timer_set(e, period);
		/* Under a budget's wait, timer_set() put the first tick off. */
		tick = e->timer_budget_until <= sys_now_ns();
	}
	pthread_mutex_unlock(&e->timer_lock);
	return !tick;
}

/* Demand mode: a tick on each expiry while held. */
static void timer_demand_loop(struct piano_engine *e, struct poller *p)
{
	uint64_t period = (uint64_t)e->cfg.timer_period_us * 1000u;
	unsigned empty = 0; /* timer_next() */
	struct budget budget;
	budget_start(e, &budget);
	while (!engine_stopping(e)) {
		uint64_t expiries;
		if (read(e->timer_fd, &expiries, sizeof(expiries)) < 0 && errno != EAGAIN &&
		    errno != EINTR)
			break; /* cannot happen on a valid timerfd: stop ticking */
		if (engine_stopping(e))
			break;
		if (rescue_expired(e, period))
			continue;
		if (atomic_load_explicit(&e->timer_holds, memory_order_relaxed) <= 0 &&
		    atomic_load_explicit(&e->timer_sure, memory_order_relaxed) <= 0) {
			/* Armed by a hold whose release did not see it armed
			 * yet (or expired just before the release): disarm. */
			timer_update(e, false);
			continue;
		}
		unsigned work = poll_unpolled(p, period);
		poller_end_round(p, work);
		uint64_t until = budget_round(e, &budget, work, period);
		pthread_mutex_lock(&e->timer_lock);
		if (atomic_exchange_explicit(&e->timer_renewed, 0, memory_order_relaxed))
			empty = 0;
		uint64_t next = timer_next(e, e->timer_interval_ns, work, &empty);
		bool was_late = e->timer_budget_until != 0;
		e->timer_budget_until = until;
		/* A tick put off (or one that was) sets the timerfd again even
		 * at an unchanged interval. */
		if (atomic_load_explicit(&e->timer_armed, memory_order_relaxed) &&
		    (next != e->timer_interval_ns || until || was_late)) {
			e->timer_interval_ns = next;
			timer_set(e, next);
		}
		atomic_store_explicit(&e->timer_slow, e->timer_interval_ns > period,
		                      memory_order_relaxed);
		pthread_mutex_unlock(&e->timer_lock);
	}
}

static void *timer_main(void *arg)
{
	struct piano_engine *e = arg;
	uint64_t period = (uint64_t)e->cfg.timer_period_us * 1000u;
	uint64_t sleep_ns = period;
	unsigned empty = 0; /* timer_next() */
	uint64_t until = 0; /* budget_round() */
	struct budget budget;
	budget_start(e, &budget);
	/* Explicitly, even without PIANO_BIND_CPUS: threads inherit the
	 * creator's binding, and an MPI launcher binds each rank to one core,
	 * where the timer would only take time from its own rank. */
	topo_bind_thread(e, e->bind_set);
	struct poller p;
	poller_init(&p, e, PIANO_POINT_TIMER);
	if (e->timer_fd >= 0) {
		timer_demand_loop(e, &p);
		return NULL;
	}
	while (!engine_stopping(e)) {
		if (!queue_any_busy(e)) {
			park_wait(e, 0);
			sleep_ns = period;
			empty = 0;
			continue;
		}
		/* seq_cst, against piano_timer_renew()'s store then park_wake():
		 * either the flag is seen here or the nap sees the wake-up. */
		uint64_t nap = atomic_load(&e->timer_renewed) ? period : sleep_ns;
		if (until) {
			uint64_t now = sys_now_ns();
			if (until > now + nap)
				nap = until - now;
		}
		park_nap(e, nap);
		/* A renew's wake-up does not cut a budget's wait short. */
		for (uint64_t now = sys_now_ns(); until > now && !engine_stopping(e);
		     now = sys_now_ns())
			park_nap(e, until - now);
		if (engine_stopping(e))
			break;
		/* A queue counts as unpolled after the base period, whatever
		 * the current sleep: others' polls keep the timer quiet. */
		unsigned work = poll_unpolled(&p, period);
		poller_end_round(&p, work);
		until = budget_round(e, &budget, work, period);
		pthread_mutex_lock(&e->timer_lock);
		if (atomic_exchange_explicit(&e->timer_renewed, 0, memory_order_relaxed)) {
			sleep_ns = period;
			empty = 0;
		}
		sleep_ns = timer_next(e, sleep_ns, work, &empty);
		atomic_store_explicit(&e->timer_slow, sleep_ns > period, memory_order_relaxed);
		pthread_mutex_unlock(&e->timer_lock);
	}
	return NULL;
}

void timer_stats_print(struct piano_engine *e)
{
	if (!e || !e->has_timer || (e->cfg.timer_budget <= 0 && !e->cfg.stats))
		return;
	uint64_t n = atomic_load_explicit(&e->timer_empty_rounds, memory_order_relaxed);
	uint64_t cpu = atomic_load_explicit(&e->timer_empty_cpu_ns, memory_order_relaxed);
	uint64_t waits = atomic_load_explicit(&e->timer_budget_waits, memory_order_relaxed);
	fprintf(stderr,
	        "# piano timer: %llu rounds without work, %.1f us of the timer thread's CPU each; "
	        "%llu ticks put off by PIANO_TIMER_BUDGET=%ld\n",
	        (unsigned long long)n, n ? (double)cpu / (double)n / 1e3 : 0.0,
	        (unsigned long long)waits, e->cfg.timer_budget);
}

void timer_init(struct piano_engine *e)
{
	e->timer_fd = -1;
	pthread_mutex_init(&e->timer_lock, NULL);
}

void timer_destroy(struct piano_engine *e) { pthread_mutex_destroy(&e->timer_lock); }

/* The timerfd closed (no thread reads it any more). */
static void timer_close(struct piano_engine *e)
{
	if (e->timer_fd < 0)
		return;
	pthread_mutex_lock(&e->timer_lock);
	close(e->timer_fd);
	e->timer_fd = -1;
	atomic_store_explicit(&e->timer_armed, 0, memory_order_relaxed);
	pthread_mutex_unlock(&e->timer_lock);
}

int timer_start(struct piano_engine *e)
{
	if (e->cfg.timer_period_us <= 0)
		return 0;
	if (e->cfg.timer_demand) {
		/* CLOEXEC: nothing of piano's leaks into the application's
		 * children. */
		int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
		if (fd < 0) {
			piano_warn("cannot create the timer's timerfd: %s", strerror(errno));
			return PIANO_ESYS;
		}
		pthread_mutex_lock(&e->timer_lock);
		e->timer_fd = fd;
		pthread_mutex_unlock(&e->timer_lock);
		timer_update(e, true); /* holds taken before the thread existed */
	}
	int err = pthread_create(&e->timer_thread, NULL, timer_main, e);
	if (err) {
		piano_warn("cannot create the timer thread: %s", strerror(err));
		goto undo_fd;
	}
	sys_thread_name(e->timer_thread, "piano-timer");
	e->has_timer = 1;
	return 0;

undo_fd:
	timer_close(e);
	return PIANO_ESYS;
}

void timer_stop(struct piano_engine *e)
{
	if (e->has_timer) {
		if (e->timer_fd >= 0) {
			/* engine->stopping is set: one expiry now ends the loop. */
			pthread_mutex_lock(&e->timer_lock);
			timer_set(e, 1);
			atomic_store_explicit(&e->timer_armed, 1, memory_order_relaxed);
			pthread_mutex_unlock(&e->timer_lock);
		}
		pthread_join(e->timer_thread, NULL);
	}
	e->has_timer = 0;
	timer_close(e);
}

/*
 * Arming and disarming the timerfd costs two system calls, 2.7 µs on this
 * project's virtual machines: LAMMPS takes and drops the MPI layer's hold
 * thousands of times a second, almost always for less than a period (a
 * request posted and waited for at once), when no tick could have come
 * anyway. So a hold is predicted from the ones before it: after
 * SHORT_STREAK holds in a row that ended within a period, the next one does
 * not arm the timer periodically but sets a one-shot rescue RESCUE_PERIODS
 * periods on, later after rescues that found nothing long (if nothing is
 * armed yet: one system call per rescue, not per hold); at its expiry a hold older than a period is a long one, and the
 * timer ticks from then on: the first hold that lasts longer gets its ticks
 * late, never not at all, and ends the streak. A hold that arms
 * periodically disarms at its release; a rescue is left to expire.
 */
#define SHORT_STREAK 8

static void hold_first(struct piano_engine *e)
{
	atomic_store_explicit(&e->timer_hold_start, sys_now_ns(), memory_order_relaxed);
	/* seq_cst CAS in the caller, then the count is read again under
	 * timer_lock. */
	if (atomic_load_explicit(&e->timer_short_streak, memory_order_relaxed) < SHORT_STREAK) {
		timer_update(e, true);
		return;
	}
	/* Predicted short: no periodic arming, but a rescue expiry some
	 * periods on, unless the timer is armed (or a rescue pending)
	 * already: a hold predicted short that lasts gets its ticks, late.
	 * Armed already is the common case (a rescue outlives the short
	 * holds of up to 64 periods), and it takes no lock: the caller's
	 * seq_cst CAS on the count, then this seq_cst load, against the
	 * disarms' seq_cst store of `timer_armed` followed by a seq_cst read
	 * of the counts (timer_update(), rescue_expired()): either this
	 * load sees the timer disarmed and arms it under the lock, or the
	 * disarm sees this hold and keeps the timer armed for it. */
	if (atomic_load(&e->timer_armed))
		return;
	pthread_mutex_lock(&e->timer_lock);
	bool held = held_now(e);
	if (e->timer_fd >= 0 && !engine_stopping(e) && held &&
	    !atomic_load_explicit(&e->timer_armed, memory_order_relaxed)) {
		timer_set_once(e, rescue_ns(e, (uint64_t)e->cfg.timer_period_us * 1000u));
		rescue_set(e, 1);
		atomic_store_explicit(&e->timer_armed, 1, memory_order_relaxed);
	}
	pthread_mutex_unlock(&e->timer_lock);
}

static void hold_last(struct piano_engine *e)
{
	uint64_t start = atomic_load_explicit(&e->timer_hold_start, memory_order_relaxed);
	uint64_t period = (uint64_t)e->cfg.timer_period_us * 1000u;
	int streak = atomic_load_explicit(&e->timer_short_streak, memory_order_relaxed);
	/* Relaxed: a prediction; a stale value only arms or skips once. */
	if (sys_now_ns() - start < period)
		atomic_store_explicit(&e->timer_short_streak,
		                      streak < SHORT_STREAK ? streak + 1 : streak,
		                      memory_order_relaxed);
	else {
		atomic_store_explicit(&e->timer_short_streak, 0, memory_order_relaxed);
		atomic_store_explicit(&e->timer_rescue_shift, 0, memory_order_relaxed);
	}
	/* A pending rescue is left to expire (timer_update() would leave it
	 * too): no lock. Read stale, the rescue turned into ticks meanwhile
	 * stops at its next expiry (timer_demand_loop() finds no hold). */
	if (atomic_load_explicit(&e->timer_armed, memory_order_relaxed) && !rescue_pending(e))
		timer_update(e, false);
}

static int timer_hold_change(unsigned flags, long delta)
{
	struct piano_engine *e = engine_get();
	if (flags & ~PIANO_TIMER_PREDICTED)
		return PIANO_EINVAL;
	if (!e)
		return PIANO_ENOTINIT;
	bool predicted = flags & PIANO_TIMER_PREDICTED;
	_Atomic long *count = predicted ? &e->timer_holds : &e->timer_sure;
	long before = atomic_load_explicit(count, memory_order_relaxed);
	do {
		if (before + delta < 0)
			return PIANO_ESTATE;
	} while (!atomic_compare_exchange_weak(count, &before, before + delta));
	/* seq_cst CAS, then the counts are read again under timer_lock. */
	if (predicted && before == 0)
		hold_first(e);
	else if (predicted && before + delta == 0)
		hold_last(e);
	else if (before == 0)
		timer_update(e, true);
	else if (before + delta == 0 && atomic_load_explicit(&e->timer_armed, memory_order_relaxed))
		timer_update(e, false);
	return 0;
}

/*
 * New work under a hold ends the back-off (PIANO_TIMER_MAX_US), so that its
 * first step gets a tick within a period: an interval grown while one
 * operation waited for a late peer, or while a program went from one phase
 * to the next under the same hold, would otherwise delay the first tick of
 * the next operation by up to the limit (what made MPICH's 16 MiB overlap
 * with the receiver computing slower with the back-off, docs/mpi.md). While
 * the timer keeps its period a renew costs one relaxed load of
 * `timer_slow`; the reset itself is taken under timer_lock, where the timer
 * thread reads `timer_renewed` before its next interval.
 */
PIANO_API int piano_timer_renew(void)
{
	struct piano_engine *e = engine_get();
	if (!e)
		return PIANO_ENOTINIT;
	if (!atomic_load_explicit(&e->timer_slow, memory_order_relaxed))
		return 0;
	uint64_t period = (uint64_t)e->cfg.timer_period_us * 1000u;
	pthread_mutex_lock(&e->timer_lock);
	atomic_store_explicit(&e->timer_slow, 0, memory_order_relaxed);
	/* seq_cst: the queues-mode nap reads it before sleeping (timer_main). */
	atomic_store(&e->timer_renewed, 1);
	if (e->timer_fd < 0)
		park_wake(e); /* queues mode: the timer naps on the park sequence */
	else if (!engine_stopping(e) && !rescue_pending(e) &&
	         atomic_load_explicit(&e->timer_armed, memory_order_relaxed) &&
	         e->timer_interval_ns != period) {
		e->timer_interval_ns = period;
		timer_set(e, period);
	}
	pthread_mutex_unlock(&e->timer_lock);
	return 0;
}

PIANO_API int piano_timer_hold(unsigned flags) { return timer_hold_change(flags, 1); }
PIANO_API int piano_timer_release(unsigned flags) { return timer_hold_change(flags, -1); }

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The waiters and their wait ops (waiters.h).
 *
 * The engine never completes an application request: it only asks the MPI
 * whether a request has finished (PMPI_Request_get_status, which neither
 * frees the request nor, on Open MPI, raises its error) and wakes the
 * waiter, which then completes it with the MPI's own call. So an error is
 * raised in the application's thread by the call it made, and MPI calls
 * the engine must not make (PMPI_Testall on MPICH 4.0.2 aborts on
 * persistent collectives that MPI_Waitall completes) are never made.
 */
#include "waiters.h"
#include "gate.h"
#include "starve.h"

#include <pthread.h>

static pthread_mutex_t wait_lock = PTHREAD_MUTEX_INITIALIZER;
static struct waitop *wait_head; /* protected by wait_lock */
static _Atomic int nwaitops;     /* linked ops; read lock-free as a hint */

/*
 * Threads inside a native or delegated completion call (the low half, fewer
 * than 65,536) and those of them waiting natively (the high half), in one
 * word, so that a thread enters as a native waiter and leaves with one
 * read-modify-write each: a locked operation waits for the store buffer to
 * drain, and every blocking call pays it on both sides. A thread that finds
 * others inside and delegates takes its native count back
 * (waiters_delegate()); until then the progress task and the socket
 * watcher stand back for a moment, which is harmless.
 */
#define WAITER WAITERS_ONE
#define NATIVE WAITERS_NATIVE
_Atomic unsigned waiters_word;

static unsigned native_count(unsigned w) { return w / NATIVE; }

bool waiters_enter(void)
{
	/* seq_cst, Dekker pair with the progress call in waiters_progress():
	 * no background progress call starts after this. */
	return atomic_fetch_add(&waiters_word, WAITER | NATIVE) % NATIVE == 0;
}

void waiters_go_native(void)
{
	/* After the increment in waiters_enter(): a progress call already
	 * running is not left starved. */
	starve_relieve();
}

void waiters_delegate(void) { atomic_fetch_sub(&waiters_word, NATIVE); }

void waiters_leave(bool native) { atomic_fetch_sub(&waiters_word, native ? WAITER | NATIVE : WAITER); }

bool waiters_native(void)
{
	return native_count(atomic_load_explicit(&waiters_word, memory_order_relaxed)) != 0;
}

bool waiters_pending(void) { return atomic_load(&nwaitops) != 0; }

/* The MPI has finished r (complete, inactive or null): completing it now
 * does not block. A request the MPI reports an error for is finished too:
 * the waiter's own call will raise it. */
static bool finished(MPI_Request r)
{
	if (r == MPI_REQUEST_NULL)
		return true;
	int flag = 0;
	MPI_Status st;
	return PMPI_Request_get_status(r, &flag, &st) != MPI_SUCCESS || flag;
}

/* Whether the waiter's own completion call would return at once. */
bool waitop_ready(struct waitop *op)
{
	if (op->kind == WAIT_ALL) {
		/* Requests finish in any order, but a finished one stays
		 * finished while its owner waits: the cursor only moves on. */
		while (op->first_open < op->n && finished(op->reqs[op->first_open]))
			op->first_open++;
		return op->first_open == op->n;
	}
	/* ONE, ANY, SOME: one finished request, or none active at all. */
	bool any_active = false;
	for (int i = 0; i < op->n; i++) {
		if (op->reqs[i] == MPI_REQUEST_NULL)
			continue;
		any_active = true;
		if (finished(op->reqs[i]))
			return true;
	}
	return !any_active;
}

static void unlink_op(struct waitop *op)
{
	if (op->prev)
		op->prev->next = op->next;
	else
		wait_head = op->next;
	if (op->next)
		op->next->prev = op->prev;
	op->linked = false;
	/* Under wait_lock, as the increment: the timer's hold follows the
	 * count's transitions in order (track.c says why it is held). Not a
	 * predicted hold: the waiters sleep until the progress task sees their
	 * requests done, and when every core is busy only the timer runs it. */
	if (atomic_fetch_sub(&nwaitops, 1) == 1)
		piano_timer_release(0);
}

static unsigned serve(void)
{
	/* A waiter registering holds the lock for a few instructions; skip
	 * this round rather than block inside an ltask. */
	if (pthread_mutex_trylock(&wait_lock))
		return 0;
	struct waitop *done = NULL;
	for (struct waitop *op = wait_head, *next; op; op = next) {
		next = op->next;
		if (!waitop_ready(op))
			continue;
		unlink_op(op);
		op->next = done;
		done = op;
	}
	pthread_mutex_unlock(&wait_lock);
	unsigned work = 0;
	while (done) {
		struct waitop *next = done->next;
		piano_cond_signal(&done->cond, 1); /* last access: the waiter owns it again */
		done = next;
		work++;
	}
	return work;
}

void waiters_link(struct waitop *op)
{
	piano_cond_init(&op->cond, 0);
	pthread_mutex_lock(&wait_lock);
	op->prev = NULL;
	op->next = wait_head;
	if (wait_head)
		wait_head->prev = op;
	wait_head = op;
	op->linked = true;
	if (atomic_fetch_add(&nwaitops, 1) == 0)
		piano_timer_hold(0);
	pthread_mutex_unlock(&wait_lock);
}

bool waiters_unlink(struct waitop *op)
{
	pthread_mutex_lock(&wait_lock);
	bool mine = op->linked;
	if (mine)
		unlink_op(op);
	pthread_mutex_unlock(&wait_lock);
	return mine;
}

unsigned waiters_progress(void)
{
	if (waiters_pending())
		return serve();
	/* A thread waiting alone in the MPI's own wait drives it; a second
	 * poller would only contend with it (MPICH's global lock) and make
	 * that wait slower than without piano. */
	if (waiters_native())
		return 0;
	struct poker *me = starve_begin();
	/* seq_cst load after the seq_cst store of starve_begin(): either the
	 * waiter that arrives now sees us inside, or we see it and stand back. */
	if (!me || !native_count(atomic_load(&waiters_word)))
		gate_poke();
	starve_end(me);
	return 0;
}

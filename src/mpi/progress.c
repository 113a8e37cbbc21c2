/*
 * The progress ltask and the list of wait ops handed to the engine.
 *
 * The task is submitted when the first tracked request or wait op appears
 * and completes itself when none is left, so an MPI process with nothing
 * in flight has no pending ltask and the engine's threads park.
 * task_active is the hand-over flag between the task deciding to stop and a
 * submitter that needs it (both sides use seq_cst; see progress_fn).
 */
#include "mpi_internal.h"

#include <pthread.h>
#include <sched.h>

static pthread_mutex_t wait_lock = PTHREAD_MUTEX_INITIALIZER;
static struct waitop *wait_head;   /* protected by wait_lock */
static _Atomic int nwaitops;
static _Atomic int task_active;

bool waitops_empty(void) { return atomic_load(&nwaitops) == 0; }

static void unlink_op(struct waitop *op)
{
	if (op->prev)
		op->prev->next = op->next;
	else
		wait_head = op->next;
	if (op->next)
		op->next->prev = op->prev;
	atomic_fetch_sub(&nwaitops, 1);
}

unsigned waitops_serve(void)
{
	if (waitops_empty())
		return 0;
	/* A waiter registering holds the lock for a few instructions; skip
	 * this round rather than block inside an ltask. */
	if (pthread_mutex_trylock(&wait_lock))
		return 0;
	struct waitop *done = NULL;
	for (struct waitop *op = wait_head, *next; op; op = next) {
		next = op->next;
		if (!waitop_test(op))
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

static unsigned progress_fn(void *arg)
{
	(void)arg;
	unsigned work = 0;
	if (!atomic_load(&pmpi_g.finalizing)) {
		int flag = 0;
		/* Any MPI call progresses every pending operation; Iprobe on a
		 * private communicator does so without matching anything. */
		PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, pmpi_g.progress_comm, &flag,
		            MPI_STATUS_IGNORE);
		work = waitops_serve();
		if (track_pending() > 0 || !waitops_empty())
			return work;
	}
	atomic_store(&task_active, 0);
	/* A submitter may have added work after our check and seen
	 * task_active == 1: take the flag back and keep running. */
	if (!atomic_load(&pmpi_g.finalizing) && (track_pending() > 0 || !waitops_empty()) &&
	    !atomic_exchange(&task_active, 1))
		return work;
	piano_ltask_complete(piano_ltask_current());
	return work;
}

void progress_kick(void)
{
	if (!pmpi_g.threaded || atomic_exchange(&task_active, 1))
		return;
	int rc;
	/* EBUSY only in the short window where the task has decided to stop
	 * but has not published its completion yet. */
	while ((rc = piano_ltask_submit(pmpi_g.progress)) == PIANO_EBUSY)
		sched_yield();
	if (rc)
		pmpi_warn("cannot submit the progress task: %s", piano_strerror(rc));
}

int progress_setup(void)
{
	int rc = piano_ltask_create(progress_fn, NULL, PIANO_LTASK_REPEAT, &pmpi_g.progress);
	if (rc)
		return rc;
	piano_ltask_set_name(pmpi_g.progress, "mpi-progress");
	return 0;
}

void progress_shutdown(void)
{
	atomic_store(&pmpi_g.finalizing, 1);
	if (!pmpi_g.progress)
		return;
	if (piano_ltask_state(pmpi_g.progress) != PIANO_LTASK_INIT)
		piano_ltask_wait(pmpi_g.progress);
	piano_ltask_destroy(pmpi_g.progress);
	pmpi_g.progress = NULL;
}

/* -------------------------------------------------------------- wait ops */

int waitop_test(struct waitop *op)
{
	int flag = 0;
	switch (op->kind) {
	case WAIT_ONE:
		op->rc = PMPI_Test(&op->reqs[0], &flag, op->statuses);
		break;
	case WAIT_ANY:
		op->rc = PMPI_Testany(op->n, op->reqs, op->index, &flag, op->statuses);
		break;
	case WAIT_SOME:
		op->rc = PMPI_Testsome(op->n, op->reqs, op->index, op->indices, op->statuses);
		flag = *op->index != 0;
		break;
	case WAIT_ALL:
		op->rc = PMPI_Testall(op->n, op->reqs, &flag, op->statuses);
		break;
	}
	return flag || op->rc != MPI_SUCCESS;
}

int waitop_delegate(struct waitop *op)
{
	if (waitop_test(op))
		return op->rc;
	atomic_fetch_add(&pmpi_g.delegated_waits, 1);
	piano_cond_init(&op->cond, 0);
	pthread_mutex_lock(&wait_lock);
	op->prev = NULL;
	op->next = wait_head;
	if (wait_head)
		wait_head->prev = op;
	wait_head = op;
	atomic_fetch_add(&nwaitops, 1);
	pthread_mutex_unlock(&wait_lock);
	progress_kick();
	/* Spins running the progress task (which tests op), then blocks. */
	int rc = piano_cond_wait(&op->cond, 1);
	if (rc) {
		pmpi_warn("wait failed: %s", piano_strerror(rc));
		return MPI_ERR_OTHER;
	}
	return op->rc;
}

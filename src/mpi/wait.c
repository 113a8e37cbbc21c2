/*
 * Completion calls. Wait* calls are handed to the engine (waitop_delegate)
 * when background progress is on: the calling thread polls through the
 * engine, then blocks on a piano_cond, while the progress task tests the
 * requests on its behalf. Test* calls run in the caller's thread. Either
 * way, the tracking table learns which requests completed.
 */
#include "mpi_internal.h"

#include <stdlib.h>
#include <string.h>

static bool delegate_ok(void)
{
	return pmpi_g.threaded && !piano_ltask_current();
}

/* Copy of the handles before a completion call, to know afterwards which
 * tracked requests it completed (completion overwrites them). */
struct saved {
	MPI_Request small[16];
	MPI_Request *v;
};

static const MPI_Request *save(struct saved *s, const MPI_Request *reqs, int n)
{
	s->v = NULL;
	if (n <= 0 || !atomic_load_explicit(&pmpi_g.tracked, memory_order_relaxed))
		return NULL;
	s->v = n <= 16 ? s->small : malloc((size_t)n * sizeof(MPI_Request));
	if (s->v)
		memcpy(s->v, reqs, (size_t)n * sizeof(MPI_Request));
	return s->v;
}

static void done(struct saved *s, int n, const int *idx, int nidx)
{
	if (s->v) {
		track_completed(s->v, n, idx, nidx);
		if (s->v != s->small)
			free(s->v);
	}
}

static void release(struct saved *s)
{
	if (s->v && s->v != s->small)
		free(s->v);
}

PMPI_EXPORT int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
	pmpi_ensure();
	struct saved s;
	save(&s, req, 1);
	struct waitop op = { .kind = WAIT_ONE, .n = 1, .reqs = req, .statuses = status };
	int rc = delegate_ok() ? waitop_delegate(&op) : PMPI_Wait(req, status);
	done(&s, 1, NULL, 1);
	return rc;
}

PMPI_EXPORT int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
{
	pmpi_ensure();
	struct saved s;
	save(&s, reqs, n);
	struct waitop op = { .kind = WAIT_ALL, .n = n, .reqs = reqs, .statuses = statuses };
	int rc = delegate_ok() ? waitop_delegate(&op) : PMPI_Waitall(n, reqs, statuses);
	if (rc == MPI_SUCCESS)
		done(&s, n, NULL, n);
	else
		release(&s); /* errors: leave the entries, a reused handle resets them */
	return rc;
}

PMPI_EXPORT int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
	pmpi_ensure();
	struct saved s;
	save(&s, reqs, n);
	struct waitop op = { .kind = WAIT_ANY, .n = n, .reqs = reqs, .statuses = status,
	                     .index = index };
	int rc = delegate_ok() ? waitop_delegate(&op) : PMPI_Waitany(n, reqs, index, status);
	done(&s, n, index, *index == MPI_UNDEFINED ? 0 : 1);
	return rc;
}

PMPI_EXPORT int MPI_Waitsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                             MPI_Status statuses[])
{
	pmpi_ensure();
	struct saved s;
	save(&s, reqs, n);
	struct waitop op = { .kind = WAIT_SOME, .n = n, .reqs = reqs, .statuses = statuses,
	                     .index = outcount, .indices = indices };
	int rc = delegate_ok() ? waitop_delegate(&op) : PMPI_Waitsome(n, reqs, outcount, indices, statuses);
	done(&s, n, indices, *outcount == MPI_UNDEFINED ? 0 : *outcount);
	return rc;
}

PMPI_EXPORT int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
	pmpi_ensure();
	struct saved s;
	save(&s, req, 1);
	int rc = PMPI_Test(req, flag, status);
	done(&s, 1, NULL, *flag ? 1 : 0);
	return rc;
}

PMPI_EXPORT int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
	pmpi_ensure();
	struct saved s;
	save(&s, reqs, n);
	int rc = PMPI_Testall(n, reqs, flag, statuses);
	done(&s, n, NULL, (rc == MPI_SUCCESS && *flag) ? n : 0);
	return rc;
}

PMPI_EXPORT int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag,
                            MPI_Status *status)
{
	pmpi_ensure();
	struct saved s;
	save(&s, reqs, n);
	int rc = PMPI_Testany(n, reqs, index, flag, status);
	done(&s, n, index, (*flag && *index != MPI_UNDEFINED) ? 1 : 0);
	return rc;
}

PMPI_EXPORT int MPI_Testsome(int n, MPI_Request reqs[], int *outcount, int indices[],
                             MPI_Status statuses[])
{
	pmpi_ensure();
	struct saved s;
	save(&s, reqs, n);
	int rc = PMPI_Testsome(n, reqs, outcount, indices, statuses);
	done(&s, n, indices, *outcount == MPI_UNDEFINED ? 0 : *outcount);
	return rc;
}

PMPI_EXPORT int MPI_Request_free(MPI_Request *req)
{
	pmpi_ensure();
	if (req && *req != MPI_REQUEST_NULL &&
	    atomic_load_explicit(&pmpi_g.tracked, memory_order_relaxed))
		track_forget(*req);
	return PMPI_Request_free(req);
}

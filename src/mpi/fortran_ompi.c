/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fortran bindings for Open MPI: mpif.h, `use mpi` and `use mpi_f08`. Open
 * MPI's own Fortran procedures call the C PMPI_ functions directly, so the
 * C layer never sees Fortran calls: these wrappers take their place (same
 * symbol names, found first through LD_PRELOAD or link order), convert
 * handles and call the intercepted C functions. The mpif.h and `use mpi`
 * symbols (mpi_isend_ in four manglings) are replaced, and so are the
 * ompi_isend_f functions that Open MPI's `use mpi_f08` procedures call
 * (mpi_isend_f08_ calls ompi_isend_f through the PLT, with the same
 * arguments: f08 handles are the INTEGER inside the derived type, and its
 * OPTIONAL ierror is always passed). Which calls, and under which names:
 * src/mpi/fortran.tbl; the regular wrappers are generated from it into
 * fortran_ompi.inc, included at the end; the special ones are here.
 *
 * Conventions (gfortran and Open MPI): handles are MPI_Fint, indices are
 * 1-based, LOGICAL true is 1, and the sentinels MPI_BOTTOM, MPI_IN_PLACE,
 * MPI_STATUS(ES)_IGNORE are addresses of common blocks: every library that
 * defines one (libmpi, libmpi_usempif08) exports it under the same name, so
 * the dynamic linker binds every reference, ours included, to one address.
 */
#include "base.h"
#include "coll.h"
#include "fortran_gate.h"
#include "init.h"
#include "progress.h"
#include "report.h"
#include "settings.h"
#include "track.h"

#include "op_hold.h"

#include <dlfcn.h>
#include <mpi-ext.h> /* OMPI_HAVE_MPI_EXT_PCOLLREQ, the MPIX_ persistent collectives */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* The MPIX_ wrappers of fortran.tbl: where the C layer exports the
 * extension's persistent collectives (coll.c's PCOLL_NAME). */
#if defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ && MPI_VERSION < 4
#define PIANO_F_MPIX 1
#else
#define PIANO_F_MPIX 0
#endif

/* MPI_STATUS_SIZE of Open MPI's mpif-config.h: sizeof(MPI_Status) in Fints. */
#define F_STATUS_SIZE ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))

extern int mpi_fortran_bottom_;
extern int mpi_fortran_in_place_;
extern int *mpi_fortran_status_ignore_;
extern int *mpi_fortran_statuses_ignore_;

/* One implementation, the four manglings Fortran compilers use. */
#define FORTRAN_NAMES(impl, lower, upper)                                     \
	PMPI_EXPORT __typeof__(impl) lower __attribute__((alias(#impl)));     \
	PMPI_EXPORT __typeof__(impl) lower##_ __attribute__((alias(#impl)));  \
	PMPI_EXPORT __typeof__(impl) lower##__ __attribute__((alias(#impl))); \
	PMPI_EXPORT __typeof__(impl) upper __attribute__((alias(#impl)))
/* The C function Open MPI's f08 procedure calls. */
#define F08_NAME(impl, name) PMPI_EXPORT __typeof__(impl) name __attribute__((alias(#impl)))

_Static_assert(sizeof(MPI_Fint) == sizeof(int), "INTEGER arrays are passed to C as int arrays");

/* Open MPI's own Fortran procedures (libmpi_mpifh), for the calls whose
 * conversion is theirs to get right (arrays of datatypes kept alive until
 * completion, Fortran callbacks): piano then records the request they made.
 * Weak: a C program does not load libmpi_mpifh, and never calls these. */
extern void pmpi_ialltoallw_(void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *,
                             MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *)
        __attribute__((weak));
extern void pmpi_ineighbor_alltoallw_(void *, MPI_Fint *, MPI_Aint *, MPI_Fint *, void *,
                                      MPI_Fint *, MPI_Aint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                                      MPI_Fint *) __attribute__((weak));
extern void pmpi_grequest_start_(void *, void *, void *, MPI_Aint *, MPI_Fint *, MPI_Fint *)
        __attribute__((weak));
/* Open MPI's own persistent forms, under names piano does not export (it
 * takes mpix_alltoallw_init_ and the others, as for every MPIX_ call). */
extern void PMPIX_Alltoallw_init_f(void *, MPI_Fint *, MPI_Fint *, MPI_Fint *, void *, MPI_Fint *,
                                   MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *, MPI_Fint *,
                                   MPI_Fint *) __attribute__((weak));
extern void PMPIX_Neighbor_alltoallw_init_f(void *, MPI_Fint *, MPI_Aint *, MPI_Fint *, void *,
                                            MPI_Fint *, MPI_Aint *, MPI_Fint *, MPI_Fint *,
                                            MPI_Fint *, MPI_Fint *, MPI_Fint *)
        __attribute__((weak));
/* Under a name piano does not export: it takes mpi_op_create_, its
 * manglings, ompi_op_create_f and pmpi_op_create_ (the one Open MPI's `use
 * mpi_f08` procedure calls), all aliases of this function in libmpi_mpifh. */
extern void PMPI_Op_create_f(void *, MPI_Fint *, MPI_Fint *, MPI_Fint *) __attribute__((weak));

/* The MPI's own procedure, or a clear error if its Fortran library is not
 * loaded (a program that calls a Fortran binding always loads it). It calls
 * PMPI_ itself: behind the gate, as every call of the application's
 * (serial.h), or serialized mode would let it meet piano's own calls. */
#define OMPI_FORTRAN(fn, ierr, ...)                                                              \
	do {                                                                                     \
		PMPI_APP_SCOPE();                                                                \
		if (fn) {                                                                        \
			fn(__VA_ARGS__, ierr);                                                   \
		} else {                                                                         \
			pmpi_warn("%s: Open MPI's Fortran library (libmpi_mpifh) is not loaded", \
			          #fn);                                                          \
			*(ierr) = MPI_ERR_INTERN;                                                \
		}                                                                                \
	} while (0)

static void ierr_set(MPI_Fint *ierr, int rc)
{
	if (ierr)
		*ierr = rc;
}

/* The binding's own failure before the MPI call (memory for a conversion)
 * is raised as the MPI raises its errors: through the error handler of the
 * communicator the call names, or of MPI_COMM_WORLD for a call on requests
 * (as Open MPI raises those), then returned. */
static void comm_failed(MPI_Comm comm, int code, MPI_Fint *ierr)
{
	PMPI_Comm_call_errhandler(comm, code);
	ierr_set(ierr, code);
}

static void *fbuf(void *b)
{
	if (b == (void *)&mpi_fortran_bottom_)
		return MPI_BOTTOM;
	if (b == (void *)&mpi_fortran_in_place_)
		return MPI_IN_PLACE;
	return b;
}

extern int mpi_fortran_unweighted_;
extern int mpi_fortran_weights_empty_;

static const int *fweights(MPI_Fint *w)
{
	if (w == (MPI_Fint *)&mpi_fortran_unweighted_)
		return MPI_UNWEIGHTED;
	if (w == (MPI_Fint *)&mpi_fortran_weights_empty_)
		return MPI_WEIGHTS_EMPTY;
	return (const int *)w;
}

static bool status_ignored(MPI_Fint *s) { return (void *)s == (void *)&mpi_fortran_status_ignore_; }

/* A generated wrapper's status: the C status to pass for Fortran's f (c,
 * or MPI_STATUS_IGNORE), and f filled in from it. */
static MPI_Status *status_in(MPI_Fint *f, MPI_Status *c)
{
	return status_ignored(f) ? MPI_STATUS_IGNORE : c;
}

static void status_out(MPI_Status *c, MPI_Fint *f)
{
	if (!status_ignored(f))
		PMPI_Status_c2f(c, f);
}
static bool statuses_ignored(MPI_Fint *s)
{
	return (void *)s == (void *)&mpi_fortran_statuses_ignore_;
}

/* Statuses go through a C array sized for the call (or are ignored). */
static MPI_Status *statuses_alloc(MPI_Fint *f, int n)
{
	if (statuses_ignored(f))
		return MPI_STATUSES_IGNORE;
	return malloc((size_t)(n > 0 ? n : 1) * sizeof(MPI_Status));
}

/* Statuses are stored in order: entry k of a Waitsome is its k-th completion. */
static void statuses_out(MPI_Status *c, MPI_Fint *f, int count)
{
	if (c == MPI_STATUSES_IGNORE)
		return;
	for (int k = 0; k < count; k++)
		PMPI_Status_c2f(&c[k], &f[(size_t)k * F_STATUS_SIZE]);
	free(c);
}

/* ----------------------------------------------------------- init/finalize */

static void f_init(MPI_Fint *ierr) { *ierr = MPI_Init(NULL, NULL); }

static void f_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
	int p = 0;
	*ierr = MPI_Init_thread(NULL, NULL, (int)*required, &p);
	*provided = p;
}

static void f_finalize(MPI_Fint *ierr) { *ierr = MPI_Finalize(); }

static void f_query_thread(MPI_Fint *provided, MPI_Fint *ierr)
{
	int p = 0;
	*ierr = MPI_Query_thread(&p);
	*provided = p;
}

/* ------------------------------------------------------ point to point */

static void f_recv(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *src, MPI_Fint *tag,
                   MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Status st;
	*ierr = MPI_Recv(fbuf(buf), (int)*count, PMPI_Type_f2c(*type), (int)*src, (int)*tag,
	                 PMPI_Comm_f2c(*comm), status_ignored(status) ? MPI_STATUS_IGNORE : &st);
	if (*ierr == MPI_SUCCESS && !status_ignored(status))
		PMPI_Status_c2f(&st, status);
}

static void f_start(MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Request r = PMPI_Request_f2c(*req);
	*ierr = MPI_Start(&r);
	*req = PMPI_Request_c2f(r);
}

/* Request arrays: Fortran handles in, C handles for the call, back out. */
static MPI_Request *reqs_in(const MPI_Fint *f, int n)
{
	MPI_Request *c = malloc((size_t)(n > 0 ? n : 1) * sizeof(MPI_Request));
	for (int i = 0; c && i < n; i++)
		c[i] = PMPI_Request_f2c(f[i]);
	return c;
}

static void reqs_out(MPI_Request *c, MPI_Fint *f, int n)
{
	for (int i = 0; i < n; i++)
		f[i] = PMPI_Request_c2f(c[i]);
	free(c);
}

static void f_startall(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *ierr)
{
	MPI_Request *c = reqs_in(reqs, (int)*n);
	if (!c) {
		comm_failed(MPI_COMM_WORLD, MPI_ERR_NO_MEM, ierr);
		return;
	}
	*ierr = MPI_Startall((int)*n, c);
	reqs_out(c, reqs, (int)*n);
}

static void f_request_free(MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Request r = PMPI_Request_f2c(*req);
	*ierr = MPI_Request_free(&r);
	*req = PMPI_Request_c2f(r);
}

/* ------------------------------------------------------------ completion */

static void f_wait(MPI_Fint *req, MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Request r = PMPI_Request_f2c(*req);
	MPI_Status st;
	*ierr = MPI_Wait(&r, status_ignored(status) ? MPI_STATUS_IGNORE : &st);
	*req = PMPI_Request_c2f(r);
	if (*ierr == MPI_SUCCESS && !status_ignored(status))
		PMPI_Status_c2f(&st, status);
}

static void f_test(MPI_Fint *req, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Request r = PMPI_Request_f2c(*req);
	MPI_Status st;
	int fl = 0;
	*ierr = MPI_Test(&r, &fl, status_ignored(status) ? MPI_STATUS_IGNORE : &st);
	*req = PMPI_Request_c2f(r);
	*flag = fl ? 1 : 0;
	if (*ierr == MPI_SUCCESS && fl && !status_ignored(status))
		PMPI_Status_c2f(&st, status);
}

static void f_request_get_status(MPI_Fint *req, MPI_Fint *flag, MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Status st;
	int fl = 0;
	*ierr = MPI_Request_get_status(PMPI_Request_f2c(*req), &fl,
	                               status_ignored(status) ? MPI_STATUS_IGNORE : &st);
	if (*ierr != MPI_SUCCESS)
		return;
	*flag = fl ? 1 : 0;
	if (fl && !status_ignored(status))
		PMPI_Status_c2f(&st, status);
}

static void f_cancel(MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Request r = PMPI_Request_f2c(*req);
	*ierr = MPI_Cancel(&r);
}

/* All/any/some share one shape: convert, call, convert back. */
enum { ALL, ANY, SOME };

static void completion(int kind, bool wait, MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *index,
                       MPI_Fint *flag, MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierr)
{
	int cn = (int)*n, fl = 0, idx = MPI_UNDEFINED, out = 0;
	MPI_Request *c = reqs_in(reqs, cn);
	MPI_Status *st = kind == ANY ? malloc(sizeof(MPI_Status)) : statuses_alloc(statuses, cn);
	int *ind = kind == SOME ? malloc((size_t)(cn > 0 ? cn : 1) * sizeof(int)) : NULL;
	/* Open MPI's MPI_STATUSES_IGNORE is NULL: a missing array is one only
	 * where statuses were asked for. */
	bool no_st = !st && (kind == ANY || !statuses_ignored(statuses));
	if (!c || no_st || (kind == SOME && !ind)) {
		free(c), free(ind);
		if (st != MPI_STATUSES_IGNORE)
			free(st);
		comm_failed(MPI_COMM_WORLD, MPI_ERR_NO_MEM, ierr);
		return;
	}
	if (kind == ALL)
		*ierr = wait ? MPI_Waitall(cn, c, st) : MPI_Testall(cn, c, &fl, st);
	else if (kind == ANY)
		*ierr = wait ? MPI_Waitany(cn, c, &idx, st) : MPI_Testany(cn, c, &idx, &fl, st);
	else
		*ierr = wait ? MPI_Waitsome(cn, c, &out, ind, st)
		             : MPI_Testsome(cn, c, &out, ind, st);
	reqs_out(c, reqs, cn);
	if (flag)
		*flag = (wait || fl) ? 1 : 0;
	if (kind == ALL) {
		statuses_out(st, statuses, (wait || fl) ? cn : 0);
	} else if (kind == ANY) {
		*index = idx == MPI_UNDEFINED ? MPI_UNDEFINED : idx + 1;
		if (idx != MPI_UNDEFINED && !status_ignored(statuses))
			PMPI_Status_c2f(st, statuses);
		free(st);
	} else {
		*index = out;
		for (int k = 0; out != MPI_UNDEFINED && k < out; k++)
			indices[k] = ind[k] + 1;
		statuses_out(st, statuses, out == MPI_UNDEFINED ? 0 : out);
		free(ind);
	}
}

static void f_waitall(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *sts, MPI_Fint *ierr)
{
	completion(ALL, true, n, reqs, NULL, NULL, NULL, sts, ierr);
}

static void f_testall(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *flag, MPI_Fint *sts, MPI_Fint *ierr)
{
	completion(ALL, false, n, reqs, NULL, flag, NULL, sts, ierr);
}

static void f_waitany(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *index, MPI_Fint *st, MPI_Fint *ierr)
{
	completion(ANY, true, n, reqs, index, NULL, NULL, st, ierr);
}

static void f_testany(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *index, MPI_Fint *flag, MPI_Fint *st,
                      MPI_Fint *ierr)
{
	completion(ANY, false, n, reqs, index, flag, NULL, st, ierr);
}

static void f_waitsome(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *out, MPI_Fint *indices, MPI_Fint *sts,
                       MPI_Fint *ierr)
{
	completion(SOME, true, n, reqs, out, NULL, indices, sts, ierr);
}

static void f_testsome(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *out, MPI_Fint *indices, MPI_Fint *sts,
                       MPI_Fint *ierr)
{
	completion(SOME, false, n, reqs, out, NULL, indices, sts, ierr);
}

/* ------------------------------------------------------------------ files */

/* An open file closes the gate (file.c): the Fortran opens and closes must
 * reach the C wrappers too. The name loses its leading and trailing blanks,
 * as in Open MPI's own binding (ompi_fortran_string_f2c). */
static void f_file_open(MPI_Fint *comm, char *name, MPI_Fint *amode, MPI_Fint *info, MPI_Fint *fh,
                        MPI_Fint *ierr, int name_len)
{
	char *c = pmpi_fortran_string(name, (size_t)name_len);
	if (!c) {
		/* An open's errors go to MPI_FILE_NULL's handler (it returns
		 * unless the application changed it), which the binding cannot
		 * call: Open MPI's MPI_File_call_errhandler refuses
		 * MPI_FILE_NULL. */
		*ierr = MPI_ERR_NO_MEM;
		return;
	}
	MPI_File f = MPI_FILE_NULL;
	*ierr = MPI_File_open(PMPI_Comm_f2c(*comm), c, (int)*amode, PMPI_Info_f2c(*info), &f);
	if (*ierr == MPI_SUCCESS)
		*fh = PMPI_File_c2f(f);
	free(c);
}

static void f_file_set_view(MPI_Fint *fh, MPI_Offset *disp, MPI_Fint *etype, MPI_Fint *filetype,
                            char *datarep, MPI_Fint *info, MPI_Fint *ierr, int datarep_len)
{
	char *c = pmpi_fortran_string(datarep, (size_t)datarep_len);
	if (!c) {
		/* The file's handler, as the MPI's own MPI_File_set_view would. */
		PMPI_File_call_errhandler(PMPI_File_f2c(*fh), MPI_ERR_NO_MEM);
		*ierr = MPI_ERR_NO_MEM;
		return;
	}
	*ierr = MPI_File_set_view(PMPI_File_f2c(*fh), *disp, PMPI_Type_f2c(*etype),
	                          PMPI_Type_f2c(*filetype), c, PMPI_Info_f2c(*info));
	free(c);
}

static void f_file_close(MPI_Fint *fh, MPI_Fint *ierr)
{
	MPI_File f = PMPI_File_f2c(*fh);
	*ierr = MPI_File_close(&f);
	if (*ierr == MPI_SUCCESS)
		*fh = PMPI_File_c2f(f);
}

/* ---------------------------------------------- made by Open MPI's own code */

/* A request made by Open MPI's Fortran procedure for a collective: tracked
 * as the C layer tracks the MPI's own collectives (coll.c). */
static void collective_made(MPI_Fint *req, MPI_Fint *ierr)
{
	if (*ierr == MPI_SUCCESS && pmpi_g.threaded &&
	    track_add(PMPI_Request_f2c(*req), false, true, false))
		progress_kick();
}

/* A persistent collective made by Open MPI's Fortran procedure: tracked
 * from each start, as coll.c does for the MPI's own. */
static void persistent_made(MPI_Fint *req, MPI_Fint *ierr)
{
	if (*ierr == MPI_SUCCESS && pmpi_g.threaded)
		track_add(PMPI_Request_f2c(*req), true, false, false);
}

/* Open MPI's own procedure for a collective, its request tracked: the
 * persistent form `fn_init` (with `info`) when info is given, else the
 * non-blocking `fn`. */
#define OMPI_COLLECTIVE(fn, fn_init, info, req, ierr, ...)                   \
	do {                                                                 \
		PMPI_APP_SCOPE(); /* the tracking too (track.c) */           \
		if (info) {                                                  \
			OMPI_FORTRAN(fn_init, ierr, __VA_ARGS__, info, req); \
			persistent_made(req, ierr);                          \
		} else {                                                     \
			OMPI_FORTRAN(fn, ierr, __VA_ARGS__, req);            \
			collective_made(req, ierr);                          \
		}                                                            \
	} while (0)

/* n Fortran datatypes in C (NULL when out of memory). */
static MPI_Datatype *types_f2c(const MPI_Fint *f, int n)
{
	MPI_Datatype *c = malloc(sizeof(*c) * (size_t)(n > 0 ? n : 1));
	for (int i = 0; c && i < n; i++)
		c[i] = PMPI_Type_f2c(f[i]);
	return c;
}

/* Whether the call ran as a graph (rc not COLL_NOT_TAKEN): its result and
 * request given to Fortran. A graph that failed has raised the error
 * itself (coll.c) and made the request null, which Fortran gets too. */
static bool graph_made(int rc, MPI_Request r, MPI_Fint *req, MPI_Fint *ierr)
{
	if (rc == COLL_NOT_TAKEN)
		return false;
	*req = PMPI_Request_c2f(r);
	ierr_set(ierr, rc);
	return true;
}

/* The C arrays of datatypes could not be had: the error raised on comm,
 * the request null. Not the MPI's own exchange, which the other ranks may
 * not be running. */
static void types_failed(MPI_Comm comm, MPI_Fint *req, MPI_Fint *ierr)
{
	*req = PMPI_Request_c2f(MPI_REQUEST_NULL);
	comm_failed(comm, MPI_ERR_NO_MEM, ierr);
}

/*
 * As a graph when PIANO_COLL takes MPI_Ialltoallw (coll.h), and
 * f_ineighbor_alltoallw() likewise: then the C arrays of datatypes are
 * needed only during the call, and a Fortran rank runs the same exchange
 * as a C rank of the same job. Otherwise Open MPI's own procedure, which
 * keeps its conversion alive until completion. The persistent form
 * (MPIX_Alltoallw_init) with its `info`; f_ialltoallw() passes NULL.
 */
static void f_mpix_alltoallw_init(void *sbuf, MPI_Fint *scounts, MPI_Fint *sdispls,
                                  MPI_Fint *stypes, void *rbuf, MPI_Fint *rcounts,
                                  MPI_Fint *rdispls, MPI_Fint *rtypes, MPI_Fint *comm,
                                  MPI_Fint *info, MPI_Fint *req, MPI_Fint *ierr)
{
	pmpi_ensure();
	MPI_Comm c = PMPI_Comm_f2c(*comm);
	void *sb = fbuf(sbuf), *rb = fbuf(rbuf);
	int size = 0, inter = 1, rc = COLL_NOT_TAKEN;
	/* An inter-communicator's arrays have the remote group's size; graphs
	 * run on intra-communicators only. */
	if ((pmpi_g.coll_graph & PMPI_COLL_IALLTOALL) && c != MPI_COMM_NULL &&
	    PMPI_Comm_test_inter(c, &inter) == MPI_SUCCESS && !inter &&
	    PMPI_Comm_size(c, &size) == MPI_SUCCESS) {
		/* In place, the send arguments are ignored (and may be anything). */
		MPI_Datatype *st = sb == MPI_IN_PLACE ? NULL : types_f2c(stypes, size);
		MPI_Datatype *rt = types_f2c(rtypes, size);
		MPI_Request r = MPI_REQUEST_NULL;
		MPI_Info ci = info ? PMPI_Info_f2c(*info) : MPI_INFO_NULL;
		bool have = rt && (st || sb == MPI_IN_PLACE);
		if (have)
			rc = pmpi_ialltoallw_graph(sb, (const int *)scounts, (const int *)sdispls,
			                           st, rb, (const int *)rcounts,
			                           (const int *)rdispls, rt, c, info ? &ci : NULL,
			                           &r, REPORT_SITE());
		free(st);
		free(rt);
		if (!have)
			types_failed(c, req, ierr);
		if (!have || graph_made(rc, r, req, ierr))
			return;
	}
	OMPI_COLLECTIVE(pmpi_ialltoallw_, PMPIX_Alltoallw_init_f, info, req, ierr, sbuf, scounts,
	                sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm);
}

static void f_ialltoallw(void *sbuf, MPI_Fint *scounts, MPI_Fint *sdispls, MPI_Fint *stypes,
                         void *rbuf, MPI_Fint *rcounts, MPI_Fint *rdispls, MPI_Fint *rtypes,
                         MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr)
{
	f_mpix_alltoallw_init(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm,
	                      NULL, req, ierr);
}

static void f_mpix_neighbor_alltoallw_init(void *sbuf, MPI_Fint *scounts, MPI_Aint *sdispls,
                                           MPI_Fint *stypes, void *rbuf, MPI_Fint *rcounts,
                                           MPI_Aint *rdispls, MPI_Fint *rtypes, MPI_Fint *comm,
                                           MPI_Fint *info, MPI_Fint *req, MPI_Fint *ierr)
{
	pmpi_ensure();
	MPI_Comm c = PMPI_Comm_f2c(*comm);
	int nin = 0, nout = 0;
	if ((pmpi_g.coll_graph & PMPI_COLL_INEIGHBOR_ALLTOALL) && c != MPI_COMM_NULL &&
	    pmpi_neighbor_counts(c, &nin, &nout) == MPI_SUCCESS) {
		MPI_Datatype *st = types_f2c(stypes, nout), *rt = types_f2c(rtypes, nin);
		MPI_Request r = MPI_REQUEST_NULL;
		MPI_Info ci = info ? PMPI_Info_f2c(*info) : MPI_INFO_NULL;
		bool have = st && rt;
		int rc = COLL_NOT_TAKEN;
		if (have)
			rc = pmpi_ineighbor_alltoallw_graph(fbuf(sbuf), (const int *)scounts,
			                                    sdispls, st, fbuf(rbuf),
			                                    (const int *)rcounts, rdispls, rt, c,
			                                    info ? &ci : NULL, &r, REPORT_SITE());
		free(st);
		free(rt);
		if (!have)
			types_failed(c, req, ierr);
		if (!have || graph_made(rc, r, req, ierr))
			return;
	}
	OMPI_COLLECTIVE(pmpi_ineighbor_alltoallw_, PMPIX_Neighbor_alltoallw_init_f, info, req, ierr,
	                sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls, rtypes, comm);
}

static void f_ineighbor_alltoallw(void *sbuf, MPI_Fint *scounts, MPI_Aint *sdispls,
                                  MPI_Fint *stypes, void *rbuf, MPI_Fint *rcounts,
                                  MPI_Aint *rdispls, MPI_Fint *rtypes, MPI_Fint *comm,
                                  MPI_Fint *req, MPI_Fint *ierr)
{
	f_mpix_neighbor_alltoallw_init(sbuf, scounts, sdispls, stypes, rbuf, rcounts, rdispls,
	                               rtypes, comm, NULL, req, ierr);
}

/* The query function is a Fortran procedure that Open MPI calls its own way:
 * the request is made by Open MPI and recorded as one piano leaves to the
 * MPI (foreign.c), so that no wait including it is delegated. */
static void f_grequest_start(void *query, void *free_fn, void *cancel, MPI_Aint *extra,
                             MPI_Fint *req, MPI_Fint *ierr)
{
	PMPI_APP_SCOPE(); /* the tracking too (track.c) */
	pmpi_ensure();
	OMPI_FORTRAN(pmpi_grequest_start_, ierr, query, free_fn, cancel, extra, req);
	if (*ierr == MPI_SUCCESS && pmpi_g.threaded)
		track_foreign(PMPI_Request_f2c(*req), false);
}

/* A Fortran user function is called Fortran's way (its arguments by
 * reference, the datatype as an INTEGER), which Open MPI marks on the
 * operation its own procedure makes: that one makes it, and piano records
 * it (op_hold.c) so that a persistent graph collective may hold it. */
static void f_op_create(void *fn, MPI_Fint *commute, MPI_Fint *op, MPI_Fint *ierr)
{
	pmpi_ensure();
	OMPI_FORTRAN(PMPI_Op_create_f, ierr, fn, commute, op);
	if (*ierr == MPI_SUCCESS)
		op_record(PMPI_Op_f2c(*op));
}

/* Through the C layer's MPI_Op_free, which leaves a held operation alive
 * until its last graph is freed. */
static void f_op_free(MPI_Fint *op, MPI_Fint *ierr)
{
	MPI_Op c = PMPI_Op_f2c(*op);
	int rc = MPI_Op_free(&c);
	if (rc == MPI_SUCCESS)
		*op = PMPI_Op_c2f(c);
	ierr_set(ierr, rc);
}

/* Open MPI's `use mpi_f08` MPI_Buffer_detach: its procedure calls this C
 * function of libmpi_usempif08, which calls PMPI_Buffer_detach itself (the
 * address goes back as a C pointer), past the gate: the MPI's own, found
 * past piano's (RTLD_NEXT), with the gate closed (fortran_gate.c counts on
 * these two for serialized mode). */
typedef void detach_fn(char *buf, MPI_Fint *size, MPI_Fint *ierr);

static void f08_detach(const char *name, _Atomic(detach_fn *) *cache, char *buf, MPI_Fint *size,
                       MPI_Fint *ierr)
{
	/* Relaxed: every thread that looks it up finds the same address. */
	detach_fn *real = atomic_load_explicit(cache, memory_order_relaxed);
	if (!real) {
		*(void **)&real = dlsym(RTLD_NEXT, name);
		atomic_store_explicit(cache, real, memory_order_relaxed);
	}
	FGATE(real, name, ierr, buf, size, ierr);
}

PMPI_EXPORT void ompi_buffer_detach_f08(char *buf, MPI_Fint *size, MPI_Fint *ierr)
{
	static _Atomic(detach_fn *) real;
	f08_detach("ompi_buffer_detach_f08", &real, buf, size, ierr);
}

PMPI_EXPORT void pompi_buffer_detach_f08(char *buf, MPI_Fint *size, MPI_Fint *ierr)
{
	static _Atomic(detach_fn *) real;
	f08_detach("pompi_buffer_detach_f08", &real, buf, size, ierr);
}

#include "fortran_ompi.inc"

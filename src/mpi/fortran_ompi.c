/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Fortran bindings for Open MPI (mpif.h and the mpi module). Open MPI's own
 * Fortran wrappers call the C PMPI_ functions directly, so the C layer never
 * sees Fortran calls: these wrappers take their place (same symbol names,
 * found first through LD_PRELOAD or link order), convert handles and call
 * the intercepted C functions. MPICH's Fortran bindings call the C MPI_
 * functions, so the MPICH library needs no such file.
 *
 * Conventions (gfortran and Open MPI's mpif.h): handles are MPI_Fint, every
 * routine ends with an ierror argument, indices are 1-based, LOGICAL true is
 * 1, and the sentinels MPI_BOTTOM, MPI_IN_PLACE, MPI_STATUS(ES)_IGNORE are
 * addresses of common blocks defined by libmpi.
 */
#include "base.h"

#include <stdlib.h>
#include <string.h>

/* MPI_STATUS_SIZE of Open MPI's mpif-config.h: sizeof(MPI_Status) in Fints. */
#define F_STATUS_SIZE ((int)(sizeof(MPI_Status) / sizeof(MPI_Fint)))

extern int mpi_fortran_bottom_;
extern int mpi_fortran_in_place_;
extern int *mpi_fortran_status_ignore_;
extern int *mpi_fortran_statuses_ignore_;

/* One implementation, the four manglings Fortran compilers use. */
#define FORTRAN_NAMES(impl, lower, upper)                                   \
	PMPI_EXPORT __typeof__(impl) lower __attribute__((alias(#impl)));      \
	PMPI_EXPORT __typeof__(impl) lower##_ __attribute__((alias(#impl)));   \
	PMPI_EXPORT __typeof__(impl) lower##__ __attribute__((alias(#impl)));  \
	PMPI_EXPORT __typeof__(impl) upper __attribute__((alias(#impl)))

static void *fbuf(void *b)
{
	if (b == (void *)&mpi_fortran_bottom_)
		return MPI_BOTTOM;
	if (b == (void *)&mpi_fortran_in_place_)
		return MPI_IN_PLACE;
	return b;
}

static bool status_ignored(MPI_Fint *s) { return (void *)s == (void *)&mpi_fortran_status_ignore_; }
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
FORTRAN_NAMES(f_init, mpi_init, MPI_INIT);

static void f_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
	int p = 0;
	*ierr = MPI_Init_thread(NULL, NULL, (int)*required, &p);
	*provided = p;
}
FORTRAN_NAMES(f_init_thread, mpi_init_thread, MPI_INIT_THREAD);

static void f_finalize(MPI_Fint *ierr) { *ierr = MPI_Finalize(); }
FORTRAN_NAMES(f_finalize, mpi_finalize, MPI_FINALIZE);

static void f_query_thread(MPI_Fint *provided, MPI_Fint *ierr)
{
	int p = 0;
	*ierr = MPI_Query_thread(&p);
	*provided = p;
}
FORTRAN_NAMES(f_query_thread, mpi_query_thread, MPI_QUERY_THREAD);

/* ------------------------------------------------------ point to point */

typedef int (*c_send_fn)(const void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);
typedef int (*c_recv_fn)(void *, int, MPI_Datatype, int, int, MPI_Comm, MPI_Request *);

static void send_like(c_send_fn fn, void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *peer,
                      MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Request r = MPI_REQUEST_NULL;
	*ierr = fn(fbuf(buf), (int)*count, PMPI_Type_f2c(*type), (int)*peer, (int)*tag,
	           PMPI_Comm_f2c(*comm), &r);
	if (*ierr == MPI_SUCCESS)
		*req = PMPI_Request_c2f(r);
}

#define F_SEND(cname, lower, upper)                                                        \
	static void f_##lower(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *peer,   \
	                      MPI_Fint *tag, MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr) \
	{                                                                                   \
		send_like((c_send_fn)cname, buf, count, type, peer, tag, comm, req, ierr);  \
	}                                                                                   \
	FORTRAN_NAMES(f_##lower, lower, upper)

F_SEND(MPI_Isend, mpi_isend, MPI_ISEND);
F_SEND(MPI_Ibsend, mpi_ibsend, MPI_IBSEND);
F_SEND(MPI_Issend, mpi_issend, MPI_ISSEND);
F_SEND(MPI_Irsend, mpi_irsend, MPI_IRSEND);
F_SEND(MPI_Irecv, mpi_irecv, MPI_IRECV);
F_SEND(MPI_Send_init, mpi_send_init, MPI_SEND_INIT);
F_SEND(MPI_Bsend_init, mpi_bsend_init, MPI_BSEND_INIT);
F_SEND(MPI_Ssend_init, mpi_ssend_init, MPI_SSEND_INIT);
F_SEND(MPI_Rsend_init, mpi_rsend_init, MPI_RSEND_INIT);
F_SEND(MPI_Recv_init, mpi_recv_init, MPI_RECV_INIT);

static void f_send(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag,
                   MPI_Fint *comm, MPI_Fint *ierr)
{
	*ierr = MPI_Send(fbuf(buf), (int)*count, PMPI_Type_f2c(*type), (int)*dest, (int)*tag,
	                 PMPI_Comm_f2c(*comm));
}
FORTRAN_NAMES(f_send, mpi_send, MPI_SEND);

static void f_recv(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *src, MPI_Fint *tag,
                   MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Status st;
	*ierr = MPI_Recv(fbuf(buf), (int)*count, PMPI_Type_f2c(*type), (int)*src, (int)*tag,
	                 PMPI_Comm_f2c(*comm), status_ignored(status) ? MPI_STATUS_IGNORE : &st);
	if (*ierr == MPI_SUCCESS && !status_ignored(status))
		PMPI_Status_c2f(&st, status);
}
FORTRAN_NAMES(f_recv, mpi_recv, MPI_RECV);

static void f_start(MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Request r = PMPI_Request_f2c(*req);
	*ierr = MPI_Start(&r);
	*req = PMPI_Request_c2f(r);
}
FORTRAN_NAMES(f_start, mpi_start, MPI_START);

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
		*ierr = MPI_ERR_NO_MEM;
		return;
	}
	*ierr = MPI_Startall((int)*n, c);
	reqs_out(c, reqs, (int)*n);
}
FORTRAN_NAMES(f_startall, mpi_startall, MPI_STARTALL);

static void f_request_free(MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Request r = PMPI_Request_f2c(*req);
	*ierr = MPI_Request_free(&r);
	*req = PMPI_Request_c2f(r);
}
FORTRAN_NAMES(f_request_free, mpi_request_free, MPI_REQUEST_FREE);

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
FORTRAN_NAMES(f_wait, mpi_wait, MPI_WAIT);

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
FORTRAN_NAMES(f_test, mpi_test, MPI_TEST);

/* All/any/some share one shape: convert, call, convert back. */
enum { ALL, ANY, SOME };

static void completion(int kind, bool wait, MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *index,
                       MPI_Fint *flag, MPI_Fint *indices, MPI_Fint *statuses, MPI_Fint *ierr)
{
	int cn = (int)*n, fl = 0, idx = MPI_UNDEFINED, out = 0;
	MPI_Request *c = reqs_in(reqs, cn);
	MPI_Status *st = kind == ANY ? malloc(sizeof(MPI_Status)) : statuses_alloc(statuses, cn);
	int *ind = kind == SOME ? malloc((size_t)(cn > 0 ? cn : 1) * sizeof(int)) : NULL;
	if (!c || (!st && kind == ANY) || (kind == SOME && !ind)) {
		free(c), free(ind);
		*ierr = MPI_ERR_NO_MEM;
		return;
	}
	if (kind == ALL)
		*ierr = wait ? MPI_Waitall(cn, c, st) : MPI_Testall(cn, c, &fl, st);
	else if (kind == ANY)
		*ierr = wait ? MPI_Waitany(cn, c, &idx, st) : MPI_Testany(cn, c, &idx, &fl, st);
	else
		*ierr = wait ? MPI_Waitsome(cn, c, &out, ind, st) : MPI_Testsome(cn, c, &out, ind, st);
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
FORTRAN_NAMES(f_waitall, mpi_waitall, MPI_WAITALL);

static void f_testall(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *flag, MPI_Fint *sts, MPI_Fint *ierr)
{
	completion(ALL, false, n, reqs, NULL, flag, NULL, sts, ierr);
}
FORTRAN_NAMES(f_testall, mpi_testall, MPI_TESTALL);

static void f_waitany(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *index, MPI_Fint *st, MPI_Fint *ierr)
{
	completion(ANY, true, n, reqs, index, NULL, NULL, st, ierr);
}
FORTRAN_NAMES(f_waitany, mpi_waitany, MPI_WAITANY);

static void f_testany(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *index, MPI_Fint *flag,
                      MPI_Fint *st, MPI_Fint *ierr)
{
	completion(ANY, false, n, reqs, index, flag, NULL, st, ierr);
}
FORTRAN_NAMES(f_testany, mpi_testany, MPI_TESTANY);

static void f_waitsome(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *out, MPI_Fint *indices,
                       MPI_Fint *sts, MPI_Fint *ierr)
{
	completion(SOME, true, n, reqs, out, NULL, indices, sts, ierr);
}
FORTRAN_NAMES(f_waitsome, mpi_waitsome, MPI_WAITSOME);

static void f_testsome(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *out, MPI_Fint *indices,
                       MPI_Fint *sts, MPI_Fint *ierr)
{
	completion(SOME, false, n, reqs, out, NULL, indices, sts, ierr);
}
FORTRAN_NAMES(f_testsome, mpi_testsome, MPI_TESTSOME);

/* ------------------------------------------- common non-blocking collectives */

static void f_ibarrier(MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Request r = MPI_REQUEST_NULL;
	*ierr = MPI_Ibarrier(PMPI_Comm_f2c(*comm), &r);
	*req = PMPI_Request_c2f(r);
}
FORTRAN_NAMES(f_ibarrier, mpi_ibarrier, MPI_IBARRIER);

static void f_ibcast(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *root, MPI_Fint *comm,
                     MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Request r = MPI_REQUEST_NULL;
	*ierr = MPI_Ibcast(fbuf(buf), (int)*count, PMPI_Type_f2c(*type), (int)*root,
	                   PMPI_Comm_f2c(*comm), &r);
	*req = PMPI_Request_c2f(r);
}
FORTRAN_NAMES(f_ibcast, mpi_ibcast, MPI_IBCAST);

static void f_iallreduce(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op,
                         MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Request r = MPI_REQUEST_NULL;
	*ierr = MPI_Iallreduce(fbuf(sbuf), fbuf(rbuf), (int)*count, PMPI_Type_f2c(*type),
	                       PMPI_Op_f2c(*op), PMPI_Comm_f2c(*comm), &r);
	*req = PMPI_Request_c2f(r);
}
FORTRAN_NAMES(f_iallreduce, mpi_iallreduce, MPI_IALLREDUCE);

static void f_ireduce(void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op,
                      MPI_Fint *root, MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr)
{
	MPI_Request r = MPI_REQUEST_NULL;
	*ierr = MPI_Ireduce(fbuf(sbuf), fbuf(rbuf), (int)*count, PMPI_Type_f2c(*type),
	                    PMPI_Op_f2c(*op), (int)*root, PMPI_Comm_f2c(*comm), &r);
	*req = PMPI_Request_c2f(r);
}
FORTRAN_NAMES(f_ireduce, mpi_ireduce, MPI_IREDUCE);

/* ------------------------------------------------------------------ files */

/* An open file closes the gate (file.c): the Fortran opens and closes must
 * reach the C wrappers too. The name loses its leading and trailing blanks,
 * as in Open MPI's own binding (ompi_fortran_string_f2c). */
static void f_file_open(MPI_Fint *comm, char *name, MPI_Fint *amode, MPI_Fint *info,
                        MPI_Fint *fh, MPI_Fint *ierr, int name_len)
{
	while (name_len > 0 && name[0] == ' ') {
		name++;
		name_len--;
	}
	while (name_len > 0 && name[name_len - 1] == ' ')
		name_len--;
	char *c = malloc((size_t)name_len + 1);
	if (!c) {
		*ierr = MPI_ERR_NO_MEM;
		return;
	}
	memcpy(c, name, (size_t)name_len);
	c[name_len] = '\0';
	MPI_File f = MPI_FILE_NULL;
	*ierr = MPI_File_open(PMPI_Comm_f2c(*comm), c, (int)*amode, PMPI_Info_f2c(*info), &f);
	if (*ierr == MPI_SUCCESS)
		*fh = PMPI_File_c2f(f);
	free(c);
}
FORTRAN_NAMES(f_file_open, mpi_file_open, MPI_FILE_OPEN);

static void f_file_close(MPI_Fint *fh, MPI_Fint *ierr)
{
	MPI_File f = PMPI_File_f2c(*fh);
	*ierr = MPI_File_close(&f);
	if (*ierr == MPI_SUCCESS)
		*fh = PMPI_File_c2f(f);
}
FORTRAN_NAMES(f_file_close, mpi_file_close, MPI_FILE_CLOSE);

/* `use mpi_f08` reaches the same implementation under Open MPI's own name
 * (MPI_File_open_f08 calls ompi_file_open_f): a file opened from the f08
 * bindings must close the gate as well. */
PMPI_EXPORT __typeof__(f_file_open) ompi_file_open_f __attribute__((alias("f_file_open")));
PMPI_EXPORT __typeof__(f_file_close) ompi_file_close_f __attribute__((alias("f_file_close")));

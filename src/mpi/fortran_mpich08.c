/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * MPICH's `use mpi_f08` procedures that bypass the C layer. MPICH's Fortran
 * bindings call the C MPI_ functions, which the C layer intercepts, except
 * some f08 procedures without a choice buffer, which call PMPI_ directly
 * (mpi_init_f08_ -> PMPI_Init, mpi_wait_f08_ -> PMPI_Wait): piano never saw
 * an f08 program start, and a tracked request completed by an f08 wait was
 * never removed from tracking. These wrappers take those symbols' place
 * (LD_PRELOAD or link order) and call the intercepted C functions, as
 * MPICH's own procedures do when INTEGER is a C int. Which calls:
 * src/mpi/fortran.tbl (binding mpich08); regular wrappers are generated into
 * fortran_mpich08.inc, included at the end; the special ones are here.
 *
 * Conventions (MPICH 4 f08, gfortran): handles are the INTEGER inside the
 * derived type, and MPI_Request is that INTEGER; TYPE(MPI_Status) has the C
 * layout (BIND(C)); the OPTIONAL ierror is NULL when absent; LOGICAL true is
 * 1; indices are 1-based; MPI_STATUS(ES)_IGNORE, MPI_BOTTOM and MPI_IN_PLACE
 * are the addresses of objects mpi.h declares (MPIR_F08_MPI_STATUS_IGNORE_OBJ
 * & co.), exported under those names by libmpich and libmpichfort alike, so
 * every reference binds to one address.
 */
#include "base.h"
#include "init.h"
#include "report.h"
#include "serial.h"
#include "track.h"

#include <stdlib.h>

_Static_assert(sizeof(MPI_Request) == sizeof(MPI_Fint), "MPICH requests are Fortran INTEGERs");

/* MPICH's own procedure, for the Fortran callbacks it alone knows how to
 * call; weak, since a C program does not load libmpichfort. */
extern void pmpir_grequest_start_f08_(void *, void *, void *, MPI_Aint *, MPI_Fint *, MPI_Fint *)
        __attribute__((weak));

#define F08_NAME(impl, name) PMPI_EXPORT __typeof__(impl) name __attribute__((alias(#impl)))

static void ierr_set(MPI_Fint *ierr, int rc)
{
	if (ierr)
		*ierr = rc;
}

static MPI_Status *status_of(MPI_Status *s)
{
	return (void *)s == (void *)&MPIR_F08_MPI_STATUS_IGNORE_OBJ ? MPI_STATUS_IGNORE : s;
}

static MPI_Status *statuses_of(MPI_Status *s)
{
	return (void *)s == (void *)MPIR_F08_MPI_STATUSES_IGNORE_OBJ ? MPI_STATUSES_IGNORE : s;
}

/* Choice buffers of the generated wrappers (none of the table's mpich08
 * calls takes one today). */
static __attribute__((unused)) void *fbuf(void *b)
{
	if (b == (void *)&MPIR_F08_MPI_BOTTOM)
		return MPI_BOTTOM;
	if (b == (void *)&MPIR_F08_MPI_IN_PLACE)
		return MPI_IN_PLACE;
	return b;
}

/* MPI_UNWEIGHTED and MPI_WEIGHTS_EMPTY of MPICH's `use mpi_f08`: its
 * module's variables, in libmpichfort (weak: a C program loads none). */
extern int __mpi_f08_link_constants_MOD_mpi_unweighted __attribute__((weak));
extern int __mpi_f08_link_constants_MOD_mpi_weights_empty __attribute__((weak));

static const int *fweights(MPI_Fint *w)
{
	if (w == &__mpi_f08_link_constants_MOD_mpi_unweighted)
		return MPI_UNWEIGHTED;
	if (w == &__mpi_f08_link_constants_MOD_mpi_weights_empty)
		return MPI_WEIGHTS_EMPTY;
	return (const int *)w;
}

/* An index of a completion call, 1-based in Fortran. */
static MPI_Fint index_f(int c) { return c == MPI_UNDEFINED ? MPI_UNDEFINED : c + 1; }

/* ----------------------------------------------------------- set-up */

static void f_init(MPI_Fint *ierr) { ierr_set(ierr, MPI_Init(NULL, NULL)); }

static void f_init_thread(MPI_Fint *required, MPI_Fint *provided, MPI_Fint *ierr)
{
	int p = 0, rc = MPI_Init_thread(NULL, NULL, (int)*required, &p);
	if (rc == MPI_SUCCESS)
		*provided = p;
	ierr_set(ierr, rc);
}

static void f_finalize(MPI_Fint *ierr) { ierr_set(ierr, MPI_Finalize()); }

static void f_query_thread(MPI_Fint *provided, MPI_Fint *ierr)
{
	int p = 0, rc = MPI_Query_thread(&p);
	if (rc == MPI_SUCCESS)
		*provided = p;
	ierr_set(ierr, rc);
}

/* ------------------------------------------------------- persistent */

static void f_start(MPI_Fint *req, MPI_Fint *ierr)
{
	ierr_set(ierr, MPI_Start((MPI_Request *)req));
}

static void f_startall(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *ierr)
{
	ierr_set(ierr, MPI_Startall((int)*n, (MPI_Request *)reqs));
}

static void f_request_free(MPI_Fint *req, MPI_Fint *ierr)
{
	ierr_set(ierr, MPI_Request_free((MPI_Request *)req));
}

/* ------------------------------------------------------- completion */

static void f_wait(MPI_Fint *req, MPI_Status *status, MPI_Fint *ierr)
{
	ierr_set(ierr, MPI_Wait((MPI_Request *)req, status_of(status)));
}

static void f_test(MPI_Fint *req, MPI_Fint *flag, MPI_Status *status, MPI_Fint *ierr)
{
	int fl = 0, rc = MPI_Test((MPI_Request *)req, &fl, status_of(status));
	if (rc == MPI_SUCCESS)
		*flag = fl ? 1 : 0;
	ierr_set(ierr, rc);
}

static void f_request_get_status(MPI_Fint *req, MPI_Fint *flag, MPI_Status *status, MPI_Fint *ierr)
{
	int fl = 0, rc = MPI_Request_get_status(*(MPI_Request *)req, &fl, status_of(status));
	if (rc == MPI_SUCCESS)
		*flag = fl ? 1 : 0;
	ierr_set(ierr, rc);
}

static void f_cancel(MPI_Fint *req, MPI_Fint *ierr)
{
	ierr_set(ierr, MPI_Cancel((MPI_Request *)req));
}

static void f_waitall(MPI_Fint *n, MPI_Fint *reqs, MPI_Status *sts, MPI_Fint *ierr)
{
	ierr_set(ierr, MPI_Waitall((int)*n, (MPI_Request *)reqs, statuses_of(sts)));
}

static void f_testall(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *flag, MPI_Status *sts, MPI_Fint *ierr)
{
	int fl = 0, rc = MPI_Testall((int)*n, (MPI_Request *)reqs, &fl, statuses_of(sts));
	if (rc == MPI_SUCCESS)
		*flag = fl ? 1 : 0;
	ierr_set(ierr, rc);
}

static void f_waitany(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *index, MPI_Status *status,
                      MPI_Fint *ierr)
{
	int idx = MPI_UNDEFINED,
	    rc = MPI_Waitany((int)*n, (MPI_Request *)reqs, &idx, status_of(status));
	if (rc == MPI_SUCCESS)
		*index = index_f(idx);
	ierr_set(ierr, rc);
}

static void f_testany(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *index, MPI_Fint *flag,
                      MPI_Status *status, MPI_Fint *ierr)
{
	int idx = MPI_UNDEFINED, fl = 0;
	int rc = MPI_Testany((int)*n, (MPI_Request *)reqs, &idx, &fl, status_of(status));
	if (rc == MPI_SUCCESS) {
		*index = index_f(idx);
		*flag = fl ? 1 : 0;
	}
	ierr_set(ierr, rc);
}

/* Waitsome and Testsome write 0-based indices into the caller's array, made
 * 1-based in place (MPI_Fint is the C int here). */
static void some_out(int rc, int out, MPI_Fint *outcount, MPI_Fint *indices, MPI_Fint *ierr)
{
	if (rc == MPI_SUCCESS) {
		*outcount = out;
		for (int k = 0; out != MPI_UNDEFINED && k < out; k++)
			indices[k] += 1;
	}
	ierr_set(ierr, rc);
}

static void f_waitsome(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *outcount, MPI_Fint *indices,
                       MPI_Status *sts, MPI_Fint *ierr)
{
	int out = MPI_UNDEFINED;
	int rc = MPI_Waitsome((int)*n, (MPI_Request *)reqs, &out, (int *)indices, statuses_of(sts));
	some_out(rc, out, outcount, indices, ierr);
}

static void f_testsome(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *outcount, MPI_Fint *indices,
                       MPI_Status *sts, MPI_Fint *ierr)
{
	int out = MPI_UNDEFINED;
	int rc = MPI_Testsome((int)*n, (MPI_Request *)reqs, &out, (int *)indices, statuses_of(sts));
	some_out(rc, out, outcount, indices, ierr);
}

/* ------------------------------------------------------------ files */

/* File_open and set_view take a string: gfortran passes its length last,
 * as a size_t. piano must see the open (it records the file, whose
 * non-blocking transfers it then makes) and the view (its etype). */
static void f_file_open(MPI_Fint *comm, char *name, MPI_Fint *amode, MPI_Fint *info, MPI_Fint *fh,
                        MPI_Fint *ierr, size_t name_len)
{
	char *c = pmpi_fortran_string(name, name_len);
	if (!c) {
		/* An open's errors go to MPI_FILE_NULL's handler (it returns
		 * unless the application changed it), which the binding cannot
		 * call portably. */
		ierr_set(ierr, MPI_ERR_NO_MEM);
		return;
	}
	MPI_File f = MPI_FILE_NULL;
	int rc = MPI_File_open(PMPI_Comm_f2c(*comm), c, (int)*amode, PMPI_Info_f2c(*info), &f);
	if (rc == MPI_SUCCESS)
		*fh = PMPI_File_c2f(f);
	free(c);
	ierr_set(ierr, rc);
}

static void f_file_close(MPI_Fint *fh, MPI_Fint *ierr)
{
	MPI_File f = PMPI_File_f2c(*fh);
	int rc = MPI_File_close(&f);
	if (rc == MPI_SUCCESS)
		*fh = PMPI_File_c2f(f);
	ierr_set(ierr, rc);
}

static void f_file_set_view(MPI_Fint *fh, MPI_Offset *disp, MPI_Fint *etype, MPI_Fint *filetype,
                            char *datarep, MPI_Fint *info, MPI_Fint *ierr, size_t datarep_len)
{
	char *c = pmpi_fortran_string(datarep, datarep_len);
	if (!c) {
		/* The file's handler, as the MPI's own MPI_File_set_view would. */
		PMPI_File_call_errhandler(PMPI_File_f2c(*fh), MPI_ERR_NO_MEM);
		ierr_set(ierr, MPI_ERR_NO_MEM);
		return;
	}
	int rc = MPI_File_set_view(PMPI_File_f2c(*fh), *disp, PMPI_Type_f2c(*etype),
	                           PMPI_Type_f2c(*filetype), c, PMPI_Info_f2c(*info));
	free(c);
	ierr_set(ierr, rc);
}

/* ------------------------------------------- made by MPICH's own code */

/* MPICH calls the Fortran query function its own way: the request is made
 * by MPICH and recorded as one piano leaves to the MPI (foreign.c), so that
 * no wait including it is delegated. */
static void f_grequest_start(void *query, void *free_fn, void *cancel, MPI_Aint *extra,
                             MPI_Fint *req, MPI_Fint *ierr)
{
	/* MPICH's own procedure behind the gate, as every application call,
	 * and the tracking with it (track.c). */
	PMPI_APP_SCOPE();
	MPI_Fint rc = MPI_ERR_INTERN;
	pmpi_ensure();
	if (!pmpir_grequest_start_f08_) {
		pmpi_warn(
		        "MPI_Grequest_start: MPICH's Fortran library (libmpichfort) is not loaded");
		ierr_set(ierr, rc);
		return;
	}
	pmpir_grequest_start_f08_(query, free_fn, cancel, extra, req, &rc);
	if (rc == MPI_SUCCESS && pmpi_g.threaded)
		track_foreign((MPI_Request)*req, false);
	ierr_set(ierr, rc);
}

#include "fortran_mpich08.inc"

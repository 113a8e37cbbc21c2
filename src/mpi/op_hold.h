/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * User-defined reduction operations held for piano's persistent graph
 * collectives beyond the application's MPI_Op_free (op_hold.c).
 */
#ifndef PIANO_MPI_OP_HOLD_H
#define PIANO_MPI_OP_HOLD_H

#include <mpi.h>
#include <stdbool.h>

/* Records op, just created by the MPI (the C layer's MPI_Op_create and
 * MPI_Op_create_c, Open MPI's Fortran MPI_OP_CREATE). Out of memory, it
 * stays unknown: its persistent collectives are the MPI's. */
void op_record(MPI_Op op);
/* Whether a graph may keep using op after the application frees it: a
 * predefined operation, or a user-defined one this layer saw created
 * (MPI_Op_create or MPI_Op_create_c through its wrappers) and the
 * application has not freed. */
bool op_holdable(MPI_Op op);
/* Holds op for a graph: a user-defined operation stays valid in the MPI
 * until the last hold is released, whatever the application frees meanwhile.
 * Returns false (and holds nothing) where op_holdable() is false; a
 * predefined operation needs no hold and returns true. */
bool op_hold(MPI_Op op);
/* Releases a hold of op_hold(); the MPI frees the operation here when the
 * application freed it already and this was the last hold. */
void op_release(MPI_Op op);
/* At MPI_Finalize, once no graph runs: the table is freed (the MPI frees
 * the operations still held, which no graph will use again). */
void op_hold_finalize(void);

#endif

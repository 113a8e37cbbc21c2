/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Serialized mode (docs/mpi.md, "Serialized mode"): piano serializes the
 * application's MPI calls with its own background calls, so that the MPI
 * can run at the cheap thread level the application asked for instead of
 * MPI_THREAD_MULTIPLE. Every MPI function of the process closes the gate
 * (gate.h) for the length of its call: those the layer wraps anyway with
 * PMPI_APP_SCOPE() at their top, every other one through the weak wrapper
 * that tools/gen-serial.py generates from the MPI's mpi.h at build time.
 * Outside serialized mode (pmpi_g.serial == 0, written once by set-up
 * before piano's threads exist) both cost one load.
 */
#ifndef PIANO_MPI_SERIAL_H
#define PIANO_MPI_SERIAL_H

#include "base.h"
#include "gate.h"

/* The generated wrappers: the layer's own strong definitions of the same
 * names win at link time. */
#define SERIAL_EXPORT __attribute__((weak, visibility("default")))

/* The generated wrappers' body, and the plain path of the layer's own
 * once set-up is done (pmpi_g.serial then fixed): calls that give piano's
 * threads nothing to progress. While the gate is off (gate_app_idle()) no
 * piano thread calls the MPI, and none will before an application call
 * turns it on, so the call goes to the MPI directly, a tail call, as it
 * does outside serialized mode. Otherwise inside the gate, with nothing
 * kept in a register across the MPI's call (unlike PMPI_APP_SCOPE()). */
#define SERIAL_WRAP(call)                                  \
	do {                                               \
		if (!pmpi_g.serial || gate_app_idle())     \
			return call;                       \
		gate_app_close();                          \
		int serial_rc_ = call;                     \
		gate_app_open();                           \
		return serial_rc_;                         \
	} while (0)

/* The closing is remembered in the scope's variable: MPI_Init_thread
 * turns serialized mode on in the middle of its own call. */
static inline int pmpi_app_begin(void)
{
	if (!pmpi_g.serial)
		return 0;
	gate_app_close();
	return 1;
}

static inline void pmpi_app_end(const int *closed)
{
	if (*closed)
		gate_app_open();
}

/* First statement of every MPI function the layer defines. */
#define PMPI_APP_SCOPE() \
	const int pmpi_app_scope_ __attribute__((cleanup(pmpi_app_end), unused)) = pmpi_app_begin()

#endif

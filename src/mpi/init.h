/* SPDX-License-Identifier: BSD-3-Clause */
/* Set-up and finalisation of the MPI layer (init.c). */
#ifndef PIANO_MPI_INIT_H
#define PIANO_MPI_INIT_H

/* Sets piano up if MPI is initialised and piano is not yet (library loaded
 * or linked after MPI_Init). Cheap when ready; every wrapper calls it
 * first. */
void pmpi_ensure(void);

#endif

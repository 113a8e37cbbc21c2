/* SPDX-License-Identifier: BSD-3-Clause */
/* The eager limit (eager.c): sends up to it complete without the receiver. */
#ifndef PIANO_MPI_EAGER_H
#define PIANO_MPI_EAGER_H

/* The limit in bytes, from PIANO_EAGER_LIMIT or the MPI's own settings
 * (inside the set-up's MPI_T session, cvar.h); *source says which. */
long eager_detect(const char **source);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/* The socket watcher (watch.c): kernel-blocking progress for socket
 * transports, in a blocking helper. */
#ifndef PIANO_MPI_WATCH_H
#define PIANO_MPI_WATCH_H

int watch_setup(void);
void watch_shutdown(void);

#endif

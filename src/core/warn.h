/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Diagnostics on stderr (error.c), shared by the core and the MPI layer,
 * which embeds the core's objects: one line per call, written at once, as
 * "WHO (TAG): message"; the MPI layer sets the tag to the rank.
 */
#ifndef PIANO_WARN_H
#define PIANO_WARN_H

/* The one diagnostic function: "WHO (TAG): message" and a newline, written
 * with a single write(2). */
void warn_line(const char *who, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* The core's lines; the MPI layer names itself "piano-mpi" (mpi/base.h). */
#define piano_warn(...) warn_line("piano", __VA_ARGS__)

/* Before any of piano's threads may warn (not thread-safe). */
void warn_set_tag(const char *tag);

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Diagnostics on stderr (error.c), shared by the core and the MPI layer,
 * which embeds the core's objects: one line per call, written at once, as
 * "WHO (TAG): message"; the MPI layer sets the tag to the rank.
 */
#ifndef PIANO_WARN_H
#define PIANO_WARN_H

#include <stdarg.h>

void piano_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void warn_v(const char *who, const char *fmt, va_list ap) __attribute__((format(printf, 2, 0)));
/* Before any of piano's threads may warn (not thread-safe). */
void warn_set_tag(const char *tag);

#endif

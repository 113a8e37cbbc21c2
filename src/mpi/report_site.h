/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The overlap report's call sites (report_site.c): a return address inside
 * piano's library or the MPI's (a Fortran binding) is replaced by the first
 * frame outside them.
 */
#ifndef PIANO_MPI_REPORT_SITE_H
#define PIANO_MPI_REPORT_SITE_H

/* Once, by report_setup(), before any operation is recorded. */
void report_site_setup(void);
/* `site` itself when it is outside piano and the MPI (a C program's call),
 * else the application's frame that led to it (the site when the walk
 * finds none). */
const void *report_site_of(const void *site);

#endif

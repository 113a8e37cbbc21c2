/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Code addresses to names (symbol.c), for the overlap report: the module
 * (executable or shared object) and the offset in it, which do not change
 * from rank to rank whatever address-space randomisation does, and the
 * function, source file and line where debugging information gives them.
 * With elfutils' libdw (PIANO_HAVE_LIBDW) the DWARF line tables and the
 * symbol tables of every module; without it, dladdr(3): exported symbols
 * only, no lines.
 */
#ifndef PIANO_MPI_SYMBOL_H
#define PIANO_MPI_SYMBOL_H

#include <stdint.h>

struct symbol {
	char module[256];   /* path of the executable or library ("?": unknown) */
	uint64_t offset;    /* of the address from the module's load address */
	char function[256]; /* "" when unknown; C++ names demangled */
	char file[256];     /* source file, "" when unknown */
	int line;           /* 0 when unknown */
};

/* A resolver for the calling process's address space as it is now. */
struct symbolizer;
struct symbolizer *symbolizer_open(void);
void symbolizer_close(struct symbolizer *s);

/* Names `ret`, a return address (the call instruction before it is what
 * is looked up). Always fills *out, with "?" or "" where unknown. */
void symbolizer_lookup(struct symbolizer *s, const void *ret, struct symbol *out);

/* Which resolver this build has: "libdw" or "dladdr". */
const char *symbolizer_kind(void);

#endif

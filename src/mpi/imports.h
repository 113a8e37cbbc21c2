/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the program imports from the MPI (imports.c): the undefined
 * symbols of the executable and of every shared object loaded at the time
 * of the call, read from their dynamic symbol tables in memory. Used before
 * MPI_Init to tell which parts of piano the program may need (docs/mpi.md,
 * "Serialized mode"); an object opened later with dlopen() is not seen.
 */
#ifndef PIANO_MPI_IMPORTS_H
#define PIANO_MPI_IMPORTS_H

#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a loaded object other than the MPI's and piano's calls (bits):
 * the MPI's non-blocking file functions (MPI_File_iread*, MPI_File_iwrite*,
 * the split collectives MPI_File_*_begin), piano's graph API
 * (piano_graph_*, include/piano/graph.h), a reduce-scatter that PIANO_COLL=auto
 * may run as a graph (any name that contains mpi_ireduce_scatter, or
 * mpi_reduce_scatter or mpix_reduce_scatter and _init, in any case: the C
 * names, the Fortran bindings' and the mpi_f08 module's). */
enum {
	IMPORTS_FILE_NONBLOCKING = 1u << 0,
	IMPORTS_GRAPH_API = 1u << 1,
	IMPORTS_REDUCE_SCATTER = 1u << 2,
};
unsigned imports_scan(void);

/* A loaded object's dynamic section (NULL without one), and an address
 * entry of it as a pointer: glibc relocates those entries in place where
 * the section is writable, not where it is read-only (RISC-V, MIPS, the
 * vDSO), where an entry below the load address is still an offset. */
const ElfW(Dyn) * imports_dynamic(const struct dl_phdr_info *info);
uintptr_t imports_addr(const struct dl_phdr_info *info, ElfW(Addr) v);

/* Whether a loaded object is one of the MPI's libraries (libmpi*,
 * libmpich*, libopen-*, Open MPI's mca_* components) or piano's, by its
 * path: not the program's. */
bool imports_mpi_object(const char *path);

/* A loaded object's dynamic symbol table: entries 1 to nundef - 1 may be
 * undefined (with DT_GNU_HASH only those), nsyms counts them all. */
struct imports_table {
	const ElfW(Sym) * syms;
	const char *strs;
	size_t strsz, nundef, nsyms;
};
bool imports_table_read(const struct dl_phdr_info *info, struct imports_table *t);
/* Entry i's name, or NULL if it lies outside the string table. */
const char *imports_name(const struct imports_table *t, size_t i);

#endif

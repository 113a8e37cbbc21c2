/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Whether a Fortran program may run in serialized mode (fortran_gate.h).
 *
 * Every way from the program's Fortran into the MPI must close piano's
 * gate. Read from the dynamic symbol tables of the loaded objects, at
 * MPI_Init:
 * - Open MPI's mpif.h library (libmpi_mpifh) calls the C PMPI_ functions
 *   from each of its procedures: each procedure it defines (ompi_*_f,
 *   ompix_*_f: the other names are aliases of these) must be found in
 *   piano first (a gate wrapper, or piano's own binding), unless it never
 *   enters the MPI's state (SAFE);
 * - Open MPI's module libraries (`use mpi`, `use mpi_f08`) call the mpif.h
 *   library's procedures and a few C functions: every MPI name they import
 *   must be found in piano (4.1.4's `use mpi_f08` imports
 *   PMPI_Buffer_detach, which is not: f08 programs stay at
 *   MPI_THREAD_MULTIPLE);
 * - MPICH's Fortran library calls the C MPI_ functions from its mpif.h
 *   procedures but PMPI_ from its f08 ones, in the same library: not
 *   covered.
 * A name is "found in piano" when the process's first definition of it
 * (dlsym(RTLD_DEFAULT)) lies in piano's own object: a library loaded
 * before piano, or a tool of the same names, makes it not so.
 */
#include "fortran_gate.h"
#include "imports.h"

#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <string.h>

void fgate_missing(const char *name, MPI_Fint *ierr)
{
	pmpi_warn("%s: Open MPI's Fortran library (libmpi_mpifh) is not loaded", name);
	if (ierr)
		*ierr = MPI_ERR_INTERN;
}

/* libmpi_mpifh's procedures that may run beside a background call: clocks,
 * address arithmetic, the queries MPI allows at any time, and those that
 * do nothing (Pcontrol, F_sync_reg). */
static const char *const SAFE[] = {
	"ompi_wtime_f",       "ompi_wtick_f",          "ompi_aint_add_f",
	"ompi_aint_diff_f",   "ompi_pcontrol_f",       "ompi_f_sync_reg_f",
	"ompi_initialized_f", "ompi_finalized_f",      "ompi_is_thread_main_f",
	"ompi_get_version_f", "ompi_get_library_version_f",
};

static bool safe(const char *name)
{
	for (size_t i = 0; i < sizeof(SAFE) / sizeof(SAFE[0]); i++)
		if (!strcmp(name, SAFE[i]))
			return true;
	return false;
}

static bool has_affix(const char *s, const char *prefix, const char *suffix)
{
	size_t n = strlen(s), p = strlen(prefix), q = strlen(suffix);
	return n > p + q && !strncmp(s, prefix, p) && !strcmp(s + n - q, suffix);
}

/* An Open MPI procedure: its implementation names. */
static bool ompi_procedure(const char *name)
{
	return has_affix(name, "ompi_", "_f") || has_affix(name, "ompix_", "_f");
}

/* A name through which a module library enters the MPI. */
static bool mpi_name(const char *name)
{
	return ompi_procedure(name) || !strncmp(name, "PMPI_", 5) || !strncmp(name, "MPI_", 4) ||
	       has_affix(name, "pmpi_", "_") || has_affix(name, "mpi_", "_");
}

struct walk {
	void *self; /* piano's object (its base address) */
	const char *why;
	char buf[160];
};

static bool in_piano(const struct walk *w, const char *name)
{
	Dl_info di;
	void *p = dlsym(RTLD_DEFAULT, name);
	return p && dladdr(p, &di) && di.dli_fbase == w->self;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

static int check_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct walk *w = arg;
	const char *base = base_name(info->dlpi_name);
	bool mpifh = !strncmp(base, "libmpi_mpifh.so", 15);
	bool module = !strncmp(base, "libmpi_usempi", 13);
	if (!strncmp(base, "libmpichfort.so", 15) || !strncmp(base, "libmpifort.so", 13)) {
		w->why = "MPICH's Fortran library is loaded (its use mpi_f08 procedures call "
		         "PMPI_ directly)";
		return 1;
	}
	if (!mpifh && !module)
		return 0;
	struct imports_table t;
	if (!imports_table_read(info, &t)) {
		snprintf(w->buf, sizeof(w->buf), "%s: its symbol table cannot be read", base);
		w->why = w->buf;
		return 1;
	}
	for (size_t i = 1; i < t.nsyms; i++) {
		const ElfW(Sym) *s = &t.syms[i];
		const char *name = imports_name(&t, i);
		if (!name)
			continue;
		/* Undefined functions may be STT_NOTYPE; data (the sentinels'
		 * common blocks, mpi_fortran_bottom_) is not a way in. */
		unsigned type = ELF64_ST_TYPE(s->st_info); /* the low 4 bits, in either class */
		bool undef = s->st_shndx == SHN_UNDEF;
		if (type != STT_FUNC && !(undef && type == STT_NOTYPE))
			continue;
		bool needed = mpifh ? !undef && ompi_procedure(name) && !safe(name)
		                    : undef && mpi_name(name);
		if (!needed || in_piano(w, name))
			continue;
		snprintf(w->buf, sizeof(w->buf), "%s %s %s, past piano's gate", base,
		         undef ? "calls" : "defines", name);
		w->why = w->buf;
		return 1;
	}
	return 0;
}

bool fortran_gate_covers(const char **why)
{
	static struct walk w; /* MPI_Init's thread only; *why points into it */
	Dl_info di;
	memset(&w, 0, sizeof(w));
	if (!dladdr((void *)fortran_gate_covers, &di))
		return false;
	w.self = di.dli_fbase;
	if (!dl_iterate_phdr(check_object, &w))
		return true;
	*why = w.why;
	return false;
}

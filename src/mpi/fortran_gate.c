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
 *   library's procedures (ompi_*_f, pmpi_*_) and a few C functions: every
 *   MPI name they import must be found in piano, or be called only from
 *   their functions that piano wraps (CALLED_BEHIND: 4.1.4's `use
 *   mpi_f08` calls PMPI_Buffer_detach from ompi_buffer_detach_f08);
 * - MPICH's Fortran library (libmpichfort) calls the C MPI_ functions,
 *   which the serializing wrappers gate, from its mpif.h procedures, but
 *   PMPI_ from many of its f08 ones and its pmpi_ names, in the same
 *   library (4.0.2, read from its code: none of its 424 mpif.h procedures
 *   reaches a PMPI_ function, 279 of its 528 f08 procedures do): the
 *   program's objects may import from it only f08 procedures piano wraps
 *   (a gate wrapper, or its own binding in fortran_mpich08.c), and
 *   anything but f08 procedures and profiling names.
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
	pmpi_warn("%s: the MPI's Fortran library is not loaded", name);
	if (ierr)
		*ierr = MPI_ERR_INTERN;
}

static bool has_affix(const char *s, const char *prefix, const char *suffix)
{
	size_t n = strlen(s), p = strlen(prefix), q = strlen(suffix);
	return n > p + q && !strncmp(s, prefix, p) && !strcmp(s + n - q, suffix);
}

/* Procedures that may run beside a background call, by their name in the
 * C binding (lower case): clocks, address arithmetic, the queries MPI
 * allows at any time, and those that do nothing (Pcontrol, F_sync_reg). */
static const char *const SAFE[] = {
	"wtime",
	"wtick",
	"aint_add",
	"aint_diff",
	"pcontrol",
	"f_sync_reg",
	"initialized",
	"finalized",
	"is_thread_main",
	"get_version",
	"get_library_version",
};

/* Whether `name` (ompi_<x>_f, pmpi_<x>_, mpi_<x>_f08_) is one of SAFE. */
static bool safe(const char *name)
{
	size_t skip, cut;
	if (has_affix(name, "ompi_", "_f"))
		skip = 5, cut = 2;
	else if (has_affix(name, "mpi_", "_f08_"))
		skip = 4, cut = 5;
	else if (has_affix(name, "pmpi_", "_"))
		skip = 5, cut = 1;
	else
		return false;
	size_t n = strlen(name) - skip - cut;
	for (size_t i = 0; i < sizeof(SAFE) / sizeof(SAFE[0]); i++)
		if (strlen(SAFE[i]) == n && !strncmp(name + skip, SAFE[i], n))
			return true;
	return false;
}

/* C functions of the MPI that a module library calls itself, and its own
 * functions that call them, which piano wraps (fortran_ompi.c): 4.1.4's
 * `use mpi_f08` MPI_Buffer_detach returns the address as a C pointer. */
static const struct {
	const char *import;
	const char *callers[2];
} CALLED_BEHIND[] = {
	{ "PMPI_Buffer_detach", { "ompi_buffer_detach_f08", "pompi_buffer_detach_f08" } },
};

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
	void *self;      /* piano's object (its base address) */
	void *mpichfort; /* MPICH's Fortran library, if loaded (its base address) */
	const char *why;
	char buf[160];
};

static bool in_piano(const struct walk *w, const char *name)
{
	Dl_info di;
	void *p = dlsym(RTLD_DEFAULT, name);
	return p && dladdr(p, &di) && di.dli_fbase == w->self;
}

/* Whether an import of a module library reaches the MPI only through
 * piano: piano defines it, or wraps each of the library's functions that
 * call it. */
static bool import_covered(const struct walk *w, const char *name)
{
	if (in_piano(w, name) || safe(name))
		return true;
	for (size_t i = 0; i < sizeof(CALLED_BEHIND) / sizeof(CALLED_BEHIND[0]); i++)
		if (!strcmp(name, CALLED_BEHIND[i].import))
			return in_piano(w, CALLED_BEHIND[i].callers[0]) &&
			       in_piano(w, CALLED_BEHIND[i].callers[1]);
	return false;
}

static const char *base_name(const char *path)
{
	const char *b = strrchr(path, '/');
	return b ? b + 1 : path;
}

/* A function symbol of a loaded object, defined or not (an undefined
 * function may be STT_NOTYPE); not data. */
static bool function_symbol(const ElfW(Sym) * s)
{
	unsigned type = ELF64_ST_TYPE(s->st_info); /* the low 4 bits, in either class */
	return type == STT_FUNC || (s->st_shndx == SHN_UNDEF && type == STT_NOTYPE);
}

static int check_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct walk *w = arg;
	const char *base = base_name(info->dlpi_name);
	bool mpifh = !strncmp(base, "libmpi_mpifh.so", 15);
	bool module = !strncmp(base, "libmpi_usempi", 13);
	if (!strncmp(base, "libmpichfort.so", 15) || !strncmp(base, "libmpifort.so", 13)) {
		w->mpichfort = (void *)info->dlpi_addr;
		return 0;
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
		/* Data (the sentinels' common blocks, mpi_fortran_bottom_) is
		 * not a way in. */
		bool undef = s->st_shndx == SHN_UNDEF;
		if (!function_symbol(s))
			continue;
		bool covered;
		if (mpifh)
			covered = undef || !ompi_procedure(name) || safe(name) || in_piano(w, name);
		else
			covered = !undef || !mpi_name(name) || import_covered(w, name);
		if (covered)
			continue;
		snprintf(w->buf, sizeof(w->buf), "%s %s %s, past piano's gate", base,
		         undef ? "calls" : "defines", name);
		w->why = w->buf;
		return 1;
	}
	return 0;
}

/* A procedure of MPICH's Fortran library that may call PMPI_ itself: its
 * f08 procedures and profiling names; not its module procedures (__mpi_f08_
 * types_MOD_mpi_request_neq: operators, callbacks, MPI_Sizeof, none of
 * which calls the MPI), nor those that never enter its state (SAFE). */
static bool mpich_past_gate(const char *name)
{
	if (!strncmp(name, "__", 2) || safe(name))
		return false;
	return strstr(name, "f08") || !strncmp(name, "pmpi_", 5) || !strncmp(name, "PMPI_", 5);
}

/* Second pass, with MPICH's Fortran library loaded: what the program's own
 * objects import from it. */
static int check_program(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct walk *w = arg;
	struct imports_table t;
	if (imports_mpi_object(info->dlpi_name) || !imports_table_read(info, &t))
		return 0;
	for (size_t i = 1; i < t.nundef; i++) {
		const char *name = imports_name(&t, i);
		if (!name || t.syms[i].st_shndx != SHN_UNDEF || !function_symbol(&t.syms[i]) ||
		    !mpich_past_gate(name) || !strcasestr(name, "mpi"))
			continue;
		Dl_info di;
		void *p = dlsym(RTLD_DEFAULT, name);
		if (!p || !dladdr(p, &di) || di.dli_fbase != w->mpichfort)
			continue; /* not MPICH's, or piano's own binding */
		snprintf(w->buf, sizeof(w->buf),
		         "%s calls MPICH's %s, which calls PMPI_ past piano's gate",
		         info->dlpi_name[0] ? base_name(info->dlpi_name) : "the program", name);
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
	if (!dl_iterate_phdr(check_object, &w) &&
	    !(w.mpichfort && dl_iterate_phdr(check_program, &w)))
		return true;
	*why = w.why;
	return false;
}

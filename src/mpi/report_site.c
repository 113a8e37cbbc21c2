/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The overlap report's call sites (report_site.h): the application's own
 * return address, not a binding's. A C program calls the exported
 * MPI_Isend, whose return address is the site; a Fortran program calls a
 * Fortran procedure (piano's own, in this library, or the MPI's `use
 * mpi_f08` binding, which calls piano's), and there the return address is
 * inside piano or the MPI: every Fortran operation of a program would be
 * one site. Such a site is replaced by the first frame of the stack, walked
 * with the unwinder, whose address lies outside both: the application's
 * call, or a library of its own (ScaLAPACK's BLACS).
 *
 * The ranges are read once, at set-up, from the objects loaded then whose
 * file is this library or one of the MPI's (libmpi*: Open MPI's libmpi,
 * libmpi_mpifh, libmpi_usempif08...; MPICH's libmpich, libmpichfort...).
 * Read-only afterwards.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "report_site.h"

#include <dlfcn.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unwind.h>

#define MAX_RANGES 64

struct range {
	uintptr_t lo, hi;
};

static struct range ranges[MAX_RANGES];
static int nranges;
static uintptr_t own_base; /* this library's load address */

static bool inside(uintptr_t pc)
{
	for (int i = 0; i < nranges; i++)
		if (pc >= ranges[i].lo && pc < ranges[i].hi)
			return true;
	return false;
}

static bool is_mpi_object(const struct dl_phdr_info *info)
{
	if (info->dlpi_addr == own_base)
		return true;
	const char *name = info->dlpi_name;
	if (!name || !*name)
		return false;
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	return strncmp(base, "libmpi", 6) == 0;
}

static int add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	if (!is_mpi_object(info))
		return 0;
	for (int i = 0; i < info->dlpi_phnum && nranges < MAX_RANGES; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X))
			continue;
		ranges[nranges].lo = info->dlpi_addr + ph->p_vaddr;
		ranges[nranges].hi = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
		nranges++;
	}
	return 0;
}

struct walk {
	uintptr_t found;
};

static _Unwind_Reason_Code step(struct _Unwind_Context *ctx, void *arg)
{
	struct walk *w = arg;
	uintptr_t pc = (uintptr_t)_Unwind_GetIP(ctx);
	if (!pc)
		return _URC_END_OF_STACK;
	if (inside(pc))
		return _URC_NO_REASON;
	w->found = pc;
	return _URC_END_OF_STACK;
}

void report_site_setup(void)
{
	Dl_info di;
	if (dladdr((void *)report_site_setup, &di) && di.dli_fbase)
		own_base = (uintptr_t)di.dli_fbase;
	dl_iterate_phdr(add_object, NULL);
	/* One walk now: the unwinder's first use may allocate or load. */
	struct walk w = { 0 };
	_Unwind_Backtrace(step, &w);
}

_Thread_local const void *report_fsite;

const void *report_site_of(const void *site)
{
	if (!inside((uintptr_t)site))
		return site;
	/* Called by one of piano's Fortran procedures straight from the
	 * program: its caller, without a walk (about 0.9 us for the 5-7
	 * frames between here and a program's Fortran call). */
	const void *f = report_fsite;
	if (f && !inside((uintptr_t)f))
		return f;
	struct walk w = { 0 };
	_Unwind_Backtrace(step, &w);
	return w.found ? (const void *)w.found : site;
}

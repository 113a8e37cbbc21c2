/* SPDX-License-Identifier: BSD-3-Clause */
/* Code addresses to names (symbol.h). */
#include "symbol.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <dlfcn.h>
#ifdef PIANO_HAVE_LIBDW
#include <elfutils/libdwfl.h>
#include <unistd.h>
#endif

static void copy(char *dst, size_t len, const char *src)
{
	snprintf(dst, len, "%s", src ? src : "");
}

typedef char *demangle_fn(const char *name, char *buf, size_t *len, int *status);

/*
 * A function name as the user wrote it: a C++ symbol (_Z...) demangled by
 * the C++ runtime's own __cxa_demangle, found in the process (a C++
 * application has libstdc++ loaded), so that piano needs no C++ library of
 * its own; a C name, or a C++ name in a process without that runtime, is
 * kept as the symbol table has it.
 */
static void copy_function(char *dst, size_t len, const char *name)
{
	copy(dst, len, name);
	if (!name || strncmp(name, "_Z", 2) != 0)
		return;
	demangle_fn *demangle = (demangle_fn *)dlsym(RTLD_DEFAULT, "__cxa_demangle");
	int status = -1;
	char *plain = demangle ? demangle(name, NULL, NULL, &status) : NULL;
	if (plain && status == 0)
		copy(dst, len, plain);
	free(plain);
}

#ifdef PIANO_HAVE_LIBDW

struct symbolizer {
	Dwfl *dwfl;
};

/* Debugging information from the module's own file only: no separate
 * debug files and, above all, no debuginfod download (which
 * dwfl_standard_find_debuginfo starts when DEBUGINFOD_URLS is set) in the
 * middle of MPI_Finalize. An application built with -g carries its DWARF. */
static int own_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
                         const char *file_name, const char *debuglink, GElf_Word crc,
                         char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
	(void)debuglink, (void)crc, (void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = own_debuginfo,
};

struct symbolizer *symbolizer_open(void)
{
	struct symbolizer *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->dwfl = dwfl_begin(&callbacks);
	if (s->dwfl && (dwfl_linux_proc_report(s->dwfl, getpid()) != 0 ||
	                dwfl_report_end(s->dwfl, NULL, NULL) != 0)) {
		dwfl_end(s->dwfl);
		s->dwfl = NULL;
	}
	return s;
}

void symbolizer_close(struct symbolizer *s)
{
	if (!s)
		return;
	if (s->dwfl)
		dwfl_end(s->dwfl);
	free(s);
}

void symbolizer_lookup(struct symbolizer *s, const void *ret, struct symbol *out)
{
	memset(out, 0, sizeof(*out));
	copy(out->module, sizeof(out->module), "?");
	out->offset = (uint64_t)(uintptr_t)ret;
	Dwfl_Module *m = s && s->dwfl ? dwfl_addrmodule(s->dwfl, (Dwarf_Addr)(uintptr_t)ret) : NULL;
	if (!m)
		return;
	/* The call instruction ends at the return address: look up the byte
	 * before it, which belongs to the call's line and function even when
	 * the call is the function's last instruction. */
	Dwarf_Addr pc = (Dwarf_Addr)(uintptr_t)ret - 1, start = 0;
	const char *name = dwfl_module_info(m, NULL, &start, NULL, NULL, NULL, NULL, NULL);
	copy(out->module, sizeof(out->module), name ? name : "?");
	out->offset = (uint64_t)(uintptr_t)ret - start;
	copy_function(out->function, sizeof(out->function), dwfl_module_addrname(m, pc));
	Dwfl_Line *line = dwfl_module_getsrc(m, pc);
	int lineno = 0;
	const char *file = line ? dwfl_lineinfo(line, NULL, &lineno, NULL, NULL, NULL) : NULL;
	if (file) {
		copy(out->file, sizeof(out->file), file);
		out->line = lineno;
	}
}

const char *symbolizer_kind(void) { return "libdw"; }

#else /* dladdr */

struct symbolizer {
	int unused;
};

struct symbolizer *symbolizer_open(void) { return calloc(1, sizeof(struct symbolizer)); }

void symbolizer_close(struct symbolizer *s) { free(s); }

void symbolizer_lookup(struct symbolizer *s, const void *ret, struct symbol *out)
{
	(void)s;
	memset(out, 0, sizeof(*out));
	copy(out->module, sizeof(out->module), "?");
	out->offset = (uint64_t)(uintptr_t)ret;
	Dl_info info;
	if (!dladdr((const char *)ret - 1, &info))
		return;
	copy(out->module, sizeof(out->module), info.dli_fname);
	out->offset = (uint64_t)((uintptr_t)ret - (uintptr_t)info.dli_fbase);
	copy_function(out->function, sizeof(out->function), info.dli_sname);
}

const char *symbolizer_kind(void) { return "dladdr"; }

#endif

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Keeps piano out of the processes a rank starts. piano-run loads the
 * library through LD_PRELOAD, which every child inherits: a system() or
 * popen() child of a rank would load piano and its MPI (a /bin/true takes
 * several times longer), and a child linked against the other MPI crashes.
 * So the library removes its own entry from LD_PRELOAD, keeping the user's
 * entries and unsetting the variable if none is left.
 *
 * Only in the rank itself: piano-run may start a wrapper (env, a shell
 * script, python3 before mpi4py loads MPI) that in turn starts the rank, and
 * that wrapper must pass the entry on. The constructor removes it at once in
 * a process linked against MPI from the start (an object other than piano
 * needs a libmpi* library), the rank; any other process keeps it, and
 * removes it in MPI_Init if it turns out to be the rank after all.
 */
#include "preload.h"
#include "imports.h"
#include "base.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The library's own file, as the loader opened it (dladdr). */
static const char *self_path;
/* LD_PRELOAD still names piano: the process did not look like the rank. */
static bool pending;

/* True if the LD_PRELOAD entry `e` (not NUL-terminated, `len` bytes) names
 * this library: the same file, or a bare name the loader found as it. */
static bool names_self(const char *e, size_t len, const struct stat *self_st)
{
	char buf[4096];
	if (len >= sizeof buf)
		return false;
	memcpy(buf, e, len);
	buf[len] = '\0';
	if (strcmp(buf, self_path) == 0)
		return true;
	if (!memchr(buf, '/', len)) {
		const char *base = strrchr(self_path, '/');
		return strcmp(buf, base ? base + 1 : self_path) == 0;
	}
	struct stat st;
	return self_st && stat(buf, &st) == 0 && st.st_dev == self_st->st_dev &&
	       st.st_ino == self_st->st_ino;
}

/* The new LD_PRELOAD entry when it fits: putenv() of a static string
 * allocates nothing, where setenv() leaves two blocks in the main arena
 * before main, under everything the MPI and the application allocate
 * (aside.c says why that matters). */
static char preload_entry[4096];

/*
 * Removes every entry naming this library from LD_PRELOAD. The loader
 * separates entries by ':' or ' '; the rest are kept in order, joined by ':'.
 * Returns -1 (with a message) if the new value cannot be set.
 */
static int remove_self(void)
{
	const char *old = getenv("LD_PRELOAD");
	if (!old)
		return 0;
	struct stat self_st;
	bool have_st = stat(self_path, &self_st) == 0;
	static const char name[] = "LD_PRELOAD=";
	size_t n = strlen(old), head = sizeof(name) - 1;
	/* Not over the value being read (LD_PRELOAD set here before). */
	uintptr_t at = (uintptr_t)old, ours_at = (uintptr_t)preload_entry;
	bool ours = at >= ours_at && at < ours_at + sizeof(preload_entry);
	bool fits = head + n < sizeof(preload_entry) && !ours;
	char *kept = fits ? preload_entry + head : malloc(n + 1);
	if (!kept) {
		pmpi_warn("out of memory: LD_PRELOAD left as it is, child processes load piano too");
		return -1;
	}
	size_t k = 0;
	bool found = false;
	for (const char *p = old; *p;) {
		size_t len = strcspn(p, ": ");
		if (len > 0) {
			if (names_self(p, len, have_st ? &self_st : NULL)) {
				found = true;
			} else {
				if (k > 0)
					kept[k++] = ':';
				memcpy(kept + k, p, len);
				k += len;
			}
		}
		p += len;
		if (*p)
			p++;
	}
	kept[k] = '\0';
	int rc = 0;
	if (found) {
		if (k == 0)
			rc = unsetenv("LD_PRELOAD");
		else if (fits) {
			memcpy(preload_entry, name, head);
			rc = putenv(preload_entry);
		} else
			rc = setenv("LD_PRELOAD", kept, 1);
		if (rc != 0) {
			pmpi_warn("cannot update LD_PRELOAD: child processes load piano too");
			rc = -1;
		}
	}
	if (!fits)
		free(kept);
	return rc;
}

/* dl_iterate_phdr callback: sets *data when an object other than this
 * library needs a libmpi* library (libmpi.so.40, libmpich.so.12,
 * libmpi_mpifh.so.40...). */
static int needs_mpi(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	if (info->dlpi_name && strcmp(info->dlpi_name, self_path) == 0)
		return 0;
	const ElfW(Dyn) *dyn = imports_dynamic(info);
	if (!dyn)
		return 0;
	ElfW(Addr) strtab = 0;
	for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++)
		if (d->d_tag == DT_STRTAB)
			strtab = imports_addr(info, d->d_un.d_ptr);
	if (!strtab)
		return 0;
	for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
		if (d->d_tag == DT_NEEDED &&
		    strncmp((const char *)strtab + d->d_un.d_val, "libmpi", 6) == 0) {
			*(bool *)data = true;
			return 1;
		}
	}
	return 0;
}

/*
 * Runs when the library is loaded: before main, and before the MPI starts
 * any thread (it does so in MPI_Init), so no other thread can read the
 * environment meanwhile: this is what makes setenv/unsetenv safe here.
 */
__attribute__((constructor)) static void preload_init(void)
{
	if (!getenv("LD_PRELOAD"))
		return; /* linked, not preloaded: nothing to remove */
	Dl_info info;
	if (!dladdr((void *)&preload_init, &info) || !info.dli_fname || !*info.dli_fname) {
		pmpi_warn("cannot find the library's own path (dladdr failed): LD_PRELOAD left "
		          "as it is, child processes load piano too");
		return;
	}
	self_path = info.dli_fname;
	bool rank = false;
	dl_iterate_phdr(needs_mpi, &rank);
	if (rank)
		remove_self();
	else
		pending = true;
}

void pmpi_preload_drop(void)
{
	if (!pending)
		return;
	pending = false;
	remove_self();
}

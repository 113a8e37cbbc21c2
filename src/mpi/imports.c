/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Reading imports from the dynamic symbol tables (imports.h). Every loaded
 * object has its PT_DYNAMIC segment mapped: DT_SYMTAB and DT_STRTAB locate
 * the tables, and the number of symbols comes from the hash table. With
 * DT_GNU_HASH only the symbols an object defines are hashed, and the link
 * editor puts them last: the undefined ones are the entries below its
 * `symoffset`, and the defined ones run to the end of the longest hash
 * chain; with DT_HASH, `nchain` counts them all. Nothing is read from
 * disk and nothing is loaded.
 */
#include "imports.h"

#include <elf.h>
#include <link.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

const ElfW(Dyn) * imports_dynamic(const struct dl_phdr_info *info)
{
	for (int i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_DYNAMIC)
			return (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
	return NULL;
}

uintptr_t imports_addr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
	return v < info->dlpi_addr ? info->dlpi_addr + v : v;
}

/* The reduce-scatters of imports.h, whatever the binding's case and
 * decoration: MPI_Ireduce_scatter_block, mpi_ireduce_scatter_,
 * MPI_Ireduce_scatter_f08, MPI_Reduce_scatter_init, MPIX_Reduce_scatter_init. */
static bool reduce_scatter(const char *name)
{
	if (strcasestr(name, "mpi_ireduce_scatter"))
		return true;
	return (strcasestr(name, "mpi_reduce_scatter") ||
	        strcasestr(name, "mpix_reduce_scatter")) &&
	       strcasestr(name, "_init");
}

static unsigned kind_of(const char *name)
{
	static const char file[] = "MPI_File_", begin[] = "_begin", graph[] = "piano_graph_";
	const size_t nf = sizeof(file) - 1, nb = sizeof(begin) - 1;
	if (!strncmp(name, graph, sizeof(graph) - 1))
		return IMPORTS_GRAPH_API;
	if (reduce_scatter(name))
		return IMPORTS_REDUCE_SCATTER;
	if (strncmp(name, file, nf))
		return 0;
	if (!strncmp(name + nf, "iread", 5) || !strncmp(name + nf, "iwrite", 6))
		return IMPORTS_FILE_NONBLOCKING;
	size_t n = strlen(name);
	return n > nf + nb && !strcmp(name + n - nb, begin) ? IMPORTS_FILE_NONBLOCKING : 0;
}

/* The MPI's own libraries (libmpi*, libmpich*, libopen-*, Open MPI's
 * mca_* components) and piano's define these names or call them for the
 * application. */
bool imports_mpi_object(const char *path)
{
	static const char *const names[] = { "libmpi", "libpiano", "libopen-", "mca_" };
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strncmp(base, names[i], strlen(names[i])))
			return true;
	return false;
}

/* The number of symbols of a DT_GNU_HASH table: one past the highest
 * index any bucket's chain reaches (a chain ends at an entry whose low bit
 * is set). */
static size_t gnu_hash_count(const uint32_t *gnu)
{
	uint32_t nbuckets = gnu[0], symoffset = gnu[1], bloom = gnu[2];
	const uint32_t *buckets = gnu + 4 + bloom * (sizeof(ElfW(Addr)) / 4);
	const uint32_t *chains = buckets + nbuckets;
	uint32_t last = 0;
	for (uint32_t b = 0; b < nbuckets; b++)
		if (buckets[b] > last)
			last = buckets[b];
	if (last < symoffset)
		return symoffset;
	while (!(chains[last - symoffset] & 1u))
		last++;
	return (size_t)last + 1;
}

bool imports_table_read(const struct dl_phdr_info *info, struct imports_table *t)
{
	const ElfW(Dyn) *dyn = imports_dynamic(info);
	if (!dyn)
		return false;
	const uint32_t *gnu = NULL, *sysv = NULL;
	memset(t, 0, sizeof(*t));
	for (; dyn->d_tag != DT_NULL; dyn++) {
		switch (dyn->d_tag) {
		case DT_SYMTAB:
			t->syms = (const ElfW(Sym) *)imports_addr(info, dyn->d_un.d_ptr);
			break;
		case DT_STRTAB: t->strs = (const char *)imports_addr(info, dyn->d_un.d_ptr); break;
		case DT_STRSZ: t->strsz = dyn->d_un.d_val; break;
		case DT_GNU_HASH:
			gnu = (const uint32_t *)imports_addr(info, dyn->d_un.d_ptr);
			break;
		case DT_HASH: sysv = (const uint32_t *)imports_addr(info, dyn->d_un.d_ptr); break;
		}
	}
	if (!t->syms || !t->strs)
		return false;
	if (gnu) {
		t->nundef = gnu[1]; /* symoffset: the undefined symbols come first */
		t->nsyms = gnu_hash_count(gnu);
	} else if (sysv) {
		t->nundef = t->nsyms = sysv[1]; /* nchain: every symbol */
	}
	return true;
}

const char *imports_name(const struct imports_table *t, size_t i)
{
	return t->syms[i].st_name < t->strsz ? t->strs + t->syms[i].st_name : NULL;
}

static int scan_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	unsigned *found = arg;
	struct imports_table t;
	if (imports_mpi_object(info->dlpi_name) || !imports_table_read(info, &t))
		return 0;
	for (size_t i = 1; i < t.nundef; i++) {
		const char *name = imports_name(&t, i);
		if (t.syms[i].st_shndx == SHN_UNDEF && name)
			*found |= kind_of(name);
	}
	return 0;
}

unsigned imports_scan(void)
{
	unsigned found = 0;
	dl_iterate_phdr(scan_object, &found);
	return found;
}

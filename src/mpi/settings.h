/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MPI layer's settings table (settings.c). It includes no MPI header, so
 * that piano-info, which links no MPI, lists and documents these settings
 * too.
 */
#ifndef PIANO_MPI_SETTINGS_H
#define PIANO_MPI_SETTINGS_H

#include <piano/settings.h>

#include <stddef.h>

#define PMPI_LAYER "mpi"

/* Indices of PIANO_MPI_THREAD_LEVEL's and PIANO_MPI_BLOCKING's choices. */
enum pmpi_thread_choice {
	PMPI_LEVEL_SINGLE,
	PMPI_LEVEL_FUNNELED,
	PMPI_LEVEL_SERIALIZED,
	PMPI_LEVEL_MULTIPLE,
	PMPI_LEVEL_AUTO
};
enum pmpi_blocking_choice { PMPI_BLOCKING_AUTO, PMPI_BLOCKING_TIMER, PMPI_BLOCKING_BLOCK };
enum pmpi_file_choice { PMPI_FILE_PIANO, PMPI_FILE_NATIVE };

/* The collectives PIANO_COLL can run as graphs (bits of a mask). */
enum pmpi_coll_bit {
	PMPI_COLL_IBARRIER = 1u << 0,
	PMPI_COLL_IBCAST = 1u << 1,
	PMPI_COLL_IALLREDUCE = 1u << 2,
	PMPI_COLL_IREDUCE = 1u << 3,
	PMPI_COLL_IALLTOALL = 1u << 4,
	PMPI_COLL_IALLGATHER = 1u << 5,
	PMPI_COLL_IGATHER = 1u << 6,
	PMPI_COLL_ISCATTER = 1u << 7,
	PMPI_COLL_IREDUCE_SCATTER_BLOCK = 1u << 8,
	PMPI_COLL_ISCAN = 1u << 9,
	PMPI_COLL_IEXSCAN = 1u << 10,
	PMPI_COLL_IREDUCE_SCATTER = 1u << 11,
	PMPI_COLL_INEIGHBOR_ALLGATHER = 1u << 12,
	PMPI_COLL_INEIGHBOR_ALLTOALL = 1u << 13,
	/* PIANO_COLL=auto: not a collective; init.c turns it into the mask of
	 * PMPI_COLL_AUTO_SET once every rank agreed, or 0. */
	PMPI_COLL_AUTO = 1u << 31,
};

/* The collectives `auto` runs as graphs, where the benchmarks show them
 * faster than the MPI's own on both MPIs (docs/coll.md, "The default"). */
#define PMPI_COLL_AUTO_SET (PMPI_COLL_IREDUCE_SCATTER | PMPI_COLL_IREDUCE_SCATTER_BLOCK)

/* PIANO_COLL's value as a mask of pmpi_coll_bit (`auto`: PMPI_COLL_AUTO
 * alone): 0, or -1 with the reason in why (len bytes). */
int pmpi_coll_parse(const char *value, unsigned *mask, char *why, size_t len);

extern const struct piano_setting_spec pmpi_settings_table[];
extern const int pmpi_settings_count;

#endif

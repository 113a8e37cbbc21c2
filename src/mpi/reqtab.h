/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * An open-addressing hash table of request handles (reqtab.c), keyed by the
 * handle's bits as a 64-bit integer: linear probing, a power-of-two
 * capacity kept at most half full, backward-shift deletion (no tombstones).
 * No MPI and no lock here: track.c gives it its keys and its lock, and the
 * unit test (tests/core/test_mpi_reqtab.c) drives it alone.
 */
#ifndef PIANO_MPI_REQTAB_H
#define PIANO_MPI_REQTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct reqtab_entry {
	uint64_t key;
	uint8_t used, persistent, active;
	uint8_t foreign; /* a kind piano leaves to the MPI (track_foreign) */
	uint8_t p2p;      /* point-to-point: the MPI may be asked (track.c) */
	uint8_t finished; /* active, and the MPI said it is complete (track.c) */
	void *data;      /* the owner's (offload.c: the send's record) */
};

struct reqtab {
	struct reqtab_entry *slots; /* cap entries, NULL while cap == 0 */
	size_t cap, count;
};

/* The entry of key, or NULL. */
struct reqtab_entry *reqtab_find(const struct reqtab *t, uint64_t key);
/* The entry of key; a new one (flags zero, *created true) if it had none.
 * NULL when the table must grow and cannot. Entry pointers stay valid until
 * the next reqtab_get() or reqtab_erase(). */
struct reqtab_entry *reqtab_get(struct reqtab *t, uint64_t key, bool *created);
void reqtab_erase(struct reqtab *t, struct reqtab_entry *e);
void reqtab_free(struct reqtab *t);

#endif

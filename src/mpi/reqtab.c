/* SPDX-License-Identifier: BSD-3-Clause */
/* The request hash table (reqtab.h). */
#include "reqtab.h"

#include <stdlib.h>
#include <string.h>

#define REQTAB_MIN_CAP 256

static size_t slot_of(uint64_t k, size_t mask)
{
	k ^= k >> 33;
	k *= 0xff51afd7ed558ccdull;
	k ^= k >> 33;
	return (size_t)k & mask;
}

struct reqtab_entry *reqtab_find(const struct reqtab *t, uint64_t key)
{
	if (!t->cap)
		return NULL;
	size_t mask = t->cap - 1;
	for (size_t i = slot_of(key, mask);; i = (i + 1) & mask) {
		if (!t->slots[i].used)
			return NULL;
		if (t->slots[i].key == key)
			return &t->slots[i];
	}
}

static int grow(struct reqtab *t)
{
	size_t ncap = t->cap ? t->cap * 2 : REQTAB_MIN_CAP;
	struct reqtab_entry *n = calloc(ncap, sizeof(*n));
	if (!n)
		return -1;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->slots[i].used)
			continue;
		size_t j = slot_of(t->slots[i].key, ncap - 1);
		while (n[j].used)
			j = (j + 1) & (ncap - 1);
		n[j] = t->slots[i];
	}
	free(t->slots);
	t->slots = n;
	t->cap = ncap;
	return 0;
}

struct reqtab_entry *reqtab_get(struct reqtab *t, uint64_t key, bool *created)
{
	struct reqtab_entry *e = reqtab_find(t, key);
	*created = e == NULL;
	if (e)
		return e;
	if ((t->count + 1) * 2 > t->cap && grow(t) < 0)
		return NULL;
	size_t mask = t->cap - 1, i = slot_of(key, mask);
	while (t->slots[i].used)
		i = (i + 1) & mask;
	e = &t->slots[i];
	*e = (struct reqtab_entry){ .key = key, .used = 1 };
	t->count++;
	return e;
}

void reqtab_erase(struct reqtab *t, struct reqtab_entry *e)
{
	size_t mask = t->cap - 1, i = (size_t)(e - t->slots);
	for (size_t j = (i + 1) & mask; t->slots[j].used; j = (j + 1) & mask) {
		size_t home = slot_of(t->slots[j].key, mask);
		/* Move j into the hole i unless its home lies in (i, j]. */
		bool stays = (i <= j) ? (home > i && home <= j) : (home > i || home <= j);
		if (stays)
			continue;
		t->slots[i] = t->slots[j];
		i = j;
	}
	memset(&t->slots[i], 0, sizeof(t->slots[i]));
	t->count--;
}

void reqtab_free(struct reqtab *t)
{
	free(t->slots);
	*t = (struct reqtab){ 0 };
}

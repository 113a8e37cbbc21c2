/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.mpi_reqtab — the MPI layer's request table (src/mpi/reqtab.c), alone:
 * no MPI, keys shaped like Open MPI's handles (aligned pointers) and like
 * MPICH's (small integers with high tag bits). Checked against a model:
 *  - thousands of live entries, so the table grows many times (the MPI
 *    tests never hold more than a few requests: grow never runs there);
 *    every entry keeps its flags through each grow;
 *  - getting an existing key returns its entry, not a new one;
 *  - erasing at random (backward-shift deletion) leaves every other key
 *    findable, also in a table nearly half full and with keys whose home
 *    slots surround the end of the array, so that clusters wrap around it;
 *  - after every step, each used slot is reachable from its home slot
 *    without crossing an empty one (the probing invariant), and the table
 *    is at most half full.
 */
#include "common.h"

#include "reqtab.h" /* src/mpi */

#include <stdlib.h>

enum { NKEYS = 6000 };

static uint64_t keys[NKEYS];
static bool live[NKEYS];
static size_t nlive, nkeys;

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* Flags derived from the key, to see that an entry moves whole. */
static uint8_t flag_of(uint64_t k, int bit)
{
	return (uint8_t)(((k * 0x9e3779b97f4a7c15ull) >> (60 + bit)) & 1);
}

static void check_model(const struct reqtab *t)
{
	CHECK(t->count == nlive, "count %zu, model %zu", t->count, nlive);
	CHECK(t->cap == 0 || (t->cap & (t->cap - 1)) == 0, "capacity %zu", t->cap);
	CHECK(t->count * 2 <= t->cap || t->cap == 0, "%zu entries in %zu slots", t->count, t->cap);
	for (size_t i = 0; i < nkeys; i++) {
		struct reqtab_entry *e = reqtab_find(t, keys[i]);
		if (!live[i]) {
			CHECK(!e, "key %zu (%#llx) found after its erase", i,
			      (unsigned long long)keys[i]);
			continue;
		}
		CHECK(e, "key %zu (%#llx) lost (capacity %zu)", i, (unsigned long long)keys[i],
		      t->cap);
		CHECK(e->key == keys[i] && e->used, "key %zu: wrong entry", i);
		CHECK(e->persistent == flag_of(keys[i], 0) && e->active == flag_of(keys[i], 1) &&
		              e->foreign == flag_of(keys[i], 2),
		      "key %zu: flags changed", i);
	}
	/* Probing invariant: a used slot's key is found from its home, i.e.
	 * reqtab_find of every stored key returns that very slot. */
	size_t used = 0;
	for (size_t i = 0; i < t->cap; i++) {
		if (!t->slots[i].used)
			continue;
		used++;
		CHECK(reqtab_find(t, t->slots[i].key) == &t->slots[i],
		      "slot %zu unreachable from its home", i);
	}
	CHECK(used == t->count, "%zu used slots, count %zu", used, t->count);
}

static void put(struct reqtab *t, size_t i)
{
	bool created = false;
	struct reqtab_entry *e = reqtab_get(t, keys[i], &created);
	CHECK(e, "reqtab_get failed (out of memory?)");
	CHECK(created == !live[i], "key %zu: created %d, live %d", i, created, live[i]);
	if (!live[i]) {
		CHECK(!e->persistent && !e->active && !e->foreign, "new entry with flags");
		live[i] = true;
		nlive++;
	}
	e->persistent = flag_of(keys[i], 0);
	e->active = flag_of(keys[i], 1);
	e->foreign = flag_of(keys[i], 2);
}

static void take(struct reqtab *t, size_t i)
{
	struct reqtab_entry *e = reqtab_find(t, keys[i]);
	CHECK(e && live[i], "key %zu: missing before its erase", i);
	reqtab_erase(t, e);
	live[i] = false;
	nlive--;
}

/* n keys of keys[], churn random inserts and erases, a table check every
 * `every` of them. */
static void run(const char *shape, size_t n, long churn, long every)
{
	struct reqtab t = { 0 };
	nlive = 0;
	nkeys = n;
	for (size_t i = 0; i < NKEYS; i++)
		live[i] = false;
	check_model(&t);

	/* Fill: the table grows from 256 slots (to 16384 for 6000 keys). */
	size_t grows = 0, cap = 0;
	for (size_t i = 0; i < n; i++) {
		put(&t, i);
		if (t.cap != cap) {
			grows++;
			cap = t.cap;
			check_model(&t);
		}
	}
	check_model(&t);
	CHECK(n < 128 || grows >= 6, "%s: the table grew %zu times for %zu keys", shape, grows, n);

	/* Getting a key again returns its entry. */
	for (size_t i = 0; i < n; i += 7)
		put(&t, i);
	check_model(&t);

	/* Erase half at random, then churn. */
	for (size_t erased = 0; erased < n / 2;) {
		size_t i = next_rand() % n;
		if (live[i]) {
			take(&t, i);
			erased++;
		}
	}
	check_model(&t);
	for (long s = 0; s < churn; s++) {
		size_t i = next_rand() % n;
		if (live[i])
			take(&t, i);
		else
			put(&t, i);
		if (s % every == 0)
			check_model(&t);
	}
	check_model(&t);
	while (nlive)
		for (size_t i = 0; i < n; i++)
			if (live[i])
				take(&t, i);
	check_model(&t);
	reqtab_free(&t);
	printf("%s: %zu keys, %zu grows, %ld random inserts and erases: consistent\n", shape, n,
	       grows, churn);
}

/* The slot key lands in, in an empty table of the first capacity. */
static size_t home_of(uint64_t key)
{
	struct reqtab s = { 0 };
	bool created;
	struct reqtab_entry *e = reqtab_get(&s, key, &created);
	CHECK(e, "reqtab_get failed (out of memory?)");
	size_t home = (size_t)(e - s.slots);
	CHECK(s.cap == 256, "first capacity %zu, the test expects 256", s.cap);
	reqtab_free(&s);
	return home;
}

int main(void)
{
	/* Open MPI: pointers to requests, 64-byte aligned, in one heap area. */
	for (size_t i = 0; i < NKEYS; i++)
		keys[i] = 0x55d0c0a00000ull + 64 * i + (next_rand() % 4) * 64 * NKEYS;
	run("pointer-like keys", NKEYS, 200000, 20000);
	/* 127 keys in 256 slots: the churn keeps the table nearly half full. */
	run("pointer-like keys, dense", 127, 20000, 1);
	/* MPICH: 32-bit handles, kind bits on top, consecutive indices. */
	for (size_t i = 0; i < NKEYS; i++)
		keys[i] = 0xac000000u | (uint32_t)i << 3 | (uint32_t)(next_rand() & 7);
	run("integer handles", NKEYS, 200000, 20000);
	run("integer handles, dense", 127, 20000, 1);
	/* 100 keys whose homes are the last 8 and the first 8 slots. */
	size_t n = 0;
	for (uint64_t k = 1; n < 100; k++) {
		size_t h = home_of(k * 64);
		if (h < 8 || h >= 248)
			keys[n++] = k * 64;
	}
	run("keys around the end of the array", n, 20000, 1);
	return TEST_PASS;
}

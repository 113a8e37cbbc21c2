/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.ltask_name — piano_ltask_set_name() copies the name (later changes
 * to the caller's buffer do not affect it) and truncates it to 31
 * characters; piano_ltask_name() returns it; a task without a name has a
 * non-NULL name.
 */
#include "common.h"

static unsigned cb(void *arg)
{
	(void)arg;
	return 0;
}

int main(void)
{
	piano_ltask_t *t;
	char buf[64];

	test_setenv("PIANO_PROGRESSION", "0");
	CHECK_OK(piano_init());
	CHECK_OK(piano_ltask_create(cb, NULL, PIANO_LTASK_ONESHOT, &t));
	CHECK(piano_ltask_name(t) != NULL, "unnamed task: piano_ltask_name is NULL");

	strcpy(buf, "reader");
	CHECK_OK(piano_ltask_set_name(t, buf));
	strcpy(buf, "XXXXXX");
	CHECK(strcmp(piano_ltask_name(t), "reader") == 0,
	      "name is \"%s\", expected \"reader\" (not copied?)", piano_ltask_name(t));

	memset(buf, 0, sizeof buf);
	for (int i = 0; i < 40; i++)
		buf[i] = (char)('a' + i % 26);
	CHECK_OK(piano_ltask_set_name(t, buf));
	CHECK(strlen(piano_ltask_name(t)) == 31, "name of 40 characters kept as %zu: \"%s\"",
	      strlen(piano_ltask_name(t)), piano_ltask_name(t));
	CHECK(strncmp(piano_ltask_name(t), buf, 31) == 0, "truncated name \"%s\" is not a prefix",
	      piano_ltask_name(t));

	CHECK_OK(piano_ltask_set_name(t, ""));
	CHECK(strcmp(piano_ltask_name(t), "") == 0, "empty name reads \"%s\"", piano_ltask_name(t));

	CHECK_OK(piano_ltask_destroy(t));
	CHECK_OK(piano_finalize());
	printf("ltask_name: ok\n");
	return TEST_PASS;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.config_invalid — configuration validation at piano_init():
 *  - for every PIANO_* variable, malformed or out-of-range values (non
 *    numeric, trailing garbage, negative, beyond the bounds, unknown level
 *    names) make piano_init() return PIANO_ECONFIG, leave the engine
 *    uninitialised, and print a message naming the variable on stderr;
 *  - the bounds of every range are accepted and show as the live value;
 *  - piano_setting_count()/piano_setting_get() list every variable with the
 *    documented default, a range and a help text.
 * Variables and ranges: include/piano/piano.h and docs/configuration.md.
 *
 * All failures are collected and listed before exiting.
 */
#include "common.h"


struct var {
	const char *name;
	const char *def;
	const char *bad[8];
	const char *good[4];
};

static const struct var vars[] = {
	{ "PIANO_PROGRESSION", "1", { "2", "-1", "yes", "1x", "abc", NULL }, { "0", "1", NULL } },
	{ "PIANO_QUEUE_LEVEL", "core",
	  { "none", "bogus", "core5", "5", "cores", NULL },
	  { "machine", "package", "core", "pu" } },
	{ "PIANO_IDLE_LEVEL", "package",
	  { "bogus", "pux", "7", "packages", NULL },
	  { "none", "machine", "pu", NULL } },
	{ "PIANO_IDLE_PERIOD_US", "5",
	  { "-1", "1000001", "5x", "abc", "99999999999999999999999", NULL },
	  { "0", "1000000", NULL } },
	{ "PIANO_IDLE_COEF", "20", { "0", "100001", "-5", "20x", "x", NULL }, { "1", "100000", NULL } },
	{ "PIANO_IDLE_YIELD_US", "50", { "-1", "1000001", "5x", "abc", NULL }, { "0", "1000000", NULL } },
	{ "PIANO_IDLE_BOOST", "0", { "2", "-1", "yes", "1x", NULL }, { "0", "1", NULL } },
	{ "PIANO_TIMER_PERIOD_US", "1000",
	  { "1", "9", "10000001", "-1", "1000us", "x", NULL },
	  { "0", "10", "10000000", NULL } },
	{ "PIANO_TIMER_MAX_US", "0", { "-1", "10000001", "4ms", "x", NULL }, { "0", "10000000", NULL } },
	{ "PIANO_SPIN_US", "20", { "-1", "10000001", "5x", "abc", NULL }, { "0", "10000000", NULL } },
	{ "PIANO_BLOCK_HELPERS", "1", { "65", "-1", "1x", "one", NULL }, { "0", "64", NULL } },
	{ "PIANO_BLOCK_DELAY_US", "1000",
	  { "-1", "10000001", "5x", "abc", NULL },
	  { "0", "10000000", NULL } },
	{ "PIANO_BLOCK_TIMEOUT_MS", "100", { "0", "10001", "-1", "5x", "abc", NULL }, { "1", "10000", NULL } },
	{ "PIANO_LOCATION_REFRESH_US", "100000",
	  { "0", "10000001", "-1", "5x", "abc", NULL },
	  { "1", "10000000", NULL } },
	{ "PIANO_FINALIZE_TIMEOUT_MS", "5000",
	  { "-1", "3600001", "5x", "abc", NULL },
	  { "0", "3600000", NULL } },
	{ "PIANO_STATS", "0", { "2", "-1", "on", "0x", NULL }, { "0", "1", NULL } },
	/* docs/configuration.md: an hwloc CPU list of CPUs of the machine
	 * (default empty); one CPU it does not have is an error too */
	{ "PIANO_BIND_CPUS", "", { "abc", "0-x", "4096", "0,4096", "0-1000000", NULL }, { "0", NULL } },
};
#define NV ((int)(sizeof vars / sizeof vars[0]))

static void check_bad(const struct var *v, const char *value)
{
	char msg[4096];
	struct test_capture cap;
	int rc;

	test_clear_env();
	test_setenv(v->name, value);
	test_capture_begin(&cap);
	rc = piano_init();
	test_capture_end(&cap, msg, sizeof msg);
	if (rc != PIANO_ECONFIG) {
		SOFT_FAIL("%s=\"%s\": piano_init() returned %d (%s), expected PIANO_ECONFIG",
		          v->name, value, rc, test_errname(rc));
		if (rc == 0)
			piano_finalize();
		return;
	}
	if (piano_initialized())
		SOFT_FAIL("%s=\"%s\": piano_initialized() is 1 after PIANO_ECONFIG", v->name,
		          value);
	if (!strstr(msg, v->name))
		SOFT_FAIL("%s=\"%s\": the stderr message does not name the variable: \"%s\"",
		          v->name, value, msg);
	else
		printf("  %s=\"%s\" -> ECONFIG: %s", v->name, value,
		       msg[0] && msg[strlen(msg) - 1] == '\n' ? msg : "(no newline)\n");
}

static const char *setting_value(const char *name)
{
	int n = 0;
	struct piano_setting s;
	CHECK_OK(piano_setting_count(&n));
	for (int i = 0; i < n; i++) {
		CHECK_OK(piano_setting_get(i, &s));
		if (s.name && strcmp(s.name, name) == 0)
			return s.value;
	}
	return NULL;
}

static void check_good(const struct var *v, const char *value)
{
	int rc;

	test_clear_env();
	/* no threads: this checks parsing, not the effect of the value */
	if (strcmp(v->name, "PIANO_PROGRESSION") != 0)
		test_setenv("PIANO_PROGRESSION", "0");
	test_setenv(v->name, value);
	rc = piano_init();
	if (rc != 0) {
		SOFT_FAIL("%s=\"%s\" (valid): piano_init() returned %d (%s)", v->name, value,
		          rc, test_errname(rc));
		return;
	}
	const char *live = setting_value(v->name);
	if (!live || strcmp(live, value) != 0)
		SOFT_FAIL("%s=\"%s\": live value reported by piano_setting_get is \"%s\"",
		          v->name, value, live ? live : "(null)");
	rc = piano_finalize();
	if (rc != 0)
		SOFT_FAIL("%s=\"%s\": piano_finalize() returned %d (%s)", v->name, value, rc,
		          test_errname(rc));
}

static void check_settings_table(void)
{
	int n = 0;
	int seen[NV] = { 0 };
	struct piano_setting s;

	test_clear_env();
	CHECK_OK(piano_setting_count(&n));
	if (n < NV)
		SOFT_FAIL("piano_setting_count() = %d, expected at least %d", n, NV);
	for (int i = 0; i < n; i++) {
		memset(&s, 0, sizeof s);
		CHECK_OK(piano_setting_get(i, &s));
		if (!s.name || !s.def || !s.value || !s.range || !s.help) {
			SOFT_FAIL("setting %d (%s) has a NULL field", i, s.name ? s.name : "?");
			continue;
		}
		if (!s.range[0] || !s.help[0])
			SOFT_FAIL("setting %s has an empty range or help", s.name);
		for (int k = 0; k < NV; k++) {
			if (strcmp(s.name, vars[k].name) != 0)
				continue;
			seen[k]++;
			if (strcmp(s.def, vars[k].def) != 0)
				SOFT_FAIL("setting %s: default \"%s\", expected \"%s\"", s.name,
				          s.def, vars[k].def);
			/* variable unset: the value the environment gives is the default */
			if (strcmp(s.value, s.def) != 0)
				SOFT_FAIL("setting %s (unset, before init): value \"%s\", default \"%s\"",
				          s.name, s.value, s.def);
		}
	}
	for (int k = 0; k < NV; k++)
		if (seen[k] != 1)
			SOFT_FAIL("setting %s listed %d times, expected once", vars[k].name, seen[k]);

	/* before init, `value` is what the environment would give */
	test_setenv("PIANO_SPIN_US", "123");
	const char *v = setting_value("PIANO_SPIN_US");
	if (!v || strcmp(v, "123") != 0)
		SOFT_FAIL("PIANO_SPIN_US=123, before init: value \"%s\", expected \"123\"",
		          v ? v : "(null)");
	unsetenv("PIANO_SPIN_US");
}

int main(void)
{
	test_watchdog(110);

	test_phase("settings table");
	check_settings_table();

	for (int k = 0; k < NV; k++) {
		test_phase(vars[k].name);
		for (int b = 0; vars[k].bad[b]; b++)
			check_bad(&vars[k], vars[k].bad[b]);
		for (int g = 0; g < 4 && vars[k].good[g]; g++)
			check_good(&vars[k], vars[k].good[g]);
	}

	/* one bad variable among valid ones is still reported */
	test_phase("mixed");
	test_clear_env();
	test_setenv("PIANO_PROGRESSION", "0");
	test_setenv("PIANO_SPIN_US", "10");
	test_setenv("PIANO_IDLE_COEF", "0");
	{
		char msg[4096];
		struct test_capture cap;
		test_capture_begin(&cap);
		int rc = piano_init();
		test_capture_end(&cap, msg, sizeof msg);
		if (rc != PIANO_ECONFIG) {
			SOFT_FAIL("PIANO_IDLE_COEF=0 among valid settings: piano_init() returned %d",
			          rc);
			if (rc == 0)
				piano_finalize();
		} else if (!strstr(msg, "PIANO_IDLE_COEF")) {
			SOFT_FAIL("message does not name PIANO_IDLE_COEF: \"%s\"", msg);
		}
	}

	/* after all these failures a valid init still works */
	test_clear_env();
	CHECK_OK(piano_init());
	CHECK_OK(piano_finalize());

	if (test_soft_failures_) {
		fprintf(stderr, "config_invalid: %d failure(s)\n", test_soft_failures_);
		return TEST_FAIL;
	}
	printf("config_invalid: ok\n");
	return TEST_PASS;
}

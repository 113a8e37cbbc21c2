/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.settings — the settings registry (include/piano/settings.h):
 *  - one parser for every layer: the same junk values are rejected, with the
 *    same message shape, for every integer setting of the core, of the MPI
 *    layer's table (compiled in, as piano-info does) and of a layer
 *    registered here; the bounds are accepted;
 *  - overrides passed to piano_init_with() win over the environment, are
 *    validated the same way, and an unknown name is PIANO_EINVAL; an
 *    override given once piano runs changes nothing and is reported;
 *  - piano_setting_read() reports where a value came from;
 *  - malformed tables are refused whole; registering twice is a no-op; a
 *    table registered while piano runs is read at once;
 *  - a PIANO_* variable a few typing errors from a setting is reported
 *    once, with that setting's name; one far from every setting is not;
 *    nothing with PIANO_WARN_UNKNOWN=0.
 *
 * All failures are collected and listed before exiting.
 */
#include "common.h"

#include "settings.h" /* src/mpi: the MPI layer's table */

static int check_even(const char *value, long number, char *why, size_t len)
{
	(void)value;
	if (number % 2) {
		snprintf(why, len, "odd");
		return -1;
	}
	return 0;
}

static const struct piano_setting_spec layer_table[] = {
	{ "PIANO_XT_COUNT", PIANO_SETTING_INT, "4", -3, 40, NULL, NULL, check_even,
	  "An even count. Used by this test only." },
	{ "PIANO_XT_MODE", PIANO_SETTING_CHOICE, "b", 0, 0, "a,b,cc", NULL, NULL, "A mode." },
	{ "PIANO_XT_ON", PIANO_SETTING_BOOL, "0", 0, 1, NULL, NULL, NULL, "A switch." },
	{ "PIANO_XT_NAME", PIANO_SETTING_TEXT, "", 0, 0, NULL, "any text", NULL, "A name." },
};

/* Values every integer setting must reject, whatever its range. */
static const char *junk[] = { " 5",  "5 ",  "+5", "0x5", "5us", "5k",
	                      "1e3", "--5", "5-", "abc", "-",   "99999999999999999999999",
	                      "5\t", "½" };

/* piano_init() with the current environment, stderr captured. */
static int init_captured(char *msg, size_t len)
{
	struct test_capture cap;
	test_capture_begin(&cap);
	int rc = piano_init();
	test_capture_end(&cap, msg, len);
	return rc;
}

static void expect_rejected(const char *name, const char *value)
{
	char msg[4096], head[512];
	test_clear_env();
	test_setenv("PIANO_PROGRESSION", "0");
	test_setenv(name, value);
	int rc = init_captured(msg, sizeof msg);
	if (rc != PIANO_ECONFIG) {
		SOFT_FAIL("%s='%s': piano_init() returned %d (%s), expected PIANO_ECONFIG", name,
		          value, rc, test_errname(rc));
		if (rc == 0)
			piano_finalize();
		return;
	}
	snprintf(head, sizeof head, "piano: invalid %s='%s'", name, value);
	if (!strstr(msg, head) || !strstr(msg, ": accepted values are "))
		SOFT_FAIL("%s='%s': message not in the registry's shape: \"%s\"", name, value, msg);
	if (piano_initialized())
		SOFT_FAIL("%s='%s': initialised after PIANO_ECONFIG", name, value);
}

static void expect_accepted(const char *name, const char *value)
{
	char msg[4096];
	test_clear_env();
	test_setenv("PIANO_PROGRESSION", "0");
	test_setenv(name, value);
	int rc = init_captured(msg, sizeof msg);
	if (rc != 0) {
		SOFT_FAIL("%s='%s' (valid): piano_init() returned %d: %s", name, value, rc, msg);
		return;
	}
	long v = 0;
	char text[256] = "";
	int src = -1;
	CHECK_OK(piano_setting_read(name, &v, text, sizeof text, &src));
	if (strcmp(text, value) != 0 || src != PIANO_SOURCE_ENV)
		SOFT_FAIL("%s='%s': live text '%s', source %d", name, value, text, src);
	CHECK_OK(piano_finalize());
}

/* Every integer setting of every layer: one parser, one verdict. */
static void junk_matrix(void)
{
	int n = 0, ints = 0;
	CHECK_OK(piano_setting_count(&n));
	for (int i = 0; i < n; i++) {
		struct piano_setting st;
		CHECK_OK(piano_setting_get(i, &st));
		long min, max;
		/* The range text of an integer setting starts "min..max" or
		 * "0, or min..max"; the spec is not public, the text is. */
		const char *r = strstr(st.range, "..");
		if (!r)
			continue;
		const char *start = r;
		while (start > st.range &&
		       (start[-1] == '-' || (start[-1] >= '0' && start[-1] <= '9')))
			start--;
		if (sscanf(start, "%ld..%ld", &min, &max) != 2)
			continue;
		ints++;
		for (size_t j = 0; j < sizeof junk / sizeof junk[0]; j++)
			expect_rejected(st.name, junk[j]);
		char buf[32];
		if (max < 2147483647L) {
			snprintf(buf, sizeof buf, "%ld", max + 1);
			expect_rejected(st.name, buf);
		}
		snprintf(buf, sizeof buf, "%ld", min - 1);
		expect_rejected(st.name, buf);
		/* The test layer's check wants even numbers. */
		if (strcmp(st.name, "PIANO_XT_COUNT") != 0) {
			snprintf(buf, sizeof buf, "%ld", max);
			expect_accepted(st.name, buf);
			snprintf(buf, sizeof buf, "%ld", min);
			expect_accepted(st.name, buf);
		}
	}
	/* core 10, mpi 2 (linger, eager limit), this layer 1 */
	if (ints < 13)
		SOFT_FAIL("only %d integer settings found in the registry", ints);
}

static void layer_rules(void)
{
	expect_rejected("PIANO_XT_COUNT", "3");  /* the check */
	expect_rejected("PIANO_XT_COUNT", "42"); /* the range */
	expect_accepted("PIANO_XT_COUNT", "-2");
	expect_rejected("PIANO_XT_MODE", "c");
	expect_rejected("PIANO_XT_MODE", "A");
	expect_rejected("PIANO_XT_MODE", "cc,a");
	expect_accepted("PIANO_XT_MODE", "cc");
	expect_rejected("PIANO_XT_ON", "2");
	expect_rejected("PIANO_XT_ON", "yes");
	expect_rejected("PIANO_MPI_BLOCKING", "Auto");
	expect_rejected("PIANO_MPI_THREAD_LEVEL", "MPI_THREAD_MULTIPLE");
	expect_rejected("PIANO_MPI_CPU_LIST", "0__1");
	expect_rejected("PIANO_MPI_CPU_LIST", "0_x");
	expect_accepted("PIANO_MPI_CPU_LIST", "0_1-2,3");

	long v = -1;
	int src = -1;
	test_clear_env();
	CHECK_OK(piano_setting_read("PIANO_XT_MODE", &v, NULL, 0, &src));
	if (v != 1 || src != PIANO_SOURCE_DEFAULT)
		SOFT_FAIL("PIANO_XT_MODE unset: value %ld source %d, expected 1 (b) default", v,
		          src);
	CHECK_RC(piano_setting_read("PIANO_NO_SUCH", &v, NULL, 0, NULL), PIANO_EINVAL);
	test_setenv("PIANO_XT_ON", "x");
	struct test_capture cap;
	char msg[1024];
	test_capture_begin(&cap);
	int rc = piano_setting_read("PIANO_XT_ON", &v, NULL, 0, NULL);
	test_capture_end(&cap, msg, sizeof msg);
	if (rc != PIANO_ECONFIG || !strstr(msg, "PIANO_XT_ON"))
		SOFT_FAIL("invalid PIANO_XT_ON read before init: rc %d, message \"%s\"", rc, msg);
}

static void overrides(void)
{
	char msg[4096];
	struct test_capture cap;
	long v = 0;
	int src = -1;

	test_clear_env();
	test_setenv("PIANO_SPIN_US", "7");
	test_setenv("PIANO_XT_COUNT", "6");
	struct piano_override ov[] = { { "PIANO_PROGRESSION", "0" },
		                       { "PIANO_SPIN_US", "9" },
		                       { "PIANO_SPIN_US", "11" } };
	CHECK_OK(piano_init_with(ov, 3));
	CHECK_OK(piano_setting_read("PIANO_SPIN_US", &v, NULL, 0, &src));
	if (v != 11 || src != PIANO_SOURCE_OVERRIDE)
		SOFT_FAIL("override PIANO_SPIN_US: live %ld source %d, expected 11 (the last one)",
		          v, src);
	CHECK_OK(piano_setting_read("PIANO_XT_COUNT", &v, NULL, 0, &src));
	if (v != 6 || src != PIANO_SOURCE_ENV)
		SOFT_FAIL("PIANO_XT_COUNT=6: live %ld source %d", v, src);
	/* Already initialised: a reference, the differing override reported. */
	struct piano_override late[] = { { "PIANO_SPIN_US", "50" }, { "PIANO_PROGRESSION", "0" } };
	test_capture_begin(&cap);
	int rc = piano_init_with(late, 2);
	test_capture_end(&cap, msg, sizeof msg);
	if (rc != 0)
		SOFT_FAIL("second piano_init_with returned %d", rc);
	if (!strstr(msg, "PIANO_SPIN_US='50' not applied") || strstr(msg, "PIANO_PROGRESSION"))
		SOFT_FAIL("late overrides: expected only PIANO_SPIN_US reported, got \"%s\"", msg);
	CHECK_OK(piano_setting_read("PIANO_SPIN_US", &v, NULL, 0, NULL));
	if (v != 11)
		SOFT_FAIL("late override changed PIANO_SPIN_US to %ld", v);
	CHECK_OK(piano_finalize());
	CHECK_OK(piano_finalize());

	/* An invalid override is an invalid value; an unknown name is EINVAL. */
	struct piano_override bad[] = { { "PIANO_SPIN_US", "+9" } };
	test_capture_begin(&cap);
	rc = piano_init_with(bad, 1);
	test_capture_end(&cap, msg, sizeof msg);
	if (rc != PIANO_ECONFIG || !strstr(msg, "invalid PIANO_SPIN_US='+9' (set by the program)"))
		SOFT_FAIL("override +9: rc %d, message \"%s\"", rc, msg);
	struct piano_override unknown[] = { { "PIANO_SPIN_UZ", "9" } };
	test_capture_begin(&cap);
	rc = piano_init_with(unknown, 1);
	test_capture_end(&cap, msg, sizeof msg);
	if (rc != PIANO_EINVAL || !strstr(msg, "PIANO_SPIN_UZ"))
		SOFT_FAIL("unknown override: rc %d, message \"%s\"", rc, msg);
	CHECK_RC(piano_init_with(NULL, 1), PIANO_EINVAL);
	if (piano_initialized())
		SOFT_FAIL("initialised after a failed piano_init_with");
	/* After the last finalize, reads are the environment's again. */
	CHECK_OK(piano_setting_read("PIANO_SPIN_US", &v, NULL, 0, &src));
	if (v != 7 || src != PIANO_SOURCE_ENV)
		SOFT_FAIL("after finalize: PIANO_SPIN_US %ld source %d, expected 7 from the env", v,
		          src);
}

static const struct piano_setting_spec dup_core[] = {
	{ "PIANO_SPIN_US", PIANO_SETTING_INT, "1", 0, 5, NULL, NULL, NULL, "Again." },
};
static const struct piano_setting_spec bad_default[] = {
	{ "PIANO_XB_A", PIANO_SETTING_INT, "1", 0, 5, NULL, NULL, NULL, "Fine." },
	{ "PIANO_XB_B", PIANO_SETTING_INT, "9", 0, 5, NULL, NULL, NULL, "Out of range." },
};
static const struct piano_setting_spec lower_name[] = {
	{ "PIANO_xb", PIANO_SETTING_BOOL, "0", 0, 1, NULL, NULL, NULL, "Lower case." },
};
static const struct piano_setting_spec bad_choice[] = {
	{ "PIANO_XB_C", PIANO_SETTING_CHOICE, "z", 0, 0, "x,y", NULL, NULL,
	  "Default not a choice." },
};
static const struct piano_setting_spec late_table[] = {
	{ "PIANO_XL_N", PIANO_SETTING_INT, "1", 0, 9, NULL, NULL, NULL, "Registered late." },
};

static void registration(void)
{
	int before = 0, after = 0;
	char msg[2048];
	struct test_capture cap;
	CHECK_OK(piano_setting_count(&before));
	const struct piano_setting_spec *tables[] = { dup_core, bad_default, lower_name,
		                                      bad_choice };
	const int sizes[] = { 1, 2, 1, 1 };
	for (int i = 0; i < 4; i++) {
		test_capture_begin(&cap);
		int rc = piano_settings_register("bad", tables[i], sizes[i]);
		test_capture_end(&cap, msg, sizeof msg);
		if (rc != PIANO_EINVAL || !strstr(msg, "settings table 'bad'"))
			SOFT_FAIL("malformed table %d: rc %d, message \"%s\"", i, rc, msg);
	}
	CHECK_RC(piano_settings_register("x", NULL, 1), PIANO_EINVAL);
	CHECK_OK(piano_settings_register("xt", layer_table, 4)); /* again: no-op */
	CHECK_OK(piano_setting_count(&after));
	if (after != before)
		SOFT_FAIL("refused or repeated tables changed the count: %d -> %d", before, after);

	/* Registered while piano runs: read from the environment at once. */
	test_clear_env();
	test_setenv("PIANO_PROGRESSION", "0");
	CHECK_OK(piano_init());
	test_setenv("PIANO_XL_N", "12");
	test_capture_begin(&cap);
	int rc = piano_settings_register("late", late_table, 1);
	test_capture_end(&cap, msg, sizeof msg);
	if (rc != PIANO_ECONFIG || !strstr(msg, "PIANO_XL_N"))
		SOFT_FAIL("late table with an invalid value: rc %d, message \"%s\"", rc, msg);
	test_setenv("PIANO_XL_N", "3");
	CHECK_OK(piano_settings_register("late", late_table, 1));
	long v = 0;
	int src = -1;
	CHECK_OK(piano_setting_read("PIANO_XL_N", &v, NULL, 0, &src));
	if (v != 3 || src != PIANO_SOURCE_ENV)
		SOFT_FAIL("late table: PIANO_XL_N %ld source %d", v, src);
	CHECK_OK(piano_finalize());
	unsetenv("PIANO_XL_N");
}

static void unknown_names(void)
{
	char msg[4096];
	struct test_capture cap;
	test_clear_env();
	test_setenv("PIANO_PROGRESSION", "0");
	test_setenv("PIANO_SPIN_USS", "3");
	test_setenv("PIANO_QWERTYUIOP", "1");
	test_setenv("PIANO_WARN_UNKNOWN", "0");
	test_capture_begin(&cap);
	int n = piano_settings_check_env();
	test_capture_end(&cap, msg, sizeof msg);
	if (n != 0 || msg[0])
		SOFT_FAIL("PIANO_WARN_UNKNOWN=0: %d reported: \"%s\"", n, msg);
	unsetenv("PIANO_WARN_UNKNOWN");
	test_capture_begin(&cap);
	int rc = piano_init();
	test_capture_end(&cap, msg, sizeof msg);
	if (rc != 0)
		SOFT_FAIL("piano_init with unknown variables returned %d", rc);
	if (!strstr(msg, "unknown variable PIANO_SPIN_USS: did you mean PIANO_SPIN_US?"))
		SOFT_FAIL("no suggestion for PIANO_SPIN_USS: \"%s\"", msg);
	/* Far from every setting: a script's variable, not a misspelling. */
	if (strstr(msg, "PIANO_QWERTYUIOP"))
		SOFT_FAIL("PIANO_QWERTYUIOP reported by the engine: \"%s\"", msg);
	if (strstr(msg, "PIANO_PROGRESSION") || strstr(msg, "PIANO_XT_") ||
	    strstr(msg, "PIANO_TEST_SCALE"))
		SOFT_FAIL("a registered variable was reported unknown: \"%s\"", msg);
	if (rc == 0)
		CHECK_OK(piano_finalize());
	/* Once per process. */
	test_capture_begin(&cap);
	n = piano_settings_check_env();
	test_capture_end(&cap, msg, sizeof msg);
	if (n != 0 || msg[0])
		SOFT_FAIL("reported again: %d: \"%s\"", n, msg);
	unsetenv("PIANO_SPIN_USS");
	unsetenv("PIANO_QWERTYUIOP");
}

int main(void)
{
	test_watchdog(110);
	CHECK_OK(piano_settings_register("mpi", pmpi_settings_table, pmpi_settings_count));
	CHECK_OK(piano_settings_register("xt", layer_table, 4));

	test_phase("registration");
	registration();
	test_phase("layer rules");
	layer_rules();
	test_phase("junk matrix");
	junk_matrix();
	test_phase("overrides");
	overrides();
	test_phase("unknown names");
	unknown_names();

	if (test_soft_failures_) {
		fprintf(stderr, "settings: %d failure(s)\n", test_soft_failures_);
		return 1;
	}
	printf("settings: ok\n");
	return 0;
}

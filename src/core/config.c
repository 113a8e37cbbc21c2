/*
 * Configuration: one table of environment variables, validated at init.
 * The table is the single source of the defaults printed by piano-info and
 * documented in docs/configuration.md.
 */
#include "internal.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hwloc.h>

enum kind { K_LONG, K_BOOL, K_LEVEL, K_LEVEL_OR_NONE, K_CPUS };

struct setting {
	const char *name;
	enum kind kind;
	const char *def;
	long min, max;
	size_t offset;       /* into struct piano_config */
	int is_int;          /* field is int, not long */
	const char *range;
	const char *help;
	char live[256];      /* value after the last successful load */
};

#define F(field) offsetof(struct piano_config, field)

static struct setting settings[] = {
	{ "PIANO_PROGRESSION", K_BOOL, "1", 0, 1, F(progression), 1, "0 or 1",
	  "0: no threads, explicit polling only (what most MPIs do)", "" },
	{ "PIANO_QUEUE_LEVEL", K_LEVEL, "core", 0, 0, F(queue_level), 1,
	  "machine, package, core, pu", "deepest topology level with a queue", "" },
	{ "PIANO_IDLE_LEVEL", K_LEVEL_OR_NONE, "package", 0, 0, F(idle_level), 1,
	  "none, machine, package, core, pu", "one idle thread per object of this level", "" },
	{ "PIANO_IDLE_PERIOD_US", K_LONG, "5", 0, 1000000, F(idle_period_us), 0,
	  "0..1000000", "pause between idle rounds (us); 0 = sched_yield", "" },
	{ "PIANO_IDLE_COEF", K_LONG, "20", 1, 100000, F(idle_coef), 0,
	  "1..100000", "period multiplier after a round with nothing in the branch", "" },
	{ "PIANO_IDLE_YIELD_US", K_LONG, "50", 0, 1000000, F(idle_yield_us), 0,
	  "0..1000000", "pauses shorter than this are a sched_yield loop (us)", "" },
	{ "PIANO_IDLE_BOOST", K_BOOL, "0", 0, 1, F(idle_boost), 1, "0 or 1",
	  "1: idle threads run at SCHED_OTHER while they hold a queue", "" },
	{ "PIANO_TIMER_PERIOD_US", K_LONG, "1000", 0, 10000000, F(timer_period_us), 0,
	  "0 (off) or 10..10000000", "timer thread period (us)", "" },
	{ "PIANO_TIMER_MAX_US", K_LONG, "0", 0, 10000000, F(timer_max_us), 0,
	  "0..10000000",
	  "timer period doubles up to this after rounds without work (us); <= period: fixed", "" },
	{ "PIANO_SPIN_US", K_LONG, "20", 0, 10000000, F(spin_us), 0,
	  "0..10000000", "waiters poll this long before blocking (us)", "" },
	{ "PIANO_BLOCK_HELPERS", K_LONG, "1", 0, 64, F(block_helpers), 0,
	  "0..64", "threads that run blocking callbacks", "" },
	{ "PIANO_BLOCK_DELAY_US", K_LONG, "1000", 0, 10000000, F(block_delay_us), 0,
	  "0..10000000", "default polling time before a blocking task goes to a helper (us)", "" },
	{ "PIANO_BLOCK_TIMEOUT_MS", K_LONG, "100", 1, 10000, F(block_timeout_ms), 0,
	  "1..10000", "longest sleep of one blocking call (ms)", "" },
	{ "PIANO_LOCATION_REFRESH_US", K_LONG, "100000", 1, 10000000, F(location_refresh_us), 0,
	  "1..10000000", "refresh period of a thread's cached location (us)", "" },
	{ "PIANO_FINALIZE_TIMEOUT_MS", K_LONG, "5000", 0, 3600000, F(finalize_timeout_ms), 0,
	  "0..3600000", "how long finalize drains pending ltasks (ms)", "" },
	{ "PIANO_STATS", K_BOOL, "0", 0, 1, F(stats), 1, "0 or 1",
	  "print per-polling-point counters at finalize", "" },
	{ "PIANO_BIND_CPUS", K_CPUS, "", 0, 0, F(bind_cpus), 0,
	  "hwloc cpu list (e.g. 0-3,8) or empty",
	  "CPUs for idle, timer and helper threads (empty: anywhere)", "" },
};

#define NSETTINGS ((int)(sizeof(settings) / sizeof(settings[0])))

static const char *level_names[] = { "machine", "package", "core", "pu" };

const char *config_level_name(int level)
{
	if (level < 0 || level > LEVEL_PU)
		return "none";
	return level_names[level];
}

static int parse_level(const char *s, int allow_none, long *out)
{
	if (allow_none && strcmp(s, "none") == 0) {
		*out = LEVEL_NONE;
		return 0;
	}
	for (int i = 0; i <= LEVEL_PU; i++)
		if (strcmp(s, level_names[i]) == 0) {
			*out = i;
			return 0;
		}
	return -1;
}

static int parse_long(const char *s, long min, long max, long *out)
{
	char *end;
	/* strtol accepts leading blanks and '+': only plain integers here. */
	if (!(isdigit((unsigned char)s[0]) || (s[0] == '-' && isdigit((unsigned char)s[1]))))
		return -1;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || end == s || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

/* A cpu list must parse and fit the field; the topology check comes later. */
static int parse_cpus(const char *s)
{
	if (!*s)
		return 0;
	if (strlen(s) >= sizeof(((struct piano_config *)0)->bind_cpus))
		return -1;
	hwloc_bitmap_t b = hwloc_bitmap_alloc();
	int rc = (!b || hwloc_bitmap_list_sscanf(b, s) < 0 || hwloc_bitmap_iszero(b)) ? -1 : 0;
	hwloc_bitmap_free(b);
	return rc;
}

static int parse_one(const struct setting *st, const char *s, long *v)
{
	switch (st->kind) {
	case K_LEVEL: return parse_level(s, 0, v);
	case K_LEVEL_OR_NONE: return parse_level(s, 1, v);
	case K_CPUS: *v = 0; return parse_cpus(s);
	case K_BOOL:
	case K_LONG: break;
	}
	if (parse_long(s, st->min, st->max, v))
		return -1;
	/* The timer accepts 0 (off) or at least 10 us: shorter periods would
	 * turn the "safety net" into a busy thread. */
	if (strcmp(st->name, "PIANO_TIMER_PERIOD_US") == 0 && *v > 0 && *v < 10)
		return -1;
	return 0;
}

static void store(struct piano_config *cfg, const struct setting *st, const char *s, long v)
{
	char *p = (char *)cfg + st->offset;
	if (st->kind == K_CPUS)
		snprintf(p, sizeof(cfg->bind_cpus), "%s", s);
	else if (st->is_int)
		*(int *)p = (int)v;
	else
		*(long *)p = v;
}

int config_load(struct piano_config *cfg)
{
	struct piano_config tmp;
	memset(&tmp, 0, sizeof(tmp));
	for (int i = 0; i < NSETTINGS; i++) {
		const struct setting *st = &settings[i];
		const char *env = getenv(st->name);
		const char *s = (env && *env) ? env : st->def;
		long v;
		if (parse_one(st, s, &v)) {
			piano_warn("invalid %s='%s': accepted values are %s (%s)",
			           st->name, s, st->range, st->help);
			return PIANO_ECONFIG;
		}
		store(&tmp, st, s, v);
	}
	*cfg = tmp;
	return 0;
}

static void format_value(const struct setting *st, const struct piano_config *cfg,
                         char *buf, size_t len)
{
	const char *p = (const char *)cfg + st->offset;
	if (st->kind == K_CPUS) {
		snprintf(buf, len, "%s", p);
		return;
	}
	long v = st->is_int ? *(const int *)p : *(const long *)p;
	if (st->kind == K_LEVEL || st->kind == K_LEVEL_OR_NONE)
		snprintf(buf, len, "%s", config_level_name((int)v));
	else
		snprintf(buf, len, "%ld", v);
}

void config_set_live(const struct piano_config *cfg)
{
	for (int i = 0; i < NSETTINGS; i++)
		format_value(&settings[i], cfg, settings[i].live, sizeof(settings[i].live));
}

PIANO_API int piano_setting_count(int *n)
{
	if (!n)
		return PIANO_EINVAL;
	*n = NSETTINGS;
	return 0;
}

PIANO_API int piano_setting_get(int index, struct piano_setting *out)
{
	if (!out)
		return PIANO_EINVAL;
	if (index < 0 || index >= NSETTINGS)
		return PIANO_ERANGE;
	const struct setting *st = &settings[index];
	const char *env = getenv(st->name);
	out->name = st->name;
	/* Live value once initialised; otherwise what the environment says. */
	out->value = engine_get() ? st->live : ((env && *env) ? env : st->def);
	out->def = st->def;
	out->range = st->range;
	out->help = st->help;
	return 0;
}

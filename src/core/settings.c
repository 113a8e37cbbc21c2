/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The settings registry (include/piano/settings.h): every layer's table of
 * PIANO_* variables, one parser for all of them, their live values while
 * piano is initialised, and the report of unknown PIANO_* variables.
 *
 * A leaf: it calls nothing of piano but the diagnostics (warn.h). The core's
 * own table is data of config.c, registered here first so that it is listed
 * before any other layer's.
 *
 * Protocol: `reg_lock` guards every field below. Tables are registered for
 * the life of the process (never removed): a pointer into an entry stays
 * valid; its `live` text changes only in settings_load().
 */
#include "settings_internal.h"
#include "warn.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

#define MAX_LAYERS 8
#define VALUE_MAX 256

struct entry {
	const struct piano_setting_spec *spec;
	const char *layer;
	char range[512];      /* accepted values as text (generated) */
	char live[VALUE_MAX]; /* valid while `loaded` */
	long number;
	int source;
};

struct layer {
	const char *name;
	const struct piano_setting_spec *table;
	int n;
	struct entry *entries;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct layer layers[MAX_LAYERS];
static int nlayers;
static bool loaded;

/* Names settings_check_env() already reported. */
#define MAX_REPORTED 32
static char reported[MAX_REPORTED][64];
static int nreported;

/* ------------------------------------------------------------ parsing */

/* The first sentence of a help text, for one-line messages. */
static void summary(const char *help, char *buf, size_t len)
{
	const char *end = help;
	/* "e.g. " does not end a sentence. */
	while ((end = strstr(end, ". ")) && end - help >= 3 &&
	       (strncmp(end - 3, "e.g", 3) == 0 || strncmp(end - 3, "i.e", 3) == 0))
		end += 2;
	size_t n = end ? (size_t)(end - help) : strlen(help);
	if (n < len) {
		memcpy(buf, help, n);
		buf[n] = '\0';
		return;
	}
	/* Too long for one line: cut at a word, and say so. */
	n = len - 5;
	while (n > 0 && help[n] != ' ')
		n--;
	snprintf(buf, len, "%.*s ...", (int)n, help);
}

static void range_text(const struct piano_setting_spec *sp, char *buf, size_t len)
{
	if (sp->range) {
		snprintf(buf, len, "%s", sp->range);
		return;
	}
	switch (sp->type) {
	case PIANO_SETTING_INT: snprintf(buf, len, "%ld..%ld", sp->min, sp->max); break;
	case PIANO_SETTING_BOOL: snprintf(buf, len, "0, 1"); break;
	case PIANO_SETTING_CHOICE: {
		size_t o = 0;
		for (const char *c = sp->choices; *c && o + 3 < len; c++) {
			if (*c == ',') {
				buf[o++] = ',';
				buf[o++] = ' ';
			} else {
				buf[o++] = *c;
			}
		}
		buf[o] = '\0';
		break;
	}
	case PIANO_SETTING_TEXT: snprintf(buf, len, "any text"); break;
	}
}

/* Plain decimal integers only: strtol alone would take " 5", "+5" or "0x5"
 * (base 0), and the same junk must be rejected by every layer. */
static int parse_int(const char *s, long min, long max, long *out)
{
	const char *d = s[0] == '-' ? s + 1 : s;
	if (*d < '0' || *d > '9')
		return -1;
	char *end;
	errno = 0;
	long v = strtol(s, &end, 10);
	if (errno || *end != '\0' || v < min || v > max)
		return -1;
	*out = v;
	return 0;
}

static int parse_choice(const char *s, const char *choices, long *out)
{
	size_t len = strlen(s);
	long i = 0;
	for (const char *c = choices;; i++) {
		size_t n = strcspn(c, ",");
		if (n == len && strncmp(c, s, n) == 0) {
			*out = i;
			return 0;
		}
		if (!c[n])
			return -1;
		c += n + 1;
	}
}

/*
 * Parses `s` (not empty) as a value of `sp`. 0 with *number set, or -1 with
 * a reason in `why` (empty when the accepted values say it all).
 */
static int parse_value(const struct piano_setting_spec *sp, const char *s, long *number, char *why,
                       size_t wlen)
{
	long v = 0;
	why[0] = '\0';
	if (strlen(s) >= VALUE_MAX) {
		snprintf(why, wlen, "longer than %d characters", VALUE_MAX - 1);
		return -1;
	}
	switch (sp->type) {
	case PIANO_SETTING_INT:
		if (parse_int(s, sp->min, sp->max, &v))
			return -1;
		break;
	case PIANO_SETTING_BOOL:
		if (parse_int(s, 0, 1, &v))
			return -1;
		break;
	case PIANO_SETTING_CHOICE:
		if (parse_choice(s, sp->choices, &v))
			return -1;
		break;
	case PIANO_SETTING_TEXT: break;
	}
	if (sp->check && sp->check(s, v, why, wlen))
		return -1;
	*number = v;
	return 0;
}

/* Resolves one setting: override, environment, default. 0, or -1 after
 * printing why (the variable, the value, the accepted values). */
static int resolve(const struct entry *en, const char *override, char *text, long *number,
                   int *source)
{
	const struct piano_setting_spec *sp = en->spec;
	const char *env = getenv(sp->name);
	const char *s = sp->def;
	int src = PIANO_SOURCE_DEFAULT;
	if (override) {
		s = override;
		src = PIANO_SOURCE_OVERRIDE;
	} else if (env && *env) {
		s = env;
		src = PIANO_SOURCE_ENV;
	}
	long v = 0;
	char why[160];
	/* An empty value is the default; an empty default means "unset". */
	if (*s && parse_value(sp, s, &v, why, sizeof(why))) {
		char sum[200];
		summary(sp->help, sum, sizeof(sum));
		piano_warn("invalid %s='%s'%s%s%s%s: accepted values are %s (%s)", sp->name, s,
		           src == PIANO_SOURCE_OVERRIDE ? " (set by the program)" : "",
		           why[0] ? " (" : "", why, why[0] ? ")" : "", en->range, sum);
		return -1;
	}
	snprintf(text, VALUE_MAX, "%s", s);
	*number = v;
	*source = src;
	return 0;
}

/* ------------------------------------------------------------ registry */

static struct entry *find(const char *name)
{
	for (int l = 0; l < nlayers; l++)
		for (int i = 0; i < layers[l].n; i++)
			if (strcmp(layers[l].entries[i].spec->name, name) == 0)
				return &layers[l].entries[i];
	return NULL;
}

static bool valid_name(const char *name)
{
	if (!name || strncmp(name, "PIANO_", 6) != 0 || !name[6] || strlen(name) >= 64)
		return false;
	for (const char *c = name; *c; c++)
		if (!((*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || *c == '_'))
			return false;
	return true;
}

/* A malformed table is a programming error of its layer: say which entry. */
static int check_table(const char *layer, const struct piano_setting_spec *t, int n)
{
	for (int i = 0; i < n; i++) {
		const struct piano_setting_spec *sp = &t[i];
		const char *bad = NULL;
		long v;
		char why[160];
		if (!valid_name(sp->name))
			bad = "name is not PIANO_ followed by upper-case letters, digits, '_'";
		else if (find(sp->name))
			bad = "name already registered";
		else if (!sp->def || !sp->help)
			bad = "default or help missing";
		else if (sp->type == PIANO_SETTING_CHOICE && (!sp->choices || !*sp->choices))
			bad = "choice without choices";
		else if (sp->type == PIANO_SETTING_INT && sp->min > sp->max)
			bad = "min > max";
		else if (sp->type > PIANO_SETTING_TEXT)
			bad = "unknown type";
		else if (*sp->def && parse_value(sp, sp->def, &v, why, sizeof(why)))
			bad = "default not accepted by its own rules";
		for (int j = 0; !bad && j < i; j++)
			if (strcmp(t[j].name, sp->name) == 0)
				bad = "name twice in the table";
		if (bad) {
			piano_warn("settings table '%s', entry %d (%s): %s", layer, i,
			           sp->name ? sp->name : "(null)", bad);
			return PIANO_EINVAL;
		}
	}
	return 0;
}

static int add_layer(const char *name, const struct piano_setting_spec *t, int n)
{
	for (int l = 0; l < nlayers; l++)
		if (layers[l].table == t)
			return 0;
	if (!name || !*name || !t || n <= 0)
		return PIANO_EINVAL;
	if (nlayers == MAX_LAYERS)
		return PIANO_ENOMEM;
	int rc = check_table(name, t, n);
	if (rc)
		return rc;
	struct entry *en = calloc((size_t)n, sizeof(*en));
	if (!en)
		return PIANO_ENOMEM;
	for (int i = 0; i < n; i++) {
		en[i].spec = &t[i];
		en[i].layer = name;
		range_text(&t[i], en[i].range, sizeof(en[i].range));
	}
	/* Registered while piano runs: read the new values now, as a first
	 * piano_init() would have. */
	for (int i = 0; loaded && i < n; i++)
		if (resolve(&en[i], NULL, en[i].live, &en[i].number, &en[i].source)) {
			free(en);
			return PIANO_ECONFIG;
		}
	layers[nlayers++] = (struct layer){ name, t, n, en };
	return 0;
}

/* The core's table comes first, whoever calls first. Caller holds reg_lock. */
static void ensure_core(void)
{
	if (nlayers == 0 && add_layer("core", config_core_table, config_core_count))
		piano_warn("the core's settings table is malformed (reported above)");
}

PIANO_API int piano_settings_register(const char *layer, const struct piano_setting_spec *table,
                                      int n)
{
	pthread_mutex_lock(&reg_lock);
	ensure_core();
	int rc = add_layer(layer, table, n);
	pthread_mutex_unlock(&reg_lock);
	return rc;
}

/* ------------------------------------------------------------ live values */

static const char *override_of(const char *name, const struct piano_override *ov, int n)
{
	const char *v = NULL;
	for (int i = 0; i < n; i++)
		if (strcmp(ov[i].name, name) == 0)
			v = ov[i].value; /* the last one wins, as in an environment */
	return v;
}

int settings_load(const struct piano_override *ov, int n)
{
	if (n < 0 || (n > 0 && !ov))
		return PIANO_EINVAL;
	pthread_mutex_lock(&reg_lock);
	ensure_core();
	int rc = 0;
	for (int i = 0; i < n; i++)
		if (!ov[i].name || !ov[i].value || !find(ov[i].name)) {
			piano_warn("piano_init_with: '%s' is not a registered setting",
			           ov[i].name ? ov[i].name : "(null)");
			rc = PIANO_EINVAL;
		}
	int total = 0;
	for (int l = 0; l < nlayers; l++)
		total += layers[l].n;
	struct staged {
		char text[VALUE_MAX];
		long number;
		int source;
	} *st = rc ? NULL : calloc((size_t)total, sizeof(*st));
	if (!rc && !st)
		rc = PIANO_ENOMEM;
	/* Every invalid value is reported, not only the first. */
	for (int l = 0, k = 0; st && l < nlayers; l++)
		for (int i = 0; i < layers[l].n; i++, k++) {
			struct entry *en = &layers[l].entries[i];
			if (resolve(en, override_of(en->spec->name, ov, n), st[k].text,
			            &st[k].number, &st[k].source))
				rc = PIANO_ECONFIG;
		}
	for (int l = 0, k = 0; !rc && l < nlayers; l++)
		for (int i = 0; i < layers[l].n; i++, k++) {
			struct entry *en = &layers[l].entries[i];
			memcpy(en->live, st[k].text, sizeof(en->live));
			en->number = st[k].number;
			en->source = st[k].source;
		}
	if (!rc)
		loaded = true;
	free(st);
	pthread_mutex_unlock(&reg_lock);
	return rc;
}

void settings_unload(void)
{
	pthread_mutex_lock(&reg_lock);
	loaded = false;
	pthread_mutex_unlock(&reg_lock);
}

int settings_differs(const char *name, const char *value)
{
	pthread_mutex_lock(&reg_lock);
	struct entry *en = find(name);
	int d = !en || !loaded || strcmp(en->live, value) != 0;
	pthread_mutex_unlock(&reg_lock);
	return d;
}

PIANO_API int piano_setting_read(const char *name, long *number, char *text, size_t len,
                                 int *source)
{
	if (!name || !number || (text && !len))
		return PIANO_EINVAL;
	pthread_mutex_lock(&reg_lock);
	ensure_core();
	int rc = 0;
	long v = 0;
	int src = 0;
	char buf[VALUE_MAX];
	struct entry *en = find(name);
	if (!en) {
		rc = PIANO_EINVAL;
	} else if (loaded) {
		memcpy(buf, en->live, sizeof(buf));
		v = en->number;
		src = en->source;
	} else if (resolve(en, NULL, buf, &v, &src)) {
		rc = PIANO_ECONFIG;
	}
	pthread_mutex_unlock(&reg_lock);
	if (rc)
		return rc;
	*number = v;
	if (text)
		snprintf(text, len, "%s", buf);
	if (source)
		*source = src;
	return 0;
}

PIANO_API int piano_setting_count(int *n)
{
	if (!n)
		return PIANO_EINVAL;
	pthread_mutex_lock(&reg_lock);
	ensure_core();
	int total = 0;
	for (int l = 0; l < nlayers; l++)
		total += layers[l].n;
	pthread_mutex_unlock(&reg_lock);
	*n = total;
	return 0;
}

PIANO_API int piano_setting_get(int index, struct piano_setting *out)
{
	if (!out)
		return PIANO_EINVAL;
	pthread_mutex_lock(&reg_lock);
	ensure_core();
	const struct entry *en = NULL;
	for (int l = 0, k = index; index >= 0 && l < nlayers && !en; k -= layers[l].n, l++)
		if (k < layers[l].n)
			en = &layers[l].entries[k];
	if (en) {
		const char *env = getenv(en->spec->name);
		out->name = en->spec->name;
		out->value = loaded ? en->live : ((env && *env) ? env : en->spec->def);
		out->def = en->spec->def;
		out->range = en->range;
		out->help = en->spec->help;
		out->layer = en->layer;
	}
	pthread_mutex_unlock(&reg_lock);
	return en ? 0 : PIANO_ERANGE;
}

/* ------------------------------------------------------------ unknown names */

/* Levenshtein distance, for names shorter than 64 characters. */
static int distance(const char *a, const char *b)
{
	int la = (int)strlen(a), lb = (int)strlen(b);
	int row[64];
	if (la >= 64 || lb >= 64)
		return INT_MAX;
	for (int j = 0; j <= lb; j++)
		row[j] = j;
	for (int i = 1; i <= la; i++) {
		int diag = row[0];
		row[0] = i;
		for (int j = 1; j <= lb; j++) {
			int up = row[j];
			int best = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			row[j] = best;
			diag = up;
		}
	}
	return row[lb];
}

static bool already_reported(const char *name)
{
	for (int i = 0; i < nreported; i++)
		if (strcmp(reported[i], name) == 0)
			return true;
	return false;
}

/* Reads `environ`: like getenv(), not safe against a concurrent setenv(). */
PIANO_API int piano_settings_check_env(void)
{
	int count = 0;
	pthread_mutex_lock(&reg_lock);
	ensure_core();
	const struct entry *quiet = find("PIANO_WARN_UNKNOWN");
	const char *q = getenv("PIANO_WARN_UNKNOWN");
	if ((quiet && loaded && quiet->number == 0) || (q && strcmp(q, "0") == 0)) {
		pthread_mutex_unlock(&reg_lock);
		return 0;
	}
	for (char **e = environ; e && *e; e++) {
		char name[64];
		size_t n = strcspn(*e, "=");
		if (strncmp(*e, "PIANO_", 6) != 0 || n >= sizeof(name))
			continue;
		memcpy(name, *e, n);
		name[n] = '\0';
		if (find(name) || already_reported(name))
			continue;
		const char *best = NULL;
		int bestd = INT_MAX;
		for (int l = 0; l < nlayers; l++)
			for (int i = 0; i < layers[l].n; i++) {
				int d = distance(name, layers[l].table[i].name);
				if (d < bestd) {
					bestd = d;
					best = layers[l].table[i].name;
				}
			}
		/* A few typing errors: one per five characters, at least two.
		 * A name further from every setting is not a misspelling of
		 * one: it may belong to a script or tool (piano's own use
		 * PIANO_SKIP_*, PIANO_NETNS_*...), and a line on every rank's
		 * stderr would change programs' output for nothing;
		 * piano-info lists such names. */
		int limit = (int)n / 5 > 2 ? (int)n / 5 : 2;
		if (!best || bestd > limit)
			continue;
		piano_warn("unknown variable %s: did you mean %s? (it is ignored; "
		           "PIANO_WARN_UNKNOWN=0 silences this)",
		           name, best);
		if (nreported < MAX_REPORTED)
			snprintf(reported[nreported++], sizeof(reported[0]), "%s", name);
		count++;
	}
	pthread_mutex_unlock(&reg_lock);
	return count;
}

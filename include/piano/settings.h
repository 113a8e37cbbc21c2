/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * piano — the settings registry.
 *
 * Every PIANO_* environment variable of every layer (the core engine, the MPI
 * layer, and any library built on piano) is described once, in a table of
 * struct piano_setting_spec that its layer registers here: name, type,
 * default, accepted values and help. One parser reads them all, piano-info
 * prints them all, and docs/configuration.md is generated from the same
 * tables (piano-info --markdown).
 *
 * Values come, by precedence, from the overrides given to piano_init_with(),
 * the environment, then the default. The first piano_init() of a process
 * (after the last piano_finalize(), the next one) validates every registered
 * setting and freezes the values ("live"); until then, and after the last
 * finalize, reads parse the environment at each call.
 *
 * Thread safety: registration, reads and piano_init()/piano_finalize() are
 * serialised by one lock inside piano; a string returned by
 * piano_setting_get() stays valid until the next piano_init() or
 * piano_finalize().
 */
#ifndef PIANO_SETTINGS_H
#define PIANO_SETTINGS_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef PIANO_API
#if defined(PIANO_BUILDING) && defined(__GNUC__)
#define PIANO_API __attribute__((visibility("default")))
#else
#define PIANO_API
#endif
#endif

enum piano_setting_type {
	PIANO_SETTING_INT,    /* decimal integer in [min, max], no sign '+', no blanks */
	PIANO_SETTING_BOOL,   /* 0 or 1 */
	PIANO_SETTING_CHOICE, /* one of `choices`; its value is the name's index */
	PIANO_SETTING_TEXT,   /* any text the setting's `check` accepts */
};

/*
 * One setting. Tables must stay valid for the life of the process (static
 * storage). `check`, when set, runs after the type's own parsing: it returns
 * 0 to accept, or -1 after writing a short reason into `why`; it must call
 * nothing of piano.
 */
struct piano_setting_spec {
	const char *name; /* PIANO_..., upper case, unique across layers */
	enum piano_setting_type type;
	const char *def;     /* default as text; "" = unset (the help says what that means) */
	long min, max;       /* PIANO_SETTING_INT */
	const char *choices; /* PIANO_SETTING_CHOICE: names separated by ',' */
	const char *range; /* accepted values as text, for a check the type cannot show; or NULL */
	int (*check)(const char *value, long number, char *why, size_t len);
	const char *help; /* full description (docs table); its first sentence is the summary */
};

/*
 * Adds a layer's table. `layer` names it in piano-info and the docs ("core",
 * "mpi", ...). Registering the same table again is a no-op. A table with a
 * malformed entry (bad name, default outside its range, a name another layer
 * registered) returns PIANO_EINVAL and registers nothing. Registered while
 * piano is initialised, the new settings are read from the environment at
 * once (PIANO_ECONFIG, after printing why, if one is invalid; nothing
 * registered).
 */
PIANO_API int piano_settings_register(const char *layer, const struct piano_setting_spec *table,
                                      int n);

/* Where a value came from. */
enum piano_setting_source {
	PIANO_SOURCE_DEFAULT = 0,
	PIANO_SOURCE_ENV = 1,
	PIANO_SOURCE_OVERRIDE = 2,
};

/* An override for piano_init_with(): NAME=VALUE, validated like the environment. */
struct piano_override {
	const char *name;
	const char *value;
};

/*
 * The value of a registered setting: its number (INT, BOOL; the index for a
 * CHOICE; 0 for TEXT) in *number, and, if `text` is not NULL, its text
 * (truncated to `len`). `source` may be NULL. PIANO_EINVAL for a name nobody
 * registered; PIANO_ECONFIG, after printing the variable, the rejected value
 * and the accepted values on stderr, if the environment's value is invalid.
 */
PIANO_API int piano_setting_read(const char *name, long *number, char *text, size_t len,
                                 int *source);

/*
 * Introspection: one entry per registered setting, in registration order
 * (the core's first). `value` is the live value while piano is initialised,
 * otherwise what the environment gives (possibly invalid).
 */
struct piano_setting {
	const char *name;
	const char *value;
	const char *def;
	const char *range; /* accepted values, as text */
	const char *help;
	const char *layer;
};
PIANO_API int piano_setting_count(int *n);
PIANO_API int piano_setting_get(int index, struct piano_setting *out);

/*
 * Reports on stderr, once per process and name, every PIANO_* environment
 * variable that no registered setting has but one is within a few typing
 * errors of ("did you mean PIANO_SPIN_US?"); names far from every setting
 * may belong to scripts and are left to piano-info, which lists them.
 * PIANO_WARN_UNKNOWN=0 silences it. Returns how many names it reported this
 * call. The first piano_init() calls it; a layer that registers its table
 * later may call it again.
 */
PIANO_API int piano_settings_check_env(void);

#ifdef __cplusplus
}
#endif

#endif /* PIANO_SETTINGS_H */

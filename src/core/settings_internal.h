/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The settings registry's internal side (settings.c): what the engine's
 * life cycle calls, and the core's own table (data of config.c).
 */
#ifndef PIANO_SETTINGS_INTERNAL_H
#define PIANO_SETTINGS_INTERNAL_H

#include <piano/piano.h>

/* The core's table (config.c), registered before any other layer's. */
extern const struct piano_setting_spec config_core_table[];
extern const int config_core_count;

/*
 * Resolves every registered setting (overrides, environment, default) and,
 * if all are valid, makes them the live values. PIANO_ECONFIG after printing
 * every invalid one; PIANO_EINVAL for an override naming no setting.
 */
int settings_load(const struct piano_override *ov, int n);
/* The last finalize: reads go back to the environment. */
void settings_unload(void);
/* Nonzero unless `name` is loaded with exactly `value`. */
int settings_differs(const char *name, const char *value);

#endif

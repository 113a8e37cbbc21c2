/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The core's settings (config.c): its table for the registry (settings.c)
 * and the struct the engine reads the live values into at init. Calls
 * nothing of piano but the registry and the diagnostics.
 */
#ifndef PIANO_CONFIG_H
#define PIANO_CONFIG_H

/* ------------------------------------------------------------------ config */

enum piano_level { LEVEL_NONE = -1, LEVEL_MACHINE, LEVEL_PACKAGE, LEVEL_CORE, LEVEL_PU };

struct piano_config {
	int progression;          /* PIANO_PROGRESSION */
	int queue_level;          /* enum piano_level */
	int idle_level;           /* enum piano_level, LEVEL_NONE = no idle threads */
	long idle_period_us;
	long idle_coef;
	long idle_yield_us;
	int idle_boost;           /* PIANO_IDLE_BOOST */
	long timer_period_us;     /* 0 = no timer thread */
	long timer_max_us;        /* back-off limit of the period */
	long timer_budget;        /* per mille of a core for rounds without work */
	int timer_demand;         /* PIANO_TIMER_MODE=demand */
	long spin_us;
	long block_helpers;
	long block_delay_us;
	long block_timeout_ms;
	long location_refresh_us;
	long finalize_timeout_ms;
	int stats;
	char bind_cpus[256];      /* PIANO_BIND_CPUS, hwloc list; "" = anywhere */
};

/* Fills `cfg` from the registry's live values (settings_load() first). */
int config_load(struct piano_config *cfg);
const char *config_level_name(int level);

#endif

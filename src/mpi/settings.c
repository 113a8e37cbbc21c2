/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The MPI layer's settings, registered with the core's registry
 * (include/piano/settings.h) before the layer reads any of them. The help
 * texts are the documentation (docs/configuration.md is generated from
 * them by piano-info --markdown).
 */
#include "settings.h"

#include <stdio.h>
#include <string.h>

#include <hwloc.h>

/* PIANO_MPI_CPU_LIST: hwloc CPU lists separated by '_'. */
static int check_cpu_list(const char *value, long number, char *why, size_t len)
{
	(void)number;
	hwloc_bitmap_t b = hwloc_bitmap_alloc();
	int rc = b ? 0 : -1;
	for (const char *p = value; b && rc == 0;) {
		char elem[256];
		size_t n = strcspn(p, "_");
		if (n == 0 || n >= sizeof(elem)) {
			snprintf(why, len, "an empty or overlong element");
			rc = -1;
			break;
		}
		memcpy(elem, p, n);
		elem[n] = '\0';
		if (hwloc_bitmap_list_sscanf(b, elem) < 0 || hwloc_bitmap_iszero(b)) {
			snprintf(why, len, "'%s' is not an hwloc CPU list", elem);
			rc = -1;
		}
		if (!p[n])
			break;
		p += n + 1;
	}
	hwloc_bitmap_free(b);
	return rc;
}

const struct piano_setting_spec pmpi_settings_table[] = {
	{ "PIANO_MPI_THREAD_LEVEL", PIANO_SETTING_CHOICE, "multiple", 0, 0,
	  "single,funneled,serialized,multiple", NULL, NULL,
	  "The thread level piano asks the MPI for (the application still gets the level it "
	  "asked for). Below `multiple` piano runs in explicit-polling mode, without background "
	  "progress, e.g. for an MPI whose `MPI_THREAD_MULTIPLE` is slow or broken." },
	{ "PIANO_MPI_BLOCKING", PIANO_SETTING_CHOICE, "auto", 0, 0, "auto,timer,block", NULL, NULL,
	  "Socket watcher (docs/mpi.md): `auto` = on when a blocking helper exists; `timer` = "
	  "never (the timer thread alone bounds reaction when every core is busy); `block` = "
	  "always (an error without background progress or without blocking helpers)." },
	{ "PIANO_MPI_CPU_LIST", PIANO_SETTING_TEXT, "", 0, 0, NULL,
	  "empty, or hwloc CPU lists separated by `_`", check_cpu_list,
	  "Local rank *i* runs its engine threads on element *i* modulo the count, e.g. `0_2_4` "
	  "or `0-1_2-3` (it sets `PIANO_BIND_CPUS` for that rank, so the two cannot both be "
	  "set). Empty: no placement." },
	{ "PIANO_MPI_LINGER_US", PIANO_SETTING_INT, "10000", 0, 10000000, NULL, NULL, NULL,
	  "How long the progress task stays after the last pending operation completed, in µs: "
	  "an application that posts again soon does not pay the task's restart." },
	{ "PIANO_EAGER_LIMIT", PIANO_SETTING_INT, "", 0, 2147483647L, NULL, NULL, NULL,
	  "Messages up to this size in bytes are not tracked (the MPI sends them at once). "
	  "Empty: detected from the MPI's own settings (MPI_T control variables, "
	  "`UCX_RNDV_THRESH`); `PIANO_STATS=1` prints the value and where it came from." },
	{ "PIANO_MPI_LIBDIR", PIANO_SETTING_TEXT, "", 0, 0, NULL, "empty, or a directory", NULL,
	  "Read by `piano-run` only: the directory it takes `libpiano-mpi-<mpi>.so` from. "
	  "Empty: the directory the build or the installation put them in." },
};
const int pmpi_settings_count = (int)(sizeof(pmpi_settings_table) / sizeof(pmpi_settings_table[0]));

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Whether this process is a scheduling group of its own (sched_groups.h).
 * Linux's fair scheduler divides a CPU between groups first, then between
 * the threads of each group by their policy and nice value: a SCHED_IDLE
 * thread yields only to the threads of its own group. Groups come from
 * autogroups (a group per session, for tasks in the root cgroup) and from
 * cgroups with the cpu controller (v1: the "cpu" hierarchy; v2: enabled in
 * the root's cgroup.subtree_control, which puts every child cgroup's tasks
 * in a group of their own).
 */
#include "sched_groups.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

static FILE *open_at(const char *root, const char *path)
{
	char full[4096];
	int n = snprintf(full, sizeof full, "%s%s", root, path);
	if (n < 0 || (size_t)n >= sizeof full)
		return NULL;
	return fopen(full, "re");
}

/* Whether the word `w` is one of the words of `list` (separated by `sep`
 * characters or blanks). */
static bool has_word(const char *list, const char *w, const char *sep)
{
	size_t len = strlen(w);
	for (const char *p = list; *p;) {
		size_t n = strcspn(p, sep);
		if (n == len && strncmp(p, w, len) == 0)
			return true;
		p += n;
		p += strspn(p, sep);
	}
	return false;
}

static bool autogroups_on(const char *root)
{
	FILE *f = open_at(root, "/proc/sys/kernel/sched_autogroup_enabled");
	int on = 0;
	if (!f)
		return false;
	if (fscanf(f, "%d", &on) != 1)
		on = 0;
	fclose(f);
	return on == 1;
}

/* The cpu controller of cgroup v2 is on for the root's children. Unreadable:
 * true (the caller has seen that the process is in a child cgroup). */
static bool v2_cpu_on(const char *root)
{
	FILE *f = open_at(root, "/sys/fs/cgroup/cgroup.subtree_control");
	if (!f)
		return true;
	char line[512] = "";
	bool on = fgets(line, sizeof line, f) && has_word(line, "cpu", " \t\n");
	fclose(f);
	return on;
}

int sched_groups_probe(const char *root, char *why, size_t why_size)
{
	why[0] = '\0';
	FILE *f = open_at(root, "/proc/self/cgroup");
	char line[4096], v2path[4096] = "";
	bool v1_cpu = false, v1_group = false;
	if (f) {
		while (fgets(line, sizeof line, f)) {
			line[strcspn(line, "\n")] = '\0';
			/* hierarchy-ID:controllers:path; the path may hold ':' */
			char *c1 = strchr(line, ':');
			char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
			if (!c2)
				continue;
			*c1 = '\0';
			*c2 = '\0';
			const char *ctrl = c1 + 1, *path = c2 + 1;
			if (strcmp(line, "0") == 0 && !*ctrl) {
				snprintf(v2path, sizeof v2path, "%s", path);
			} else if (has_word(ctrl, "cpu", ",")) {
				v1_cpu = true;
				if (strcmp(path, "/") != 0) {
					v1_group = true;
					snprintf(why, why_size, "cgroup %s (v1 cpu)", path);
				}
			}
		}
		fclose(f);
	}
	if (v1_group)
		return 1;
	if (!v1_cpu && v2path[0] && strcmp(v2path, "/") != 0 && v2_cpu_on(root)) {
		snprintf(why, why_size, "cgroup %s (cpu controller)", v2path);
		return 1;
	}
	/* Autogroups apply to the tasks of the root cgroup only. */
	if (autogroups_on(root)) {
		snprintf(why, why_size, "autogroups (kernel.sched_autogroup_enabled=1)");
		return 1;
	}
	snprintf(why, why_size, "none");
	return 0;
}

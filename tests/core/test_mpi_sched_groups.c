/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * core.mpi_sched_groups — whether a process is a scheduling group of its
 * own (src/mpi/sched_groups.c), on files written under a private
 * directory in the layouts of /proc and /sys:
 *  - autogroups on: a group, for a task of the root cgroup only;
 *  - cgroup v1: a "cpu" hierarchy (alone or with cpuacct, in either order)
 *    at a path other than "/" is a group; cpuacct or cpuset alone is not;
 *  - cgroup v2: a path other than "/" is a group when the root's
 *    subtree_control enables cpu, or cannot be read; v1's cpu hierarchy
 *    takes precedence on a hybrid layout; paths may hold ':';
 *  - nothing readable: no group; the description fits any buffer.
 */
#include "common.h"

#include "sched_groups.h" /* src/mpi */

#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

static char root[64];

static void put(const char *path, const char *text)
{
	char full[256], dir[256];
	snprintf(full, sizeof full, "%s%s", root, path);
	snprintf(dir, sizeof dir, "%s", full);
	for (char *p = dir + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = '\0';
		mkdir(dir, 0700);
		*p = '/';
	}
	FILE *f = fopen(full, "w");
	CHECK(f != NULL, "cannot write %s", full);
	fputs(text, f);
	fclose(f);
}

static void clear(void)
{
	char full[256];
	const char *files[] = { "/proc/sys/kernel/sched_autogroup_enabled", "/proc/self/cgroup",
		                "/sys/fs/cgroup/cgroup.subtree_control" };
	for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
		snprintf(full, sizeof full, "%s%s", root, files[i]);
		unlink(full);
	}
}

static void expect(int want, const char *why_part, const char *what)
{
	char why[160];
	int got = sched_groups_probe(root, why, sizeof why);
	CHECK(got == want, "%s: %d, expected %d (%s)", what, got, want, why);
	CHECK(strstr(why, why_part) != NULL, "%s: \"%s\" does not say \"%s\"", what, why, why_part);
}

int main(void)
{
	snprintf(root, sizeof root, "/tmp/piano-sched-groups-XXXXXX");
	CHECK(mkdtemp(root) != NULL, "mkdtemp failed");

	expect(0, "none", "nothing readable");

	put("/proc/sys/kernel/sched_autogroup_enabled", "1\n");
	put("/proc/self/cgroup", "4:cpu,cpuacct:/\n0::/\n");
	expect(1, "autogroups", "autogroups on, root cgroup");
	put("/proc/sys/kernel/sched_autogroup_enabled", "0\n");
	expect(0, "none", "autogroups off, v1 cpu at the root");

	put("/proc/self/cgroup", "4:cpuacct,cpu:/slurm/uid_0/job_7/step_0\n1:name=systemd:/x\n");
	expect(1, "/slurm/uid_0/job_7/step_0", "v1 cpu hierarchy, a job's cgroup");
	put("/proc/self/cgroup", "5:cpuacct:/a\n3:cpuset:/b\n");
	expect(0, "none", "v1 cpuacct and cpuset only");

	put("/proc/self/cgroup", "0::/user.slice/user-0.slice/session-4.scope\n");
	put("/sys/fs/cgroup/cgroup.subtree_control", "cpuset cpu io memory pids\n");
	expect(1, "/user.slice", "v2, cpu controller on");
	put("/sys/fs/cgroup/cgroup.subtree_control", "cpuset io memory pids\n");
	expect(0, "none", "v2, cpu controller off");
	put("/proc/sys/kernel/sched_autogroup_enabled", "1\n");
	expect(1, "autogroups", "v2 without cpu controller, autogroups on");
	put("/proc/sys/kernel/sched_autogroup_enabled", "0\n");
	put("/proc/self/cgroup", "0::/a:b/c\n");
	put("/sys/fs/cgroup/cgroup.subtree_control", "cpu\n");
	expect(1, "/a:b/c", "v2 path with a colon");
	clear();
	put("/proc/self/cgroup", "0::/job\n");
	expect(1, "/job", "v2, subtree_control unreadable");
	put("/proc/self/cgroup", "4:cpu:/\n0::/job\n");
	expect(0, "none", "hybrid: v1 cpu at the root decides");

	char tiny[8];
	put("/proc/self/cgroup", "4:cpu:/a/very/long/path/of/a/job\n");
	CHECK(sched_groups_probe(root, tiny, sizeof tiny) == 1, "tiny buffer: group not found");
	CHECK(strlen(tiny) == sizeof tiny - 1, "tiny buffer: \"%s\" not truncated", tiny);

	clear();
	char cmd[128];
	snprintf(cmd, sizeof cmd, "rm -rf '%s'", root);
	CHECK(system(cmd) == 0, "cannot remove %s", root);
	printf("mpi_sched_groups: ok\n");
	return TEST_PASS;
}

/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Whether this process is a scheduling group of its own (sched_groups.c):
 * an autogroup (one per session, /proc/sys/kernel/sched_autogroup_enabled)
 * or a cgroup with the cpu controller. SCHED_IDLE then ranks a thread only
 * within the group, and an idle thread switching to SCHED_OTHER and back at
 * every round of MPI calls made whole ranks wait for the CPU for seconds
 * (docs/mpi.md, "Idle threads in the MPI"); PIANO_MPI_RAISE_CALLS=auto
 * switches only where no such group exists. No MPI here: the unit test
 * (tests/core/test_mpi_sched_groups.c) drives it on files of its own.
 */
#ifndef PIANO_MPI_SCHED_GROUPS_H
#define PIANO_MPI_SCHED_GROUPS_H

#include <stddef.h>

/*
 * Reads, below `root` ("" for the machine's own files):
 *  - proc/sys/kernel/sched_autogroup_enabled: "1" means autogroups;
 *  - proc/self/cgroup: a cgroup v1 line whose controllers include "cpu"
 *    with a path other than "/", or, without such a v1 hierarchy, a v2
 *    line ("0::PATH") with PATH not "/" where the root's
 *    sys/fs/cgroup/cgroup.subtree_control enables "cpu" (autogroups then
 *    do not apply: they group the root cgroup's tasks only).
 * Returns 1 when a group was found, 0 when none, and writes a short
 * description of what decided into why (always NUL-terminated). A file
 * that cannot be read counts as no group, except the v2 root's
 * subtree_control, which counts as one: the path says a cgroup exists.
 */
int sched_groups_probe(const char *root, char *why, size_t why_size);

#endif

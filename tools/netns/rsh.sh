#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# rsh.sh [SSH-OPTIONS] HOST COMMAND...: the "remote shell" of the MPI
# launchers (Open MPI's plm_rsh_agent, hydra's -launcher-exec). HOST is one
# of the harness's addresses (10.77.0.1..4) or namespace names; the command
# runs on that host (its network namespace, its own hostname: the namespace's
# name), through sh -c like ssh would, in the
# caller's environment (PIANO_NETNS_PREFIX included). No ssh or network
# login is involved.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/netns/common.sh
. "$here/common.sh"

# Skip ssh-style options (the launchers may pass -x, -q, -T, -o OPT, ...).
while [ $# -gt 0 ]; do
	case "$1" in
	-[bceEFiIJlLmoOpQRSwW]) shift 2 ;;
	-*) shift ;;
	*) break ;;
	esac
done
if [ $# -lt 2 ]; then
	echo "usage: rsh.sh HOST COMMAND..." >&2
	exit 255
fi
host=$1
shift
ns=$(piano_ns_of "$host")
if [ -z "$ns" ]; then
	echo "rsh.sh: unknown host '$host' (expected $(piano_addr 0)..$(piano_addr $((PIANO_MAX_HOSTS - 1))))" >&2
	exit 255
fi
# Like ssh: the words are joined with spaces and run by a shell.
piano_exec_on "$ns" sh -c "$*"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# down.sh: removes everything up.sh created (namespaces PREFIX-h<i> and
# PREFIX-br, their veths, bridge and qdiscs, and /run/PREFIX-netns).
# Idempotent: safe after a partial or interrupted up.sh, or a second time.
# It works from the namespaces that exist, not from the state file, which a
# partial up.sh has not written yet.
#
# Deleting a namespace destroys its veth ends, which destroys their peers,
# and the bridge and qdiscs with them. Processes still running inside (a
# crashed or timed-out MPI job) are killed first: they would keep the
# namespace alive after its name is gone.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/netns/common.sh
. "$here/common.sh"
piano_need_root

# Kills the processes of namespace NS: TERM, then KILL after 1 s.
kill_in() {
	local pids
	pids=$(ip netns pids "$1" 2>/dev/null || true)
	[ -n "$pids" ] || return 0
	echo "down.sh: killing processes left in $1: $(echo "$pids" | tr '\n' ' ')" >&2
	# shellcheck disable=SC2086 # one word per pid
	kill $pids 2>/dev/null || true
	sleep 1
	pids=$(ip netns pids "$1" 2>/dev/null || true)
	# shellcheck disable=SC2086
	[ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
}

rc=0
for ns in $(piano_existing_ns); do
	kill_in "$ns"
	ip netns del "$ns" || rc=1
done
rm -rf "$PIANO_STATE" || rc=1
# Nothing is ever created in the root namespace (veth ends are created
# inside theirs); report it if something of ours shows up there anyway.
stray=$(ip -o link show 2>/dev/null | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' |
	grep -E "^($PIANO_DEV|$PIANO_BRIDGE|${PIANO_PORT}[0-9]+)\$" || true)
if [ -n "$stray" ]; then
	echo "down.sh: removing interfaces found in the root namespace: $stray" >&2
	for dev in $stray; do ip link del "$dev" || rc=1; done
fi
left=$(piano_existing_ns)
if [ -n "$left" ]; then
	echo "down.sh: namespaces still present: $left" >&2
	rc=1
fi
[ $rc -eq 0 ] && echo "netns down ($PIANO_NETNS_PREFIX)"
exit $rc

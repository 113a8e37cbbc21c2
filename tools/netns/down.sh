#!/bin/sh
# down.sh: removes everything up.sh created. Idempotent: safe after a
# partial up.sh or a second time. Deleting a namespace destroys its end of
# the veth pair, which destroys the other end, and the qdiscs with them.
# Processes still running inside a namespace (a crashed MPI job) are killed
# first: they would keep it alive otherwise.
set -u
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$here/common.sh"
piano_need_root

rc=0
for ns in "$PIANO_NS0" "$PIANO_NS1"; do
	ip netns list 2>/dev/null | grep -qw "^$ns" || continue
	pids=$(ip netns pids "$ns" 2>/dev/null || true)
	if [ -n "$pids" ]; then
		echo "down.sh: killing processes left in $ns: $pids" >&2
		# shellcheck disable=SC2086 # one word per pid
		kill $pids 2>/dev/null || true
		sleep 1
		pids=$(ip netns pids "$ns" 2>/dev/null || true)
		# shellcheck disable=SC2086
		[ -z "$pids" ] || kill -9 $pids 2>/dev/null || true
	fi
	ip netns del "$ns" || rc=1
done
rm -rf "$PIANO_STATE" || rc=1
# A veth end left in the root namespace (only possible if the kernel
# refused to create it inside the namespace).
ip link show "$PIANO_DEV" >/dev/null 2>&1 && { ip link del "$PIANO_DEV" || rc=1; }
if ip netns list 2>/dev/null | grep -q "^piano-h[01]"; then
	echo "down.sh: namespaces still present" >&2
	rc=1
fi
[ $rc -eq 0 ] && echo "netns down"
exit $rc

#!/bin/sh
# up.sh [RATE]: creates the two-host test network (root only).
#
#   piano-h0 [piano-eth 10.77.0.1/24] <--veth--> [piano-eth 10.77.0.2/24] piano-h1
#
# Both ends are shaped to RATE (tc rate syntax, default 10gbit) with a token
# bucket (tbf: the kernel has no netem); RATE "none" leaves them unshaped.
# The loopback device of each namespace is brought up (MPI launchers and
# ranks use it for local connections). Nothing is added to the root
# namespace: all traffic stays between the two namespaces. Undo with down.sh
# (also run first here, so up.sh can be re-run after a failure).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$here/common.sh"
piano_need_root

rate=${1:-10gbit}
# Bytes per second of a tc rate (bit, kbit, mbit, gbit, tbit; SI prefixes).
rate_bytes() {
	echo "$1" | awk '{
		if (!match($0, /^[0-9]+(\.[0-9]+)?/)) exit 1
		v = substr($0, 1, RLENGTH); u = tolower(substr($0, RLENGTH + 1))
		m["bit"] = 1; m["kbit"] = 1e3; m["mbit"] = 1e6; m["gbit"] = 1e9; m["tbit"] = 1e12
		if (!(u in m)) exit 1
		printf "%.0f\n", v * m[u] / 8
	}'
}
if [ "$rate" != none ]; then
	bps=$(rate_bytes "$rate") || {
		echo "up.sh: bad rate '$rate' (e.g. 10gbit, 1gbit, 100mbit, none)" >&2
		exit 2
	}
	# Bucket: 1 ms at full rate, at least 128 KiB so that one GSO packet
	# (up to 64 KiB) always fits; the queue holds 10 ms of traffic.
	burst=$(( bps / 1000 ))
	[ "$burst" -ge 131072 ] || burst=131072
fi

"$here/down.sh" >/dev/null 2>&1 || true

fail() {
	echo "up.sh: $*; cleaning up" >&2
	"$here/down.sh" >/dev/null 2>&1 || true
	exit 1
}

ip netns add "$PIANO_NS0" || fail "cannot create namespace $PIANO_NS0"
ip netns add "$PIANO_NS1" || fail "cannot create namespace $PIANO_NS1"
# Both ends are created directly inside their namespaces.
ip link add "$PIANO_DEV" netns "$PIANO_NS0" type veth peer name "$PIANO_DEV" netns "$PIANO_NS1" ||
	fail "cannot create the veth pair"
i=0
for ns in "$PIANO_NS0" "$PIANO_NS1"; do
	if [ $i -eq 0 ]; then addr=$PIANO_ADDR0; else addr=$PIANO_ADDR1; fi
	ip -n "$ns" link set lo up || fail "lo up in $ns"
	ip -n "$ns" addr add "$addr/24" dev "$PIANO_DEV" || fail "address in $ns"
	ip -n "$ns" link set "$PIANO_DEV" up || fail "link up in $ns"
	if [ "$rate" != none ]; then
		ip netns exec "$ns" tc qdisc add dev "$PIANO_DEV" root tbf rate "$rate" \
			burst "$burst" latency 10ms || fail "tc tbf in $ns"
	fi
	i=$((i + 1))
done

# The veth carrier comes up asynchronously; UCX skips a device that is not
# running yet ("network device ... is not available").
for ns in "$PIANO_NS0" "$PIANO_NS1"; do
	n=0
	until [ "$(ip netns exec "$ns" cat /sys/class/net/"$PIANO_DEV"/operstate 2>/dev/null)" = up ]; do
		n=$((n + 1))
		[ $n -le 50 ] || fail "$PIANO_DEV in $ns not up after 5 s"
		sleep 0.1
	done
done

# Reachability check both ways (no ping here): a TCP connection to a closed
# port must be refused at once, which takes a round trip; a timeout means
# the peer is unreachable.
reach() { # NS ADDR
	out=$(ip netns exec "$1" timeout 3 bash -c "exec 3<>/dev/tcp/$2/9" 2>&1) && return 0
	case "$out" in *refused*) return 0 ;; esac
	return 1
}
reach "$PIANO_NS0" "$PIANO_ADDR1" || fail "$PIANO_NS0 cannot reach $PIANO_ADDR1"
reach "$PIANO_NS1" "$PIANO_ADDR0" || fail "$PIANO_NS1 cannot reach $PIANO_ADDR0"

# Open MPI's hostfile (run.sh maps ranks round robin with --map-by node;
# the slot count only has to be large enough).
mkdir -p "$PIANO_STATE" || fail "cannot create $PIANO_STATE"
printf '%s slots=256\n%s slots=256\n' "$PIANO_ADDR0" "$PIANO_ADDR1" >"$PIANO_HOSTFILE" ||
	fail "cannot write $PIANO_HOSTFILE"

echo "netns up: $PIANO_NS0 ($PIANO_ADDR0) <-> $PIANO_NS1 ($PIANO_ADDR1) on $PIANO_DEV," \
	"rate ${rate}${burst:+ (tbf burst $burst B, latency 10ms)}"

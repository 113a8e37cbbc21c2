#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# up.sh [OPTIONS]: creates the multi-host test network (root only).
#
#   --hosts N            number of hosts, 2..4 (default 2)
#   --topology pair|bridge
#                        pair: one veth pair (2 hosts only; the default for 2)
#                        bridge: each host on a port of a bridge that lives in
#                        its own namespace (the default for 3-4 hosts)
#   --rate RATE          tc rate of every host link, both directions
#                        (default 10gbit; 1mbit..100gbit, units bit, kbit,
#                        mbit, gbit, tbit; "none": unshaped)
#   --delay TIME         one-way delay per link (1us..1s). Needs the kernel's
#                        netem qdisc; when it is missing (as on the machines
#                        this was written on) up.sh fails and says so rather
#                        than ignoring the option.
#   RATE                 a lone positional word: same as --rate (older form)
#   -h, --help
#
#   pair:    h0 [piano-eth 10.77.0.1] <--veth--> [piano-eth 10.77.0.2] h1
#   bridge:  hI [piano-eth 10.77.0.(I+1)] <--veth--> [piano-pI] piano-br0 (in PREFIX-br)
#
# Shaping: a token bucket (tbf) on the egress of both ends of every veth, so
# each direction of each host link is limited to RATE. Namespaces are called
# PREFIX-h<i> and PREFIX-br, PREFIX = $PIANO_NETNS_PREFIX (default piano).
# Nothing is created in the root namespace: all traffic stays between the
# hosts. State for run.sh / rsh.sh / down.sh: /run/PREFIX-netns/.
#
# Any earlier set of the same prefix is removed first; if up.sh fails or is
# interrupted, what it created is removed again (down.sh; a SIGKILL cannot
# be trapped: run down.sh then). Exit status: 0 up, 1 failure (cleaned up),
# 2 usage error, 77 not root.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/netns/common.sh
. "$here/common.sh"

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; }
bad() { echo "up.sh: $*" >&2; exit 2; }

hosts=2
topology=""
rate=10gbit
delay=""

parse_args() {
	while [ $# -gt 0 ]; do
		case "$1" in
		--hosts | --topology | --rate | --delay)
			[ $# -ge 2 ] || bad "$1 needs a value"
			case "$1" in
			--hosts) hosts=$2 ;;
			--topology) topology=$2 ;;
			--rate) rate=$2 ;;
			--delay) delay=$2 ;;
			esac
			shift 2
			;;
		-h | --help) usage; exit 0 ;;
		-*) bad "unknown option '$1' (see --help)" ;;
		*) rate=$1; shift ;;
		esac
	done
}

# Bytes per second of a tc rate (SI prefixes, as tc reads them); fails
# outside 1mbit..100gbit.
rate_bytes() {
	awk -v r="$1" 'BEGIN {
		if (!match(r, /^[0-9]+(\.[0-9]+)?/)) exit 1
		v = substr(r, 1, RLENGTH); u = tolower(substr(r, RLENGTH + 1))
		m["bit"] = 1; m["kbit"] = 1e3; m["mbit"] = 1e6; m["gbit"] = 1e9; m["tbit"] = 1e12
		if (!(u in m)) exit 1
		b = v * m[u]
		if (b < 1e6 || b > 1e11) exit 1
		printf "%.0f\n", b / 8
	}'
}

# Fails unless TIME is a tc time within 1us..1s.
delay_ok() {
	awk -v t="$1" 'BEGIN {
		if (!match(t, /^[0-9]+(\.[0-9]+)?/)) exit 1
		v = substr(t, 1, RLENGTH); u = substr(t, RLENGTH + 1)
		m["us"] = 1; m["usec"] = 1; m["ms"] = 1e3; m["msec"] = 1e3; m["s"] = 1e6; m["sec"] = 1e6
		if (!(u in m)) exit 1
		us = v * m[u]
		exit !(us >= 1 && us <= 1e6)
	}'
}

validate() {
	case "$hosts" in
	[2-4]) ;;
	*) bad "bad --hosts '$hosts' (accepted: 2..$PIANO_MAX_HOSTS)" ;;
	esac
	if [ -z "$topology" ]; then
		if [ "$hosts" -eq 2 ]; then topology=pair; else topology=bridge; fi
	fi
	case "$topology" in
	pair) [ "$hosts" -eq 2 ] || bad "--topology pair joins exactly 2 hosts; use --topology bridge for $hosts" ;;
	bridge) ;;
	*) bad "bad --topology '$topology' (accepted: pair, bridge)" ;;
	esac
	burst=""
	if [ "$rate" != none ]; then
		bps=$(rate_bytes "$rate") ||
			bad "bad --rate '$rate' (accepted: 1mbit..100gbit, e.g. 10gbit, 1gbit, 100mbit; or none)"
		# Bucket: 1 ms at full rate, at least 128 KiB so that one GSO
		# packet (up to 64 KiB) always fits.
		burst=$((bps / 1000))
		[ "$burst" -ge 131072 ] || burst=131072
	fi
	if [ -n "$delay" ]; then
		delay_ok "$delay" || bad "bad --delay '$delay' (accepted: 1us..1s, e.g. 5us, 0.1ms)"
	fi
}

done_ok=0
cleanup() {
	[ "$done_ok" -eq 1 ] && return
	echo "up.sh: failed or interrupted; removing what was created" >&2
	"$here/down.sh" >/dev/null 2>&1 || "$here/down.sh" >&2 || true
}
fail() { echo "up.sh: $*" >&2; exit 1; }

# Fault injection for the selftest: PIANO_NETNS_FAIL_AT=STEP makes up.sh
# fail right after STEP, to prove the cleanup.
step() {
	[ "${PIANO_NETNS_FAIL_AT:-}" != "$1" ] || fail "failure injected after step '$1'"
}

# netem is the only qdisc that delays; probed on a host's loopback, since
# the kernel module may simply be missing.
check_netem() {
	local ns
	ns=$(piano_ns 0)
	if ! ip netns exec "$ns" tc qdisc add dev lo root netem delay 1us 2>/dev/null; then
		fail "--delay needs the netem qdisc, which this kernel lacks" \
			"(tc qdisc add ... netem failed): delay cannot be emulated here; run without --delay"
	fi
	ip netns exec "$ns" tc qdisc del dev lo root
}

make_hosts() {
	local i ns
	for ((i = 0; i < hosts; i++)); do
		ns=$(piano_ns "$i")
		ip netns add "$ns" || fail "cannot create namespace $ns"
		# The launchers and ranks also use loopback for local connections.
		ip -n "$ns" link set lo up
	done
}

# Both ends of every veth are created directly inside their namespaces:
# nothing appears in the root namespace, even for an instant.
make_links() {
	local i
	if [ "$topology" = pair ]; then
		ip link add "$PIANO_DEV" netns "$(piano_ns 0)" type veth \
			peer name "$PIANO_DEV" netns "$(piano_ns 1)" || fail "cannot create the veth pair"
		return
	fi
	ip netns add "$PIANO_BR_NS" || fail "cannot create namespace $PIANO_BR_NS"
	ip -n "$PIANO_BR_NS" link set lo up
	# No STP: ports forward at once (no listening/learning delay).
	ip -n "$PIANO_BR_NS" link add "$PIANO_BRIDGE" type bridge stp_state 0 forward_delay 0 ||
		fail "cannot create bridge $PIANO_BRIDGE"
	ip -n "$PIANO_BR_NS" link set "$PIANO_BRIDGE" up
	for ((i = 0; i < hosts; i++)); do
		ip link add "$PIANO_DEV" netns "$(piano_ns "$i")" type veth \
			peer name "$PIANO_PORT$i" netns "$PIANO_BR_NS" || fail "cannot create the veth of host $i"
		ip -n "$PIANO_BR_NS" link set "$PIANO_PORT$i" master "$PIANO_BRIDGE"
		ip -n "$PIANO_BR_NS" link set "$PIANO_PORT$i" up
	done
}

# tbf on one veth end (egress): NS DEV.
shape() {
	[ -n "$burst" ] || [ -n "$delay" ] || return 0
	if [ -n "$delay" ]; then
		# Untested here (no netem): delay, then the rate as netem's own.
		ip netns exec "$1" tc qdisc add dev "$2" root netem delay "$delay" \
			${burst:+rate "$rate"} || fail "tc netem on $2 in $1"
	else
		ip netns exec "$1" tc qdisc add dev "$2" root tbf rate "$rate" \
			burst "$burst" latency 10ms || fail "tc tbf on $2 in $1"
	fi
}

configure() {
	local i ns
	for ((i = 0; i < hosts; i++)); do
		ns=$(piano_ns "$i")
		ip -n "$ns" addr add "$(piano_addr "$i")/24" dev "$PIANO_DEV"
		ip -n "$ns" link set "$PIANO_DEV" up
		shape "$ns" "$PIANO_DEV"
		[ "$topology" = bridge ] && shape "$PIANO_BR_NS" "$PIANO_PORT$i"
	done
	return 0
}

# The veth carrier comes up asynchronously; UCX skips a device that is not
# running yet ("network device ... is not available").
wait_carrier() {
	local i n ns
	for ((i = 0; i < hosts; i++)); do
		ns=$(piano_ns "$i")
		n=0
		until [ "$(ip netns exec "$ns" cat "/sys/class/net/$PIANO_DEV/operstate" 2>/dev/null)" = up ]; do
			n=$((n + 1))
			[ $n -le 50 ] || fail "$PIANO_DEV in $ns not up after 5 s"
			sleep 0.1
		done
	done
}

# Reachability without ping: a TCP connection to a closed port must be
# refused at once, which takes a round trip; a timeout means unreachable.
reach() { # NS ADDR
	local out
	out=$(ip netns exec "$1" timeout 3 bash -c "exec 3<>/dev/tcp/$2/9" 2>&1) && return 0
	case "$out" in *refused*) return 0 ;; esac
	return 1
}

# h0 runs the launchers: it must reach every host, and every host it.
check_reach() {
	local i a0
	a0=$(piano_addr 0)
	for ((i = 1; i < hosts; i++)); do
		reach "$(piano_ns 0)" "$(piano_addr "$i")" || fail "$(piano_ns 0) cannot reach $(piano_addr "$i")"
		reach "$(piano_ns "$i")" "$a0" || fail "$(piano_ns "$i") cannot reach $a0"
	done
}

write_state() {
	local i
	mkdir -p "$PIANO_STATE"
	# Open MPI's hostfile (run.sh maps ranks round robin with --map-by
	# node; the slot count only has to be large enough).
	for ((i = 0; i < hosts; i++)); do
		echo "$(piano_addr "$i") slots=256"
	done >"$PIANO_HOSTFILE"
	printf 'hosts=%s\ntopology=%s\nrate=%s\ndelay=%s\n' "$hosts" "$topology" "$rate" "$delay" \
		>"$PIANO_STATEFILE"
}

main() {
	parse_args "$@"
	validate
	piano_need_root
	"$here/down.sh" >/dev/null 2>&1 || true
	trap cleanup EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
	make_hosts; step hosts
	[ -z "$delay" ] || check_netem
	make_links; step links
	configure; step shape
	wait_carrier
	check_reach; step reach
	write_state
	done_ok=1
	local i desc=""
	for ((i = 0; i < hosts; i++)); do desc+=" $(piano_ns "$i")=$(piano_addr "$i")"; done
	echo "netns up ($topology):$desc; rate $rate${burst:+ (tbf burst $burst B)}${delay:+, delay $delay}"
}

main "$@"

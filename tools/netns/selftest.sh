#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# selftest.sh BUILD-DIR [--mpich]: the netns harness end to end, for CTest
# (harness.netns). Uses its own prefix (PIANO_NETNS_PREFIX=piano-st), so a
# set brought up by hand for benchmarks is left alone.
#
#   1. option checks: bad values are refused with the accepted range, and
#      --delay fails (no netem here) without leaving anything behind;
#   2. an up.sh made to fail mid-way (PIANO_NETNS_FAIL_AT) cleans up itself;
#   3. bridge, 3 hosts, 10gbit: the bridge, its ports and a tbf on both ends
#      of every link exist and nothing was added to the root namespace; a
#      3-rank Open MPI job whose ranks report their network namespace (all
#      different: one per host) and exchange 1 MiB halos in a ring, which
#      must show up as MiBs on every host's interface (TCP between hosts);
#      a 2-rank MPI job through piano-run; down; nothing left;
#   4. pair, 2 hosts (the set-up of bench/mpi/run-overlap.sh --netns): a
#      2-rank job across the two hosts; down; nothing left.
#   --mpich adds, in step 3, the 3-rank namespace check and the piano-run
#   job with MPICH. Not by default: Debian's MPICH 4.0.2 over UCX/TCP hangs
#   now and then in MPI_Finalize (with or without piano; more often through
#   the bridge); every job runs under `timeout`, so a hang fails the test.
#
# Exit status: 0 passed, 1 failed, 77 skipped (not root, no iproute2, no
# network namespaces, Open MPI programs not built).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=${1:?usage: selftest.sh BUILD-DIR [--mpich]}
build=$(cd "$build" && pwd)
with_mpich=0
[ "${2:-}" != --mpich ] || with_mpich=1
export PIANO_NETNS_PREFIX=piano-st
# shellcheck source=tools/netns/common.sh
. "$here/common.sh"

skip() { echo "selftest: $*: skipped"; exit 77; }
[ "$(id -u)" = 0 ] || skip "needs root"
command -v ip >/dev/null || skip "no ip (iproute2)"
if ! ip netns add "$PIANO_NETNS_PREFIX-probe" 2>/dev/null; then
	skip "network namespaces unavailable here"
fi
ip netns del "$PIANO_NETNS_PREFIX-probe"
halo=$build/bench/mpi/bench_halo_openmpi
init=$build/tests/mpi/mpi_init_openmpi
for f in "$halo" "$init" "$build/piano-run"; do
	[ -x "$f" ] || skip "$f not built"
done

JOB_TIMEOUT=120 # s per MPI job; a hang fails instead of blocking CI
down() { timeout -k 5 60 "$here/down.sh"; }
up() { timeout -k 5 60 "$here/up.sh" "$@"; }
job() { timeout -k 10 "$JOB_TIMEOUT" "$here/run.sh" "$@"; }
fail() {
	echo "selftest: FAILED: $*"
	exit 1
}
# Cleanup on every exit, also on ^C or a TERM (bash runs the handler once
# the current job, bounded by its timeout, has returned).
trap 'down >/dev/null 2>&1 || true' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

root_links() { ip -o link show | awk -F': ' '{ sub(/@.*/, "", $2); print $2 }' | sort; }
links_before=$(root_links)

# Nothing of ours in `ip netns list`, the root namespace's links unchanged,
# no state directory.
check_nothing_left() {
	local left
	left=$(piano_existing_ns)
	[ -z "$left" ] || fail "$1: namespaces left: $left"
	[ "$(root_links)" = "$links_before" ] ||
		fail "$1: root namespace links changed: $(diff <(echo "$links_before") <(root_links) | tr '\n' ' ')"
	[ ! -e "$PIANO_STATE" ] || fail "$1: $PIANO_STATE left"
}

# Runs CMD... expecting exit status 2 and MSG in its error output.
expect_refused() {
	local msg=$1 out rc=0
	shift
	out=$("$@" 2>&1) || rc=$?
	if [ $rc -ne 2 ] || [[ "$out" != *"$msg"* ]]; then
		fail "'$*': exit $rc, '$out' (expected 2, '$msg')"
	fi
}

test_options() {
	expect_refused "accepted: 2..4" "$here/up.sh" --hosts 5
	expect_refused "accepted: pair, bridge" "$here/up.sh" --topology star
	expect_refused "accepted: 1mbit..100gbit" "$here/up.sh" --rate fast
	expect_refused "accepted: 1us..1s" "$here/up.sh" --delay 2h
	expect_refused "exactly 2 hosts" "$here/up.sh" --hosts 3 --topology pair
	expect_refused "accepted: openmpi, mpich" "$here/run.sh" --mpi lam true
	local out rc=0
	out=$(up --delay 5us 2>&1) || rc=$?
	if [ $rc -eq 0 ]; then
		echo "selftest: note: this kernel has netem; --delay accepted"
		down >/dev/null
	else
		[[ "$out" == *netem* ]] || fail "--delay refused without naming netem: $out"
	fi
	check_nothing_left "after --delay"
	echo "selftest: option checks: ok"
}

test_failed_up() {
	local rc=0
	PIANO_NETNS_FAIL_AT=shape up --hosts 4 --topology bridge >/dev/null 2>&1 || rc=$?
	[ $rc -eq 1 ] || fail "up.sh with a failure injected: exit $rc (expected 1)"
	check_nothing_left "after a failed up.sh"
	echo "selftest: failed up.sh cleaned up after itself: ok"
}

# Bytes sent and received on host I's interface: "TX RX".
counters() {
	ip netns exec "$(piano_ns "$1")" cat "/sys/class/net/$PIANO_DEV/statistics/tx_bytes" \
		"/sys/class/net/$PIANO_DEV/statistics/rx_bytes" | tr '\n' ' '
}

# Every rank prints its network namespace (inode and name), then becomes
# the MPI program ARGS. Checks one rank per host, all in different
# namespaces. MPI: openmpi or mpich; NP ranks = hosts.
check_spread() {
	local mpi=$1 np=$2 out inodes names
	shift 2
	# shellcheck disable=SC2016 # expanded by the rank's shell
	out=$(job --mpi "$mpi" --np "$np" -- sh -c \
		'echo "netns-of-rank ${OMPI_COMM_WORLD_RANK:-$PMI_RANK} $(readlink /proc/self/ns/net) $(ip netns identify $$)"; exec "$@"' \
		sh "$@" 2>&1) || fail "$mpi $np-rank job: $out"
	echo "$out" | grep netns-of-rank
	inodes=$(echo "$out" | awk '$1 == "netns-of-rank" { print $3 }' | sort -u | wc -l)
	names=$(echo "$out" | awk '$1 == "netns-of-rank" { print $4 }' | sort -u | tr '\n' ' ')
	[ "$inodes" -eq "$np" ] || fail "$mpi: $np ranks in $inodes distinct namespaces"
	local i want=""
	for ((i = 0; i < np; i++)); do want+="$(piano_ns "$i") "; done
	[ "$names" = "$want" ] || fail "$mpi: ranks on '$names', expected '$want'"
}

test_bridge() {
	up --hosts 3 --topology bridge --rate 10gbit || fail "up.sh --hosts 3 --topology bridge"
	local ports tbfs i
	ports=$(ip -n "$PIANO_BR_NS" -o link show master "$PIANO_BRIDGE" | wc -l)
	[ "$ports" -eq 3 ] || fail "bridge has $ports ports, expected 3"
	tbfs=$(ip netns exec "$PIANO_BR_NS" tc qdisc show | grep -c "tbf.*rate 10Gbit" || true)
	for ((i = 0; i < 3; i++)); do
		tbfs=$((tbfs + $(ip netns exec "$(piano_ns "$i")" tc qdisc show dev "$PIANO_DEV" | grep -c "tbf.*rate 10Gbit" || true)))
	done
	[ "$tbfs" -eq 6 ] || fail "$tbfs tbf qdiscs at 10Gbit, expected 6 (both ends of 3 links)"
	[ "$(root_links)" = "$links_before" ] || fail "up.sh added links to the root namespace"

	local before=() after tx rx min=$((4 << 20))
	for ((i = 0; i < 3; i++)); do before+=("$(counters "$i")"); done
	# Ring halo exchange: every rank sends 1 MiB to each neighbour per
	# iteration, in 2 timed loops of 2 iterations: 8 MiB out and in.
	check_spread openmpi 3 "$halo" --halo 1M --work 1K --iters 2 --reps 1 --warmup 0
	for ((i = 0; i < 3; i++)); do
		after=$(counters "$i")
		read -r tx rx <<<"$(echo "${before[$i]} $after" | awk '{ print $3 - $1, $4 - $2 }')"
		echo "selftest: $(piano_ns "$i") $PIANO_DEV: sent $tx B, received $rx B"
		if [ "$tx" -lt $min ] || [ "$rx" -lt $min ]; then
			fail "$(piano_ns "$i"): under $min B each way on $PIANO_DEV: no TCP traffic between hosts?"
		fi
	done
	local out
	out=$(job --np 2 -- "$build/piano-run" "$init" multiple 2>&1) || fail "Open MPI job with piano-run: $out"
	echo "selftest: bridge, 3 hosts: 3 ranks in 3 namespaces over TCP, piano-run job: ok"
	if [ $with_mpich -eq 1 ]; then
		check_spread mpich 3 true
		out=$(job --mpi mpich --np 2 -- "$build/piano-run" "$build/tests/mpi/mpi_init_mpich" multiple 2>&1) ||
			fail "MPICH job with piano-run (exit 124: timed out): $out"
		echo "selftest: bridge, 3 hosts, MPICH: ok"
	fi
	down || fail "down.sh (bridge)"
	check_nothing_left "after down.sh (bridge)"
}

test_pair() {
	up --hosts 2 --topology pair || fail "up.sh --hosts 2 --topology pair"
	check_spread openmpi 2 "$init" multiple
	down || fail "down.sh (pair)"
	check_nothing_left "after down.sh (pair)"
	echo "selftest: pair, 2 hosts: 2 ranks in 2 namespaces: ok"
}

down >/dev/null 2>&1 || true
test_options
test_failed_up
test_bridge
test_pair
echo "selftest: option checks, failed up, bridge (3 hosts), pair (2 hosts), down, nothing left: ok"

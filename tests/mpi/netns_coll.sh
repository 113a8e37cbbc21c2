#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# netns_coll.sh BUILD MPI: piano's graph collectives across 3 hosts.
# A manual check, not in CTest: on a 2-core machine the three ranks and
# their TCP stacks share the cores, and one program takes 40-200 s.
#
# Brings up 3 network namespaces on a bridge (tools/netns/up.sh, 10 Gbit/s,
# namespaces of their own prefix, so that the harness's self-test may not
# meet them), and runs there, one rank per host over TCP, under
# PIANO_COLL=graph with 4 KiB segments: the collective tests on
# MPI_COMM_WORLD (mpi_coll_graph_<mpi> light) and 300 random steps
# (mpi_coll_random_<mpi>), each result compared with the MPI's blocking
# collective, with MPI_Ibcast forced onto its scatter + ring allgather
# (which by default runs only across hosts, from 512 KiB on 8 ranks). Every
# rank must report graph collectives and scatter-allgather broadcasts
# (PIANO_STATS). The hosts are taken down whatever happens.
#
# Judged by the programs' output, not by the launcher's exit status alone:
# Debian's MPICH 4.0.2 over UCX/TCP hangs now and then in MPI_Finalize,
# natively too (tools/netns/run.sh), after every check has run. Exit 77
# when not root or without `ip` (tools/netns/run.sh's own rule).
set -uo pipefail
build=$1 mpi=$2
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
export PIANO_NETNS_PREFIX=pcoll
netns=$src/tools/netns
if [ "$(id -u)" -ne 0 ] || ! command -v ip >/dev/null; then
	echo "netns_coll: needs root and iproute2: skipped"
	exit 77
fi
fail() {
	echo "netns_coll: FAIL: $*"
	"$netns/down.sh" >/dev/null 2>&1
	exit 1
}
"$netns/down.sh" >/dev/null 2>&1
"$netns/up.sh" --hosts 3 --topology bridge --rate 10gbit >/dev/null 2>&1 || fail "up.sh"

# run LABEL PASS-PATTERN PROGRAM ARGS...: the program on 3 hosts; its
# output must hold PASS-PATTERN once and every rank's statistics must
# count graph collectives and scatter broadcasts.
run() {
	local label=$1 pass=$2 out n
	shift 2
	out=$(timeout 600 "$netns/run.sh" --mpi "$mpi" --np 3 \
		--env PIANO_COLL=graph --env PIANO_COLL_SEGMENT=4096 --env PIANO_STATS=1 \
		--env PIANO_COLL_BCAST_SCATTER_MIN=1000 --env PIANO_COLL_BCAST_SCATTER_MIN_RANKS=2 \
		-- "$build/piano-run" "$@" 2>&1)
	local rc=$?
	echo "$out" | grep -E "$pass|check failed|graph collectives" | cut -c1-400
	echo "$out" | grep -q "check failed" && fail "$label: a check failed"
	echo "$out" | grep -qE "$pass" || fail "$label: no '$pass' (launcher exit $rc)"
	n=$(echo "$out" | grep -cE "graph collectives [1-9][0-9]*,.*scatter-allgather broadcasts [1-9]")
	[ "$n" -eq 3 ] || fail "$label: $n of 3 ranks ran graph collectives and scatter broadcasts"
	[ $rc -eq 0 ] || echo "netns_coll: $label: launcher exit $rc after every check passed (MPI_Finalize)"
}
run "coll graph" "coll graph: all checks passed" "$build/tests/mpi/mpi_coll_graph_$mpi" light
run "coll random" "coll random: [0-9]+ steps passed" "$build/tests/mpi/mpi_coll_random_$mpi" 300
"$netns/down.sh" >/dev/null 2>&1 || fail "down.sh"
echo "netns_coll: $mpi, 3 hosts: graph collectives and random steps passed"

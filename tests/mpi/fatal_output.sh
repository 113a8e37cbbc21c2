#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# fatal_output.sh RUNS PIANO-RUN PROGRAM LAUNCHER...: a set-up error ends the
# job and its message reaches the user, every time. PROGRAM is started RUNS
# times under piano-run with an invalid PIANO_MPI_LINGER_US; each run must
# fail and its output (to a file, as a batch system would) must hold the layer's "piano_init failed" line of at least one rank.
# With MPI_Abort MPICH's launcher lost every rank's message in about one run
# of four. Exit status: 0 passed, 1 failed.
set -u
if [ $# -lt 4 ]; then
	echo "usage: fatal_output.sh RUNS PIANO-RUN PROGRAM LAUNCHER..." >&2
	exit 1
fi
runs=$1 piano_run=$2 program=$3
shift 3
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
i=0
while [ "$i" -lt "$runs" ]; do
	i=$((i + 1))
	PIANO_MPI_LINGER_US=+5 "$@" "$piano_run" "$program" init >"$tmp/out" 2>&1
	status=$?
	out=$(cat "$tmp/out")
	if [ "$status" -eq 0 ]; then
		printf '%s\n' "$out"
		echo "fatal_output: run $i of $runs: FAIL: the job succeeded"
		exit 1
	fi
	case $out in
	*"invalid PIANO_MPI_LINGER_US='+5'"*"piano_init failed"*) ;;
	*)
		printf '%s\n' "$out"
		echo "fatal_output: run $i of $runs: FAIL: no set-up error message"
		exit 1
		;;
	esac
done
echo "fatal_output: $runs runs, the message in each"

#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# fortran_bindings.sh MIN PIANO-RUN PROGRAM ARGS -- LAUNCHER...: a Fortran
# program (test_fortran_bindings, one binding) passes under piano-run, and
# piano saw it: with PIANO_STATS=1 both ranks print their statistics (so
# MPI_Finalize went through piano), each tracked at least MIN requests (so
# its calls did), and none is still pending (so every completion call did).
# Exit status: 0 passed, 1 failed.
set -u
if [ $# -lt 5 ]; then
	echo "usage: fortran_bindings.sh MIN PIANO-RUN PROGRAM ARGS -- LAUNCHER..." >&2
	exit 1
fi
min=$1 piano_run=$2 program=$3
shift 3
args=""
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
	args="$args $1"
	shift
done
[ $# -gt 0 ] && shift
# shellcheck disable=SC2086 # ARGS are words
out=$(PIANO_STATS=1 "$@" "$piano_run" "$program" $args 2>&1)
rc=$?
printf '%s\n' "$out"
fail() {
	echo "fortran_bindings: FAIL: $*"
	exit 1
}
[ "$rc" -eq 0 ] || fail "the program exited with status $rc"
printf '%s\n' "$out" | grep -q '^fortran bindings: all checks passed$' || fail "no pass line"
for rank in 0 1; do
	# From the statistics on: another rank's output may still lack its newline.
	line=$(printf '%s\n' "$out" | grep -o "# piano-mpi rank $rank .*") ||
		fail "rank $rank printed no statistics: piano did not see its MPI_Finalize"
	n=$(printf '%s\n' "$line" | sed -n 's/.*: tracked \([0-9][0-9]*\),.*/\1/p')
	[ -n "$n" ] && [ "$n" -ge "$min" ] ||
		fail "rank $rank tracked ${n:-?} requests, expected at least $min"
	printf '%s\n' "$line" | grep -q ', still pending 0,' ||
		fail "rank $rank: requests still pending at MPI_Finalize: a completion call bypassed piano"
done
echo "fortran_bindings: passed"

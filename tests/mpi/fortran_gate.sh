#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# fortran_gate.sh PIANO-RUN PROGRAM -- LAUNCHER...: runs test_fortran_gate
# (2 ranks) under piano-run with PIANO_STATS=1 and
# PIANO_MPI_THREAD_LEVEL=auto, and checks each rank's statistics: "background
# progress on (serialized mode)", and at least three quarters of the calls
# the rank made in its 100 ms loop of procedures piano does not bind took
# the gate's fenced path (made while a receive was in flight, the fenced
# path on from the engine's first background call, within a timer period):
# they went through piano's Fortran gate. One of the loop's three
# procedures left ungated would make it two thirds at most.
# Exit status: 0 passed, 1 failed.
set -u
if [ $# -lt 4 ]; then
	echo "usage: fortran_gate.sh PIANO-RUN PROGRAM -- LAUNCHER..." >&2
	exit 1
fi
piano_run=$1 program=$2
shift 3
out=$(PIANO_STATS=1 PIANO_MPI_THREAD_LEVEL=auto "$@" "$piano_run" "$program" 2>&1)
rc=$?
printf '%s\n' "$out"
fail() {
	echo "fortran_gate: FAIL: $*"
	exit 1
}
[ "$rc" -eq 0 ] || fail "the program exited with status $rc"
for rank in 0 1; do
	calls=$(printf '%s\n' "$out" | sed -n "s/^fortran gate: rank $rank: \([0-9][0-9]*\) calls$/\1/p")
	[ -n "$calls" ] || fail "rank $rank printed no count: it did not finish"
	line=$(printf '%s\n' "$out" | grep -o "# piano-mpi rank $rank (local.*") ||
		fail "rank $rank printed no statistics"
	printf '%s\n' "$line" | grep -q 'background progress on (serialized mode)' ||
		fail "rank $rank is not in serialized mode"
	n=$(printf '%s\n' "$out" |
		sed -n "s/^# piano-mpi rank $rank: serialized mode: .*, \([0-9][0-9]*\) of them fenced.*/\1/p")
	[ -n "$n" ] && [ "$n" -ge $((calls * 3 / 4)) ] ||
		fail "rank $rank: ${n:-no} application calls fenced of its $calls: Fortran calls bypass the gate"
done
echo "fortran_gate: passed"

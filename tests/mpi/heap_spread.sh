#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# heap_spread.sh PIANO-RUN PROGRAM LAUNCHER...: piano's set-up does not
# scatter the application's small allocations. Runs PROGRAM (test_heap)
# natively, then under piano-run, alternately, 3 times each; each run must
# pass and print "heap: runs R pages P", and piano's largest P may exceed
# 1.5 x the largest native P + 2 pages (the blocks' pages: natively 14-22,
# under a set-up that left MPI_T's holes behind 29-73). Exit status: 0
# passed, 1 failed.
set -u
if [ $# -lt 3 ]; then
	echo "usage: heap_spread.sh PIANO-RUN PROGRAM LAUNCHER..." >&2
	exit 1
fi
piano_run=$1 program=$2
shift 2
pages_of() { # prints P of "heap: runs R pages P", or fails
	out=$("$@" 2>&1) || { printf '%s\n' "$out"; return 1; }
	n=$(printf '%s\n' "$out" | sed -n 's/^heap: runs [0-9][0-9]* pages \([0-9][0-9]*\)$/\1/p')
	[ -n "$n" ] || { printf '%s\n' "$out"; return 1; }
	echo "$n"
}
native=0 piano=0 i=0
while [ "$i" -lt 3 ]; do
	i=$((i + 1))
	n=$(pages_of "$@" "$program") || { echo "heap_spread: FAIL: native run $i: $n"; exit 1; }
	[ "$n" -gt "$native" ] && native=$n
	n=$(pages_of "$@" "$piano_run" "$program") || { echo "heap_spread: FAIL: piano run $i: $n"; exit 1; }
	[ "$n" -gt "$piano" ] && piano=$n
done
echo "heap_spread: pages of 250 MPI_Alloc_mem blocks: native <= $native, piano <= $piano"
if [ "$piano" -gt $((native * 3 / 2 + 2)) ]; then
	echo "heap_spread: FAIL: piano's set-up scattered the application's allocations"
	exit 1
fi

#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# heap_offset.sh PIANO-RUN PROGRAM LEVEL LAUNCHER...: piano's set-up does
# not move the application's blocks. Runs PROGRAM (test_heap_offset) at
# thread level LEVEL natively twice and under piano-run twice, alternately;
# each run prints "heap: offsets ..." (each rank's offsets of its first two
# blocks from the start of the heap). Every piano offset must be within
# 8 KiB of the native one (3.7 KB at most measured; a set-up allocating in the
# application's thread moved them by 20-290 KB). When the two native runs
# differ by more than 1 KiB the MPI's own placement varies and the test
# is skipped. Exit status: 0 passed, 1 failed, 77 skipped.
set -u
if [ $# -lt 4 ]; then
	echo "usage: heap_offset.sh PIANO-RUN PROGRAM LEVEL LAUNCHER..." >&2
	exit 1
fi
piano_run=$1 program=$2 level=$3
shift 3
offsets_of() { # prints the offsets of one run, or its output and fails
	out=$("$@" 2>&1)
	rc=$?
	[ "$rc" -eq 77 ] && { printf '%s\n' "$out"; return 77; }
	[ "$rc" -eq 0 ] || { printf '%s\n' "$out"; return 1; }
	o=$(printf '%s\n' "$out" | sed -n 's/^heap: offsets \([0-9 ]*\)$/\1/p')
	[ -n "$o" ] || { printf '%s\n' "$out"; return 1; }
	echo "$o"
}
# largest |x_i - y_i| of two lists of the same length, or -1
farthest() {
	awk -v x="$1" -v y="$2" 'BEGIN {
		n = split(x, a, " "); m = split(y, b, " ")
		if (n != m || n == 0) { print -1; exit }
		d = 0
		for (i = 1; i <= n; i++) { e = a[i] - b[i]; if (e < 0) e = -e; if (e > d) d = e }
		print d }'
}
run() { # run NAME VAR COMMAND...: VAR = the offsets, or exit
	name=$1 var=$2
	shift 2
	o=$(offsets_of "$@")
	rc=$?
	[ "$rc" -eq 77 ] && { printf '%s\n' "$o"; exit 77; }
	[ "$rc" -eq 0 ] || { echo "heap_offset: FAIL: $name: $o"; exit 1; }
	eval "$var=\$o"
}
run "native run 1" n1 "$@" "$program" "$level"
run "piano run 1" p1 "$@" "$piano_run" "$program" "$level"
run "native run 2" n2 "$@" "$program" "$level"
run "piano run 2" p2 "$@" "$piano_run" "$program" "$level"
echo "heap_offset: native: $n1 / $n2"
echo "heap_offset: piano:  $p1 / $p2"
dn=$(farthest "$n1" "$n2")
if [ "$dn" -lt 0 ] || [ "$dn" -gt 1024 ]; then
	echo "heap_offset: SKIP: the native runs differ by $dn B: the MPI's own placement varies"
	exit 77
fi
for p in "$p1" "$p2"; do
	d=$(farthest "$n1" "$p")
	if [ "$d" -lt 0 ] || [ "$d" -gt 8192 ]; then
		echo "heap_offset: FAIL: piano moved the application's blocks by $d B (at most 8192)"
		exit 1
	fi
done
echo "heap_offset: PASS (piano within 8 KiB of native)"
exit 0

#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# report_fortran.sh PIANO-RUN PROGRAM LAUNCHER...: runs test_report_fortran
# (PROGRAM, compiled with -g) on 2 ranks under piano-run --report, then
# checks the report's call sites: every one is in PROGRAM, none in piano's
# library or the MPI's (the Fortran bindings), and there are at least four
# (the MPI_IRECV and MPI_ISEND of its two subroutines); where the report
# names functions (libdw), both subroutines are named.
# Exit status: 0 passed, 1 failed.
set -u
if [ $# -lt 3 ]; then
	echo "usage: report_fortran.sh PIANO-RUN PROGRAM LAUNCHER..." >&2
	exit 1
fi
piano_run=$1 program=$2
shift 2
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT

fail() {
	echo "report_fortran: FAIL: $*"
	[ -f "$dir/r.txt" ] && cat "$dir/r.txt"
	exit 1
}

unset PIANO_REPORT
"$@" -np 2 "$piano_run" --report "$dir/r.txt" "$program" </dev/null ||
	fail "the job failed"
[ -s "$dir/r.txt" ] || fail "no report"
sites=$(sed -n '/^## Call sites/,/^## /p' "$dir/r.txt" | grep -E '^ +[0-9]+ ')
n=$(printf '%s\n' "$sites" | grep -c .)
[ "$n" -ge 4 ] || fail "$n call sites, 4 expected"
printf '%s\n' "$sites" | grep -E 'libpiano-mpi|/libmpi|fortran_ompi|fortran_mpich' &&
	fail "call sites in a Fortran binding, not in the program"
printf '%s\n' "$sites" | grep -Fv "$program+" && fail "call sites outside $program"
if grep -q 'symbols: libdw' "$dir/r.txt"; then
	for f in report_site_one report_site_two; do
		printf '%s\n' "$sites" | grep -q "$f" || fail "$f not named"
	done
fi
echo "report_fortran: $n call sites, all in the program"
exit 0

#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# report.sh NP PROGRESS PIANO-RUN PROGRAM LAUNCHER...: runs test_report
# (PROGRAM) on NP ranks under piano-run with PIANO_REPORT set (PROGRESS off:
# and PIANO_PROGRESSION=0), then checks the report: the text file and its
# JSON exist, and report_check.py finds every row the program expects.
# Exit status: 0 passed, 1 failed.
set -u
if [ $# -lt 5 ]; then
	echo "usage: report.sh NP on|off PIANO-RUN PROGRAM LAUNCHER..." >&2
	exit 1
fi
np=$1 progress=$2 piano_run=$3 program=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
if [ "$progress" = off ]; then
	PIANO_PROGRESSION=0
	export PIANO_PROGRESSION
fi
PIANO_REPORT=$dir/report.txt
export PIANO_REPORT
"$@" -np "$np" "$piano_run" "$program" "$dir/expect" || {
	echo "report: FAIL: the job failed"
	exit 1
}
for f in report.txt report.txt.json expect; do
	[ -s "$dir/$f" ] || {
		echo "report: FAIL: $f missing or empty"
		ls -l "$dir"
		exit 1
	}
done
cat "$dir/report.txt"
grep -q "^# Ranks *: $np\$" "$dir/report.txt" || {
	echo "report: FAIL: the text report does not say $np ranks"
	exit 1
}
python3 "$here/report_check.py" "$dir/report.txt.json" "$dir/expect" "$np" "$progress"

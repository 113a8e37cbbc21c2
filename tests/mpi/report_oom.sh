#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# report_oom.sh PIANO-RUN PROGRAM LAUNCHER...: runs test_report (PROGRAM) on
# 2 ranks under piano-run with PIANO_REPORT set, while the preloaded
# fail_calloc module (LD_PRELOAD, set by CTest) makes rank 0's tables for
# gathering the report fail. The job must end normally, rank 0 must say
# that there is no report and why, and no report file may appear.
# Exit status: 0 passed, 1 failed.
set -u
if [ $# -lt 3 ]; then
	echo "usage: report_oom.sh PIANO-RUN PROGRAM LAUNCHER..." >&2
	exit 1
fi
piano_run=$1 program=$2
shift 2
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT
fail() {
	echo "report_oom: FAIL: $*"
	exit 1
}
PIANO_REPORT=$dir/r.txt "$@" -np 2 "$piano_run" "$program" "$dir/expect" 2>"$dir/err"
rc=$?
cat "$dir/err"
[ "$rc" -eq 0 ] || fail "the job exited with $rc"
grep -q "out of memory gathering the overlap report: no report" "$dir/err" ||
	fail "rank 0 did not say that it had no room for the report"
[ ! -e "$dir/r.txt" ] && [ ! -e "$dir/r.txt.json" ] || fail "a report was written"
echo "report_oom: no room on rank 0: no report, said so, the job ended: ok"

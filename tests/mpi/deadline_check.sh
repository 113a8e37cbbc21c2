#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# deadline.sh passes a command's exit status through; past its limit, it
# prints the threads of every process of the command's tree, kills the tree
# and exits 124.
# usage: deadline_check.sh DEADLINE_SH
set -uo pipefail
deadline=$1
fail() {
	echo "deadline_check: $*" >&2
	exit 1
}

rc=0
"$deadline" 10 bash -c 'exit 3' >/dev/null || rc=$?
((rc == 3)) || fail "status 3 came back as $rc"

marker=$((RANDOM * 32768 + RANDOM))
rc=0
# The sleeps do not hold the output open: a tree left running fails the
# check below instead of hanging it.
out=$("$deadline" 1 bash -c "sleep 1$marker >/dev/null & sleep 2$marker >/dev/null") || rc=$?
((rc == 124)) || fail "a command past its limit: status $rc, not 124"
for s in 1 2; do
	grep -q "==== pid [0-9]*: sleep $s$marker" <<<"$out" ||
		fail "no stacks for 'sleep $s$marker' in: $out"
done
grep -q '^thread [0-9]* sleep: state' <<<"$out" || fail "no thread lines in: $out"
grep -q "==== pid [0-9]*: bash -c sleep 1$marker" <<<"$out" ||
	fail "no stacks for the command itself in: $out"
sleep 0.5
if pgrep -f "sleep [12]$marker" >/dev/null; then
	pkill -f "sleep [12]$marker"
	fail "the command's tree outlived deadline.sh"
fi
echo "deadline_check: passed"

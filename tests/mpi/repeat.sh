#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs a command N times and fails at its first failure, naming the run: a
# race that shows once in dozens of runs (a lost wake-up under contention)
# gets a test that catches it in most CI runs.
# usage: repeat.sh N COMMAND ARGS...
set -uo pipefail
if (($# < 2)); then
	echo "usage: repeat.sh N COMMAND ARGS..." >&2
	exit 2
fi
n=$1
shift
for ((i = 1; i <= n; i++)); do
	"$@"
	rc=$?
	if ((rc != 0)); then
		echo "repeat.sh: run $i of $n failed (exit $rc)" >&2
		exit "$rc"
	fi
done
echo "repeat.sh: $n runs passed"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs test_stress natively, then under piano, with the same launcher and
# arguments; both must pass (no loss, no corruption, bounded RSS), and
# piano's message rate must be at least half the native one. Each run has
# LIMIT seconds (deadline.sh: a run still going then has its stacks printed
# and fails); output streams as it comes.
# usage: stress.sh LIMIT PIANO_RUN LAUNCHER... -- EXE ARGS...
set -euo pipefail
if (($# < 5)); then
	echo "usage: stress.sh LIMIT PIANO_RUN LAUNCHER... -- EXE ARGS..." >&2
	exit 2
fi
limit=$1 piano_run=$2
shift 2
deadline=$(dirname "$0")/deadline.sh
out=$(mktemp)
trap 'rm -f "$out"' EXIT
launch=()
while (($#)) && [[ $1 != -- ]]; do
	launch+=("$1")
	shift
done
shift || { echo "stress.sh: missing -- before the program" >&2; exit 2; }

rate() { sed -n 's/.*rate \([0-9]*\) msg\/s.*/\1/p' <<<"$1" | tail -n1; }

run() {
	local rc=0
	"$deadline" "$limit" "${launch[@]}" "$@" 2>&1 | tee "$out" >&2 || rc=${PIPESTATUS[0]}
	if ((rc == 77)); then
		exit 77
	elif ((rc == 124)); then
		echo "stress.sh: '${launch[*]} $*' did not end within $limit s" >&2
		exit 1
	elif ((rc != 0)); then
		echo "stress.sh: '${launch[*]} $*' failed (exit $rc)" >&2
		exit 1
	fi
	rate "$(cat "$out")"
}

native=$(run "$@")
piano=$(run "$piano_run" "$@")
if [[ -z $native || -z $piano ]]; then
	echo "stress.sh: no rate in the output" >&2
	exit 1
fi
echo "stress: native $native msg/s, piano $piano msg/s"
if ((2 * piano < native)); then
	echo "stress: piano's rate is below half the native one" >&2
	exit 1
fi
echo "stress: passed"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs a job natively, then under piano: piano's job must end within the
# time limit with the exit status of the native one (a rank killed, an
# MPI_Abort from a thread, a finalize with requests in flight).
# usage: faults.sh SECONDS PIANO_RUN LAUNCHER... -- EXE ARGS...
set -euo pipefail
if (($# < 5)); then
	echo "usage: faults.sh SECONDS PIANO_RUN LAUNCHER... -- EXE ARGS..." >&2
	exit 2
fi
limit=$1 piano_run=$2
shift 2
launch=()
while (($#)) && [[ $1 != -- ]]; do
	launch+=("$1")
	shift
done
shift || { echo "faults.sh: missing -- before the program" >&2; exit 2; }

run() {
	local rc=0
	timeout --kill-after=5 "$limit" "${launch[@]}" "$@" >/dev/null 2>&1 || rc=$?
	echo "$rc"
}

native=$(run "$@")
piano=$(run "$piano_run" "$@")
echo "faults ($*): native exit $native, piano exit $piano"
if ((native == 77)); then
	exit 77
fi
if ((piano == 124 || piano == 137 && native != 137)); then
	echo "faults: the job under piano did not end within $limit s" >&2
	exit 1
fi
if ((native != piano)); then
	echo "faults: exit status differs from the native run" >&2
	exit 1
fi
echo "faults: passed"

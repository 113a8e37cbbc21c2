#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs a command with a time limit; when the limit passes, prints the state
# and kernel wait channel of every thread of the command and of every
# process it started, and their stacks when gdb is installed, then kills the
# whole tree and exits 124. A hang on a CI machine nobody can log into is
# diagnosed from its log: a plain timeout kills the job and loses the state.
# Output of the command goes to this script's standard output as it comes.
# usage: deadline.sh SECONDS COMMAND ARGS...
set -uo pipefail
if (($# < 2)); then
	echo "usage: deadline.sh SECONDS COMMAND ARGS..." >&2
	exit 2
fi
limit=$1
shift

# Every descendant of $1 (not $1 itself), from /proc's parent links.
descendants() {
	local todo=("$1") p c
	while ((${#todo[@]})); do
		p=${todo[0]}
		todo=("${todo[@]:1}")
		# shellcheck disable=SC2013 # the file is a list of words
		for c in $(cat /proc/"$p"/task/*/children 2>/dev/null); do
			echo "$c"
			todo+=("$c")
		done
	done
}

dump() {
	local p t
	for p in "$@"; do
		[[ -d /proc/$p ]] || continue
		echo "deadline.sh: ==== pid $p: $(tr '\0' ' ' </proc/"$p"/cmdline 2>/dev/null)"
		for t in /proc/"$p"/task/*; do
			echo "thread ${t##*/} $(cat "$t"/comm 2>/dev/null): state" \
				"$(awk '{print $3}' "$t"/stat 2>/dev/null), wchan $(cat "$t"/wchan 2>/dev/null)"
		done
		if command -v gdb >/dev/null 2>&1; then
			timeout 60 gdb -p "$p" -batch -nx -ex 'set pagination off' \
				-ex 'thread apply all bt' 2>&1 | grep -E '^(Thread|#)|ptrace'
		fi
	done
}

"$@" &
pid=$!
sleep "$limit" &
timer=$!
# Whichever ends first: the command (its status) or the sleep.
wait -n "$pid" "$timer"
if ! kill -0 "$pid" 2>/dev/null; then
	kill "$timer" 2>/dev/null
	wait "$pid"
	exit $?
fi
mapfile -t procs < <(descendants "$pid")
echo "deadline.sh: '$*' still running after $limit s; stacks of its processes:"
# The command itself too: a launcher may hang after its ranks have gone.
dump "$pid" "${procs[@]}"
kill -KILL "$pid" "${procs[@]}" 2>/dev/null
wait "$pid" 2>/dev/null
exit 124

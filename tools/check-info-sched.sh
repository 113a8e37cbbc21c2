#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# check-info-sched.sh PIANO_INFO: piano-info's "back to SCHED_OTHER" line
# against the kernel's rule read another way: permitted with CAP_SYS_NICE
# (bit 23 of CapEff in /proc/self/status) or an RLIMIT_NICE of 20 or more
# (`ulimit -e`). Run as root with setpriv(1), it checks the other answer too,
# as the unprivileged user nobody (no capabilities, the same limit).
set -u
info=$1

expect() { # $1: 1 when CAP_SYS_NICE is in the effective set
	lim=$(ulimit -e 2>/dev/null || echo 0)
	case $lim in unlimited) lim=40 ;; esac
	if [ "$1" = 1 ] || [ "$lim" -ge 20 ]; then echo permitted; else echo "not permitted"; fi
}

check() { # $1: label, $2: expected answer, rest: command
	label=$1 want=$2
	shift 2
	out=$("$@")
	if printf '%s\n' "$out" | grep -q "SCHED_IDLE: *not available"; then
		echo "skipped ($label): SCHED_IDLE is not available"
		return 0
	fi
	line=$(printf '%s\n' "$out" | grep "back to SCHED_OTHER:")
	case $line in
	*"SCHED_OTHER: $want ("*) ;;
	*)
		echo "FAIL ($label): expected '$want', piano-info says: ${line:-no such line}"
		exit 1
		;;
	esac
	echo "ok ($label): $line"
}

capeff=$(awk '/^CapEff:/ { print $2 }' /proc/self/status)
bit=$(( (0x$capeff >> 23) & 1 ))
check "this user" "$(expect $bit)" "$info"

nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null 2>&1; then
	if ! $nobody sh -c "test -x '$info' && test -r /proc/self/status"; then
		echo "skipped (nobody): $info is out of that user's reach"
		exit 0
	fi
	check "nobody" "$(expect 0)" $nobody "$info"
fi
exit 0

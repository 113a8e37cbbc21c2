#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# cwd_library.sh FAKE-LIB FILE...: the attack of a library planted in the
# directory a user starts a job from. Copies FAKE-LIB (whose constructor
# prints "fake-lib: loaded") into an empty mktemp -d directory under the
# name of every library the FILEs need (their NEEDED entries, libc.so.6
# excepted: the fake itself needs the real one), goes there, and starts
# every FILE with LD_DEBUG=libs: an executable with --help, a shared library
# preloaded into /bin/true. Fails if a fake is loaded, if the loader tried
# any relative file name (a search of the current directory, whether or not
# something was planted there), or if a FILE does not run.
# Exit status: 0 passed, 1 failed, 77 skipped (no readelf).
set -u
if [ $# -lt 2 ]; then
	echo "usage: cwd_library.sh FAKE-LIB FILE..." >&2
	exit 1
fi
fake=$1
shift
if ! command -v readelf >/dev/null 2>&1; then
	echo "cwd_library: readelf not found (install binutils): skipped"
	exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

needed=$(readelf -d "$@" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' | sort -u)
if [ -z "$needed" ]; then
	echo "cwd_library: FAIL: no NEEDED entry in $*: nothing to plant"
	exit 1
fi
mkdir "$tmp/cwd" "$tmp/debug" || exit 1
for lib in $needed; do
	case $lib in
	*/* | libc.so.* | ld-linux*) ;;
	*) cp "$fake" "$tmp/cwd/$lib" || exit 1 ;;
	esac
done
echo "cwd_library: planted in $tmp/cwd:" $(ls "$tmp/cwd")
cd "$tmp/cwd" || exit 1

rc=0
n=0
for f in "$@"; do
	n=$((n + 1))
	# One file per process: ld.so appends the pid to LD_DEBUG_OUTPUT.
	debug=$tmp/debug/$n
	case $f in
	*.so | *.so.*) out=$(LD_DEBUG=libs LD_DEBUG_OUTPUT=$debug LD_PRELOAD=$f /bin/true 2>&1) ;;
	*) out=$(LD_DEBUG=libs LD_DEBUG_OUTPUT=$debug "$f" --help 2>&1) ;;
	esac
	status=$?
	tried=$(cat "$debug".* 2>/dev/null | sed -n 's/.*trying file=\([^/].*\)/\1/p' | sort -u)
	case $out in
	*"fake-lib: loaded"*)
		echo "cwd_library: FAIL $f loads a library planted in the current directory"
		rc=1 ;;
	*)
		if [ -n "$tried" ]; then
			echo "cwd_library: FAIL $f makes the loader search the current directory, for:" $tried
			rc=1
		elif [ "$status" -ne 0 ]; then
			printf '%s\n' "$out"
			echo "cwd_library: FAIL $f did not run (exit $status)"
			rc=1
		else
			echo "cwd_library: ok $f"
		fi ;;
	esac
done
exit "$rc"

#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# runpath.sh BUILD-DIR SOURCE-DIR CMAKE: no ELF file piano builds or installs
# may tell the loader to search a directory that depends on where the user
# happens to be, or on where the file lies. Fails on any RUNPATH/RPATH entry
# that is
#   - empty: the loader reads it as the current directory;
#   - relative (not starting with '/'): resolved from the current directory;
#   - $ORIGIN-based: relative to the file, which is only as safe as every
#     directory the file is ever copied to;
# and, in the installed tree, on any entry pointing into the build or source
# tree (paths the user installing did not ask for).
# Checks every ELF file of BUILD-DIR, then of a `cmake --install` into a
# fresh mktemp -d prefix. Exit status: 0 passed, 1 failed, 77 skipped (no
# readelf).
set -u
if [ $# -ne 3 ]; then
	echo "usage: runpath.sh BUILD-DIR SOURCE-DIR CMAKE" >&2
	exit 1
fi
build=$(cd "$1" && pwd -P) || exit 1
source=$(cd "$2" && pwd -P) || exit 1
cmake=$3
if ! command -v readelf >/dev/null 2>&1; then
	echo "runpath: readelf not found (install binutils): skipped"
	exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# check_tree DIR WHAT [FORBIDDEN-PREFIX...]: prints one line per bad entry
# and a summary; returns 1 if anything is wrong or no ELF file was found.
check_tree() {
	dir=$1
	what=$2
	shift 2
	# /dev/null as a second argument makes readelf print a "File:" header
	# even when find passes a single file; files that are not ELF are
	# reported on stderr and skipped.
	find "$dir" -type f -exec readelf -d /dev/null {} + 2>/dev/null >"$tmp/dyn"
	awk -v what="$what" -v forbidden="$*" '
		function bad(entry, why) {
			printf "runpath: FAIL %s: %s entry \"%s\" (%s)\n", file, tag, entry, why
			nbad++
		}
		/^File: / { file = substr($0, 7); next }
		/^Dynamic section at offset/ { nfiles++; next }
		/\((RUNPATH|RPATH)\)/ {
			tag = ($0 ~ /\(RUNPATH\)/) ? "RUNPATH" : "RPATH"
			value = $0
			sub(/^[^[]*\[/, "", value)
			sub(/\][^]]*$/, "", value)
			# split() keeps empty fields ("a:" gives "a" and "") but
			# gives none for "", which the loader also reads as ".".
			n = split(value, entries, ":")
			if (n == 0)
				entries[n = 1] = ""
			for (i = 1; i <= n; i++) {
				e = entries[i]
				if (e == "")
					bad(e, "empty: the current directory")
				else if (e ~ /\$(ORIGIN|\{ORIGIN\})/)
					bad(e, "$ORIGIN: relative to the file")
				else if (substr(e, 1, 1) != "/")
					bad(e, "relative: resolved from the current directory")
				else {
					nf = split(forbidden, pre, " ")
					for (j = 1; j <= nf; j++)
						if (e == pre[j] || index(e, pre[j] "/") == 1) {
							bad(e, "points into " pre[j])
							break
						}
				}
			}
		}
		END {
			printf "runpath: %s: %d dynamic ELF files checked, %d bad entries\n",
				what, nfiles, nbad
			if (nfiles == 0) {
				printf "runpath: FAIL %s: no dynamic ELF file found\n", what
				exit 1
			}
			exit (nbad > 0)
		}' "$tmp/dyn"
}

rc=0
check_tree "$build" "build tree $build" || rc=1
prefix=$tmp/prefix
if ! "$cmake" --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1; then
	cat "$tmp/install.log"
	echo "runpath: FAIL: cmake --install $build --prefix $prefix failed"
	exit 1
fi
check_tree "$prefix" "installed tree" "$build" "$source" || rc=1
exit "$rc"

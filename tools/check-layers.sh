#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Checks that a library's files call downward only, as the drawing of the
# "Layers" section of a document says: every function that one of the
# given object files calls in another must be defined in a lower layer,
# except the upward calls the drawing names ("a.c --fn()--> b.c"). Calls
# are read from the symbol tables (nm), so inline functions and shared
# struct definitions do not count, and calls to objects not given (the
# core's, from the MPI layer) are not checked.
#
#   tools/check-layers.sh docs/architecture.md OBJECT...   (libpiano)
#   tools/check-layers.sh docs/mpi.md OBJECT...            (libpiano-mpi-*)
#
# NM names the nm program (default: nm). Exit 0: every call goes down;
# 1: a call goes up or sideways, or a file is missing from the drawing.
set -euo pipefail

doc=$1
shift
nm=${NM:-nm}

# The drawing: the first code block of the Layers section, rows
# "  N  name  a.c  b.c ..." and upward calls "a.c --fn()--> b.c ...".
declare -A layer
allowed=""
while read -r rank files; do
	if [[ $rank == up ]]; then
		allowed+=" $files"
		continue
	fi
	for f in $files; do
		layer[$f]=$rank
	done
done < <(awk '
	/^## / { in_layers = ($0 == "## Layers") }
	in_layers && /^```/ { if (++fence == 2) exit; next }
	in_layers && fence == 1 && /^ *[0-9]+ / {
		files = ""
		for (i = 2; i <= NF; i++)
			if ($i ~ /^[a-z0-9_]+\.c$/)
				files = files " " $i
		print $1, files
	}
	in_layers && fence == 1 && /^ *[a-z0-9_]+\.c --[a-z0-9_]+\(\)--> / {
		fn = $2
		gsub(/^--|\(\)-->$/, "", fn)
		print "up", $1 ":" fn
	}' "$doc")
if ((${#layer[@]} == 0)); then
	echo "check-layers: no layer drawing found in $doc" >&2
	exit 1
fi

source_of() { # object path -> source file name (queue.c.o -> queue.c)
	local b=${1##*/}
	echo "${b%.o}"
}

status=0
declare -A defined_in
for o in "$@"; do
	src=$(source_of "$o")
	if [[ -z ${layer[$src]+x} ]]; then
		echo "check-layers: $src is not in the drawing of $doc" >&2
		status=1
		continue
	fi
	while read -r sym type _; do
		[[ $type == T ]] && defined_in[$sym]=$src
	done < <("$nm" -P --defined-only "$o")
done

for o in "$@"; do
	src=$(source_of "$o")
	[[ -n ${layer[$src]+x} ]] || continue
	while read -r sym _; do
		def=${defined_in[$sym]:-}
		[[ -n $def && $def != "$src" ]] || continue
		((layer[$def] < layer[$src])) && continue
		[[ " $allowed " == *" $src:$sym "* ]] && continue
		echo "check-layers: $src (layer ${layer[$src]}) calls $sym, defined in $def (layer ${layer[$def]})" >&2
		status=1
	done < <("$nm" -P -u "$o")
done

if ((status == 0)); then
	echo "check-layers: ${#layer[@]} files, every call goes down"
fi
exit "$status"

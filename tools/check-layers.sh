#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Checks that the core's files call downward only, as the drawing of the
# "Layers" section of docs/architecture.md says: every function that one
# object file of libpiano calls in another must be defined in a lower
# layer, except ltask_run() called by queue.c (a queue runs its tasks).
# Calls are read from the symbol tables (nm), so inline functions and
# shared struct definitions do not count.
#
#   tools/check-layers.sh docs/architecture.md OBJECT...
#
# NM names the nm program (default: nm). Exit 0: every call goes down;
# 1: a call goes up or sideways, or a file is missing from the drawing.
set -euo pipefail

doc=$1
shift
nm=${NM:-nm}

# The drawing: the first code block of the Layers section, rows
# "  N  name  a.c  b.c ...".
declare -A layer
while read -r rank files; do
	for f in $files; do
		layer[$f]=$rank
	done
done < <(awk '
	/^## / { in_layers = ($0 == "## Layers") }
	in_layers && /^```/ { if (++fence == 2) exit; next }
	in_layers && fence == 1 && /^ *[0-9]+ / {
		files = ""
		for (i = 2; i <= NF; i++)
			if ($i ~ /^[a-z_]+\.c$/)
				files = files " " $i
		print $1, files
	}' "$doc")
if ((${#layer[@]} == 0)); then
	echo "check-layers: no layer drawing found in $doc" >&2
	exit 1
fi

# The one upward call, "caller.c:function".
allowed="queue.c:ltask_run"

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

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Checks that docs/configuration.md's settings table is exactly what
# `piano-info --markdown` prints from the registry's tables, so that the
# page cannot drift from the code. Test core.config_docs.
#
#   tools/check-config-docs.sh PIANO_INFO DOC     # exit 0 same, 1 differs
#   tools/check-config-docs.sh --update PIANO_INFO DOC   # rewrites the table
set -euo pipefail

update=0
if [[ ${1:-} == --update ]]; then
	update=1
	shift
fi
if (($# != 2)); then
	echo "usage: $0 [--update] PIANO_INFO DOC" >&2
	exit 2
fi
info=$1 doc=$2
begin='<!-- BEGIN settings table'
end='<!-- END settings table -->'

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
"$info" --markdown >"$tmp/generated"
if ! grep -q "^$begin" "$doc" || ! grep -qx "$end" "$doc"; then
	echo "$doc: markers '$begin' and '$end' not found" >&2
	exit 1
fi
awk -v b="$begin" -v e="$end" 'index($0, b) == 1 { on = 1; next } $0 == e { on = 0 } on' \
	"$doc" >"$tmp/documented"

if ((update)); then
	awk -v b="$begin" -v e="$end" -v gen="$tmp/generated" '
		index($0, b) == 1 { print; while ((getline l < gen) > 0) print l; skip = 1; next }
		$0 == e { skip = 0 }
		!skip' "$doc" >"$tmp/new"
	cat "$tmp/new" >"$doc"
	exit 0
fi
if ! diff -u "$tmp/documented" "$tmp/generated"; then
	echo "$doc: the settings table differs from the code (above: - documented," \
		"+ generated). Edit the help text in the settings table of the code, then run" \
		"tools/check-config-docs.sh --update $info $doc" >&2
	exit 1
fi
echo "$doc: settings table matches the registry"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Checks that C files follow .clang-format: prints a unified diff of every
# file that clang-format would change and exits 1 if there is any.
#
#   tools/check-format.sh [--base REF] [--lines] [FILE...]
#
# With FILEs, checks them. Without, checks the .c and .h files added,
# copied, modified or renamed between REF and HEAD (default REF: HEAD~1
# when it exists, else every C file of HEAD). Files are read from the work
# tree. With --lines (no FILEs), only the lines changed since REF are
# checked (clang-format-diff): what CI checks (tools/run-tests.sh), so that a
# change is held to the style without reformatting the files it touches.
# Exit status: 0 all formatted (or nothing to check), 1 some file is
# not, 2 usage error or clang-format missing or failing.
# CLANG_FORMAT names the program (default: clang-format, else clang-format-14).
set -euo pipefail

usage() {
	sed -n '2,12s/^# \{0,1\}//p' "$0"
}

base=
lines=0
files=()
while (($#)); do
	case $1 in
	--base)
		[[ $# -ge 2 ]] || { echo "check-format: --base needs a REF" >&2; exit 2; }
		base=$2
		shift 2
		;;
	--base=*)
		base=${1#--base=}
		shift
		;;
	--lines)
		lines=1
		shift
		;;
	-h | --help)
		usage
		exit 0
		;;
	--)
		shift
		files+=("$@")
		break
		;;
	-*)
		echo "check-format: unknown option $1 (see --help)" >&2
		exit 2
		;;
	*)
		files+=("$1")
		shift
		;;
	esac
done

cf=${CLANG_FORMAT:-}
if [[ -z $cf ]]; then
	for c in clang-format clang-format-14; do
		if command -v "$c" >/dev/null; then
			cf=$c
			break
		fi
	done
fi
if [[ -z $cf ]] || ! command -v "$cf" >/dev/null; then
	echo "check-format: clang-format not found (install clang-format or set CLANG_FORMAT)" >&2
	exit 2
fi

top=$(git rev-parse --show-toplevel 2>/dev/null) || top=
if ((${#files[@]} == 0)); then
	if [[ -z $top ]]; then
		echo "check-format: not in a git work tree; name the files to check" >&2
		exit 2
	fi
	cd "$top"
	if [[ -z $base ]]; then
		if git rev-parse -q --verify 'HEAD~1^{commit}' >/dev/null; then
			base=HEAD~1
		else
			base=$(git hash-object -t tree /dev/null) # the empty tree
		fi
	elif ! git rev-parse -q --verify "$base^{commit}" >/dev/null; then
		echo "check-format: unknown base $base" >&2
		exit 2
	fi
	if ((lines)); then
		cfd=
		for c in clang-format-diff clang-format-diff-14; do
			command -v "$c" >/dev/null && { cfd=$c; break; }
		done
		if [[ -z $cfd ]]; then
			echo "check-format: clang-format-diff not found" >&2
			exit 2
		fi
		out=$(git diff -U0 --no-color "$base" HEAD -- '*.c' '*.h' |
			"$cfd" -p1 -binary "$(command -v "$cf")" -style=file) || {
			echo "check-format: $cfd failed" >&2
			exit 2
		}
		if [[ -n $out ]]; then
			printf '%s\n' "$out"
			echo "check-format: lines changed since $base are not formatted (above:" \
				"- as written, + as .clang-format wants)" >&2
			exit 1
		fi
		echo "check-format: the C lines changed since $base are formatted"
		exit 0
	fi
	mapfile -t files < <(git diff --name-only --diff-filter=ACMR "$base" HEAD -- '*.c' '*.h')
	if ((${#files[@]} == 0)); then
		echo "check-format: no C file changed since $base"
		exit 0
	fi
fi

bad=0
for f in "${files[@]}"; do
	if [[ ! -f $f ]]; then
		echo "check-format: $f: no such file" >&2
		exit 2
	fi
	set +e
	"$cf" --style=file "$f" | diff -u --label "$f" --label "$f (clang-format)" "$f" -
	st=("${PIPESTATUS[@]}")
	set -e
	if ((st[0] != 0)); then
		echo "check-format: $cf failed on $f" >&2
		exit 2
	fi
	((st[1] == 0)) || bad=1
done
if ((bad)); then
	echo "check-format: files above are not formatted (apply with: $cf -i FILE)" >&2
	exit 1
fi
echo "check-format: ${#files[@]} file(s) formatted"

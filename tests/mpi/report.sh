#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# report.sh NP on|off|tool|png|failed PIANO-RUN PROGRAM LAUNCHER...: runs test_report
# (PROGRAM) on NP ranks under piano-run with PIANO_REPORT set (off: and
# PIANO_PROGRESSION=0), then checks the report: the text file and its
# JSON exist, and report_check.py finds every row the program expects.
# tool: two such runs, the first with background progress and the report
# asked with piano-run --report instead of PIANO_REPORT, the second
# without; then tools/piano-report must print the first's text report
# again from its JSON, byte for byte, and its comparison of the two must
# show every call site as common to both.
# png: one such run, then tools/piano-report --png must write a PNG of it;
# with gnuplot not on PATH (a PATH holding python3 only), or given two
# reports, it must fail with status 2 and leave the output path as it was.
# Skipped (77) when the machine has no gnuplot.
# failed: rank 1's set-up of the report fails (a wrapper between the
# launcher and piano-run starts it in a working directory so deep that the
# relative PIANO_REPORT cannot be made absolute): the job must still end,
# rank 1 must say why on stderr, and rank 0's report must hold the other
# ranks' rows only and name rank 1 as a rank that recorded nothing, in the
# text and in the JSON, which tools/piano-report prints as the same text.
# Exit status: 0 passed, 1 failed, 77 skipped.
set -u
if [ $# -lt 5 ]; then
	echo "usage: report.sh NP on|off|tool|png|failed PIANO-RUN PROGRAM LAUNCHER..." >&2
	exit 1
fi
np=$1 mode=$2 piano_run=$3 program=$4
shift 4
here=$(cd "$(dirname "$0")" && pwd)
piano_report=$here/../../tools/piano-report
dir=$(mktemp -d) || exit 1
trap 'rm -rf "$dir"' EXIT

fail() {
	echo "report: FAIL: $*"
	exit 1
}

# run NAME on|off env|option LAUNCHER...: one job, its report in
# $dir/NAME.txt(.json), checked.
run() {
	name=$1 progress=$2 how=$3
	shift 3
	(
		unset PIANO_REPORT PIANO_PROGRESSION
		[ "$progress" = on ] || export PIANO_PROGRESSION=0
		if [ "$how" = env ]; then
			export PIANO_REPORT="$dir/$name.txt"
			exec "$@" -np "$np" "$piano_run" "$program" "$dir/$name.expect"
		fi
		exec "$@" -np "$np" "$piano_run" --report "$dir/$name.txt" "$program" \
			"$dir/$name.expect"
	) || fail "the job failed ($name)"
	for f in "$name.txt" "$name.txt.json" "$name.expect"; do
		[ -s "$dir/$f" ] || {
			ls -l "$dir"
			fail "$f missing or empty"
		}
	done
	cat "$dir/$name.txt"
	grep -q "^# Ranks *: $np\$" "$dir/$name.txt" ||
		fail "the text report does not say $np ranks ($name)"
	python3 "$here/report_check.py" "$dir/$name.txt.json" "$dir/$name.expect" "$np" \
		"$progress" || exit 1
}

case $mode in
on | off)
	run report "$mode" env "$@"
	exit 0 ;;
tool) ;;
png)
	if ! command -v gnuplot >/dev/null 2>&1; then
		echo "report: no gnuplot (Debian: apt-get install gnuplot-nox): skipped"
		exit 77
	fi
	run png on option "$@"
	mkdir "$dir/out" "$dir/bin" || fail "cannot make directories in $dir"
	"$piano_report" --png "$dir/out/sites.png" "$dir/png.txt.json" ||
		fail "piano-report --png failed"
	[ -f "$dir/out/sites.png" ] || fail "piano-report --png wrote no file"
	sig=$(head -c 8 "$dir/out/sites.png" | od -An -tx1 | tr -d ' \n')
	[ "$sig" = 89504e470d0a1a0a ] || fail "sites.png is not a PNG (starts with $sig)"
	size=$(wc -c <"$dir/out/sites.png")
	# A plot with its labels is tens of KiB; a blank canvas a few.
	[ "$size" -ge 10000 ] || fail "sites.png has only $size bytes"
	[ "$(ls -A "$dir/out")" = sites.png ] ||
		fail "piano-report --png left other files: $(ls -A "$dir/out")"
	echo "report: piano-report --png wrote a PNG of $size bytes: ok"

	# No gnuplot: status 2, a message naming the package, no file, and an
	# existing file untouched (the script's #! finds python3 on PATH). The
	# interpreter itself: python3 on PATH may be a wrapper (pyenv's shim is
	# a bash script).
	python=$(python3 -c 'import sys; print(sys.executable)')
	[ -x "$python" ] || fail "cannot find the python3 interpreter"
	ln -s "$python" "$dir/bin/python3" || fail "cannot link python3"
	echo old >"$dir/out/old.png"
	for f in none.png old.png; do
		PATH=$dir/bin "$piano_report" --png "$dir/out/$f" "$dir/png.txt.json" \
			2>"$dir/err"
		rc=$?
		cat "$dir/err"
		[ "$rc" -eq 2 ] || fail "without gnuplot, piano-report --png exited with $rc, not 2"
		if ! grep -q gnuplot-nox "$dir/err" || [ "$(wc -l <"$dir/err")" -ne 1 ]; then
			fail "without gnuplot, piano-report --png did not say which package in one line"
		fi
	done
	[ ! -e "$dir/out/none.png" ] || fail "without gnuplot, piano-report --png made none.png"
	[ "$(cat "$dir/out/old.png")" = old ] ||
		fail "without gnuplot, piano-report --png changed an existing file"

	# Two reports and --png: a usage error, no file.
	"$piano_report" --png "$dir/out/two.png" "$dir/png.txt.json" "$dir/png.txt.json" \
		2>"$dir/err"
	rc=$?
	cat "$dir/err"
	[ "$rc" -eq 2 ] || fail "piano-report --png A B exited with $rc, not 2"
	[ ! -e "$dir/out/two.png" ] || fail "piano-report --png A B made a file"
	[ "$(ls -A "$dir/out")" = "old.png
sites.png" ] || fail "piano-report left files after failing: $(ls -A "$dir/out")"
	echo "report: piano-report --png fails without gnuplot or with two reports: ok"
	exit 0 ;;
failed)
	# A working directory so deep that failed.txt in it is longer than
	# PATH_MAX (4096) with the 12 characters of its temporary files' suffix.
	deep=$dir
	while [ $((${#deep} + 201)) -lt 4040 ]; do
		deep=$deep/$(printf '%0200d' 0)
	done
	deep=$deep/$(printf "%0$((4085 - ${#deep} - 1))d" 0)
	mkdir -p "$deep" || fail "cannot make a working directory of ${#deep} characters"
	# Rank 1 runs there: the rank's number is in a variable its launcher
	# sets in each rank (Open MPI's mpirun, MPICH's Hydra).
	cat >"$dir/rank1.sh" <<-EOF
		#!/bin/sh
		if [ "\${OMPI_COMM_WORLD_RANK:-\${PMI_RANK:-}}" = 1 ]; then
			cd "$deep" || exit 1
		fi
		exec "\$@"
	EOF
	chmod +x "$dir/rank1.sh"
	(
		cd "$dir" || exit 1
		unset PIANO_PROGRESSION
		exec env PIANO_REPORT=failed.txt "$@" -np "$np" "$dir/rank1.sh" "$piano_run" \
			"$program" "$dir/failed.expect"
	) >"$dir/out" 2>&1
	rc=$?
	cat "$dir/out"
	[ "$rc" -eq 0 ] || fail "the job failed (exit status $rc)"
	grep -q "rank 1): PIANO_REPORT=failed.txt: cannot make an absolute path of it (too long)" \
		"$dir/out" ||
		fail "rank 1 did not say why it records nothing"
	for f in failed.txt failed.txt.json failed.expect; do
		if [ ! -s "$dir/$f" ]; then
			ls -l "$dir"
			fail "$f missing or empty"
		fi
	done
	cat "$dir/failed.txt"
	grep -q "^# Ranks *: $((np - 1)) of $np\$" "$dir/failed.txt" ||
		fail "the text report does not say $((np - 1)) of $np ranks"
	grep -q "^# Failed *: rank 1 recorded nothing: .*too long" "$dir/failed.txt" ||
		fail "the text report does not say that rank 1 recorded nothing, and why"
	# Every row is rank 0's alone (and rank 2's, ... with more ranks).
	python3 "$here/report_check.py" "$dir/failed.txt.json" "$dir/failed.expect" \
		"$((np - 1))" on 1 || exit 1
	"$piano_report" "$dir/failed.txt.json" >"$dir/again.txt" || fail "piano-report failed"
	diff -u "$dir/failed.txt" "$dir/again.txt" ||
		fail "piano-report's text differs from the report's (above: - piano's, + piano-report's)"
	exit 0 ;;
*) fail "unknown mode '$mode' (on, off, tool, png or failed)" ;;
esac

run on on option "$@"
run off off env "$@"

# The text report again from the JSON (the python3 of PATH, through the
# script's #!), the same as piano wrote it.
"$piano_report" "$dir/on.txt.json" >"$dir/again.txt" || fail "piano-report failed"
diff -u "$dir/on.txt" "$dir/again.txt" ||
	fail "piano-report's text differs from the report's (above: - piano's, + piano-report's)"
echo "report: piano-report prints the text report again: ok"

# The comparison (the system's python3): every row of the second report,
# (kind, protocol, call site), is a row of both runs, and none is of one
# run only (the same program made both). A file transfer made by the MPI
# in the first run and by piano in the second is one row, "mpi>piano".
/usr/bin/python3 "$piano_report" "$dir/off.txt.json" "$dir/on.txt.json" >"$dir/cmp.txt" ||
	fail "piano-report's comparison failed"
cat "$dir/cmp.txt"
# "ID kind proto": the first table of the text report; "ID name": its
# call sites (the name, before the module+offset column).
sed -n '/^## Operations by call site/,/^ *all /{/^ *[0-9]/p}' "$dir/on.txt" |
	awk '{ print $1, $2, $3 }' >"$dir/rows"
sed -n '/^## Call sites$/,/^$/{/^ *[0-9]/p}' "$dir/on.txt" |
	sed 's/^ *\([0-9]*\)  \(.*[^ ]\)  *[^ ]*+0x[0-9a-f]*$/\1 \2/' >"$dir/names"
nrows=$(wc -l <"$dir/rows")
if [ "$nrows" -eq 0 ] || [ "$nrows" != "$(wc -l <"$dir/names")" ]; then
	fail "cannot read the rows of the text report"
fi
sed -n '/^## Call sites of both/,/^all /p' "$dir/cmp.txt" >"$dir/both"
while read -r id kind proto; do
	name=$(sed -n "s/^$id //p" "$dir/names")
	awk -v k="$kind" -v p="$proto" -v n="  $name" '
		($2 == p || substr($2, length($2) - length(p)) == ">" p) &&
		$1 == k && substr($0, length($0) - length(n) + 1) == n { found = 1 }
		END { exit !found }' "$dir/both" ||
		fail "call site $id ($kind $proto, $name) is not a row of both in the comparison"
done <"$dir/rows"
for which in A B; do
	sed -n "/^## Call sites only in $which\$/{n;p}" "$dir/cmp.txt" | grep -qx '(none)' ||
		fail "the comparison has call sites only in $which"
done
echo "report: piano-report compares the two runs, every call site in both: ok"

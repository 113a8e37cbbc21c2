#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/apps/lammps.sh: a real MPI application, natively and under piano.
#
#   bench/apps/lammps.sh [--build DIR] [--pairs N] [--np N] [--out DIR]
#                        [--cases peptide,melt,melt-opt,peptide-load,melt-shared]
#                        [--steps CASE=N,...] [--control]
#
# Runs Debian's LAMMPS (package lammps, examples from lammps-examples; both
# installed with apt-get when missing and running as root) on its shipped
# examples, N pairs of runs alternated native / piano (piano-run of --build),
# Open MPI (Debian's LAMMPS links it), one rank per core by default; the
# order within a pair alternates (native first in odd pairs, piano first in
# even ones), so neither variant always runs second. For each
# case it reports LAMMPS's own "Loop time" and its timing breakdown (Pair,
# Kspace, Comm: average over ranks), median, min and max per variant, the
# ratio of the medians, and whether every run's thermodynamic output is
# identical to the first native run's (it must be: same inputs, same ranks).
#
# --control adds a third variant to every pair, "preload": the application
# run natively with a library that does nothing preloaded the way piano-run
# preloads piano (bench/apps/preload_control.c, built with the benchmarks).
# Its ratio to native is what being loaded at all costs the application; the
# piano/preload ratio is what piano's work costs beyond that.
#
# Cases (steps sized to 10-30 s on 2 ranks of the 2-core VM, when quiet):
#   peptide   examples/peptide (CHARMM, PPPM, SHAKE), 2000 steps
#   melt      examples/melt (Lennard-Jones), 20000 steps
#   melt-opt  the same with -sf opt (LAMMPS's OPT package styles)
#   peptide-load  peptide, 500 steps, beside outside load: one busy process
#             (`yes >/dev/null`) per CPU, started before each run and killed
#             after it, the same for both variants (cores shared with other
#             jobs)
#   melt-shared  melt, 5000 steps, with the last CPU shared: a process bound
#             to it computes 3 ms of every 10 (piano-bench-duty, built with
#             the benchmarks), so that the rank there runs slower and the
#             others wait for it (a core shared with the system's work)
#
# Output in --out DIR (default results/apps-DATE): lammps.csv (one row per
# run: case, variant, pair, loop, pair, kspace, comm seconds, thermo match)
# and lammps.txt (the summary table, also printed). Exit status 1 if a run
# failed or a thermodynamic output differs.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
build=$root/build
pairs=5
np=""
out=""
cases="peptide,melt,melt-opt,peptide-load,melt-shared"
steps_arg=""
control=0

usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; }
die() { echo "lammps.sh: $*" >&2; exit 2; }

while (($#)); do
	case $1 in
	--build) build=$(cd "$2" && pwd); shift 2 ;;
	--pairs) pairs=$2; shift 2 ;;
	--np) np=$2; shift 2 ;;
	--out) out=$2; shift 2 ;;
	--cases) cases=$2; shift 2 ;;
	--steps) steps_arg=$2; shift 2 ;;
	--control) control=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) die "unknown option '$1' (see --help)" ;;
	esac
done
# shellcheck source=bench/apps/common.sh
. "$root/bench/apps/common.sh"
apps_check

if ! command -v lmp >/dev/null || [[ ! -d /usr/share/lammps/examples/peptide ]]; then
	if ((EUID == 0)); then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q lammps lammps-examples >&2 ||
			die "apt-get install lammps lammps-examples failed"
	else
		die "LAMMPS missing: apt-get install lammps lammps-examples (as root)"
	fi
fi
examples=/usr/share/lammps/examples

declare -A steps=([peptide]=2000 [melt]=20000 [melt-opt]=20000 [peptide-load]=500
	[melt-shared]=5000)
IFS=, read -r -a kv <<<"$steps_arg"
for p in "${kv[@]}"; do
	[[ $p =~ ^([a-z-]+)=([1-9][0-9]*)$ ]] || die "bad --steps entry '$p'"
	steps[${BASH_REMATCH[1]}]=${BASH_REMATCH[2]}
done

[[ -n $out ]] || out=$root/results/apps-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
csv=$out/lammps.csv
txt=$out/lammps.txt
echo "case,variant,pair,loop_s,pair_s,kspace_s,comm_s,thermo" >"$csv"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
load_pids=()
# The outside load of the -load cases: one busy process per CPU.
load_start() {
	local i
	for ((i = 0; i < $(nproc); i++)); do
		yes >/dev/null &
		load_pids+=($!)
	done
}
# The outside work of the -shared cases: computing 3 ms of every 10 on the
# last CPU.
duty_start() {
	[[ -x $build/bench/piano-bench-duty ]] ||
		die "no $build/bench/piano-bench-duty (build piano's benchmarks first)"
	taskset -c "$(($(nproc) - 1))" "$build/bench/piano-bench-duty" 3 7 &
	load_pids+=($!)
}
load_stop() {
	((${#load_pids[@]})) || return 0
	kill "${load_pids[@]}" 2>/dev/null || true # one may have gone already
	wait "${load_pids[@]}" 2>/dev/null || true # killed: their status is the signal
	load_pids=()
}
trap 'load_stop; rm -rf "$work"' EXIT

# prepare CASE: a private copy of the example, its run length set.
prepare() {
	local c=$1 dir=$work/$1 src input
	case $c in
	peptide | peptide-load) src=$examples/peptide input=in.peptide ;;
	melt | melt-opt | melt-shared) src=$examples/melt input=in.melt ;;
	*) die "unknown case '$c'" ;;
	esac
	mkdir -p "$dir"
	cp "$src"/* "$dir"/
	sed -i -E "s/^run([[:space:]]+)[0-9]+/run\\1${steps[$c]}/" "$dir/$input"
	grep -qE "^run[[:space:]]+${steps[$c]}\$" "$dir/$input" || die "$c: cannot set the run length"
	echo "$input"
}

# The thermodynamic output: what the run computed, without its timings, nor
# the lines piano or the MPI print on standard error (merged into the log),
# which may come in the middle of it.
thermo() {
	sed -n '/^Step\|^-* Step/,/^Loop time/p' "$1" | grep -v 'CPU =\|^Loop time\|^piano'
}

# breakdown FILE NAME: the average column of LAMMPS's MPI task timing row.
breakdown() {
	awk -v n="$2" '$1 == n && $2 == "|" { print $5; exit }' "$1"
}

failed=0
IFS=, read -r -a case_list <<<"$cases"
for c in "${case_list[@]}"; do
	input=$(prepare "$c")
	extra=()
	[[ $c == melt-opt ]] && extra=(-sf opt)
	ref=""
	for ((i = 1; i <= pairs; i++)); do
		apps_order "$i"
		for v in "${order[@]}"; do
			log=$work/$c-$v-$i.out
			apps_launcher "$v"
			cmd+=(lmp -in "$input" -log none "${extra[@]}")
			[[ $c == *-load ]] && load_start
			[[ $c == *-shared ]] && duty_start
			status=0
			(cd "$work/$c" && "${cmd[@]}") >"$log" 2>&1 || status=$?
			load_stop
			if ((status)); then
				echo "lammps.sh: $c $v run $i failed (output: $out/$c-$v-$i.out)" >&2
				cp "$log" "$out/"
				failed=1
				continue
			fi
			loop=$(awk '/^Loop time of/ { print $4; exit }' "$log")
			thermo "$log" >"$log.thermo"
			[[ -n $ref ]] || ref=$log.thermo
			match=yes
			if ! cmp -s "$ref" "$log.thermo"; then
				match=no
				failed=1
				cp "$log" "$out/"
				echo "lammps.sh: $c $v run $i: thermodynamic output differs from" \
					"the first native run" >&2
			fi
			echo "$c,$v,$i,$loop,$(breakdown "$log" Pair),$(breakdown "$log" Kspace)," \
				"$(breakdown "$log" Comm),$match" | tr -d ' ' >>"$csv"
			printf '%-12s %-6s run %d: loop %s s\n' "$c" "$v" "$i" "$loop" >&2
		done
	done
done

# Summary: per case and variant, median/min/max of each time; the ratio of
# the loop-time medians and of each pair's loop times: piano/native, and with
# --control preload/native and piano/preload.
awk -F, -v np="$np" '
function median(a, n,   i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
# ratio(CASE, A, B, TAIL): the line of A/B loop times: the ratio of the medians
# and that of every pair, when both variants ran.
function ratio(cs, x, y, tail,   r, i, t) {
	if (!(med[cs, x, 4] > 0 && med[cs, y, 4] > 0)) return
	r = ""
	for (i = 1; (cs, x, i) in loop || (cs, y, i) in loop; i++)
		if ((cs, x, i) in loop && (cs, y, i) in loop)
			r = r sprintf(" %.3f", loop[cs, x, i] / loop[cs, y, i])
	t = sprintf("%s/%s loop time: median ratio %.3f; per pair:%s", x, y, med[cs, x, 4] / med[cs, y, 4], r)
	printf "%-12s %s%s\n", cs, t, tail == "" ? "" : "; " tail
}
NR > 1 && $4 != "" {
	k = $1 SUBSEP $2
	n[k]++
	for (f = 4; f <= 7; f++) v[k, f, n[k]] = $f
	if (!($1 in seen)) { seen[$1] = 1; order[++nc] = $1 }
	if ($8 != "yes") bad[$1] = 1
	loop[$1, $2, $3] = $4
}
END {
	printf "LAMMPS, Open MPI, %d ranks: seconds, median [min-max] over the runs\n", np
	printf "%-12s %-7s %3s  %-24s %-24s %-24s %-24s\n", "case", "variant", "n", "loop", "pair", "kspace", "comm"
	for (c = 1; c <= nc; c++) {
		cs = order[c]
		for (w = 1; w <= 3; w++) {
			var = w == 1 ? "native" : w == 2 ? "preload" : "piano"
			k = cs SUBSEP var
			if (!n[k]) continue
			line = sprintf("%-12s %-7s %3d ", cs, var, n[k])
			for (f = 4; f <= 7; f++) {
				m = 0; lo = ""; hi = ""
				for (i = 1; i <= n[k]; i++) {
					x = v[k, f, i]; a[i] = x + 0
					if (lo == "" || x + 0 < lo) lo = x + 0
					if (hi == "" || x + 0 > hi) hi = x + 0
				}
				med[cs, var, f] = median(a, n[k])
				line = line sprintf(" %-24s", sprintf("%.3f [%.3f-%.3f]", med[cs, var, f], lo, hi))
			}
			print line
		}
		ratio(cs, "piano", "native", "thermo " ((cs in bad) ? "DIFFERS" : "identical"))
		ratio(cs, "preload", "native", "")
		ratio(cs, "piano", "preload", "")
	}
}' "$csv" | tee "$txt"
echo "lammps.sh: results in $out" >&2
exit "$failed"

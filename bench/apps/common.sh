# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# bench/apps/common.sh: what the application scripts (lammps.sh, qe.sh,
# cp2k.sh) share, sourced by each once it has set root and defined usage()
# and die(): the options of qe.sh and cp2k.sh (lammps.sh parses its own,
# which set the same variables), the checks of those options, the variants
# and their order, the launcher of a variant, the run loop and the summary
# of qe.sh and cp2k.sh.

# apps_options ARGS...: the options of qe.sh and cp2k.sh (--build, --pairs,
# --np, --out, --control, --help; see their --help) into build, pairs, np,
# out and control, from their defaults. The script defines usage() and
# die() and sets root before.
apps_options() {
	build=$root/build
	pairs=5
	np=""
	out=""
	control=0
	while (($#)); do
		case $1 in
		--build) build=$(cd "$2" && pwd); shift 2 ;;
		--pairs) pairs=$2; shift 2 ;;
		--np) np=$2; shift 2 ;;
		--out) out=$2; shift 2 ;;
		--control) control=1; shift ;;
		-h | --help) usage; exit 0 ;;
		*) die "unknown option '$1' (see --help)" ;;
		esac
	done
}

# Checks the common options; sets np (default: one rank per CPU),
# preload_lib and variants (native piano, or native preload piano with
# --control).
apps_check() {
	[[ $pairs =~ ^[1-9][0-9]*$ ]] || die "bad --pairs '$pairs'"
	[[ -z $np ]] && np=$(nproc)
	[[ $np =~ ^[1-9][0-9]*$ ]] || die "bad --np '$np'"
	[[ -x $build/piano-run ]] || die "no piano-run in $build (build piano first)"
	preload_lib=$build/bench/libpiano-bench-preload.so
	((!control)) || [[ -f $preload_lib ]] || die "no $preload_lib (build piano's benchmarks first)"
	variants=(native piano)
	((!control)) || variants=(native preload piano)
}

# apps_order PAIR: sets order to the variants in the pair's order (native
# first in odd pairs, piano first in even ones: neither always runs second).
apps_order() {
	order=("${variants[@]}")
	if (($1 % 2 == 0)); then
		order=()
		local k
		for ((k = ${#variants[@]} - 1; k >= 0; k--)); do order+=("${variants[k]}"); done
	fi
}

# apps_launcher VARIANT: sets cmd to the launcher of that variant (Open MPI,
# np ranks; piano-run for piano; the do-nothing library preloaded the way
# piano-run preloads piano for preload).
apps_launcher() {
	cmd=(mpirun.openmpi -np "$np")
	[[ $1 == piano ]] && cmd+=("$build/piano-run")
	[[ $1 == preload ]] && cmd+=(env "LD_PRELOAD=$preload_lib${LD_PRELOAD:+:$LD_PRELOAD}")
	return 0
}

# apps_run_pairs NAME DONE PROGRAM ARGS...: the run loop of qe.sh and
# cp2k.sh. For each pair, each variant in the pair's order runs PROGRAM
# ARGS in $work under apps_launcher, its output in $work/NAME-VARIANT-PAIR.out;
# a run counts when it exits 0 and its output holds the line DONE (a grep
# pattern). The script defines results FILE (the lines every run must
# share with the first one, the first native run), row FILE (the CSV's
# three times, comma-separated) and total FILE (the time shown per run),
# and may define before_run (called before each run). Appends
# "variant,pair,row,match" to $csv; a failed run or one whose results
# differ sets failed=1 and leaves its output in $out.
# shellcheck disable=SC2154,SC2034 # work, out and csv are the script's; failed is read by it
apps_run_pairs() {
	local name=$1 done=$2
	shift 2
	local ref="" i v log status match
	for ((i = 1; i <= pairs; i++)); do
		apps_order "$i"
		for v in "${order[@]}"; do
			log=$work/$name-$v-$i.out
			apps_launcher "$v"
			cmd+=("$@")
			if declare -F before_run >/dev/null; then before_run; fi
			status=0
			(cd "$work" && "${cmd[@]}" </dev/null) >"$log" 2>&1 || status=$?
			if ((status)) || ! grep -q "$done" "$log"; then
				echo "$name.sh: $v run $i failed (output: $out/$name-$v-$i.out)" >&2
				cp "$log" "$out/"
				failed=1
				continue
			fi
			results "$log" >"$log.results"
			[[ -n $ref ]] || ref=$log.results
			match=yes
			if [[ ! -s $log.results ]] || ! cmp -s "$ref" "$log.results"; then
				match=no
				failed=1
				cp "$log" "$out/"
				echo "$name.sh: $v run $i: results differ from the first native run" >&2
			fi
			echo "$v,$i,$(row "$log"),$match" >>"$csv"
			printf '%s %-7s run %d: %s s\n' "$name" "$v" "$i" "$(total "$log")" >&2
		done
	done
}

# apps_summary CSV NP TITLE LABEL1 LABEL2 LABEL3 WHAT RESULTS: the summary
# of qe.sh and cp2k.sh from their CSV (variant, pair, three times in
# seconds, results match): per variant, median [min-max] of each time under
# LABEL1-3; per pair the ratio of WHAT (the first time) to native's; and
# whether RESULTS were identical in every run.
apps_summary() {
	awk -F, -v np="$2" -v title="$3" -v l1="$4" -v l2="$5" -v l3="$6" -v what="$7" -v res="$8" '
function median(a, n,   i, j, t) {
	for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
	return n % 2 ? a[(n+1)/2] : (a[n/2] + a[n/2+1]) / 2
}
NR > 1 && $3 != "" {
	n[$1]++
	for (f = 3; f <= 5; f++) v[$1, f, n[$1]] = $f
	if ($6 != "yes") bad = 1
	first[$1, $2] = $3
	if ($2 > maxp) maxp = $2
}
END {
	printf "%s, Open MPI, %d ranks: seconds, median [min-max] over the runs\n", title, np
	printf "%-8s %3s  %-24s %-24s %-24s\n", "variant", "n", l1, l2, l3
	for (w = 1; w <= 3; w++) {
		var = w == 1 ? "native" : w == 2 ? "preload" : "piano"
		if (!n[var]) continue
		line = sprintf("%-8s %3d ", var, n[var])
		for (f = 3; f <= 5; f++) {
			lo = ""; hi = ""
			for (i = 1; i <= n[var]; i++) {
				x = v[var, f, i] + 0; a[i] = x
				if (lo == "" || x < lo) lo = x
				if (hi == "" || x > hi) hi = x
			}
			line = line sprintf(" %-24s", sprintf("%.2f [%.2f-%.2f]", median(a, n[var]), lo, hi))
		}
		print line
	}
	for (w = 2; w <= 3; w++) {
		var = w == 2 ? "preload" : "piano"
		if (!n[var] || !n["native"]) continue
		r = ""; k = 0
		for (i = 1; i <= maxp; i++)
			if ((var, i) in first && ("native", i) in first) { q[++k] = first[var, i] / first["native", i]; r = r sprintf(" %.3f", q[k]) }
		printf "%s/native %s per pair:%s; median %.3f\n", var, what, r, median(q, k)
	}
	printf "results (%s) %s\n", res, bad ? "DIFFER" : "identical"
}' "$1"
}

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run-overlap.sh: the overlap benchmark (bench_overlap_<mpi>) for every MPI
# and every progress variant, in one go, then a summary.
#
#   bench/mpi/run-overlap.sh [options] [BENCH-ARGS...]
#
# Variants, per MPI (defined in bench/mpi/variants.sh, shared with
# tools/piano-bench):
#   native           the MPI alone
#   piano            through piano-run (background progress threads)
#   piano-nothread   through piano-run with PIANO_PROGRESSION=0 (explicit
#                    polling only: should behave like native)
#   mpich-async      MPICH only: its own progress thread
#                    (MPIR_CVAR_ASYNC_PROGRESS=1; the benchmark asks for
#                    MPI_THREAD_MULTIPLE, which it needs)
#   ompi-tcp-thread  Open MPI only, with --netns only: the TCP BTL's own
#                    progress thread (btl_tcp_progress_thread=1; it does
#                    nothing on shared memory)
#
# Options:
#   --build DIR        build directory (default ./build): DIR/piano-run and
#                      DIR/bench/mpi/bench_overlap_<mpi>
#   --mpi M[,M]        openmpi and/or mpich (default: every one built)
#   --side S[,S]       sender, receiver and/or both (default both)
#   --variants V[,V]   subset of the variants above (default all that apply)
#   --quick            the benchmark's --quick set
#   --csv-out FILE     append every CSV row (label,mpi,side,size,t_w_ms,
#                      t_t_ms,t_c_ms,ratio) to FILE
#   --netns            run across the namespaces of tools/netns (root; run
#                      tools/netns/up.sh first); labels get "@netns"
#   --no-bind          keep the launchers' placement (Open MPI binds each rank
#                      to a core on one host, hydra does not bind) instead of
#                      the default: no launcher binding, and the benchmark's
#                      --bind (main thread of rank r on CPU r; the MPI's and
#                      piano's threads free), the same for every MPI. Unbound,
#                      two ranks that sleep between iterations may land on one
#                      core, where a rank spinning in MPI_Wait then delays its
#                      peer by whole time slices.
#   --timeout SEC      limit per run (default 300)
#   -h, --help
# Anything else (e.g. --sizes 1M,16M --compute 0,5,20 --reps 7) is passed to
# the benchmark; "--" ends the options of this script.
#
# The summary gives, for each MPI x variant x side, the row of the largest
# size and largest t_w: ratio 1.00 = full overlap.
#
# Exit status: 0 when every run succeeded, 1 when one failed (the others
# still run), 2 on a usage error, 77 when nothing could run (no MPI built,
# or --netns without root or without the namespaces).
set -u

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
netns_run=$here/../../tools/netns/run.sh
# shellcheck source=bench/mpi/variants.sh
. "$here/variants.sh"

usage() { sed -n '2,/^set -u/p' "${BASH_SOURCE[0]}" | sed -e '/^set -u/d' -e 's/^# \{0,1\}//'; }

build=./build
mpis=""
sides=both
variants=""
quick=0
csv_out=""
netns=0
timeout_s=300
bind=1
pass=()

need_arg() {
	if [ "$2" -lt 2 ]; then
		echo "run-overlap.sh: $1 needs a value" >&2
		exit 2
	fi
}

while [ $# -gt 0 ]; do
	case "$1" in
	--build) need_arg "$1" $#; build=$2; shift 2 ;;
	--mpi) need_arg "$1" $#; mpis=${2//,/ }; shift 2 ;;
	--side) need_arg "$1" $#; sides=${2//,/ }; shift 2 ;;
	--variants) need_arg "$1" $#; variants=${2//,/ }; shift 2 ;;
	--quick) quick=1; shift ;;
	--csv-out) need_arg "$1" $#; csv_out=$2; shift 2 ;;
	--netns) netns=1; shift ;;
	--timeout) need_arg "$1" $#; timeout_s=$2; shift 2 ;;
	--no-bind) bind=0; shift ;;
	-h|--help) usage; exit 0 ;;
	--) shift; pass+=("$@"); break ;;
	*) pass+=("$1"); shift ;;
	esac
done

for s in $sides; do
	case "$s" in sender|receiver|both) ;; *)
		echo "run-overlap.sh: bad side '$s' (sender, receiver, both)" >&2; exit 2 ;;
	esac
done
for m in $mpis; do
	case "$m" in openmpi|mpich) ;; *)
		echo "run-overlap.sh: bad MPI '$m' (openmpi, mpich)" >&2; exit 2 ;;
	esac
done
for v in $variants; do
	if ! piano_variant_known "$v"; then
		echo "run-overlap.sh: bad variant '$v'" >&2; exit 2
	fi
done
case "$timeout_s" in ''|*[!0-9]*)
	echo "run-overlap.sh: bad --timeout '$timeout_s'" >&2; exit 2 ;;
esac
if [ ! -d "$build" ]; then
	echo "run-overlap.sh: build directory '$build' not found (--build DIR)" >&2
	exit 2
fi
build=$(cd "$build" && pwd)
piano_run=$build/piano-run

if [ $netns -eq 1 ]; then
	if [ "$(id -u)" -ne 0 ]; then
		echo "run-overlap.sh: --netns needs root; skipped" >&2
		exit 77
	fi
	if ! ip netns list 2>/dev/null | grep -q '^piano-h1\b'; then
		echo "run-overlap.sh: --netns: namespaces missing, run tools/netns/up.sh first" >&2
		exit 77
	fi
fi

launcher_of() { # MPI -> command words on stdout, empty if unavailable
	if [ $netns -eq 1 ]; then
		echo "$netns_run --mpi $1 --np 2 --"
	elif [ "$1" = openmpi ]; then
		local b=""
		[ $bind -eq 1 ] && b=" --bind-to none"
		command -v mpirun.openmpi >/dev/null && echo "mpirun.openmpi --oversubscribe$b -np 2"
	else
		command -v mpiexec.mpich >/dev/null && echo "mpiexec.mpich -n 2"
	fi
}

# MPIs to run: the requested ones must be usable, by default the built ones.
explicit_mpi=1
if [ -z "$mpis" ]; then
	mpis="openmpi mpich"
	explicit_mpi=0
fi
run_mpis=""
for m in $mpis; do
	why=""
	[ -x "$build/bench/mpi/bench_overlap_$m" ] || why="$build/bench/mpi/bench_overlap_$m not built"
	[ -n "$why" ] || [ -n "$(launcher_of "$m")" ] || why="no launcher for $m"
	if [ -n "$why" ]; then
		if [ $explicit_mpi -eq 1 ]; then
			echo "run-overlap.sh: $why" >&2
			exit 77
		fi
		echo "# run-overlap.sh: skipping $m: $why" >&2
		continue
	fi
	run_mpis="$run_mpis $m"
done
if [ -z "$run_mpis" ]; then
	echo "run-overlap.sh: no MPI to run (build with mpicc.openmpi / mpicc.mpich present)" >&2
	exit 77
fi

csv_tmp=$(mktemp /tmp/piano-overlap.XXXXXX.csv)
trap 'rm -f "$csv_tmp"' EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
# The benchmark's rank 0 appends to it, possibly inside a namespace.
chmod 666 "$csv_tmp"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
quick_arg=()
[ $quick -eq 1 ] && quick_arg=(--quick)
[ $bind -eq 1 ] && quick_arg+=(--bind)
suffix=""
[ $netns -eq 1 ] && suffix="@netns"

failed=()
runs=0
for m in $run_mpis; do
	read -r -a launch <<<"$(launcher_of "$m")"
	bench=$build/bench/mpi/bench_overlap_$m
	for v in $(piano_variants_of "$m" "$netns" "$variants"); do
		piano_variant_setup "$v" "$piano_run"
		envs=("${variant_env[@]}")
		pre=("${variant_pre[@]}")
		if [ ${#pre[@]} -gt 0 ] && [ ! -x "$piano_run" ]; then
			echo "run-overlap.sh: $piano_run missing: $m/$v not run" >&2
			failed+=("$m/$v (no piano-run)")
			continue
		fi
		for s in $sides; do
			label=$v$suffix
			cmd=(env "${envs[@]}" timeout "$timeout_s" "${launch[@]}" "${pre[@]}" "$bench"
			     "${quick_arg[@]}" --side "$s" --label "$label" --csv-append "$csv_tmp"
			     "${pass[@]}")
			echo
			echo "### $m / $label / side $s"
			echo "### ${cmd[*]}"
			before=$(wc -l <"$csv_tmp")
			t0=$EPOCHREALTIME
			"${cmd[@]}"
			rc=$?
			runs=$((runs + 1))
			after=$(wc -l <"$csv_tmp")
			# Wall time of each run: what the run time of a set is made of.
			awk -v t0="$t0" -v t1="$EPOCHREALTIME" -v what="$m / $label / side $s" \
				'BEGIN { printf "### %s: %.1f s\n", what, t1 - t0 }'
			if [ $rc -ne 0 ]; then
				[ $rc -eq 124 ] && echo "### timed out after ${timeout_s}s" >&2
				echo "### FAILED: $m / $label / side $s (exit $rc)" >&2
				failed+=("$m/$label/$s (exit $rc)")
			elif [ "$after" -le "$before" ]; then
				echo "### FAILED: $m / $label / side $s (no result rows)" >&2
				failed+=("$m/$label/$s (no rows)")
			fi
		done
	done
done

if [ -n "$csv_out" ]; then
	# Header only when the file is new or empty.
	if [ -s "$csv_out" ]; then
		grep -v '^label,' "$csv_tmp" >>"$csv_out"
	else
		awk 'NR == 1 || !/^label,/' "$csv_tmp" >>"$csv_out"
	fi || { echo "run-overlap.sh: cannot write $csv_out" >&2; failed+=("csv-out"); }
fi

echo
echo "# summary: ratio = t_t / max(t_c, t_w) at the largest size and largest t_w"
echo "# (1.00 = full overlap; no-ovl = (t_c + t_w) / max(t_c, t_w) = none)"
awk -F, '
	$1 == "label" { next }
	{
		k = $2 SUBSEP $1 SUBSEP $3
		if (!(k in seen)) { seen[k] = 1; order[++n] = k }
		if (!(k in size) || $4 + 0 > size[k] + 0 ||
		    ($4 + 0 == size[k] + 0 && $5 + 0 >= tw[k] + 0)) {
			size[k] = $4; tw[k] = $5; tt[k] = $6; tc[k] = $7; ratio[k] = $8
		}
	}
	END {
		printf "# %-14s %-22s %-9s %9s %8s %9s %9s %7s %7s\n", "mpi", "variant", "side",
		       "size", "t_w(ms)", "t_t(ms)", "t_c(ms)", "ratio", "no-ovl"
		for (i = 1; i <= n; i++) {
			split(order[i], f, SUBSEP)
			k = order[i]; s = size[k] + 0
			if (s >= 1048576 && s % 1048576 == 0) sz = s / 1048576 "MiB"
			else if (s >= 1024 && s % 1024 == 0) sz = s / 1024 "KiB"
			else sz = s "B"
			best = tc[k] + 0 > tw[k] + 0 ? tc[k] + 0 : tw[k] + 0
			noovl = best > 0 ? (tc[k] + tw[k]) / best : 0
			printf "  %-14s %-22s %-9s %9s %8.2f %9.2f %9.2f %7.2f %7.2f\n", f[1], f[2],
			       f[3], sz, tw[k], tt[k], tc[k], ratio[k], noovl
		}
	}' "$csv_tmp"

if [ ${#failed[@]} -gt 0 ]; then
	echo "# FAILED runs (${#failed[@]} of $runs): ${failed[*]}" >&2
	exit 1
fi
exit 0

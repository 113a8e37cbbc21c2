# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# variants.sh: the progress variants of piano's MPI benchmarks, sourced by
# bench/mpi/run-overlap.sh and tools/piano-bench so that both run a variant
# the same way (bash; defines functions and variables only).
#
#   native           the MPI alone
#   piano            through piano-run (background progress threads)
#   piano-nothread   through piano-run with PIANO_PROGRESSION=0 (explicit
#                    polling only: should behave like native)
#   piano-graph      through piano-run with PIANO_COLL=graph (the MPI_I*
#                    collectives as piano's graphs; run by default only for
#                    the collective benchmark, elsewhere it is 'piano')
#   piano-offload    through piano-run with PIANO_OFFLOAD=1 (small
#                    MPI_Isend calls posted by an idle core; run by default
#                    only for the offload benchmark)
#   piano-noshare    through piano-run with PIANO_COLL_SHARE=0 (a graph's
#                    reductions on the stepping thread only; run only for
#                    the share benchmark)
#   mpich-async      MPICH only: its own progress thread
#                    (MPIR_CVAR_ASYNC_PROGRESS=1; the benchmarks ask for
#                    MPI_THREAD_MULTIPLE, which it needs)
#   ompi-tcp-thread  Open MPI only, across hosts only: the TCP BTL's own
#                    progress thread (btl_tcp_progress_thread=1; it does
#                    nothing on shared memory)

piano_all_variants="native piano piano-nothread piano-graph piano-offload piano-noshare mpich-async ompi-tcp-thread"

# piano_variant_known V: true if V is one of the variants above.
piano_variant_known() {
	case " $piano_all_variants " in *" $1 "*) return 0 ;; esac
	return 1
}

# piano_variants_of MPI NETNS [REQUESTED [COLL]]: the variants that apply to
# MPI (openmpi or mpich), in run order; NETNS 1 when the ranks are on
# different hosts; REQUESTED (space-separated) restricts them, empty = all;
# COLL 1 for a benchmark of non-blocking collectives (adds piano-graph).
piano_variants_of() {
	local mpi=$1 netns=$2 requested=${3:-} coll=${4:-0} v out=""
	local all="native piano piano-nothread"
	[ "$coll" -eq 1 ] && all="$all piano-graph"
	[ "$mpi" = mpich ] && all="$all mpich-async"
	[ "$mpi" = openmpi ] && [ "$netns" -eq 1 ] && all="$all ompi-tcp-thread"
	for v in $all; do
		if [ -z "$requested" ] || case " $requested " in *" $v "*) true ;; *) false ;; esac; then
			out="$out $v"
		fi
	done
	echo "$out"
}

# piano_variant_setup VARIANT PIANO_RUN: sets the arrays variant_env
# (NAME=value words for env(1)) and variant_pre (words before the program,
# after the launcher) that run a benchmark as VARIANT.
# shellcheck disable=SC2034 # the arrays are for the caller
piano_variant_setup() {
	variant_env=()
	variant_pre=()
	case "$1" in
	piano) variant_pre=("$2") ;;
	piano-nothread) variant_pre=("$2"); variant_env=(PIANO_PROGRESSION=0) ;;
	piano-graph) variant_pre=("$2"); variant_env=(PIANO_COLL=graph) ;;
	piano-offload) variant_pre=("$2"); variant_env=(PIANO_OFFLOAD=1) ;;
	piano-noshare) variant_pre=("$2"); variant_env=(PIANO_COLL_SHARE=0) ;;
	mpich-async) variant_env=(MPIR_CVAR_ASYNC_PROGRESS=1) ;;
	ompi-tcp-thread) variant_env=(OMPI_MCA_btl_tcp_progress_thread=1) ;;
	esac
}

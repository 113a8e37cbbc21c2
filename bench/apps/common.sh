# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# bench/apps/common.sh: what the application scripts (lammps.sh, qe.sh)
# share, sourced after their option parsing has set build, pairs, np and
# control: the checks of those options, the variants and their order, and
# the launcher of a variant. Each script defines die().

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

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/apps/cp2k.sh: CP2K, a Fortran MPI application with non-blocking
# point-to-point and collective calls, natively and under piano.
#
#   bench/apps/cp2k.sh [--build DIR] [--pairs N] [--np N] [--out DIR] [--control]
#
# Runs Debian's CP2K (cp2k.psmp, package cp2k, installed with apt-get when
# missing and running as root; OMP_NUM_THREADS=1) on the energy and forces
# of 32 water molecules with Quickstep (DZVP-GTH-PADE, 200 Ry, OT; the
# coordinates of Debian's example H2O-32_ewald.inp: 35-45 s on 2 ranks of
# the 2-core VM), N pairs of runs alternated native / piano (piano-run of
# --build), Open MPI (Debian's cp2k.psmp links it, through its mpif.h
# Fortran binding), one rank per core by default; the order within a pair
# alternates. CP2K's sparse matrix library (DBCSR) multiplies with
# MPI_Isend/MPI_Irecv of 100 KiB-4 MiB blocks overlapped with local
# products, ScaLAPACK's BLACS and ELPA send with MPI_Isend, and CP2K
# broadcasts with MPI_Ibcast: piano tracks them.
#
# For each run: CP2K's total time, the self time of grid_integrate_task_list
# (computation only: a control for the machine's speed) and the total time
# of dbcsr_multiply_generic (DBCSR's products, with their transfers), from
# CP2K's timing report, and
# whether the total energy and the forces on every atom are identical to the
# first native run's (they must be: same inputs, same ranks). --control adds
# the "preload" variant of bench/apps/lammps.sh (a library that does nothing,
# preloaded the way piano-run preloads piano).
#
# Output in --out DIR (default results/apps-DATE): cp2k.csv (one row per
# run: variant, pair, total, grid_integrate, dbcsr_multiply seconds, results
# match) and cp2k.txt (the summary, also printed). Exit status 1 if a run
# failed or its results differ.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; }
die() { echo "cp2k.sh: $*" >&2; exit 2; }
# shellcheck source=bench/apps/common.sh
. "$root/bench/apps/common.sh"
apps_options "$@"
apps_check

coords=/usr/share/doc/cp2k/examples/H2O-32_ewald.inp.gz
if ! command -v cp2k.psmp >/dev/null || [[ ! -f $coords ]]; then
	if ((EUID == 0)); then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q cp2k >&2 ||
			die "apt-get install cp2k failed"
	else
		die "CP2K missing: apt-get install cp2k (as root)"
	fi
fi
[[ -f $coords ]] || die "no $coords (package cp2k)"

[[ -n $out ]] || out=$root/results/apps-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
csv=$out/cp2k.csv
txt=$out/cp2k.txt
echo "variant,pair,total_s,grid_integrate_s,dbcsr_multiply_s,results" >"$csv"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
{
	cat <<'EOF2'
&GLOBAL
  PRINT_LEVEL LOW
  PROJECT H2O-32
  RUN_TYPE ENERGY_FORCE
&END GLOBAL
&FORCE_EVAL
  METHOD QS
  &DFT
    BASIS_SET_FILE_NAME BASIS_SET
    POTENTIAL_FILE_NAME GTH_POTENTIALS
    &MGRID
      CUTOFF 200
      REL_CUTOFF 30
    &END MGRID
    &QS
      EPS_DEFAULT 1.0E-12
    &END QS
    &SCF
      SCF_GUESS ATOMIC
      &OT ON
        MINIMIZER DIIS
      &END OT
    &END SCF
    &XC
      &XC_FUNCTIONAL Pade
      &END XC_FUNCTIONAL
    &END XC
  &END DFT
  &PRINT
    &FORCES ON
    &END FORCES
  &END PRINT
  &SUBSYS
    &CELL
      ABC 9.865 9.865 9.865
    &END CELL
    &COORD
EOF2
	zcat "$coords" | sed -n '/&COORD/,/&END COORD/p' | awk '$1 == "O" || $1 == "H" { print "      " $1, $2, $3, $4 }'
	cat <<'EOF2'
    &END COORD
    &KIND H
      BASIS_SET DZVP-GTH-PADE
      POTENTIAL GTH-PADE-q1
    &END KIND
    &KIND O
      BASIS_SET DZVP-GTH-PADE
      POTENTIAL GTH-PADE-q6
    &END KIND
  &END SUBSYS
&END FORCE_EVAL
EOF2
} >"$work/h2o32.inp"
[[ $(grep -cE '^      [OH] ' "$work/h2o32.inp") == 96 ]] || die "no 96 atoms read from $coords"

# The results: total energy and forces (no timing, no piano line).
results() {
	grep -E 'ENERGY\| Total FORCE_EVAL|^ +[0-9]+ +[0-9]+ +[OH] +-?[0-9]+\.[0-9]+ +-?[0-9]+\.[0-9]+ +-?[0-9]+\.[0-9]+' "$1"
}

# timing FILE NAME FIELD: a column of CP2K's timing report row NAME
# (FIELD 5: self time, maximum over ranks; 7: total time, maximum).
timing() {
	awk -v n="$2" -v f="$3" '/T I M I N G/ { t = 1 } t && $1 == n && NF == 7 { print $f; exit }' "$1"
}

# For apps_run_pairs: the CSV's three times, the time shown per run.
row() { echo "$(timing "$1" CP2K 7),$(timing "$1" grid_integrate_task_list 5),$(timing "$1" dbcsr_multiply_generic 7)"; }
total() { echo "total $(timing "$1" CP2K 7)"; }

failed=0
apps_run_pairs cp2k 'PROGRAM ENDED' cp2k.psmp -i h2o32.inp

apps_summary "$csv" "$np" "CP2K (32 H2O, Quickstep energy and forces)" "total" "grid_integrate (self)" "dbcsr_multiply" "total time" "energy, forces" | tee "$txt"
echo "cp2k.sh: results in $out" >&2
exit "$failed"

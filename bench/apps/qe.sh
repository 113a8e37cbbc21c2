#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# bench/apps/qe.sh: a real Fortran MPI application, natively and under piano.
#
#   bench/apps/qe.sh [--build DIR] [--pairs N] [--np N] [--out DIR] [--control]
#
# Runs Debian's Quantum ESPRESSO (pw.x; packages quantum-espresso, and
# quantum-espresso-data for the pseudopotential, installed with apt-get when
# missing and running as root) on a self-consistent calculation of an
# 8-atom silicon cell (plane waves to 55 Ry, 6x6x6 shifted k-points, forces
# and stress: 8-12 s on 2 ranks of the 2-core VM), N pairs of runs alternated
# native / piano (piano-run of --build), Open MPI (Debian's pw.x links it,
# through its mpif.h Fortran binding), one rank per core by default; the
# order within a pair alternates. pw.x distributes the plane waves over the
# ranks: every FFT transposes its grid with MPI_Alltoall (fft_scatt_yz and
# fft_scatt_xy in its timing report), besides Allreduce and Bcast; piano
# tracks none of these, so what it can cost is its thread level and its
# wrappers (docs/mpi.md, "Serialized mode").
#
# For each run: PWSCF's own wall time, the two FFT transposes' wall time
# (the communication), and whether the total energy, forces and stress are
# identical to the first native run's (they must be: same inputs, same
# ranks). --control adds the "preload" variant of bench/apps/lammps.sh (a
# library that does nothing, preloaded the way piano-run preloads piano).
#
# Output in --out DIR (default results/apps-DATE): qe.csv (one row per run:
# variant, pair, wall, fft_scatt_yz, fft_scatt_xy seconds, results match)
# and qe.txt (the summary, also printed). Exit status 1 if a run failed or
# its results differ.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
usage() { sed -n '2,/^set -euo/p' "$0" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; }
die() { echo "qe.sh: $*" >&2; exit 2; }
# shellcheck source=bench/apps/common.sh
. "$root/bench/apps/common.sh"
apps_options "$@"
apps_check

pseudo=/usr/share/doc/quantum-espresso/examples/EPW/sic/pp/Si.pz-vbc.UPF.gz
if ! command -v pw.x >/dev/null || [[ ! -f $pseudo ]]; then
	if ((EUID == 0)); then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q quantum-espresso \
			quantum-espresso-data >&2 ||
			die "apt-get install quantum-espresso quantum-espresso-data failed"
	else
		die "Quantum ESPRESSO missing: apt-get install quantum-espresso quantum-espresso-data (as root)"
	fi
fi
[[ -f $pseudo ]] || die "no $pseudo (package quantum-espresso-data)"

[[ -n $out ]] || out=$root/results/apps-$(date +%Y%m%d-%H%M%S)
mkdir -p "$out"
csv=$out/qe.csv
txt=$out/qe.txt
echo "variant,pair,wall_s,scatt_yz_s,scatt_xy_s,results" >"$csv"

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
zcat "$pseudo" >"$work/Si.pz-vbc.UPF"
cat >"$work/si8.in" <<'EOF'
&control
  calculation = 'scf'
  prefix = 'si8'
  outdir = './tmp'
  pseudo_dir = './'
  tprnfor = .true.
  tstress = .true.
/
&system
  ibrav = 1, celldm(1) = 10.26, nat = 8, ntyp = 1,
  ecutwfc = 55.0
/
&electrons
  conv_thr = 1.0d-10
/
ATOMIC_SPECIES
 Si 28.086 Si.pz-vbc.UPF
ATOMIC_POSITIONS crystal
 Si 0.00 0.00 0.00
 Si 0.00 0.50 0.50
 Si 0.50 0.00 0.50
 Si 0.50 0.50 0.00
 Si 0.25 0.25 0.25
 Si 0.25 0.75 0.75
 Si 0.75 0.25 0.75
 Si 0.75 0.75 0.25
K_POINTS automatic
 6 6 6 1 1 1
EOF

# The results: total energy, forces, stress (no timing, no piano line).
results() {
	grep -E '^!|^ +atom +[0-9]+ type|total   stress|^ +-?[0-9]+\.[0-9]+ +-?[0-9]+\.[0-9]+ +-?[0-9]+\.[0-9]+ +-?[0-9]' "$1" |
		grep -v '^piano'
}

# wall FILE LABEL: the WALL seconds of PWSCF's timing line LABEL.
wall() {
	awk -v l="$2" '$1 == l && $2 == ":" { for (i = 3; i <= NF; i++) if ($i ~ /WALL/) { sub(/s$/, "", $(i-1)); print $(i-1); exit } }' "$1"
}

# For apps_run_pairs: the CSV's three times, the time shown per run.
row() { echo "$(wall "$1" PWSCF),$(wall "$1" fft_scatt_yz),$(wall "$1" fft_scatt_xy)"; }
total() { echo "wall $(wall "$1" PWSCF)"; }
# pw.x's scratch directory: each run starts from nothing.
before_run() { rm -rf "$work/tmp"; }

failed=0
apps_run_pairs qe 'JOB DONE' pw.x -in si8.in

apps_summary "$csv" "$np" "Quantum ESPRESSO pw.x (Si8 scf)" "wall" "fft_scatt_yz" "fft_scatt_xy" "wall time" "energy, forces, stress" | tee "$txt"
echo "qe.sh: results in $out" >&2
exit "$failed"

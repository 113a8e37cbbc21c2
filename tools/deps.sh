# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash
# Shared helpers of tools/run-tests.sh and tools/demo.sh (sourced, not run).
#
# piano_install_deps installs, with apt-get, the Debian 12 packages piano
# needs to build and test, skipping those already installed. It runs
# `apt-get update` once, and only when something is missing. As root it calls
# apt-get directly; otherwise through sudo.
#
# PIANO_SKIP_DEPS=1 skips the installation (for machines that are not Debian,
# or set up by hand).

PIANO_DEPS=(
	build-essential cmake pkg-config
	libhwloc-dev hwloc
	clang libclang-rt-14-dev clang-format
	openmpi-bin libopenmpi-dev python3-mpi4py
	mpich libmpich-dev
	gfortran
	libdw-dev
	iproute2
	gdb
	gnuplot-nox
)

piano_banner() {
	printf '\n==============================================================\n'
	printf '== %s\n' "$*"
	printf '==============================================================\n'
}

# True when the Debian package $1 is installed (not only known to dpkg).
piano_pkg_installed() {
	dpkg -s "$1" 2>/dev/null | grep -q '^Status: install ok installed$'
}

piano_install_deps() {
	if [[ "${PIANO_SKIP_DEPS:-0}" == 1 ]]; then
		echo "PIANO_SKIP_DEPS=1: not installing packages"
		return 0
	fi
	if ! command -v dpkg >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1; then
		echo "warning: no dpkg/apt-get (not Debian?): install by hand: ${PIANO_DEPS[*]}" >&2
		return 0
	fi
	local missing=() p
	for p in "${PIANO_DEPS[@]}"; do
		piano_pkg_installed "$p" || missing+=("$p")
	done
	if ((${#missing[@]} == 0)); then
		echo "all ${#PIANO_DEPS[@]} packages already installed: ${PIANO_DEPS[*]}"
		return 0
	fi
	echo "missing packages: ${missing[*]}"
	local sudo=()
	if ((EUID != 0)); then
		if ! command -v sudo >/dev/null 2>&1; then
			echo "error: not root and no sudo: as root, run: apt-get install ${missing[*]}" >&2
			return 1
		fi
		sudo=(sudo env DEBIAN_FRONTEND=noninteractive)
	fi
	export DEBIAN_FRONTEND=noninteractive
	# Wait for a concurrent apt/dpkg (unattended upgrades) instead of failing.
	local apt=("${sudo[@]}" apt-get -o DPkg::Lock::Timeout=600 -o Dpkg::Use-Pty=0)
	"${apt[@]}" update
	"${apt[@]}" install -y "${missing[@]}"
	for p in "${missing[@]}"; do
		if ! piano_pkg_installed "$p"; then
			echo "error: package $p is still not installed" >&2
			return 1
		fi
	done
}

# Number of parallel build jobs.
piano_jobs() {
	nproc 2>/dev/null || echo 2
}

# Configures and builds the main build (gcc, RelWithDebInfo, -Werror) in
# build/. Extra arguments go to cmake at configure time. Written as one &&
# chain so that it fails as a whole even when called from an `if` (where
# bash ignores set -e).
piano_build_main() {
	CC=gcc cmake -S . -B build -DCMAKE_C_COMPILER=gcc \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIANO_WERROR=ON "$@" &&
		cmake --build build -j "$(piano_jobs)"
}

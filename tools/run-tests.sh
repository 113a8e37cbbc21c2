#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# piano: the one command that builds and tests everything.
#
#   ./tools/run-tests.sh
#
# On Debian 12 (as root, or with sudo): installs the missing packages with
# apt-get (tools/deps.sh), then
#   0. checks that the C lines changed by the last commit follow
#      .clang-format (tools/check-format.sh --lines);
#   1. builds with gcc, RelWithDebInfo, -Werror into build/ and runs
#      ctest --test-dir build --output-on-failure -j2 (all but the tests
#      labelled "stress"), then the stress tests (ctest -L stress);
#   2. builds the core with clang and ThreadSanitizer, -Werror, into
#      build-tsan/ (no benchmarks, no MPI) and runs its `core` tests with
#      PIANO_TEST_SCALE=small;
#   3. builds everything but the benchmarks with AddressSanitizer into
#      build-asan/ and runs the `mpi` tests (both MPIs).
# Every stage runs even when an earlier one failed (except the package
# installation); the summary at the end lists the failures and the exit
# status is non-zero if anything failed.
#
# Environment:
#   CTEST_ARGS       extra arguments for both ctest runs (e.g. "-R ltask")
#   PIANO_SKIP_TSAN  1 = skip the ThreadSanitizer stage
#   PIANO_SKIP_ASAN  1 = skip the AddressSanitizer stage
#   PIANO_SKIP_STRESS 1 = skip the stress tests (minutes)
#   PIANO_SKIP_DEPS  1 = do not install packages
#   TSAN_OPTIONS     appended to halt_on_error=1:second_deadlock_stack=1
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=tools/deps.sh
. tools/deps.sh

export DEBIAN_FRONTEND=noninteractive
# The MPI tests run mpirun; Open MPI refuses to run as root without these.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

read -r -a ctest_extra <<<"${CTEST_ARGS:-}"
failures=()
summary=()

# step NAME COMMAND...: runs COMMAND, records its result and duration.
step() {
	local name=$1 t0=$SECONDS rc=0
	shift
	"$@" || rc=$?
	if ((rc == 0)); then
		summary+=("ok      $name ($((SECONDS - t0)) s)")
	else
		summary+=("FAILED  $name ($((SECONDS - t0)) s, exit $rc)")
		failures+=("$name")
	fi
	return "$rc"
}

skip() {
	summary+=("skipped $1${2:+ ($2)}")
}

piano_banner "piano: dependencies (apt-get)"
piano_install_deps

piano_banner "piano: environment"
echo "repository: $(pwd)${CI:+ (CI)}"
if command -v git >/dev/null 2>&1 && git rev-parse --git-dir >/dev/null 2>&1; then
	echo "commit:     $(git rev-parse --short HEAD 2>/dev/null || echo none)"
fi
echo "cpus:       $(piano_jobs)"
echo "kernel:     $(uname -srm)"
echo "gcc:        $(gcc --version | head -n1)"
echo "clang:      $(clang --version | head -n1)"
echo "cmake:      $(cmake --version | head -n1)"
echo "hwloc:      $(pkg-config --modversion hwloc)"
if command -v hwloc-ls >/dev/null 2>&1; then
	hwloc-ls --of console --no-io 2>/dev/null | head -n 20 || true
fi

# ----------------------------------------------------------------- style
# The C lines the last commit changed follow .clang-format (the rest of the
# tree is not reformatted wholesale). Needs the parent commit: a shallow
# clone has none, and then nothing can be compared.
piano_banner "piano: clang-format on the lines the last commit changed"
if git rev-parse -q --verify 'HEAD~1^{commit}' >/dev/null 2>&1; then
	step "clang-format (lines changed by HEAD)" tools/check-format.sh --lines --base HEAD~1 || true
else
	skip "clang-format" "no parent commit to compare with"
fi

# ------------------------------------------------------------- gcc build
piano_banner "piano: gcc build (RelWithDebInfo, -Werror) -> build/"
main_built=0
step "gcc build (build/)" piano_build_main && main_built=1

piano_banner "piano: tests (ctest --test-dir build, all but the stress tests)"
if ((main_built)); then
	step "ctest (build/)" ctest --test-dir build --output-on-failure -j2 --no-tests=error \
		-LE '^stress$' "${ctest_extra[@]}" || true
else
	skip "ctest (build/)" "build failed"
fi

# Minutes of traffic, faults and oversubscription, native vs piano.
if [[ "${PIANO_SKIP_STRESS:-0}" == 1 ]]; then
	skip "stress tests" "PIANO_SKIP_STRESS=1"
elif ((main_built)); then
	piano_banner "piano: stress tests (ctest --test-dir build -L stress)"
	step "ctest -L stress (build/)" ctest --test-dir build --output-on-failure \
		--no-tests=error -L '^stress$' "${ctest_extra[@]}" || true
else
	skip "ctest -L stress (build/)" "build failed"
fi

# ------------------------------------------------------ ThreadSanitizer
tsan_build() {
	CC=clang cmake -S . -B build-tsan -DCMAKE_C_COMPILER=clang \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIANO_WERROR=ON \
		-DPIANO_SANITIZE=thread -DPIANO_BUILD_BENCH=OFF -DPIANO_BUILD_MPI=OFF &&
		cmake --build build-tsan -j "$(piano_jobs)"
}

tsan_test() {
	local prefix=()
	# clang 14's TSan cannot map its shadow memory under the high ASLR
	# entropy of recent kernels (vm.mmap_rnd_bits > 28): run the tests
	# without address randomisation there.
	if build-tsan/tools/piano-info --help 2>&1 | grep -q "unexpected memory mapping"; then
		echo "TSan cannot start with ASLR on this kernel: running under setarch -R"
		prefix=(setarch "$(uname -m)" -R)
	fi
	# Serial (no -j): the timing-sensitive tests are slow enough under TSan
	# on a small machine without competing with each other.
	PIANO_TEST_SCALE=small \
		TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1${TSAN_OPTIONS:+:$TSAN_OPTIONS}" \
		"${prefix[@]}" ctest --test-dir build-tsan -L core --output-on-failure --no-tests=error \
		"${ctest_extra[@]}"
}

if [[ "${PIANO_SKIP_TSAN:-0}" == 1 ]]; then
	skip "ThreadSanitizer build and tests" "PIANO_SKIP_TSAN=1"
else
	piano_banner "piano: clang ThreadSanitizer build (-Werror) -> build-tsan/"
	tsan_built=0
	step "clang TSan build (build-tsan/)" tsan_build && tsan_built=1

	piano_banner "piano: core tests under ThreadSanitizer (ctest -L core, PIANO_TEST_SCALE=small)"
	if ((tsan_built)); then
		step "ctest -L core (build-tsan/)" tsan_test || true
	else
		skip "ctest -L core (build-tsan/)" "build failed"
	fi
fi

# ------------------------------------------------------ AddressSanitizer
# The MPI layer under ASan: every target (libpiano-mpi-*, the test
# programs) is instrumented; piano-run preloads the library ahead of the
# ASan runtime the programs link, hence verify_asan_link_order=0. The MPIs
# themselves leak by design at exit, hence detect_leaks=0.
asan_build() {
	CC=gcc cmake -S . -B build-asan -DCMAKE_C_COMPILER=gcc \
		-DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIANO_WERROR=ON \
		-DPIANO_SANITIZE=address -DPIANO_BUILD_BENCH=OFF &&
		cmake --build build-asan -j "$(piano_jobs)"
}

asan_test() {
	ASAN_OPTIONS="verify_asan_link_order=0:detect_leaks=0:abort_on_error=1${ASAN_OPTIONS:+:$ASAN_OPTIONS}" \
		ctest --test-dir build-asan -L mpi --output-on-failure --no-tests=error \
		"${ctest_extra[@]}"
}

if [[ "${PIANO_SKIP_ASAN:-0}" == 1 ]]; then
	skip "AddressSanitizer build and MPI tests" "PIANO_SKIP_ASAN=1"
else
	piano_banner "piano: gcc AddressSanitizer build -> build-asan/"
	asan_built=0
	step "gcc ASan build (build-asan/)" asan_build && asan_built=1

	piano_banner "piano: MPI tests under AddressSanitizer (ctest -L mpi)"
	if ((asan_built)); then
		step "ctest -L mpi (build-asan/)" asan_test || true
	else
		skip "ctest -L mpi (build-asan/)" "build failed"
	fi
fi

# ---------------------------------------------------------------- summary
piano_banner "piano: summary"
printf '%s\n' "${summary[@]}"
if ((${#failures[@]})); then
	echo
	echo "run-tests: ${#failures[@]} stage(s) failed: ${failures[*]}"
	exit 1
fi
echo
echo "run-tests: all stages passed (${SECONDS} s)"

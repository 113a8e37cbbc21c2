#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# tools/conformance/run.sh: the MPIs' own test suites, natively and under
# piano, on Open MPI and MPICH. See docs/conformance.md.
#
# Builds the C tests of MPICH's test suite (test/mpi of the MPICH release
# installed, v4.0.2) with each MPI's mpicc, runs each test natively and then
# under piano-run with the suite's rank count, and does the same with
# mpi4py's unit tests (one run per test file) where a copy of them is found.
# Rule: no test that passes natively may fail, hang or run more than 2x
# slower (and more than 1 s slower) under piano. Exit status: 0 if no test
# broke the rule, 1 if one did, 2 on a usage or setup error, 77 in --smoke
# mode when MPICH's sources are not on the machine.
set -euo pipefail

usage() {
	cat <<'EOF'
usage: tools/conformance/run.sh [options]

Runs MPICH's test suite (and mpi4py's, where available) natively and under
piano on Open MPI and/or MPICH; writes OUT/results.csv and OUT/summary.txt.

  --mpi openmpi|mpich|both  MPIs to test (default: both)
  --dirs LIST               test/mpi directories, comma-separated (default:
                            pt2pt,coll,errhan,threads/pt2pt,threads/coll,rma,io,
                            and the Fortran f77/ and f08/ pt2pt,coll,comm,topo)
  --only REGEX              only the tests whose id (e.g. pt2pt/mprobe#2,
                            mpi4py/test_p2p_obj) matches this extended regex
  --timeout S               time limit of a run in seconds when the testlist
                            sets none (default: 60)
  --build DIR               piano build directory holding piano-run
                            (default: build/ of this repository)
  --out DIR                 output directory (default: conformance-out/ of
                            this repository); its results are replaced
  --mpich-src PATH          MPICH source tree or bare git repository (default:
                            $PIANO_MPICH_SRC, else /work/.mirror/pmodels+mpich/repo)
  --mpich-tag TAG           tag to read from a git repository (default: v4.0.2)
  --mpi4py-src PATH         mpi4py source tree or bare git repository (default:
                            $PIANO_MPI4PY_SRC, else /work/.mirror/mpi4py+mpi4py/repo)
  --no-mpi4py               skip mpi4py's tests
  --max-mem GB              skip tests whose testlist asks for more memory (default: 4)
  --retries N               re-runs of a test found too slow before it counts
                            as a regression (default: 2)
  --smoke                   a few quick tests per MPI, no timing verdicts (CI)
  -h, --help                this help
EOF
}

die() {
	echo "conformance: $*" >&2
	exit 2
}

repo=$(cd "$(dirname "$0")/../.." && pwd)
here=$repo/tools/conformance
mpis=both
dirs=pt2pt,coll,errhan,threads/pt2pt,threads/coll,rma,io,f77/pt2pt,f77/coll,f77/comm,f77/topo,f08/pt2pt,f08/coll,f08/comm,f08/topo
only=
timeout_s=60
build=$repo/build
out=$repo/conformance-out
mpich_src=${PIANO_MPICH_SRC:-/work/.mirror/pmodels+mpich/repo}
mpich_tag=v4.0.2
mpi4py_src=${PIANO_MPI4PY_SRC:-/work/.mirror/mpi4py+mpi4py/repo}
use_mpi4py=1
max_mem=4
retries=2
smoke=0

while (($#)); do
	case $1 in
	--mpi) mpis=${2:?--mpi needs a value}; shift 2 ;;
	--dirs) dirs=${2:?--dirs needs a value}; shift 2 ;;
	--only) only=${2:?--only needs a value}; shift 2 ;;
	--timeout) timeout_s=${2:?--timeout needs a value}; shift 2 ;;
	--build) build=${2:?--build needs a value}; shift 2 ;;
	--out) out=${2:?--out needs a value}; shift 2 ;;
	--mpich-src) mpich_src=${2:?--mpich-src needs a value}; shift 2 ;;
	--mpich-tag) mpich_tag=${2:?--mpich-tag needs a value}; shift 2 ;;
	--mpi4py-src) mpi4py_src=${2:?--mpi4py-src needs a value}; shift 2 ;;
	--no-mpi4py) use_mpi4py=0; shift ;;
	--max-mem) max_mem=${2:?--max-mem needs a value}; shift 2 ;;
	--retries) retries=${2:?--retries needs a value}; shift 2 ;;
	--smoke) smoke=1; shift ;;
	-h | --help) usage; exit 0 ;;
	*) usage >&2; die "unknown option '$1'" ;;
	esac
done

case $mpis in
both) mpis="openmpi mpich" ;;
openmpi | mpich) ;;
*) die "--mpi must be openmpi, mpich or both, not '$mpis'" ;;
esac
[[ $timeout_s =~ ^[0-9]+$ && $timeout_s -gt 0 ]] || die "--timeout must be a positive integer"
[[ $retries =~ ^[0-9]+$ ]] || die "--retries must be a non-negative integer"
[[ $max_mem =~ ^[0-9]+([.][0-9]+)?$ ]] || die "--max-mem must be a number of GB"
if [[ -n $only ]]; then
	rc=0
	[[ x =~ $only ]] || rc=$?
	((rc < 2)) || die "--only: invalid regular expression '$only'"
fi
build=$(cd "$build" 2>/dev/null && pwd) || die "--build: no directory '$build'"
[[ -x $build/piano-run ]] || die "no piano-run in $build: build piano first (cmake --build)"
# The libraries piano-run preloads (mpi4py's runs need the path: python3
# is not linked against an MPI, so piano-run cannot choose for it).
libdir=$(sed -n 's/^libdir=\${PIANO_MPI_LIBDIR:-\(.*\)}$/\1/p' "$build/piano-run")
libdir=${PIANO_MPI_LIBDIR:-$libdir}
for tool in python3 timeout git tar; do
	command -v "$tool" >/dev/null 2>&1 || die "$tool is needed"
done

if ((smoke)); then
	# Quick tests that pass natively on both MPIs; no timing verdicts.
	only=${only:-'^(pt2pt/sendrecv2|pt2pt/mprobe|coll/nonblocking|errhan/predef_eh#2|threads/pt2pt/sendselfth|mpi4py/test_request)$'}
	dirs=pt2pt,coll,errhan,threads/pt2pt
	retries=0
fi

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# Every process of a run carries this tag, so that what a killed launcher
# left behind can be found and ended by process id.
tag="piano-conformance-$$-$RANDOM"

mkdir -p "$out" || die "cannot create $out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d)
cleanup() {
	kill_tagged
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# kill_tagged: ends the processes (ours) that carry this run's tag.
kill_tagged() {
	local f pids=()
	# The tag is not in this script's own environment: only the runs have it.
	for f in $(grep -lszx "CONFORMANCE_RUN_TAG=$tag" /proc/[0-9]*/environ || true); do
		f=${f#/proc/}
		pids+=("${f%/environ}")
	done
	((${#pids[@]} == 0)) || kill -KILL "${pids[@]}" 2>/dev/null || true
}

# ---------------------------------------------------------------- sources
rm -rf "$out/src" "$out/build" "$out/logs" "$out/work"
mkdir -p "$out/src" "$out/logs" "$out/work"
have_mpich_src=0
if [[ -d $mpich_src/test/mpi/util ]]; then
	cp -r "$mpich_src/test/mpi" "$out/src/"
	[[ -f $mpich_src/src/binding/mpix.txt ]] && cp "$mpich_src/src/binding/mpix.txt" "$out/src/"
	have_mpich_src=1
elif git -C "$mpich_src" rev-parse --verify -q "$mpich_tag^{commit}" >/dev/null 2>&1; then
	git -C "$mpich_src" archive "$mpich_tag" test/mpi | tar -x -C "$tmp"
	mv "$tmp/test/mpi" "$out/src/mpi"
	git -C "$mpich_src" show "$mpich_tag:src/binding/mpix.txt" >"$out/src/mpix.txt" 2>/dev/null || true
	have_mpich_src=1
fi
if ((!have_mpich_src)); then
	msg="MPICH's sources ($mpich_tag) not found at '$mpich_src' (give --mpich-src or PIANO_MPICH_SRC)"
	if ((smoke)); then
		echo "conformance: $msg: smoke test skipped"
		exit 77
	fi
	die "$msg"
fi
testmpi=$out/src/mpi
# dtpools includes ../dtpoolsconf.h, written by its configure.
: >"$testmpi/dtpools/dtpoolsconf.h"

mpi4py_dir=
mpi4py_why=
if ((!use_mpi4py)); then
	mpi4py_why="--no-mpi4py"
elif ! /usr/bin/python3 -c 'import mpi4py' 2>/dev/null; then
	mpi4py_why="Debian's python3-mpi4py is not installed (apt-get install python3-mpi4py)"
else
	mpi4py_ver=$(/usr/bin/python3 -c 'import mpi4py; print(mpi4py.__version__)')
	if [[ -f $mpi4py_src/test/runtests.py ]]; then
		mpi4py_dir=$mpi4py_src/test
	elif git -C "$mpi4py_src" rev-parse --verify -q "$mpi4py_ver^{commit}" >/dev/null 2>&1; then
		git -C "$mpi4py_src" archive "$mpi4py_ver" test | tar -x -C "$out/src"
		mv "$out/src/test" "$out/src/mpi4py-test"
		mpi4py_dir=$out/src/mpi4py-test
	else
		mpi4py_why="no copy of mpi4py $mpi4py_ver's tests at '$mpi4py_src' (the Debian package does not ship them; give --mpi4py-src)"
	fi
fi
[[ -n $mpi4py_dir ]] || echo "conformance: mpi4py's tests skipped: $mpi4py_why"

# ---------------------------------------------------------------- helpers
csv=$out/results.csv
echo "test,mpi,np,native_result,native_s,piano_result,piano_s,verdict,note" >"$csv"

# csv_field TEXT: TEXT as one CSV field.
csv_field() {
	local s=${1//$'\n'/ }
	if [[ $s == *[,\"]* ]]; then
		s=\"${s//\"/\"\"}\"
	fi
	printf '%s' "$s"
}

# record ID MPI NP NRES NS PRES PS VERDICT NOTE
record() {
	printf '%s,%s,%s,%s,%s,%s,%s,%s,%s\n' "$(csv_field "$1")" "$2" "$3" "$4" "$5" \
		"$6" "$7" "$8" "$(csv_field "${9:-}")" >>"$csv"
	printf '%-40s %-7s np=%-2s native=%-7s %6ss  piano=%-7s %6ss  %s%s\n' "$1" "$2" "$3" "$4" \
		"$5" "$6" "$7" "$8" "${9:+  ($9)}"
}

# now_us: wall clock in microseconds.
now_us() {
	local t=${EPOCHREALTIME/./}
	echo "$t"
}

# run_one LOG LIMIT MPI NP MODE CWD [VAR=VALUE...] -- CMD...: runs CMD under the
# MPI's launcher with NP ranks (MODE piano: through piano-run; piano-py:
# with the library preloaded), sets rc and secs.
run_one() {
	local log=$1 limit=$2 mpi=$3 np=$4 mode=$5 cwd=$6
	shift 6
	local envv=()
	while [[ $1 != -- ]]; do
		envv+=("$1")
		shift
	done
	shift
	local launch
	if [[ $mpi == openmpi ]]; then
		launch=(mpirun.openmpi --oversubscribe -np "$np")
	else
		launch=(mpiexec.mpich -n "$np")
	fi
	case $mode in
	piano) launch+=("$build/piano-run") ;;
	# In the ranks only, not in the launcher.
	piano-py) launch+=(env "LD_PRELOAD=$libdir/libpiano-mpi-$mpi.so") ;;
	esac
	{
		echo "# cd $cwd"
		echo "# ${envv[*]} ${launch[*]} $*"
	} >"$log"
	local t0 t1
	t0=$(now_us)
	rc=0
	(cd "$cwd" && exec env CONFORMANCE_RUN_TAG="$tag" "${envv[@]}" \
		timeout -k 5 "$limit" "${launch[@]}" "$@") >>"$log" 2>&1 </dev/null || rc=$?
	t1=$(now_us)
	kill_tagged
	secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", (b - a) / 1e6 }')
	echo "# exit $rc after $secs s (limit $limit s)" >>"$log"
}

# mtest_result LOG RESULTTEST: pass, fail or timeout for the run just made
# (rc set), judged as MPICH's runtests does: exit status 0, a " No Errors"
# line and no other output than "Test Passed" (TestErrFatal: a non-zero
# exit status).
mtest_result() {
	local log=$1 rt=$2
	if ((rc == 124 || rc == 137)); then
		echo timeout
	elif [[ $rt == TestErrFatal ]]; then
		((rc != 0)) && echo pass || echo fail
	elif ((rc == 0)) && grep -Eq '^\s*No [Ee]rrors\s*$' "$log" &&
		! grep -v '^# ' "$log" | grep -Evq '^\s*((No [Ee]rrors|Test Passed)\s*)?$'; then
		echo pass
	else
		echo fail
	fi
}

# excerpt LOG: the first lines of a run's output that tell what went wrong.
excerpt() {
	grep -v '^# ' "$1" | grep -Ev '^\s*((No [Ee]rrors|Test Passed)\s*)?$' | head -n 2 |
		cut -c1-160 | paste -sd '|' || true
}

# judge NRES NS PRES PS: the verdict for a natively passing test.
judge() {
	local nres=$1 ns=$2 pres=$3 ps=$4
	if [[ $nres != pass ]]; then
		echo native-fails
	elif [[ $pres == timeout ]]; then
		echo REGRESSION-hang
	elif [[ $pres != pass ]]; then
		echo REGRESSION-fail
	elif ((!smoke)) && awk -v n="$ns" -v p="$ps" 'BEGIN { exit !(p > 2 * n && p - n > 1) }'; then
		echo REGRESSION-slow
	else
		echo ok
	fi
}

# piano_limit LIMIT NATIVE_S: the piano run's limit: LIMIT, or room for
# twice the native time when that is longer, so that "hang" means hang.
piano_limit() {
	awk -v l="$1" -v n="$2" 'BEGIN { x = int(2 * n + 10); print (x > l ? x : l) }'
}

# compare ID MPI NP LIMIT RUNNER...: runs RUNNER MODE LOG LIMIT natively,
# then under piano (re-running the pair while piano is too slow), records.
compare() {
	local id=$1 mpi=$2 np=$3 limit=$4
	shift 4
	local logbase=$out/logs/$mpi/$id note='' nres ns pres ps verdict try bad=''
	logbase=${logbase//#/.}
	mkdir -p "$(dirname "$logbase")"
	"$@" native "$logbase.native.log" "$limit"
	nres=$result ns=$secs
	if [[ $nres != pass ]]; then
		note=$(excerpt "$logbase.native.log")
		[[ $nres != timeout ]] || note="no result in $limit s"
		record "$id" "$mpi" "$np" "$nres" "$ns" - - native-fails "$note"
		return
	fi
	"$@" piano "$logbase.piano.log" "$(piano_limit "$limit" "$ns")"
	pres=$result ps=$secs
	verdict=$(judge "$nres" "$ns" "$pres" "$ps")
	try=0
	while [[ $verdict == REGRESSION-slow ]] && ((try < retries)); do
		try=$((try + 1))
		"$@" native "$logbase.native.$try.log" "$limit"
		[[ $result == pass ]] && ns=$(awk -v a="$ns" -v b="$secs" 'BEGIN { print (b < a ? b : a) }')
		"$@" piano "$logbase.piano.$try.log" "$(piano_limit "$limit" "$ns")"
		if [[ $result == pass ]]; then
			ps=$(awk -v a="$ps" -v b="$secs" 'BEGIN { print (b < a ? b : a) }')
		else
			bad="${bad:+$bad, }re-run $try under piano: $result"
		fi
		verdict=$(judge "$nres" "$ns" "$pres" "$ps")
	done
	((try == 0)) || note="best of $((try + 1)) runs${bad:+; $bad}"
	case $verdict in
	REGRESSION-fail) note=$(excerpt "$logbase.piano.log") ;;
	REGRESSION-hang) note="no result in $(piano_limit "$limit" "$ns") s" ;;
	REGRESSION-slow) note="${note:+$note: }$(awk -v n="$ns" -v p="$ps" 'BEGIN { printf "%.1fx", p / n }')" ;;
	esac
	record "$id" "$mpi" "$np" "$nres" "$ns" "$pres" "$ps" "$verdict" "$note"
}

# ------------------------------------------------------- MPICH's test suite
# mpi_version MPI: MAJOR.MINOR of the MPI standard the library implements.
mpi_version() {
	printf '#include <mpi.h>\nMPI_VERSION.MPI_SUBVERSION\n' |
		"mpicc.$1" -E -x c - 2>/dev/null | tail -n 1 | tr -d ' '
}

# build_util MPI DIR: the generated headers and MTest libraries for MPI.
build_util() {
	local mpi=$1 d=$2
	mkdir -p "$d/include" "$d/lib" "$d/obj"
	cat >"$d/include/mpitestconf.h" <<'EOF'
/* Written by tools/conformance/run.sh in place of MPICH's test configure. */
#define HAVE_STDARG_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_UNISTD_H 1
#define HAVE_STRING_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STDINT_H 1
#define HAVE_MEMORY_H 1
#define HAVE_PTHREAD_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_LONG 1
#define HAVE_LONG_LONG_INT 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_IO 1
#define HAVE_MPI_INIT_THREAD 1
#define MPIO_USES_MPI_REQUEST 1
#define USE_LONG_DOUBLE_COMPLEX 1
#define POINTERINT_t long
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
EOF
	{
		echo "#ifndef MTEST_MPIX_H_INCLUDED"
		echo "#define MTEST_MPIX_H_INCLUDED"
		# MPICH names the functions of the next standard MPIX_ (its own
		# configure generates these defines; Open MPI has none of them).
		if [[ $mpi == mpich && -f $out/src/mpix.txt ]]; then
			grep -oE '^MPI_[A-Za-z0-9_]+' "$out/src/mpix.txt" | sed 's/^MPI_\(.*\)/#define MPI_\1 MPIX_\1/'
		fi
		echo "#endif"
	} >"$d/include/mtest_mpix.h"
	if [[ $mpi == openmpi ]]; then
		# Only what the MPI standard defines (no MPIX tests).
		echo "#define USE_STRICT_MPI 1" >>"$d/include/mpitestconf.h"
	fi
	# The wrapper's own command line, called directly: one process less per
	# compilation on a busy machine. -O0: the tests need no optimisation.
	local show
	show=$("mpicc.$mpi" -show) || return 1
	read -r -a cc <<<"$show"
	cctail=("${cc[@]:1}")
	cc=("${cc[0]}")
	cflags=(-O0 -w -I"$d/include" -I"$testmpi/include" -I"$testmpi/dtpools/include")
	local u=$testmpi/util o=$d/obj
	{
		"${cc[@]}" "${cflags[@]}" -c "$u/mtest.c" -o "$o/mtest.o" "${cctail[@]}" &&
			"${cc[@]}" "${cflags[@]}" -DMTEST_USE_THREAD -c "$u/mtest.c" -o "$o/mtest_th.o" "${cctail[@]}" &&
			"${cc[@]}" "${cflags[@]}" -c "$u/mtest_common.c" -o "$o/mtest_common.o" "${cctail[@]}" &&
			"${cc[@]}" "${cflags[@]}" -c "$u/mtest_single.c" -o "$o/mtest_single.o" "${cctail[@]}" &&
			"${cc[@]}" "${cflags[@]}" -DMTEST_USE_THREAD -c "$u/mtest_thread.c" -o "$o/mtest_thread.o" "${cctail[@]}" &&
			"${cc[@]}" "${cflags[@]}" -c "$u/dtypes.c" -o "$o/dtypes.o" "${cctail[@]}" &&
			ar rcs "$d/lib/libmtest_single.a" "$o/mtest.o" "$o/mtest_common.o" "$o/mtest_single.o" &&
			ar rcs "$d/lib/libmtest_thread.a" "$o/mtest_th.o" "$o/mtest_common.o" "$o/mtest_thread.o" &&
			ar rcs "$d/lib/libdtypes.a" "$o/dtypes.o"
	} >"$d/util.log" 2>&1 || return 1
	build_fortran_util "$mpi" "$d"
	return 0
}

# build_fortran_util MPI DIR: the Fortran MTest routines (f77: mpif.h, f08:
# use mpi_f08, f90: use mpi), with the MPI's Fortran wrapper when it has
# one; fc stays empty otherwise, and the Fortran tests do not build (said
# in their notes).
build_fortran_util() {
	local mpi=$1 d=$2 show u=$testmpi/util o=$2/obj
	fc=()
	command -v "mpif90.$mpi" >/dev/null 2>&1 || return 0
	show=$("mpif90.$mpi" -show) || return 0
	read -r -a fc <<<"$show"
	fctail=("${fc[@]:1}")
	fc=("${fc[0]}")
	fflags=(-O0 -w -fallow-argument-mismatch -I"$d/include")
	local f
	for f in mtest_f77.f mtest_f90.f90 mtest_f08.f90; do
		"${fc[@]}" "${fflags[@]}" -J"$d/include" -c "$u/$f" -o "$o/${f%.*}.o" "${fctail[@]}" ||
			break
	done >"$d/fortran-util.log" 2>&1 || fc=()
	[[ -f $o/mtest_f08.o ]] || fc=()
}

# build_dtpools MPI UTILDIR: MPICH's datatype pool library, built on the
# first test that needs it. It calls MPI-1 functions removed in MPI-3.0
# (MPI_Type_hindexed...), which Open MPI still exports but declares only on
# request.
build_dtpools() {
	local d=$2 f compat=()
	[[ -f $d/lib/libdtpools.a ]] && return 0
	[[ -f $d/dtpools.log ]] && return 1
	[[ $1 == openmpi ]] && compat=(-DOMPI_OMIT_MPI1_COMPAT_DECLS=0)
	for f in "$testmpi"/dtpools/src/*.c; do
		"${cc[@]}" "${cflags[@]}" "${compat[@]}" -c "$f" -o "$d/obj/dtp_$(basename "$f" .c).o" "${cctail[@]}" >>"$d/dtpools.log" 2>&1 ||
			return 1
	done
	ar rcs "$d/lib/libdtpools.a" "$d"/obj/dtp_*.o >>"$d/dtpools.log" 2>&1
}

# build_test MPI UTILDIR DIR PROG SOURCES CPPFLAGS LIBS: compiles one test
# program (once per program) into UTILDIR/bin/DIR/PROG; sets built_note to
# the first error line when it does not compile.
build_test() {
	local mpi=$1 d=$2 dir=$3 prog=$4 srcs=$5 cpp=$6 libs=$7
	local exe=$d/bin/$dir/$prog log=$d/bin/$dir/$prog.build.log kind=single s
	built_note=
	[[ -x $exe ]] && return 0
	if [[ -f $log ]]; then
		built_note=$(grep -m1 -E 'error|undefined' "$log" | cut -c1-160 || true)
		return 1
	fi
	mkdir -p "$d/bin/$dir"
	[[ $dir == threads* ]] && kind=thread
	local files=() extra=()
	for s in $srcs; do
		files+=("$testmpi/$dir/$s")
	done
	[[ $cpp == - ]] || read -r -a extra <<<"$cpp"
	local ldextra=()
	[[ $libs == - ]] || read -r -a ldextra <<<"$libs"
	[[ $kind == thread ]] && extra+=(-DMTEST_USE_THREAD)
	if grep -qE '#\s*include\s*"(dtpools|mtest_dtp)\.h"' "${files[@]}" 2>/dev/null; then
		if ! build_dtpools "$mpi" "$d"; then
			built_note="needs dtpools, which does not build here: $(grep -m1 'error' "$d/dtpools.log" | cut -c1-120)"
			built_note=${built_note//$testmpi\//}
			echo "$built_note" >"$log"
			return 1
		fi
		ldextra+=(-ldtpools)
	fi
	if [[ ${files[0]} == *.f || ${files[0]} == *.f90 || ${files[0]} == *.F90 ]]; then
		build_fortran_test "$d" "$dir" "$exe" "$log" "${files[@]}"
		return
	fi
	if ! "${cc[@]}" "${cflags[@]}" -I"$testmpi/$dir" "${extra[@]}" "${files[@]}" -o "$exe" \
		-L"$d/lib" -lmtest_"$kind" -ldtypes "${ldextra[@]}" "${cctail[@]}" -lm -lpthread >"$log" 2>&1; then
		built_note=$(grep -m1 -E 'error|undefined' "$log" | cut -c1-160 || true)
		built_note=${built_note#"$testmpi/"}
		return 1
	fi
}

# build_fortran_test UTILDIR DIR EXE LOG SOURCES...: a Fortran test of
# f77/, f90/ or f08/, with its directory's MTest routines and the headers
# MPICH's configure writes from *.h.in (8-byte address and offset kinds).
build_fortran_test() {
	local d=$1 dir=$2 exe=$3 log=$4 h
	shift 4
	if ((${#fc[@]} == 0)); then
		built_note="no Fortran compiler for this MPI, or its MTest routines do not build"
		echo "$built_note" >"$log"
		return 1
	fi
	local inc=$d/bin/$dir/include util=$d/obj/mtest_f77.o
	mkdir -p "$inc"
	for h in "$testmpi/$dir"/*.h.in; do
		[[ -f $h ]] || continue
		sed -e 's/@F77_MPI_ADDRESS@/integer*8/g' -e 's/@F77_MPI_OFFSET@/integer*8/g' "$h" \
			>"$inc/$(basename "$h" .in)"
	done
	case $dir in
	f08*) util=$d/obj/mtest_f08.o ;;
	f90*) util=$d/obj/mtest_f90.o ;;
	esac
	if ! (cd "$inc" && "${fc[@]}" "${fflags[@]}" -J"$inc" -I"$inc" -I"$testmpi/$dir" "$@" "$util" \
		-o "$exe" "${fctail[@]}") >"$log" 2>&1; then
		built_note=$(grep -m1 -E 'Error|error|undefined' "$log" | cut -c1-160 || true)
		built_note=${built_note#"$testmpi/"}
		return 1
	fi
}

# mtest_runner MPI NP RESULTTEST EXE ENVS ARGS CWD -- MODE LOG LIMIT
mtest_runner() {
	local mpi=$1 np=$2 rt=$3 exe=$4 envs=$5 args=$6 cwd=$7 mode=$9 log=${10} limit=${11}
	local e=() a=()
	[[ $envs == - ]] || read -r -a e <<<"$envs"
	[[ $args == - ]] || read -r -a a <<<"$args"
	run_one "$log" "$limit" "$mpi" "$np" "$mode" "$cwd" "${e[@]}" -- "$exe" "${a[@]}"
	result=$(mtest_result "$log" "$rt")
}

# only_mpich_env ENVS: true if ENVS are all MPICH settings (MPIR_CVAR_*).
only_mpich_env() {
	local e
	[[ $1 != - ]] || return 1
	for e in $1; do
		[[ $e == MPIR_CVAR_* ]] || return 1
	done
}

run_mpich_suite() {
	local mpi=$1 d=$out/build/$1 ver plan
	ver=$(mpi_version "$mpi")
	echo "== MPICH $mpich_tag test suite on $mpi (MPI $ver): ${dirs//,/ }"
	if ! build_util "$mpi" "$d"; then
		echo "conformance: the MTest utilities do not build with mpicc.$mpi (see $d/util.log):" >&2
		tail -n 5 "$d/util.log" >&2
		setup_errors+=("$mpi: MTest utilities do not build")
		return
	fi
	plan=$d/plan.tsv
	# shellcheck disable=SC2046
	python3 "$here/mpich_plan.py" "$testmpi" $(tr ',' ' ' <<<"$dirs") >"$plan" ||
		die "cannot read the testlists of: $dirs"
	local id dir prog np tl rt strict mpiv mem xfail skip envs args srcs cpp libs limit note
	while IFS=$'\t' read -r id dir prog np tl rt strict mpiv mem xfail skip envs args srcs cpp libs; do
		[[ -z $only || $id =~ $only ]] || continue
		note=
		[[ $xfail == - ]] || note="xfail=$xfail in the testlist"
		if [[ $skip != - ]]; then
			record "$id" "$mpi" "$np" - - - - skipped "$skip"
			continue
		fi
		if [[ $mem != - ]] && awk -v m="$mem" -v x="$max_mem" 'BEGIN { exit !(m > x) }'; then
			record "$id" "$mpi" "$np" - - - - skipped "needs ${mem} GB (--max-mem $max_mem)"
			continue
		fi
		if [[ $mpiv != - ]] && awk -v w="$mpiv" -v h="$ver" 'BEGIN { exit !(w + 0 > h + 0) }'; then
			record "$id" "$mpi" "$np" - - - - skipped "needs MPI $mpiv"
			continue
		fi
		if [[ $mpi == openmpi && $strict == false ]]; then
			record "$id" "$mpi" "$np" - - - - mpich-only "strict=false: uses MPICH extensions"
			continue
		fi
		if [[ $mpi == openmpi ]] && only_mpich_env "$envs"; then
			record "$id" "$mpi" "$np" - - - - mpich-only "variant for MPICH settings ($envs)"
			continue
		fi
		if ! build_test "$mpi" "$d" "$dir" "$prog" "$srcs" "$cpp" "$libs"; then
			record "$id" "$mpi" "$np" - - - - not-built "$built_note"
			continue
		fi
		limit=$timeout_s
		[[ $tl == - ]] || limit=$tl
		local cwd=$out/work/$mpi/$dir
		mkdir -p "$cwd"
		compare "$id" "$mpi" "$np" "$limit" \
			mtest_runner "$mpi" "$np" "$rt" "$d/bin/$dir/$prog" "$envs" "$args" "$cwd" --
	done <"$plan"
}

# --------------------------------------------------------- mpi4py's tests
# py_runner MPI NP MODULE -- MODE LOG LIMIT: one test file of mpi4py.
py_runner() {
	local mpi=$1 np=$2 mod=$3 mode=$5 log=$6 limit=$7
	[[ $mode == piano ]] && mode=piano-py
	run_one "$log" "$limit" "$mpi" "$np" "$mode" "$mpi4py_dir" -- \
		/usr/bin/python3 "$mpi4py_dir/runtests.py" --no-builddir --quiet --include "^$mod\$"
	if ((rc == 124 || rc == 137)); then
		result=timeout
	elif ((rc == 0)); then
		result=pass
	else
		result=fail
	fi
}

run_mpi4py_suite() {
	local mpi=$1 f mod id np=2
	if [[ -z $mpi4py_dir ]]; then
		return
	fi
	if [[ $mpi != openmpi ]]; then
		echo "== mpi4py's tests on $mpi: skipped (Debian's mpi4py is built for Open MPI)"
		return
	fi
	echo "== mpi4py $mpi4py_ver's tests on $mpi ($np ranks per test file)"
	for f in "$mpi4py_dir"/test_*.py; do
		mod=$(basename "$f" .py)
		id=mpi4py/$mod
		[[ -z $only || $id =~ $only ]] || continue
		compare "$id" "$mpi" "$np" "$timeout_s" py_runner "$mpi" "$np" "$mod" --
	done
}

# -------------------------------------------------------------------- main
setup_errors=() # problems that make the run incomplete (exit status 1)
notes=()
start=$SECONDS
for mpi in $mpis; do
	why=
	if ! command -v "mpicc.$mpi" >/dev/null 2>&1; then
		why="mpicc.$mpi not found"
	elif [[ ! -e $libdir/libpiano-mpi-$mpi.so ]]; then
		why="$libdir/libpiano-mpi-$mpi.so not built"
	fi
	if [[ -n $why ]]; then
		echo "conformance: $why: $mpi skipped" >&2
		# A machine without one of the MPIs: the smoke test runs the other.
		if ((smoke)); then
			notes+=("$mpi skipped: $why")
		else
			setup_errors+=("$mpi skipped: $why")
		fi
		continue
	fi
	run_mpich_suite "$mpi"
	run_mpi4py_suite "$mpi"
done

# ----------------------------------------------------------------- summary
summary=$out/summary.txt
python3 "$here/summarize.py" "$csv" >"$summary"
{
	echo
	echo "piano build: $build"
	echo "MPICH tests: $mpich_tag ($dirs); mpi4py tests: ${mpi4py_dir:+$mpi4py_ver}${mpi4py_why:+skipped: $mpi4py_why}"
	echo "mode: $( ((smoke)) && echo smoke || echo full); default limit ${timeout_s} s; duration $((SECONDS - start)) s"
	for e in "${notes[@]}"; do
		echo "note: $e"
	done
	for e in "${setup_errors[@]}"; do
		echo "SETUP ERROR: $e"
	done
	echo "results: $csv"
	echo "logs:    $out/logs/MPI/TEST.{native,piano}.log"
} >>"$summary"
echo
cat "$summary"
if grep -q ',REGRESSION-' "$csv" || ((${#setup_errors[@]})); then
	exit 1
fi
exit 0

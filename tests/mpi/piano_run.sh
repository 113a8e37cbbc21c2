#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# piano_run.sh CASE FLAVOUR PIANO-RUN PROGRAM LAUNCHER...: piano-run under
# the MPI's launcher (LAUNCHER... is e.g. "mpiexec.mpich -n 2"), with PROGRAM
# (an MPI program for the C cases, python3 for the mpi4py case) started
#   env       as: piano-run env TEST_ENV_X=1 PROGRAM
#   script    as: piano-run WRAPPER PROGRAM, WRAPPER a shell script that
#             runs PROGRAM as its child
#   dashdash  as: piano-run -- PROGRAM
#   mpi       as: piano-run --mpi FLAVOUR PROGRAM
#   badmpi    as: piano-run --mpi bogus PROGRAM: must fail with a message
#             saying what to pass, before PROGRAM runs
#   python    as: piano-run PROGRAM app.py, PROGRAM a python3 with mpi4py,
#             app.py a 2-rank exchange (skipped without mpi4py)
# Every case but badmpi passes if the job succeeds and piano was loaded in
# both ranks: with PIANO_STATS=1 it prints "# piano-mpi rank N" at
# MPI_Finalize. Exit status: 0 passed, 1 failed, 77 skipped.
set -u
if [ $# -lt 5 ]; then
	echo "usage: piano_run.sh CASE FLAVOUR PIANO-RUN PROGRAM LAUNCHER..." >&2
	exit 1
fi
case=$1 flavour=$2 piano_run=$3 program=$4
shift 4
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

fail() {
	printf '%s\n' "$out"
	echo "piano_run: $case: FAIL: $*"
	exit 1
}

case $case in
env) set -- "$@" "$piano_run" env TEST_ENV_X=1 "$program" ;;
script)
	# Not the last command of the script: the shell must fork it.
	printf '%s\n' '#!/bin/sh' '"$@"' 'status=$?' 'exit $status' >"$tmp/wrapper.sh"
	chmod +x "$tmp/wrapper.sh"
	set -- "$@" "$piano_run" "$tmp/wrapper.sh" "$program" ;;
dashdash) set -- "$@" "$piano_run" -- "$program" ;;
mpi) set -- "$@" "$piano_run" --mpi "$flavour" "$program" ;;
badmpi) set -- "$@" "$piano_run" --mpi bogus "$program" ;;
python)
	if [ ! -x "$program" ] || ! "$program" -c 'import mpi4py' 2>/dev/null; then
		echo "piano_run: $program has no mpi4py (Debian: apt-get install python3-mpi4py): skipped"
		exit 77
	fi
	cat >"$tmp/app.py" <<'PY'
from mpi4py import MPI
comm = MPI.COMM_WORLD
rank = comm.Get_rank()
other = 1 - rank
got = comm.sendrecv(rank, dest=other, source=other)
assert got == other, f"rank {rank} got {got}, expected {other}"
req = comm.irecv(source=other)
comm.send(rank * 10, dest=other)
assert req.wait() == other * 10
print(f"python rank {rank}: exchange ok")
PY
	set -- "$@" "$piano_run" "$program" "$tmp/app.py" ;;
*)
	echo "piano_run: unknown case '$case'" >&2
	exit 1 ;;
esac

out=$(PIANO_STATS=1 "$@" 2>&1)
status=$?
# Anywhere in a line: the launcher forwards the ranks' streams in chunks,
# and another rank's output may still lack its newline.
ranks=$(printf '%s\n' "$out" | grep -o '# piano-mpi rank [01] ' | sort -u | wc -l)
if [ "$case" = badmpi ]; then
	[ "$status" -ne 0 ] || fail "the job succeeded with --mpi bogus"
	case $out in
	*"unknown MPI 'bogus' for --mpi: use --mpi openmpi or --mpi mpich"*) ;;
	*) fail "no message saying what --mpi accepts" ;;
	esac
	[ "$ranks" -eq 0 ] || fail "PROGRAM ran with piano despite --mpi bogus"
else
	[ "$status" -eq 0 ] || fail "the job failed (exit $status): $*"
	[ "$ranks" -eq 2 ] || fail "piano was loaded in $ranks of 2 ranks (no '# piano-mpi rank' line): $*"
fi
printf '%s\n' "$out" | grep -E '^# piano-mpi rank|^python rank|piano-run:'
echo "piano_run: $case: ok"

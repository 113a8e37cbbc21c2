#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# mpmd.sh LAUNCHER PIANO_RUN PROGRAM: an MPMD job of 2 ranks, rank 0 under
# piano-run, rank 1 without (docs/mpi.md, "Known limits").
#
#   1. PIANO_COLL=native on rank 0, the documented way: the job must end
#      (exit 0) within 60 s.
#   2. The default (PIANO_COLL=auto): rank 0 waits forever in MPI_Init for
#      rank 1's part of piano's agreement; within 25 s it must say so, with
#      the remedy, instead of hanging in silence. The job is then killed.
#   3. The default, and rank 1's first call a blocking MPI_Allreduce of the
#      agreement's signature, which the MPI matches with it: rank 0 must say
#      so, with the remedy, and the job must fail, not run on with another
#      rank's data.
set -u
launcher=$1 run=$2 prog=$3
out=$(timeout 60 "$launcher" -n 1 env PIANO_COLL=native "$run" "$prog" single : \
	-n 1 "$prog" single 2>&1)
rc=$?
if [ $rc -ne 0 ]; then
	echo "$out"
	echo "mpmd: FAIL: with PIANO_COLL=native on the piano rank the job exited $rc"
	exit 1
fi
echo "mpmd: PIANO_COLL=native on the piano rank: the job ended"
out=$(timeout -k 5 25 "$launcher" -n 1 "$run" "$prog" single : -n 1 "$prog" single 2>&1)
echo "$out" | grep "piano" | head -5
if ! echo "$out" | grep -q "waits on: if some ranks of this job run without piano-run (MPMD), set PIANO_COLL=native"; then
	echo "mpmd: FAIL: no warning from the waiting rank within 25 s"
	exit 1
fi
echo "mpmd: the default: the waiting rank said why"
out=$(timeout -k 5 25 "$launcher" -n 1 "$run" "$prog" single : -n 1 "$prog" single allreduce 2>&1)
rc=$?
echo "$out" | grep "piano" | head -5
if ! echo "$out" | grep -q "agreement in MPI_Init met another collective: some ranks of this job run without piano-run (MPMD), set PIANO_COLL=native"; then
	echo "mpmd: FAIL: rank 0 did not say its agreement met another collective"
	exit 1
fi
if [ $rc -eq 0 ]; then
	echo "mpmd: FAIL: the job went on after the agreement met another collective"
	exit 1
fi
echo "mpmd: a matching collective: the job failed, rank 0 said why"

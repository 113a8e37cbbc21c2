#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# preload_python.sh PYTHON PIANO-RUN LAUNCHER...: piano stays out of the
# children of a rank that loads MPI only after start-up (PYTHON with mpi4py,
# which piano, when loaded, cannot tell from a wrapper such as env or a
# shell): once MPI_Init has run, a shell started by the rank sees LD_PRELOAD
# with the user's entries only (those of this script's own LD_PRELOAD; unset
# if it has none) and has no piano mapped. Both ranks must also show that
# piano was loaded in them (PIANO_STATS=1 "# piano-mpi rank" lines).
# Exit status: 0 passed, 1 failed, 77 skipped (no mpi4py).
set -u
if [ $# -lt 3 ]; then
	echo "usage: preload_python.sh PYTHON PIANO-RUN LAUNCHER..." >&2
	exit 1
fi
python=$1 piano_run=$2
shift 2
if [ ! -x "$python" ] || ! "$python" -c 'import mpi4py' 2>/dev/null; then
	echo "preload_python: $python has no mpi4py (Debian: apt-get install python3-mpi4py): skipped"
	exit 77
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
cat >"$tmp/app.py" <<'PY'
import os, re, subprocess, sys
from mpi4py import MPI
rank = MPI.COMM_WORLD.Get_rank()
expected = [e for e in re.split("[: ]", os.environ.get("TEST_USER_PRELOAD", "")) if e]
out = subprocess.run(["/bin/sh", "-c",
                      'if [ -n "${LD_PRELOAD+x}" ]; then printf "=%s\\n" "$LD_PRELOAD"; '
                      'else echo unset; fi; grep -c libpiano-mpi- /proc/$$/maps'],
                     capture_output=True, text=True).stdout.split("\n")
seen = None if out[0] == "unset" else [e for e in re.split("[: ]", out[0][1:]) if e]
ok = out[1] == "0" and seen == (expected or None)
print(f"python rank {rank}: child LD_PRELOAD {seen}, expected {expected or None}, "
      f"piano mapped in child: {out[1]} -> {'ok' if ok else 'FAIL'}")
MPI.COMM_WORLD.Barrier()
sys.exit(0 if ok else 1)
PY
out=$(TEST_USER_PRELOAD=${LD_PRELOAD:-} PIANO_STATS=1 "$@" "$piano_run" "$python" "$tmp/app.py" 2>&1)
status=$?
printf '%s\n' "$out" | grep -E '^python rank|^# piano-mpi rank|piano-run:|Error'
# Anywhere in a line: another rank's output may still lack its newline.
ranks=$(printf '%s\n' "$out" | grep -o '# piano-mpi rank [01] ' | sort -u | wc -l)
if [ "$status" -ne 0 ] || [ "$ranks" -ne 2 ]; then
	printf '%s\n' "$out"
	echo "preload_python: FAIL (exit $status, piano loaded in $ranks of 2 ranks)"
	exit 1
fi
echo "preload_python: ok"

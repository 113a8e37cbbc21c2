#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Summary table of a tools/conformance/run.sh results.csv.

usage: summarize.py RESULTS.CSV

Prints the number of tests per verdict and MPI, then every test that broke
the rule (REGRESSION-*), then the tests not built and those that fail
natively (not counted).
"""
import csv
import sys

VERDICTS = ["ok", "REGRESSION-fail", "REGRESSION-hang", "REGRESSION-slow",
            "native-fails", "not-built", "mpich-only", "skipped"]


def main(argv):
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    with open(argv[1], newline="") as f:
        rows = list(csv.DictReader(f))
    mpis = sorted({r["mpi"] for r in rows})
    counts = {}
    for r in rows:
        counts[(r["verdict"], r["mpi"])] = counts.get((r["verdict"], r["mpi"]), 0) + 1
    verdicts = VERDICTS + sorted({r["verdict"] for r in rows} - set(VERDICTS))
    print("Verdicts per MPI")
    print("%-17s" % "verdict" + "".join("%9s" % m for m in mpis))
    for v in verdicts:
        print("%-17s" % v + "".join("%9d" % counts.get((v, m), 0) for m in mpis))
    print("%-17s" % "total" + "".join(
        "%9d" % sum(1 for r in rows if r["mpi"] == m) for m in mpis))

    def table(title, pred, piano=True):
        sel = [r for r in rows if pred(r)]
        print()
        print("%s: %d" % (title, len(sel)))
        for r in sel:
            line = "  %-40s %-7s np=%-2s native %-7s %7ss" % (
                r["test"], r["mpi"], r["np"], r["native_result"], r["native_s"])
            if piano:
                line += "  piano %-7s %7ss  %s" % (r["piano_result"], r["piano_s"], r["verdict"])
            if r["note"]:
                line += "  (%s)" % r["note"]
            print(line)

    table("Violations of the rule (REGRESSION-*)", lambda r: r["verdict"].startswith("REGRESSION"))
    table("Not built (not counted)", lambda r: r["verdict"] == "not-built", piano=False)
    table("Failing natively (not counted)", lambda r: r["verdict"] == "native-fails", piano=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

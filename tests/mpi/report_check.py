#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""report_check.py REPORT.json EXPECT NP PROGRESS [FAILED...]: checks an
overlap report (PIANO_REPORT) against what test_report.c says each of its
call sites must show (EXPECT, per rank; NP ranks recorded it) and the header
(PROGRESS: on or off, the background progress the run had; FAILED: the
ranks that must be named as having recorded nothing, none by default).
Prints every mismatch; exit 0 when there is none, 1 otherwise."""
import json
import sys


def main():
    path, expect_path, np, progress = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    failed = [int(r) for r in sys.argv[5:]]
    with open(path) as f:
        rep = json.load(f)
    bad = []

    def check(what, got, want):
        if got != want:
            bad.append(f"{what}: {got!r}, expected {want!r}")

    check("ranks", rep["ranks"], np)
    check("failed ranks", [r["rank"] for r in rep["failed_ranks"]], failed)
    for r in rep["failed_ranks"]:
        if not r["reason"]:
            bad.append(f"rank {r['rank']} recorded nothing, and no reason is given")
    check("background_progress", rep["background_progress"], progress == "on")
    check("not_recorded", rep["not_recorded"], {"inflight_full": 0, "sites_full": 0, "stale": 0})
    lines = rep["symbols"] == "libdw"
    if not lines:
        print("report_check: symbols from dladdr: functions and lines not checked")
    for e in open(expect_path).read().split("\n"):
        if not e.strip():
            continue
        fn, line, kind, proto, ops, nbytes, freed, pending, diag = e.split()
        line, ops, nbytes, freed, pending = int(line), int(ops), int(nbytes), int(freed), int(pending)
        name = f"{fn}:{line} {kind}"
        rows = [s for s in rep["sites"] if s["kind"] == kind and
                (not lines or (s["line"] == line and s["file"].endswith("test_report.c")))]
        if lines:
            rows = [s for s in rows if s["function"] == fn]
        else:
            rows = [s for s in rows if s["protocol"] == proto and s["completed"] == ops * np]
        if len(rows) != 1:
            bad.append(f"{name}: {len(rows)} rows, expected 1")
            continue
        s = rows[0]
        check(f"{name} protocol", s["protocol"], proto)
        check(f"{name} ranks", s["ranks"], np)
        check(f"{name} completed", s["completed"], ops * np)
        check(f"{name} posted", s["posted"], (ops + freed + pending) * np)
        check(f"{name} bytes", s["bytes"], nbytes * np)
        check(f"{name} freed", s["freed"], freed * np)
        check(f"{name} pending", s["pending"], pending * np)
        check(f"{name} by (sum)", sum(s["by"].values()), ops * np)
        if s["ready"] > ops * np:
            bad.append(f"{name}: ready {s['ready']} > completed {ops * np}")
        # WANT or WANT!NOT...: a diagnosis with WANT, none with any NOT.
        want, *nots = diag.split("!")
        if want != "-" and not any(want in d for d in s["diagnoses"]):
            bad.append(f"{name}: no diagnosis with '{want}' in {s['diagnoses']}")
        for n in nots:
            if any(n in d for d in s["diagnoses"]):
                bad.append(f"{name}: a diagnosis with '{n}' in {s['diagnoses']}")
    # Every row the program made is one it expects (the pair's receive of
    # the wait_at_once loop and the eager receive are not listed: rows of
    # kinds and sites it does not name may exist, nothing else).
    for s in rep["sites"]:
        if lines and not s["file"].endswith("test_report.c"):
            bad.append(f"row of another file: {s['function']} {s['file']}:{s['line']}")
    for b in bad:
        print("report_check: FAIL:", b)
    if not bad:
        print(f"report_check: {len(rep['sites'])} rows, {np} ranks: ok")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

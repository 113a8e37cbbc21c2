#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Lists the tests of MPICH's test suite (test/mpi) for tools/conformance/run.sh.

usage: mpich_plan.py TESTMPI DIR...

TESTMPI is the test/mpi directory of an MPICH source tree, DIR a directory
below it (pt2pt, coll, threads/pt2pt...). For each line of DIR's testlist.in
(or testlist), prints one tab-separated record:

  id dir program np timelimit resulttest strict mpiversion mem xfail
  skip envs args sources cppflags libs

id is DIR/program, with #2, #3... for further lines of the same program;
envs, args, sources, cppflags and libs are space-separated lists; skip is
empty or the reason the line cannot run outside MPICH's configure (an
@...@ substitution that configure turns off by default). Empty fields are
'-'. The sources and flags come from DIR's Makefile.am (PROG_SOURCES,
PROG_CPPFLAGS, PROG_LDADD), defaulting to PROG with the directory's
AM_DEFAULT_SOURCE_EXT (.c; .f in f77/, .f90 in f08/ and f90/).
"""
import os
import re
import sys


def parse_makefile_am(path):
    """Returns ({program: {"SOURCES": [...], "CPPFLAGS": [...], "LDADD": [...]}},
    the default source extension)."""
    progs = {}
    ext = ".c"
    if not os.path.exists(path):
        return progs, ext
    with open(path) as f:
        text = f.read().replace("\\\n", " ")
    m = re.search(r"^AM_DEFAULT_SOURCE_EXT\s*=\s*(\.\w+)", text, re.M)
    if m:
        ext = m.group(1)
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9_]+)_(SOURCES|CPPFLAGS|CFLAGS|LDADD)\s*\+?=\s*(.*)$", line)
        if not m:
            continue
        prog, kind, value = m.groups()
        value = re.sub(r"#.*", "", value)
        words = [w for w in value.split()
                 if w not in ("$(AM_CPPFLAGS)", "$(LDADD)", "$(AM_CFLAGS)")]
        # @threadlib@ and similar substitutions: the runner links -lpthread.
        words = [w for w in words if not w.startswith("@") and not w.startswith("$(")]
        if kind == "CFLAGS":
            kind = "CPPFLAGS"
        progs.setdefault(prog, {}).setdefault(kind, []).extend(words)
    return progs, ext


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    top = argv[1]
    for d in argv[2:]:
        tdir = os.path.join(top, d)
        listfile = None
        for cand in ("testlist.in", "testlist"):
            if os.path.exists(os.path.join(tdir, cand)):
                listfile = os.path.join(tdir, cand)
                break
        if listfile is None:
            sys.stderr.write("mpich_plan: no testlist in %s\n" % tdir)
            return 1
        progs, ext = parse_makefile_am(os.path.join(tdir, "Makefile.am"))
        seen = {}
        with open(listfile) as f:
            for raw in f:
                line = raw.strip()
                if not line or line.startswith("#"):
                    continue
                skip = ""
                m = re.match(r"^(@[A-Za-z0-9_]+@)\s*(.*)$", line)
                if m:
                    # Configure replaces these with "#" unless an option
                    # enables them (large tests, comm_overlap...).
                    skip = "%s line (off unless MPICH's configure enables it)" % m.group(1)
                    line = m.group(2)
                if "@" in line:
                    skip = skip or "unresolved @...@ substitution"
                    line = re.sub(r"@[A-Za-z0-9_]+@", "", line)
                words = line.split()
                if len(words) < 2 or not words[1].isdigit():
                    continue
                prog, np = words[0], words[1]
                if "/" in prog:
                    continue  # a subdirectory entry, not a test
                opts = {"timeLimit": "", "resultTest": "", "strict": "",
                        "mpiversion": "", "mem": "", "xfail": ""}
                envs, args = [], []
                for w in words[2:]:
                    if "=" not in w:
                        continue
                    k, v = w.split("=", 1)
                    if k == "arg":
                        args.append(v)
                    elif k == "env":
                        envs.append(v)
                    elif k in opts:
                        opts[k] = (opts[k] + "," + v) if (k == "xfail" and opts[k]) else v
                n = seen.get(prog, 0) + 1
                seen[prog] = n
                tid = "%s/%s" % (d, prog) + ("" if n == 1 else "#%d" % n)
                p = progs.get(prog, {})
                sources = p.get("SOURCES") or [prog + ext]
                fields = [tid, d, prog, np, opts["timeLimit"], opts["resultTest"],
                          opts["strict"].lower(), opts["mpiversion"], opts["mem"],
                          opts["xfail"], skip, " ".join(envs), " ".join(args),
                          " ".join(sources), " ".join(p.get("CPPFLAGS", [])),
                          " ".join(p.get("LDADD", []))]
                print("\t".join(x if x else "-" for x in fields))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))

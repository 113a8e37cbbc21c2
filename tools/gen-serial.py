#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes libpiano-mpi's serializing wrappers for one MPI.

    tools/gen-serial.py MPICC OUTPUT.c

MPICC is the MPI's compiler wrapper (mpicc.openmpi, mpicc.mpich): it
preprocesses <mpi.h> (`MPICC -E -P`), so that every macro the prototypes
use is expanded the way the library was built. For every C function of the MPI
that returns int (except those listed in SKIP), OUTPUT.c gets a weak
wrapper

    int MPI_X(args) { SERIAL_WRAP(PMPI_X(args)); }

that closes piano's gate for the length of the call in serialized mode
(src/mpi/serial.h, docs/mpi.md "Serialized mode"). The layer's own
wrappers of the same names are strong definitions and win at link time;
they close the gate with PMPI_APP_SCOPE(). Python 3 standard library only.
"""
import re
import subprocess
import sys

# Not wrapped: callable at any time from any thread by the standard (the
# tools interface, the initialisation queries), not a call into the MPI's
# communication state (MPI_Pcontrol, varargs), or set-up calls the layer
# wraps itself in every case.
SKIP_PREFIXES = ("MPI_T_",)
SKIP = {
    "MPI_Pcontrol",
    "MPI_Initialized",
    "MPI_Finalized",
    "MPI_Is_thread_main",
    "MPI_Get_version",
    "MPI_Get_library_version",
}


def strip_attributes(text):
    """Removes every __attribute__((...)) (balanced parentheses)."""
    out, i = [], 0
    key = "__attribute__"
    while True:
        j = text.find(key, i)
        if j < 0:
            out.append(text[i:])
            return "".join(out)
        out.append(text[i:j])
        k = text.index("(", j)
        depth = 0
        while True:
            if text[k] == "(":
                depth += 1
            elif text[k] == ")":
                depth -= 1
                if depth == 0:
                    break
            k += 1
        i = k + 1


def split_params(params):
    """Splits a parameter list at its top-level commas."""
    parts, depth, cur = [], 0, []
    for c in params:
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
        if c == "," and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


def param_name(p):
    """The name a parameter declaration declares: `int ranges[][3]` ->
    ranges, `MPI_Comm comm` -> comm, `int (*fn)(int)` -> fn."""
    m = re.search(r"\(\s*\*\s*(\w+)\s*\)", p)
    if m:
        return m.group(1)
    p = re.sub(r"(\[[^\]]*\])+\s*$", "", p)
    m = re.search(r"(\w+)\s*$", p)
    if not m:
        return None
    return m.group(1)


def defined_pmpi(mpicc):
    """The PMPI_ functions the MPI's libraries define (a few are declared
    in mpi.h but not built, e.g. MPICH's PMPI_Status_f082c)."""
    show = subprocess.run([mpicc, "-show"], capture_output=True, text=True, check=True).stdout
    words = show.split()
    dirs = [w[2:] for w in words if w.startswith("-L")] + [
        "/usr/lib/x86_64-linux-gnu", "/usr/lib", "/lib"]
    libs = [w[2:] for w in words if w.startswith("-l")]
    names = set()
    for lib in libs:
        for d in dirs:
            path = f"{d}/lib{lib}.so"
            try:
                out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True,
                                     text=True, check=True).stdout
            except (OSError, subprocess.CalledProcessError):
                continue
            names.update(line.split()[-1] for line in out.splitlines() if " PMPI_" in line)
            break
    if not names:
        sys.exit(f"gen-serial.py: no PMPI_ function found in the libraries of {mpicc} -show")
    return names


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: gen-serial.py MPICC OUTPUT.c")
    try:
        pre = subprocess.run([sys.argv[1], "-E", "-P", "-x", "c", "-"], input="#include <mpi.h>\n",
                             capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"gen-serial.py: {sys.argv[1]} -E <mpi.h> failed: {e}")
    text = strip_attributes(pre.stdout)
    have = defined_pmpi(sys.argv[1])
    text = re.sub(r"\s+", " ", text)
    seen, out = set(), []
    for decl in text.split(";"):
        m = re.fullmatch(r"\s*(?:extern\s+)?int\s+(MPI_\w+)\s*\((.*)\)\s*", decl)
        if not m:
            continue
        name, params = m.group(1), m.group(2).strip()
        if (name in seen or name in SKIP or name.startswith(SKIP_PREFIXES) or
                "P" + name not in have):
            continue
        seen.add(name)
        plist = [] if params in ("", "void") else split_params(params)
        names = [param_name(p) for p in plist]
        if any(n is None for n in names) or any("..." in p for p in plist):
            sys.exit(f"gen-serial.py: cannot read the parameters of {name}({params})")
        args = ", ".join(names)
        decl_params = ", ".join(plist) if plist else "void"
        out.append(
            f"SERIAL_EXPORT int {name}({decl_params})\n"
            f"{{\n\tSERIAL_WRAP(P{name}({args}));\n}}\n"
        )
    if len(out) < 200:
        sys.exit(f"gen-serial.py: only {len(out)} functions in {sys.argv[1]}: not an mpi.h?")
    with open(sys.argv[2], "w") as f:
        f.write(
            "/* Generated by tools/gen-serial.py from the MPI's mpi.h: do not edit. */\n"
            '#include "serial.h"\n\n'
            "/* Deprecated MPI functions are wrapped too: applications still call them. */\n"
            '#pragma GCC diagnostic ignored "-Wdeprecated-declarations"\n\n'
        )
        f.write("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

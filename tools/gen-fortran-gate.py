#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes libpiano-mpi's gate wrappers of Open MPI's Fortran procedures.

    tools/gen-fortran-gate.py MPICC FORTRAN_TBL OUTPUT.c

Open MPI's Fortran procedures (libmpi_mpifh: mpif.h, `use mpi`, and the
ompi_*_f functions its `use mpi_f08` procedures call) call the C PMPI_
functions directly, past the serializing wrappers of tools/gen-serial.py.
For every procedure of that library whose C function mpi.h declares and
returns int, OUTPUT.c gets a wrapper that closes piano's gate for the
length of the call in serialized mode and calls the MPI's own procedure
under its upper-case profiling name (PMPI_SEND: an alias of ompi_send_f
that piano never defines):

    static void fgate_send(void *a0, ..., MPI_Fint *ierr) { FGATE(PMPI_SEND, ...); }

exported as mpi_send, mpi_send_, mpi_send__, MPI_SEND, ompi_send_f and
pmpi_send_ (the name Open MPI's `use mpi_f08` procedures call for some
procedures: pmpi_iprobe_, pmpi_info_get_, ...).
The calls of FORTRAN_TBL (src/mpi/fortran.tbl) bound for `ompi` are left
out: piano's own wrappers of them call its C wrappers, which close the gate.

The Fortran arguments are the C function's, each by reference, then
ierror, then one hidden length for every character argument (char *,
char [], char *[], char **[]: gfortran passes a size_t, Open MPI's f08
procedures an int, the wrapper forwards the register or stack slot as it
came). Fortran-only variants (MPI_ALLOC_MEM_CPTR & co.) take the
arguments of the call they vary. Checked against Open MPI 4.1.4's
ompi/mpi/fortran/mpif-h/prototypes_mpi.h: every procedure generated here
has the arguments listed there.

MPICC is the MPI's compiler wrapper (its -show gives the library
directory); without libmpi_mpifh there, OUTPUT.c defines no wrapper and
the runtime check (src/mpi/fortran_gate.c) finds nothing to cover.
Python 3 standard library only.
"""
import importlib.util
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("gen_serial", os.path.join(HERE, "gen-serial.py"))
gen_serial = importlib.util.module_from_spec(spec)
spec.loader.exec_module(gen_serial)

# Fortran-only procedures: the C call whose arguments they take.
# MPI-1 calls that MPI-3.0 removed: no prototype in mpi.h, still in the
# Fortran library (old codes call MPI_ADDRESS, MPI_TYPE_STRUCT): their
# number of arguments before ierror, none of them a character one.
REMOVED = {
    "address": 2,
    "errhandler_create": 2,
    "errhandler_get": 2,
    "errhandler_set": 2,
    "type_extent": 2,
    "type_hindexed": 5,
    "type_hvector": 5,
    "type_lb": 2,
    "type_struct": 5,
    "type_ub": 2,
}

VARIANTS = {
    "alloc_mem_cptr": "alloc_mem",
    "win_allocate_cptr": "win_allocate",
    "win_allocate_shared_cptr": "win_allocate_shared",
    "win_shared_query_cptr": "win_shared_query",
}


def mpifh_procedures(mpicc):
    """The procedures libmpi_mpifh defines, as (prefix, name) from
    ompi_<name>_f and ompix_<name>_f, or an empty set."""
    show = subprocess.run([mpicc, "-show"], capture_output=True, text=True, check=True).stdout
    dirs = [w[2:] for w in show.split() if w.startswith("-L")]
    dirs += ["/usr/lib/x86_64-linux-gnu/openmpi/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib"]
    for d in dirs:
        path = os.path.join(d, "libmpi_mpifh.so")
        if not os.path.exists(path):
            continue
        out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True, text=True,
                             check=True).stdout
        names = set()
        for line in out.splitlines():
            m = re.fullmatch(r"\S+\s+T\s+ompi(x?)_(\w+)_f", line.strip())
            if m:
                names.add(("mpix" if m.group(1) else "mpi", m.group(2)))
        return names
    return set()


def tbl_calls(path):
    """The calls src/mpi/fortran.tbl binds for Open MPI (lower case)."""
    calls = set()
    with open(path) as f:
        for line in f:
            words = line.split("#", 1)[0].split()
            if len(words) >= 2 and "ompi" in words[1:]:
                calls.add(words[0].lower())
    return calls


def c_prototypes(mpicc):
    """int-returning MPI_ and MPIX_ functions of mpi.h (and Open MPI's
    mpi-ext.h): name -> parameter list."""
    src = "#include <mpi.h>\n#if defined(OPEN_MPI)\n#include <mpi-ext.h>\n#endif\n"
    pre = subprocess.run([mpicc, "-E", "-P", "-x", "c", "-"], input=src,
                         capture_output=True, text=True, check=True)
    text = re.sub(r"\s+", " ", gen_serial.strip_attributes(pre.stdout))
    protos = {}
    for decl in text.split(";"):
        m = re.fullmatch(r"\s*(?:extern\s+)?int\s+(MPIX?_\w+)\s*\((.*)\)\s*", decl)
        if not m or m.group(1) in protos:
            continue
        params = m.group(2).strip()
        protos[m.group(1)] = [] if params in ("", "void") else gen_serial.split_params(params)
    return protos


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: gen-fortran-gate.py MPICC FORTRAN_TBL OUTPUT.c")
    mpicc, tbl, output = sys.argv[1:]
    procs = mpifh_procedures(mpicc)
    protos = c_prototypes(mpicc)
    bound = tbl_calls(tbl)
    by_lower = {name.split("_", 1)[0].lower() + "_" + name.split("_", 1)[1].lower(): name
                for name in protos}
    out = []
    for prefix, lower in sorted(procs):
        if prefix == "mpi" and lower in bound:
            continue
        if prefix == "mpi" and lower in REMOVED:
            params = ["void *"] * REMOVED[lower]
        else:
            cname = by_lower.get(f"{prefix}_{VARIANTS.get(lower, lower)}")
            if cname is None or cname in gen_serial.SKIP:
                continue
            params = protos[cname]
        if any("..." in p for p in params):
            continue
        types, lens = [], []
        for i, p in enumerate(params):
            types.append("void *")
            if re.search(r"\bchar\b", p):
                lens.append(i)
        types.append("MPI_Fint *")
        types += ["size_t"] * len(lens)
        names = [f"a{i}" for i in range(len(params))] + ["ierr"] + [f"l{i}" for i in lens]
        decl = ", ".join(f"{t}{'' if t.endswith('*') else ' '}{n}" for t, n in zip(types, names))
        real = f"P{prefix.upper()}_{lower.upper()}"
        out.append(f"extern void {real}({', '.join(types)}) __attribute__((weak));\n"
                   f"static void fgate_{prefix}_{lower}({decl})\n"
                   f"{{\n\tFGATE({real}, \"{real[1:]}\", ierr, {', '.join(names)});\n}}\n"
                   f"FGATE_NAMES(fgate_{prefix}_{lower}, {prefix}_{lower}, {real[1:]}, "
                   f"o{prefix}_{lower}_f, p{prefix}_{lower}_);\n")
    with open(output, "w") as f:
        f.write("/* Generated by tools/gen-fortran-gate.py from Open MPI's mpi.h and "
                "libmpi_mpifh: do not edit. */\n"
                '#include "fortran_gate.h"\n\n')
        f.write("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

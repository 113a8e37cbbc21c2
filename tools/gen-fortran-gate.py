#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes libpiano-mpi's gate wrappers of an MPI's Fortran procedures.

    tools/gen-fortran-gate.py openmpi|mpich MPICC SRC_MPI_DIR OUTPUT.c

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
The calls of SRC_MPI_DIR/fortran.tbl bound for `ompi` are left out:
piano's own wrappers of them call its C wrappers, which close the gate.

MPICH (libmpichfort): its mpif.h procedures call the C MPI_ functions,
which the serializing wrappers gate, but its `use mpi_f08` procedures
(mpi_send_f08ts_, mpi_comm_compare_f08_, mpi_send_f08ts_large_ ...) call
PMPI_ themselves (279 of 528 in 4.0.2). Each gets a wrapper under its own
name that calls the MPI's profiling twin (pmpir_comm_compare_f08_), with
the arguments of the C function (MPI_Send_c for the _large ones), the
OPTIONAL ierror (NULL when absent) and the hidden lengths, by the same
rule; those piano binds itself (fortran_mpich08.c and .inc) are left out.
Checked against the f08 procedures MPICH 4.0.2's own generator writes
(maint/gen_binding_f08.py of its v4.0.2 tag: wrappers_f/f08ts.f90): every
procedure generated here has the dummy arguments, character ones in the
same order, listed there.

The Fortran arguments are the C function's, each by reference, then
ierror, then one hidden length for every character argument (char *,
char [], char *[], char **[]: gfortran passes a size_t, Open MPI's f08
procedures an int, the wrapper forwards the register or stack slot as it
came). Fortran-only variants (MPI_ALLOC_MEM_CPTR & co.) take the
arguments of the call they vary. Checked against Open MPI 4.1.4's
ompi/mpi/fortran/mpif-h/prototypes_mpi.h: every procedure generated here
has the arguments listed there.

MPICC is the MPI's compiler wrapper (its -show gives the library
directory); without the Fortran library there, OUTPUT.c defines no wrapper
and the runtime check (src/mpi/fortran_gate.c) finds nothing to cover.
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

# MPICH's f08 procedures whose arguments are not the C function's: MPI-4's
# MPI_Info_create_env takes argc and argv in C only.
F08_PARAMS = {
    "info_create_env": ["MPI_Info *info"],
}

VARIANTS = {
    "alloc_mem_cptr": "alloc_mem",
    "win_allocate_cptr": "win_allocate",
    "win_allocate_shared_cptr": "win_allocate_shared",
    "win_shared_query_cptr": "win_shared_query",
}


def library_symbols(mpicc, lib):
    """The defined function names of the MPI's library `lib` (libX.so in
    the -L directories of MPICC -show or the system's), or an empty list."""
    show = subprocess.run([mpicc, "-show"], capture_output=True, text=True, check=True).stdout
    dirs = [w[2:] for w in show.split() if w.startswith("-L")]
    dirs += ["/usr/lib/x86_64-linux-gnu/openmpi/lib", "/usr/lib/x86_64-linux-gnu", "/usr/lib"]
    for d in dirs:
        path = os.path.join(d, lib)
        if os.path.exists(path):
            out = subprocess.run(["nm", "-D", "--defined-only", path], capture_output=True,
                                 text=True, check=True).stdout
            return [w[2] for w in (line.split() for line in out.splitlines())
                    if len(w) == 3 and w[1] in "TW"]
    return []


def mpifh_procedures(mpicc):
    """The procedures Open MPI's libmpi_mpifh defines, as (prefix, name)
    from ompi_<name>_f and ompix_<name>_f."""
    names = set()
    for sym in library_symbols(mpicc, "libmpi_mpifh.so"):
        m = re.fullmatch(r"ompi(x?)_(\w+)_f", sym)
        if m:
            names.add(("mpix" if m.group(1) else "mpi", m.group(2)))
    return names


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


def wrapper(impl, real, label, params):
    """A gate wrapper `impl` of the MPI's procedure `real` whose Fortran
    arguments are those of the C function with parameters `params` (see
    the top), ending in its name's exports (left to the caller)."""
    types, lens = [], []
    for i, p in enumerate(params):
        types.append("void *")
        if re.search(r"\bchar\b", p):
            lens.append(i)
    types.append("MPI_Fint *")
    types += ["size_t"] * len(lens)
    names = [f"a{i}" for i in range(len(params))] + ["ierr"] + [f"l{i}" for i in lens]
    decl = ", ".join(f"{t}{'' if t.endswith('*') else ' '}{n}" for t, n in zip(types, names))
    return (f"extern void {real}({', '.join(types)}) __attribute__((weak));\n"
            f"static void {impl}({decl})\n"
            f"{{\n\tFGATE({real}, \"{label}\", ierr, {', '.join(names)});\n}}\n")


def openmpi(mpicc, srcdir, protos, by_lower):
    """Open MPI: every procedure of libmpi_mpifh that fortran.tbl leaves."""
    bound = tbl_calls(os.path.join(srcdir, "fortran.tbl"))
    out = []
    for prefix, lower in sorted(mpifh_procedures(mpicc)):
        if (lower if prefix == "mpi" else f"{prefix}_{lower}") in bound:
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
        real = f"P{prefix.upper()}_{lower.upper()}"
        impl = f"fgate_{prefix}_{lower}"
        out.append(wrapper(impl, real, real[1:], params) +
                   f"FGATE_NAMES({impl}, {prefix}_{lower}, {real[1:]}, "
                   f"o{prefix}_{lower}_f, p{prefix}_{lower}_);\n")
    return out


def mpich_bound(srcdir):
    """The f08 procedure names piano's MPICH bindings export already."""
    names = set()
    for f in ("fortran_mpich08.inc", "fortran_mpich08.c"):
        with open(os.path.join(srcdir, f)) as fh:
            names.update(re.findall(r"F08_NAME\(\s*\w+\s*,\s*(\w+)\s*\)", fh.read()))
    return names


def mpich(mpicc, srcdir, protos, by_lower):
    """MPICH: every `use mpi_f08` procedure of libmpichfort with a profiling
    twin, that piano does not bind."""
    syms = set(library_symbols(mpicc, "libmpichfort.so"))
    bound = mpich_bound(srcdir)
    out = []
    for sym in sorted(syms):
        m = re.fullmatch(r"(mpix?)_(\w+?)_(f08|f08ts)(_large)?_", sym)
        if not m or sym in bound:
            continue
        prefix, lower, large = m.group(1), m.group(2), m.group(4)
        cname = by_lower.get(f"{prefix}_{lower}{'_c' if large else ''}")
        if cname is None or cname in gen_serial.SKIP:
            continue
        params = F08_PARAMS.get(lower, protos[cname])
        if any("..." in p for p in params):
            continue
        real = f"p{prefix}r_{sym[len(prefix) + 1:]}"
        if real not in syms:
            continue
        impl = f"fgate_{sym[:-1]}"
        out.append(wrapper(impl, real, sym, params) + f"FGATE_NAME({impl}, {sym});\n")
    return out


def main():
    if len(sys.argv) != 5 or sys.argv[1] not in ("openmpi", "mpich"):
        sys.exit("usage: gen-fortran-gate.py openmpi|mpich MPICC SRC_MPI_DIR OUTPUT.c")
    flavour, mpicc, srcdir, output = sys.argv[1:]
    protos = c_prototypes(mpicc)
    by_lower = {name.split("_", 1)[0].lower() + "_" + name.split("_", 1)[1].lower(): name
                for name in protos}
    out = (openmpi if flavour == "openmpi" else mpich)(mpicc, srcdir, protos, by_lower)
    with open(output, "w") as f:
        f.write(f"/* Generated by tools/gen-fortran-gate.py from {flavour}'s mpi.h and Fortran "
                "library: do not edit. */\n"
                '#include "fortran_gate.h"\n\n')
        f.write("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

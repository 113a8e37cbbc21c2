#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes libpiano-mpi's Fortran wrappers from src/mpi/fortran.tbl.

    tools/gen-fortran.py            rewrite src/mpi/fortran_<binding>.inc
    tools/gen-fortran.py --check    exit 1 if a checked-in file differs

Each binding's .inc is included at the end of src/mpi/fortran_<binding>.c,
which defines the helpers the generated code uses (fbuf, ierr_set, the
export macros) and the `special` wrappers. Python 3 standard library only.
"""
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
TABLE = ROOT / "src" / "mpi" / "fortran.tbl"
BINDINGS = ("ompi", "mpich08")
# Not a binding of its own: with ompi, the wrapper is also exported as
# pmpi_<call>_, which Open MPI's `use mpi_f08` procedures call for it.
OMPI_PMPI = "ompi_pmpi"

# kind -> (Fortran parameter type, C argument expression for parameter p)
KINDS = {
    "buf": ("void *", "fbuf({p})"),
    "int": ("MPI_Fint *", "(int)*{p}"),
    "int[]": ("MPI_Fint *", "(const int *){p}"),
    "aint": ("MPI_Aint *", "*{p}"),
    "offset": ("MPI_Offset *", "*{p}"),
    "offset_out": ("MPI_Offset *", "{p}"),
    "logical": ("MPI_Fint *", "*{p} != 0"),
    "type": ("MPI_Fint *", "PMPI_Type_f2c(*{p})"),
    "comm": ("MPI_Fint *", "PMPI_Comm_f2c(*{p})"),
    "comm_out": ("MPI_Fint *", "&nc"),
    "group": ("MPI_Fint *", "PMPI_Group_f2c(*{p})"),
    "info": ("MPI_Fint *", "PMPI_Info_f2c(*{p})"),
    "weights": ("MPI_Fint *", "fweights({p})"),
    "op": ("MPI_Fint *", "PMPI_Op_f2c(*{p})"),
    "win": ("MPI_Fint *", "PMPI_Win_f2c(*{p})"),
    "file": ("MPI_Fint *", "PMPI_File_f2c(*{p})"),
    "msg": ("MPI_Fint *", "&m"),
    "req": ("MPI_Fint *", "&r"),
    "status": ("MPI_Fint *", "status_in({p}, &st)"),
}


# A name written MPIX_<Call> is a call of Open MPI's extensions (mpi-ext.h):
# C function MPIX_<Call>, Fortran symbols mpix_<call>_ and ompix_<call>_f.
# Its wrappers are compiled only where the extension exists (PIANO_F_MPIX,
# defined by fortran_ompi.c), and are exported under the profiling name
# pmpix_<call>_ as well.
MPIX = "MPIX_"


def split_name(name):
    """(C prefix, call) of a table name: ("MPIX_", "Bcast_init") or ("MPI_", "Send")."""
    if name.startswith(MPIX):
        return MPIX, name[len(MPIX):]
    return "MPI_", name


def fail(lineno, msg):
    sys.exit(f"{TABLE.relative_to(ROOT)}:{lineno}: {msg}")


def read_table():
    calls = []
    seen = set()
    for lineno, line in enumerate(TABLE.read_text().splitlines(), 1):
        line = line.split("#", 1)[0].split()
        if not line:
            continue
        name, rest = line[0], line[1:]
        binds = [w for w in rest if w in BINDINGS or w == OMPI_PMPI]
        args = rest[len(binds):]
        if OMPI_PMPI in binds and "ompi" not in binds:
            fail(lineno, f"{name}: {OMPI_PMPI} without ompi")
        if not binds:
            fail(lineno, f"{name}: no binding (one of {', '.join(BINDINGS)})")
        if name in seen:
            fail(lineno, f"{name} listed twice")
        seen.add(name)
        if name.startswith(MPIX) and binds != ["ompi"]:
            fail(lineno, f"{name}: an MPIX_ call is bound for ompi alone")
        special = args == ["special"]
        if not special:
            for a in args:
                if a not in KINDS:
                    fail(lineno, f"{name}: unknown argument kind '{a}'")
            if any(args.count(k) > 1 for k in ("req", "msg", "status", "comm_out")):
                fail(lineno, f"{name}: more than one req, msg, status or comm_out")
        calls.append((name, binds, None if special else args))
    return calls


def wrapper(name, args):
    prefix, call_name = split_name(name)
    lower = (prefix[:-1] + "_" + call_name).lower() if prefix == MPIX else name.lower()
    params = [f"{KINDS[k][0]}a{i}" for i, k in enumerate(args)] + ["MPI_Fint *ierr"]
    cargs = [KINDS[k][1].format(p=f"a{i}") for i, k in enumerate(args)]
    head = f"static void f_{lower}("
    out = [head + params[0]]
    width = len(head)
    for p in params[1:]:
        if len(out[-1]) + len(p) + 2 > 96:
            out[-1] += ","
            out.append(" " * width + p)
        else:
            out[-1] += ", " + p
    out[-1] += ")"
    out.append("{")
    if "req" in args:
        out.append("\tREPORT_FORTRAN_SCOPE();")
    if "msg" in args:
        i = args.index("msg")
        out.append(f"\tMPI_Message m = PMPI_Message_f2c(*a{i});")
    if "req" in args:
        out.append("\tMPI_Request r = MPI_REQUEST_NULL;")
    if "comm_out" in args:
        out.append("\tMPI_Comm nc = MPI_COMM_NULL;")
    if "status" in args:
        out.append("\tMPI_Status st;")
    call = f"\tint rc = {prefix}{call_name}("
    line = call
    lines = []
    for j, a in enumerate(cargs):
        piece = a + (", " if j + 1 < len(cargs) else ");")
        if len(line) + len(piece) > 96:
            lines.append(line.rstrip())
            line = "\t" + " " * (len(call) - 1) + piece
        else:
            line += piece
    lines.append(line)
    out += lines
    post = []
    if "msg" in args:
        post.append(f"*a{args.index('msg')} = PMPI_Message_c2f(m);")
    # The request is written on an error too, as the null request: a call
    # that fails in piano's layer (a graph collective that could not be
    # built) raises the handler, and a Fortran caller that goes on must hold
    # a null handle, not its variable's previous one. Null whatever the C
    # call left: an MPI may return an error with a request set.
    always = []
    if "req" in args:
        always.append(f"*a{args.index('req')} = "
                      "PMPI_Request_c2f(rc == MPI_SUCCESS ? r : MPI_REQUEST_NULL);")
    if "comm_out" in args:
        post.append(f"*a{args.index('comm_out')} = PMPI_Comm_c2f(nc);")
    if "status" in args:
        post.append(f"status_out(&st, a{args.index('status')});")
    if len(post) == 1:
        out.append("\tif (rc == MPI_SUCCESS)")
        out.append("\t\t" + post[0])
    elif post:
        out.append("\tif (rc == MPI_SUCCESS) {")
        out += ["\t\t" + p for p in post]
        out.append("\t}")
    out += ["\t" + a for a in always]
    out.append("\tierr_set(ierr, rc);")
    out.append("}")
    return out


def generate(binding, calls):
    out = [
        "/* SPDX-License-Identifier: BSD-3-Clause */",
        "/* Generated by tools/gen-fortran.py from src/mpi/fortran.tbl: do not edit. */",
        "/* Included by src/mpi/fortran_%s.c. */" % binding,
        "",
    ]
    for name, binds, args in calls:
        if binding not in binds:
            continue
        prefix, call_name = split_name(name)
        if prefix == MPIX:
            lower = "mpix_" + call_name.lower()
            out.append("#if PIANO_F_MPIX")
            out += wrapper(name, args) if args is not None else []
            out.append(f"FORTRAN_NAMES(f_{lower}, {lower}, {lower.upper()});")
            out.append(f"F08_NAME(f_{lower}, o{lower}_f);")
            # The profiling name too, as the gate's wrappers had it
            # (gen-fortran-gate.py leaves the bound calls out).
            out.append(f"F08_NAME(f_{lower}, p{lower}_);")
            out.append("#endif")
            out.append("")
            continue
        lower = name.lower()
        if args is not None:
            out += wrapper(name, args)
        if binding == "ompi":
            out.append(f"FORTRAN_NAMES(f_{lower}, mpi_{lower}, MPI_{name.upper()});")
            out.append(f"F08_NAME(f_{lower}, ompi_{lower}_f);")
            if OMPI_PMPI in binds:
                out.append(f"F08_NAME(f_{lower}, pmpi_{lower}_);")
        else:
            out.append(f"F08_NAME(f_{lower}, mpi_{lower}_f08_);")
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"


def main():
    check = sys.argv[1:] == ["--check"]
    if sys.argv[1:] and not check:
        sys.exit(__doc__)
    calls = read_table()
    stale = []
    for b in BINDINGS:
        path = ROOT / "src" / "mpi" / f"fortran_{b}.inc"
        text = generate(b, calls)
        old = path.read_text() if path.exists() else None
        if old == text:
            continue
        if check:
            stale.append(str(path.relative_to(ROOT)))
        else:
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    if stale:
        print("out of date (run tools/gen-fortran.py): " + " ".join(stale), file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()

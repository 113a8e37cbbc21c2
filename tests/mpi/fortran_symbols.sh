#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# fortran_symbols.sh LIBPIANO-MPI FORTRAN-PROGRAM: every Fortran symbol the
# library exports (src/mpi/fortran.tbl: mpi_*_ and its manglings, ompi_*_f, pmpi_*_,
# mpi_*_f08_) is defined by the MPI library a Fortran program loads, so that
# it takes the place of one (a misspelt name would interpose nothing and go
# unnoticed). The MPI's libraries are found with ldd on FORTRAN-PROGRAM.
# NM names the nm program. Exit status: 0 passed, 1 failed.
set -u
nm=${NM:-nm}
lib=$1 program=$2
mpilibs=$(ldd "$program" | awk '$3 ~ /mpi/ { print $3 }')
[ -n "$mpilibs" ] || { echo "fortran_symbols: FAIL: $program loads no MPI library"; exit 1; }
# One pass over two sorted lists: a grep per symbol over the MPI's whole
# symbol list took most of a minute for the 2,000-odd names of the Open MPI
# library on a loaded machine (its ctest timeout is 60 s).
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
for l in $mpilibs; do "$nm" -D --defined-only "$l"; done | awk '{ print $3 }' | sort -u >"$tmp/defined"
"$nm" -D --defined-only "$lib" | awk '{ print $3 }' |
	grep -E '^(mpi_[a-z0-9_]+|pmpi_[a-z0-9_]+_|ompi_[a-z0-9_]+_f|MPI_[A-Z0-9_]+)$' |
	grep -v '^MPI_[A-Z0-9]*_[a-z]' | sort -u >"$tmp/ours"
n=$(wc -l <"$tmp/ours")
awk 'NR == FNR { defined[$0] = 1; next } !($0 in defined)' "$tmp/defined" "$tmp/ours" >"$tmp/missing"
bad=$(wc -l <"$tmp/missing")
while read -r s; do
	echo "fortran_symbols: $s is not a symbol of the MPI ($mpilibs)"
done <"$tmp/missing"
[ "$n" -gt 0 ] || { echo "fortran_symbols: FAIL: $lib exports no Fortran symbol"; exit 1; }
[ "$bad" -eq 0 ] || { echo "fortran_symbols: FAIL: $bad of $n"; exit 1; }
echo "fortran_symbols: $n symbols, all the MPI's"

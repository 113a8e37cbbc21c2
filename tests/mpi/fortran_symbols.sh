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
defined=$(for l in $mpilibs; do "$nm" -D --defined-only "$l"; done | awk '{ print $3 }' | sort -u)
ours=$("$nm" -D --defined-only "$lib" | awk '{ print $3 }' |
	grep -E '^(mpi_[a-z0-9_]+|pmpi_[a-z0-9_]+_|ompi_[a-z0-9_]+_f|MPI_[A-Z0-9_]+)$' | grep -v '^MPI_[A-Z0-9]*_[a-z]' | sort -u)
n=0 bad=0
for s in $ours; do
	n=$((n + 1))
	if ! printf '%s\n' "$defined" | grep -qx "$s"; then
		echo "fortran_symbols: $s is not a symbol of the MPI ($mpilibs)"
		bad=$((bad + 1))
	fi
done
[ "$n" -gt 0 ] || { echo "fortran_symbols: FAIL: $lib exports no Fortran symbol"; exit 1; }
[ "$bad" -eq 0 ] || { echo "fortran_symbols: FAIL: $bad of $n"; exit 1; }
echo "fortran_symbols: $n symbols, all the MPI's"

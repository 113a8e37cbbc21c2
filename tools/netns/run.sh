#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# run.sh [OPTIONS] [--] COMMAND [ARGS...]: runs an MPI job across the hosts
# of up.sh, rank i on host i % N (round robin), over TCP on piano-eth only.
#
#   --mpi openmpi|mpich  the MPI (default openmpi)
#   --np N               number of ranks (default: the number of hosts)
#   --env NAME=VALUE     set in every rank's environment (repeatable); the
#                        caller's environment is passed through as well
#   -h, --help
#   run.sh openmpi|mpich NP COMMAND [ARGS...]   older form, still accepted
#
# COMMAND may be a launcher prefix such as build/piano-run: relative paths
# of COMMAND are made absolute (the other hosts start it too).
#
# Every host has its own hostname (its namespace's name, in a UTS namespace
# of its own), as real hosts do: Open MPI's session directories then differ.
# The launcher (mpirun / mpiexec) runs on host 0: its address is then
# local, the ranks of host 0 are started directly and the others through
# rsh.sh, and every connection back to the launcher (Open MPI's OOB,
# hydra's control socket) goes over the harness's links. Running it in the
# root namespace would need an address there, i.e. traffic outside the
# test hosts.
#
# Open MPI: hostfile of up.sh, --map-by node, --bind-to none (the "hosts"
#   share the machine's cores), TCP BTL (no shared memory between "hosts")
#   and OOB restricted to 10.77.0.0/24.
# MPICH (hydra, ch4:ucx): -hosts with the addresses (one slot each, filled
#   round robin), UCX restricted to TCP on piano-eth, hydra on piano-eth.
#   Debian's MPICH 4.0.2 over UCX/TCP hangs now and then in MPI_Finalize
#   (with or without piano): run it under `timeout`.
#
# Extra launcher options: PIANO_NETNS_ARGS (word-split). Exit status: the
# launcher's; 2 usage error; 77 when not root or when the hosts are not up.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/netns/common.sh
. "$here/common.sh"

usage() { sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed -e '/^set -euo/d' -e 's/^# \{0,1\}//'; }
bad() { echo "run.sh: $*" >&2; exit 2; }

mpi=openmpi
np=""
envs=()

parse_args() {
	# Older form: run.sh MPI NP COMMAND...
	if [ $# -ge 3 ] && { [ "$1" = openmpi ] || [ "$1" = mpich ]; }; then
		mpi=$1 np=$2
		shift 2
		cmd=("$@")
		return
	fi
	while [ $# -gt 0 ]; do
		case "$1" in
		--mpi | --np | --env)
			[ $# -ge 2 ] || bad "$1 needs a value"
			case "$1" in
			--mpi) mpi=$2 ;;
			--np) np=$2 ;;
			--env) envs+=("$2") ;;
			esac
			shift 2
			;;
		-h | --help) usage; exit 0 ;;
		--) shift; break ;;
		-*) bad "unknown option '$1' (see --help)" ;;
		*) break ;;
		esac
	done
	[ $# -ge 1 ] || bad "no COMMAND (see --help)"
	cmd=("$@")
}

validate() {
	local e
	case "$mpi" in openmpi | mpich) ;; *) bad "bad --mpi '$mpi' (accepted: openmpi, mpich)" ;; esac
	case "$np" in '' | *[!0-9]* | 0) [ -z "$np" ] || bad "bad --np '$np' (accepted: 1 or more)" ;; esac
	for e in "${envs[@]+"${envs[@]}"}"; do
		[[ "$e" =~ ^[A-Za-z_][A-Za-z0-9_]*= ]] || bad "bad --env '$e' (accepted: NAME=VALUE)"
	done
}

# Sets hosts and addrs from up.sh's state; exit 77 when not up.
load_hosts() {
	local i
	hosts=$(piano_state_get hosts)
	if [ -z "$hosts" ] || [ ! -r "$PIANO_HOSTFILE" ]; then
		echo "run.sh: $PIANO_STATEFILE missing: run tools/netns/up.sh first" >&2
		exit 77
	fi
	addrs=()
	for ((i = 0; i < hosts; i++)); do
		if ! ip netns list 2>/dev/null | grep -q "^$(piano_ns "$i")\\b"; then
			echo "run.sh: namespace $(piano_ns "$i") missing: run tools/netns/up.sh again" >&2
			exit 77
		fi
		addrs+=("$(piano_addr "$i")")
	done
	[ -n "$np" ] || np=$hosts
}

main() {
	parse_args "$@"
	validate
	piano_need_root
	load_hosts
	# The other hosts start COMMAND too: make it absolute when it names a
	# file.
	if [ -e "${cmd[0]}" ]; then
		cmd[0]=$(cd "$(dirname "${cmd[0]}")" && pwd)/$(basename "${cmd[0]}")
	fi
	# rsh.sh (started by the launcher) must see the same prefix.
	export PIANO_NETNS_PREFIX
	local extra e envargs=()
	read -r -a extra <<<"${PIANO_NETNS_ARGS:-}"
	local h0
	h0=$(piano_ns 0)
	# exec: a signal to run.sh (timeout, ^C) reaches the launcher, which
	# then stops its ranks on every host.
	case "$mpi" in
	openmpi)
		export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
		for e in "${envs[@]+"${envs[@]}"}"; do envargs+=(-x "$e"); done
		piano_exec_on "$h0" mpirun.openmpi -np "$np" --hostfile "$PIANO_HOSTFILE" \
			--map-by node --bind-to none \
			--mca plm_rsh_agent "$here/rsh.sh" --mca plm_rsh_no_tree_spawn 1 \
			--mca btl tcp,self --mca btl_tcp_if_include "$PIANO_NET" \
			--mca oob_tcp_if_include "$PIANO_NET" \
			"${envargs[@]+"${envargs[@]}"}" "${extra[@]+"${extra[@]}"}" "${cmd[@]}"
		;;
	mpich)
		export UCX_TLS=tcp,self UCX_NET_DEVICES="$PIANO_DEV"
		for e in "${envs[@]+"${envs[@]}"}"; do envargs+=(-genv "${e%%=*}" "${e#*=}"); done
		piano_exec_on "$h0" mpiexec.mpich -launcher ssh -launcher-exec "$here/rsh.sh" \
			-hosts "$(IFS=,; echo "${addrs[*]}")" -iface "$PIANO_DEV" -n "$np" \
			"${envargs[@]+"${envargs[@]}"}" "${extra[@]+"${extra[@]}"}" "${cmd[@]}"
		;;
	esac
}

main "$@"

#!/bin/sh
# run.sh openmpi|mpich NP COMMAND [ARGS...]: runs an MPI job across the two
# namespaces of up.sh, rank i in piano-h(i % 2), over TCP on piano-eth only.
#
# The launcher (mpirun / mpiexec) itself runs inside piano-h0: piano-h0 is
# then its local host and 10.77.0.1 one of its own addresses, so the ranks
# of h0 are started directly and those of h1 through rsh.sh, and every
# connection back to the launcher (Open MPI's OOB, hydra's control socket)
# goes over the veth pair. Running it in the root namespace would need an
# extra address there (a bridge), i.e. traffic outside the two test hosts.
#
# Open MPI: hostfile with the two addresses, --map-by node (round robin),
#   --bind-to none (the two "hosts" share the machine's cores), TCP BTL and
#   OOB restricted to 10.77.0.0/24.
# MPICH (hydra, ch4:ucx): -hosts with the two addresses (one slot each,
#   filled round robin), UCX restricted to TCP on piano-eth (no shared
#   memory between the "hosts"), hydra's sockets on piano-eth.
#
# The environment is passed to every rank (rsh.sh runs in the launcher's
# environment; hydra forwards it). Extra launcher options: PIANO_NETNS_ARGS
# (word-split). Exit status: the launcher's; 77 when not root or when the
# namespaces are not up.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$here/common.sh"
piano_need_root

if [ $# -lt 3 ]; then
	echo "usage: run.sh openmpi|mpich NP COMMAND [ARGS...]" >&2
	exit 2
fi
mpi=$1 np=$2
shift 2
case "$np" in ''|*[!0-9]*) echo "run.sh: bad NP '$np'" >&2; exit 2 ;; esac
for ns in "$PIANO_NS0" "$PIANO_NS1"; do
	if ! ip netns list 2>/dev/null | grep -q "^$ns\\b"; then
		echo "run.sh: namespace $ns missing: run tools/netns/up.sh first" >&2
		exit 77
	fi
done
# Commands are started by relative path in the other namespace too: make
# them absolute when they name an existing file.
cmd=$1
shift
[ -e "$cmd" ] && cmd=$(cd "$(dirname "$cmd")" && pwd)/$(basename "$cmd")
extra=${PIANO_NETNS_ARGS:-}

case "$mpi" in
openmpi)
	if [ ! -r "$PIANO_HOSTFILE" ]; then
		echo "run.sh: $PIANO_HOSTFILE missing: run tools/netns/up.sh again" >&2
		exit 77
	fi
	export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
	# exec: a signal to run.sh (timeout, ^C) reaches mpirun, which then
	# stops its ranks and the daemon in piano-h1.
	# shellcheck disable=SC2086
	exec ip netns exec "$PIANO_NS0" mpirun.openmpi -np "$np" --hostfile "$PIANO_HOSTFILE" \
		--map-by node --bind-to none \
		--mca plm_rsh_agent "$here/rsh.sh" --mca plm_rsh_no_tree_spawn 1 \
		--mca btl tcp,self --mca btl_tcp_if_include "$PIANO_NET" \
		--mca oob_tcp_if_include "$PIANO_NET" \
		$extra "$cmd" "$@"
	;;
mpich)
	export UCX_TLS=tcp,self UCX_NET_DEVICES="$PIANO_DEV"
	# shellcheck disable=SC2086
	exec ip netns exec "$PIANO_NS0" mpiexec.mpich -launcher ssh -launcher-exec "$here/rsh.sh" \
		-hosts "$PIANO_ADDR0,$PIANO_ADDR1" -iface "$PIANO_DEV" -n "$np" \
		$extra "$cmd" "$@"
	;;
*)
	echo "run.sh: unknown MPI '$mpi' (openmpi or mpich)" >&2
	exit 2
	;;
esac

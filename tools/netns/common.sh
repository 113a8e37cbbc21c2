# SPDX-License-Identifier: BSD-3-Clause
# shellcheck shell=bash disable=SC2034
# Shared settings and helpers of the netns harness (sourced by up.sh,
# down.sh, run.sh, rsh.sh, selftest.sh).
#
# N "hosts" (2..4) are network namespaces PREFIX-h0 .. PREFIX-h(N-1). Each has
# one interface, piano-eth, with address 10.77.0.(i+1)/24. The same name in
# every namespace lets one word serve UCX_NET_DEVICES and hydra's -iface on
# all hosts. Topologies:
#   pair    2 hosts, one veth pair between them;
#   bridge  every host's veth goes to a port piano-p<i> of bridge piano-br0,
#           which lives in a namespace of its own, PREFIX-br, so nothing is
#           ever added to the root namespace.
# PREFIX is $PIANO_NETNS_PREFIX (default "piano"): a second prefix gives an
# independent set (the selftest uses its own, so it never tears down a set
# somebody is benchmarking on).

PIANO_NETNS_PREFIX=${PIANO_NETNS_PREFIX:-piano}
case "$PIANO_NETNS_PREFIX" in
'' | *[!a-z0-9-]* | -*)
	echo "${0##*/}: bad PIANO_NETNS_PREFIX '$PIANO_NETNS_PREFIX' (letters a-z, digits, '-')" >&2
	exit 2
	;;
esac
PIANO_BR_NS=$PIANO_NETNS_PREFIX-br
PIANO_DEV=piano-eth     # a host's interface (inside its namespace)
PIANO_BRIDGE=piano-br0  # the bridge (inside $PIANO_BR_NS)
PIANO_PORT=piano-p      # bridge port of host i: piano-p<i> (inside $PIANO_BR_NS)
PIANO_NET=10.77.0.0/24
PIANO_MAX_HOSTS=4
# Written by up.sh, read by run.sh and rsh.sh, removed by down.sh.
PIANO_STATE=/run/$PIANO_NETNS_PREFIX-netns
PIANO_STATEFILE=$PIANO_STATE/state
PIANO_HOSTFILE=$PIANO_STATE/hostfile

piano_ns() { echo "$PIANO_NETNS_PREFIX-h$1"; }      # host index -> namespace
piano_addr() { echo "10.77.0.$(($1 + 1))"; }         # host index -> address

# Exits 77 (the "skipped" status of CTest and automake) unless root.
piano_need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "${0##*/}: network namespaces need root; skipped" >&2
		exit 77
	fi
}

# The namespaces of this prefix that exist now, one per line (hosts and
# bridge; also those of a partial up.sh).
piano_existing_ns() {
	ip netns list 2>/dev/null | awk -v p="$PIANO_NETNS_PREFIX" \
		'$1 ~ "^" p "-(h[0-9]+|br)$" { print $1 }'
}

# Namespace of a host name or address (empty if not one of ours).
piano_ns_of() {
	local i
	for ((i = 0; i < PIANO_MAX_HOSTS; i++)); do
		if [ "$1" = "$(piano_addr "$i")" ] || [ "$1" = "$(piano_ns "$i")" ]; then
			piano_ns "$i"
			return
		fi
	done
	echo ""
}

# Value of KEY in the state file of up.sh (empty if absent). The file is
# parsed, not sourced: nothing in it is executed.
piano_state_get() {
	[ -r "$PIANO_STATEFILE" ] || return 0
	awk -F= -v k="$1" '$1 == k { sub(/^[^=]*=/, ""); print; exit }' "$PIANO_STATEFILE"
}

# Replaces the shell by CMD... run on host NS: in its network namespace and
# in a UTS namespace of its own whose hostname is NS. Without a hostname of
# their own, all "hosts" would share Open MPI's session directory
# (/tmp/ompi.HOSTNAME.UID/...), whose cleanup by one daemon then races with
# the others (a daemon vanished and mpirun waited forever, ~1 run in 15).
piano_exec_on() {
	local ns=$1
	shift
	# shellcheck disable=SC2016 # expanded by the inner shell
	exec ip netns exec "$ns" unshare --uts -- sh -c 'hostname "$0" && exec "$@"' "$ns" "$@"
}

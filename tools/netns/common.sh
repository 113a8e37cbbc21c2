# shellcheck shell=sh disable=SC2034
# Shared settings of the netns harness (sourced by up.sh, down.sh, run.sh,
# rsh.sh). Two "hosts": network namespaces piano-h0 and piano-h1, joined by a
# veth pair whose two ends are both called piano-eth (each in its own
# namespace, so one name serves UCX_NET_DEVICES and btl_tcp_if_include on
# both sides).
PIANO_NS0=piano-h0
PIANO_NS1=piano-h1
PIANO_ADDR0=10.77.0.1
PIANO_ADDR1=10.77.0.2
PIANO_NET=10.77.0.0/24
PIANO_DEV=piano-eth
# State written by up.sh, removed by down.sh: Open MPI's hostfile.
PIANO_STATE=/run/piano-netns
PIANO_HOSTFILE=$PIANO_STATE/hostfile

# Exits 77 (the "skipped" status of CTest and automake) unless root.
piano_need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "${0##*/}: network namespaces need root; skipped" >&2
		exit 77
	fi
}

# Namespace of a host name or address (empty if unknown).
piano_ns_of() {
	case "$1" in
	"$PIANO_ADDR0"|"$PIANO_NS0") echo "$PIANO_NS0" ;;
	"$PIANO_ADDR1"|"$PIANO_NS1") echo "$PIANO_NS1" ;;
	*) echo "" ;;
	esac
}

#!/bin/sh
# rsh.sh [SSH-OPTIONS] HOST COMMAND...: the "remote shell" of the MPI
# launchers (Open MPI's plm_rsh_agent, hydra's -launcher-exec). HOST is one
# of the harness's addresses (or namespace names); the command runs in that
# host's namespace, through sh -c like ssh would, in the caller's
# environment. No ssh or network login is involved.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$here/common.sh"

# Skip ssh-style options (the launchers may pass -x, -q, -T, -o OPT, ...).
while [ $# -gt 0 ]; do
	case "$1" in
	-[bceEFiIJlLmoOpQRSwW]) shift 2 ;;
	-*) shift ;;
	*) break ;;
	esac
done
if [ $# -lt 2 ]; then
	echo "usage: rsh.sh HOST COMMAND..." >&2
	exit 255
fi
host=$1
shift
ns=$(piano_ns_of "$host")
if [ -z "$ns" ]; then
	echo "rsh.sh: unknown host '$host' (expected $PIANO_ADDR0 or $PIANO_ADDR1)" >&2
	exit 255
fi
# Like ssh: the words are joined with spaces and run by a shell.
exec ip netns exec "$ns" sh -c "$*"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# floor.sh BENCH_TCP_FLOOR [ARGS...]: runs bench_tcp_floor across the first
# two hosts of up.sh (listening on host 1, connecting from host 0), the
# bound of any engine's overlap on that link: the CPU an exchange takes
# from a computation when only the kernel moves the data
# (docs/performance.md, "Across two hosts at 1 Gbit/s"). ARGS go to both
# ends (--bytes N, --compute-ms T, --reps N).
#
# Exit status: 0; 1 if either end failed; 2 usage; 77 when not root or when
# the hosts are not up.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# shellcheck source=tools/netns/common.sh
. "$here/common.sh"

bench=${1:?usage: floor.sh BENCH_TCP_FLOOR [ARGS...]}
shift
[ "$(id -u)" = 0 ] || { echo "floor.sh: needs root" >&2; exit 77; }
[ -x "$bench" ] || { echo "floor.sh: $bench is not an executable" >&2; exit 2; }
"$here/rsh.sh" 10.77.0.2 true 2>/dev/null || { echo "floor.sh: the hosts are not up (up.sh)" >&2; exit 77; }
port=$((20000 + RANDOM % 20000))
"$here/rsh.sh" 10.77.0.2 "$bench" --listen "$port" "$@" &
listener=$!
rc=0
"$here/rsh.sh" 10.77.0.1 "$bench" --connect "10.77.0.2:$port" "$@" || rc=1
wait "$listener" || rc=1
exit "$rc"

#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# piano demo: installs what is missing (Debian 12, root or sudo), builds into
# build/ and runs
#   1. the quick benchmark set: tools/piano-bench --quick (core engine, then
#      native vs piano latency and overlap; plots in results/demo/)
#   2. piano-info: topology, queue tree, threads and settings piano uses
#
#   ./tools/demo.sh
#
# The PIANO_* variables of docs/configuration.md apply to both programs, e.g.
#   PIANO_IDLE_LEVEL=core PIANO_QUEUE_LEVEL=pu ./tools/demo.sh
set -euo pipefail

cd "$(dirname "$0")/.."
# shellcheck source=tools/deps.sh
. tools/deps.sh

export DEBIAN_FRONTEND=noninteractive
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

piano_banner "piano demo: dependencies (apt-get)"
piano_install_deps

piano_banner "piano demo: build (gcc, RelWithDebInfo) -> build/"
# shellcheck disable=SC2119 # no extra cmake arguments
piano_build_main

bench=build/bench/piano-bench-core
if [[ ! -x "$bench" ]]; then
	echo "error: $bench was not built (is PIANO_BUILD_BENCH off in build/CMakeCache.txt?)" >&2
	exit 1
fi

piano_banner "piano demo: quick benchmark set (tools/piano-bench --quick)"
# Core engine, then native vs piano: ping-pong latency and overlap with
# both MPIs; tables here, CSV and PNG plots in results/demo/.
tools/piano-bench --quick --build build --out results/demo

piano_banner "piano demo: what piano sees (build/tools/piano-info)"
build/tools/piano-info

piano_banner "piano demo: done"
echo "Plots:           results/demo/*.png (listed above by piano-bench)"
echo "Full test suite: ./tools/run-tests.sh"
echo "Configuration:   docs/configuration.md (PIANO_* environment variables)"

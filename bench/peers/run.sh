#!/usr/bin/env bash
# Runs the benchmark workloads on Warren and its peers (Kùzu, DuckDB, igraph, networkx) side by
# side and prints one table of times, memory, Warren's speedups and the project's goals.
#
#   bench/peers/run.sh [--scale 18] [--threads 2] [--repeat 3] [--timeout 120] [--load-timeout T]
#                      [--workloads sp64,sp1,allsp,varlen3,varlen5,load] [--out DIR]
#                      [--systems warren,kuzu,duckdb,igraph,networkx] [--no-build]
#
# Sets up bench/peers/.venv (setup.sh) and builds Warren (`cargo build --release`; a no-op when
# it is up to date; --no-build skips it), then runs compare.py with the remaining options.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
build=1
args=()
for arg in "$@"; do
    if [ "$arg" = "--no-build" ]; then build=0; else args+=("$arg"); fi
done
python="$("$here/setup.sh" | tail -n 1)"
if [ "$build" = 1 ]; then
    (cd "$root" && cargo build --release --bin warren)
fi
exec "$python" "$here/compare.py" "${args[@]+"${args[@]}"}"

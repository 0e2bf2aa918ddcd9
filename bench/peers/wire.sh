#!/usr/bin/env bash
# `warren bench wire` with its bincode 1.3.3 peer in the same run: builds the peer (a separate
# cargo project, so that bincode is never a Warren dependency), builds Warren unless
# WARREN=path/to/warren is given, then runs the workload, which starts the peer as a child
# process and merges its figures into one report. Arguments go to `warren bench wire`
# (default: --output bench/out/wire.json).
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release --quiet --manifest-path bench/peers/wire-bincode/Cargo.toml \
    --target-dir bench/peers/wire-bincode/target
if [ -z "${WARREN:-}" ]; then
    cargo build --release --quiet --bin warren
    WARREN="${CARGO_TARGET_DIR:-target}/release/warren"
fi
mkdir -p bench/out
args=("$@")
if [[ " ${args[*]-} " != *" --output "* ]]; then
    args+=(--output bench/out/wire.json)
fi
WARREN_WIRE_PEER=bench/peers/wire-bincode/target/release/wire-bincode \
    exec "$WARREN" bench wire "${args[@]}"

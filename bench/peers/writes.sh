#!/usr/bin/env bash
# Durable writes, Warren beside Kùzu and DuckDB in one run: `warren bench writes` (every
# scenario), writes_kuzu.py (every scenario) and writes_duckdb.py (the commit and batch
# scenarios: the relational parts), on the same Graph500 dataset, then the table with Warren's
# ratio over each peer per scenario (writes_table.py says which measure each row compares).
#   bench/peers/writes.sh [--scale 18] [--threads 2] [--repeat 3] [--out bench/out/writes-s18]
#       [--scenarios commit-1,commit-8] [--no-build --warren target/ci/warren]
# --scenarios runs only the named scenarios, in Warren and in both peers; --no-build uses the
# binary given by --warren instead of building target/release/warren.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
scale=18; threads=2; repeat=3; out=""; chosen=""; build=1; warren=""
while [ $# -gt 0 ]; do
    case "$1" in
        --scale) scale="$2"; shift 2 ;;
        --threads) threads="$2"; shift 2 ;;
        --repeat) repeat="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --scenarios) chosen="$2"; shift 2 ;;
        --no-build) build=0; shift ;;
        --warren) warren="$2"; shift 2 ;;
        *) echo "writes.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
out="${out:-$root/bench/out/writes-s$scale}"
mkdir -p "$out"
python="$(bash "$here/setup.sh" | tail -1)"
if [ "$build" = 1 ]; then
    (cd "$root" && cargo build --release --quiet --bin warren)
fi
warren="${warren:-$root/target/release/warren}"
scenario_flag=()
[ -n "$chosen" ] && scenario_flag=(--scenarios "$chosen")
dataset="$out/graph500-s$scale"
[ -f "$dataset/edges.csv" ] || "$warren" generate graph500 --scale "$scale" --out "$dataset"
rm -rf "$out/warren-db"
"$warren" run "$out/warren-db" "$dataset/schema.cypher" >/dev/null
"$warren" run "$out/warren-db" "$dataset/copy.cypher" >/dev/null
"$warren" bench writes --db "$out/warren-db" --threads "$threads" --repeat "$repeat" \
    "${scenario_flag[@]}" --output "$out/warren-writes.json" | tee "$out/warren-writes.txt"
"$python" "$here/writes_kuzu.py" --dataset "$dataset" --db "$out/kuzu" --threads "$threads" \
    "${scenario_flag[@]}" --output "$out/kuzu-writes.json"
"$python" "$here/writes_duckdb.py" --dataset "$dataset" --db "$out/duckdb" --threads "$threads" \
    "${scenario_flag[@]}" --output "$out/duckdb-writes.json"
"$python" "$here/writes_table.py" "$out/warren-writes.json" "$out/kuzu-writes.json" \
    "$out/duckdb-writes.json" | tee "$out/results.txt"

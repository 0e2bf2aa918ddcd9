#!/usr/bin/env bash
# Vector search, Warren beside hnswlib, faiss-cpu and Kùzu 0.11.3 in one run: `warren bench
# vectors` generates the clustered dataset, measures the read bandwidth, brute force, the HNSW
# build and queries, and writes the dataset as .npy; vectors.py runs the peers on those files
# with the same threads (Kùzu on the first --kuzu-rows rows) and prints the table.
#   bench/peers/vectors.sh [--rows 1000000] [--dim 128] [--threads 2] [--repeat 3]
#       [--build-repeat 1] [--kuzu-rows 10000] [--kuzu-brute-rows 0]
#       [--systems hnswlib,faiss,kuzu] [--warren PATH] [--out DIR]
# --build-repeat N: every system builds its index N times; the table counts the median.
# --kuzu-brute-rows N: also Kùzu's brute force alone (no index) on the first N rows.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
rows=1000000; dim=128; threads=2; repeat=3; build_repeat=1; kuzu_rows=10000; kuzu_brute_rows=0; systems="hnswlib,faiss,kuzu"
warren=""; out=""
while [ $# -gt 0 ]; do
    case "$1" in
        --rows) rows="$2"; shift 2 ;;
        --dim) dim="$2"; shift 2 ;;
        --threads) threads="$2"; shift 2 ;;
        --repeat) repeat="$2"; shift 2 ;;
        --build-repeat) build_repeat="$2"; shift 2 ;;
        --kuzu-rows) kuzu_rows="$2"; shift 2 ;;
        --kuzu-brute-rows) kuzu_brute_rows="$2"; shift 2 ;;
        --systems) systems="$2"; shift 2 ;;
        --warren) warren="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        *) echo "vectors.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
out="${out:-$root/bench/out/vectors-$rows-$dim}"
mkdir -p "$out"
python="$(bash "$here/setup.sh" | tail -1)"
if [ -z "$warren" ]; then
    (cd "$root" && cargo build --release --quiet --bin warren)
    warren="$root/target/release/warren"
fi
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$out/load.txt"
"$warren" bench vectors --rows "$rows" --dim "$dim" --threads "$threads" --repeat "$repeat" \
    --build-repeat "$build_repeat" --vectors-out "$out/data" --output "$out/warren-vectors.json" | tee "$out/warren-vectors.txt"
"$python" "$here/vectors.py" --data "$out/data" --warren-report "$out/warren-vectors.json" \
    --threads "$threads" --repeat "$repeat" --build-repeat "$build_repeat" --kuzu-rows "$kuzu_rows" --kuzu-brute-rows "$kuzu_brute_rows" \
    --systems "$systems" \
    --output "$out/peers-vectors.json" | tee "$out/results.txt"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$out/load.txt"

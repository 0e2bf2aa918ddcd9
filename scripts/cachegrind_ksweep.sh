#!/usr/bin/env bash
# LLC traffic of the sp64 query against k, measured by simulation, for machines without hardware
# counters: runs `warren query DB <sp64> --k K --threads N` under
# `valgrind --tool=cachegrind --cache-sim=yes` for each k and prints one row per k:
#
#   k | LL loads | LL misses | instructions
#
# where LL loads are the simulated first-level data-cache read misses (the reads that reach the
# last-level cache, cachegrind's D1mr), LL misses the last-level data read misses (DLmr), and
# instructions the instructions executed (Ir). The counts cover the whole `warren query`
# process, so a baseline row (the same process running a query that traverses nothing) is
# printed first: subtract it to get the traversal's own share.
#
# Cachegrind is slow (about 50x) and serializes threads: use a small graph, e.g.
#   warren generate graph500 --scale 14 --out /tmp/g14
#   warren run /tmp/g14db /tmp/g14/schema.cypher && warren run /tmp/g14db /tmp/g14/copy.cypher
#   scripts/cachegrind_ksweep.sh /tmp/g14db 1 2 4 8 16 32 64 auto
#
# Usage: scripts/cachegrind_ksweep.sh DB [K...]     (default K: 1 2 4 8 16 32 64 auto)
# Environment: WARREN (the binary; default target/release/warren beside this script),
#              THREADS (default 2), VALGRIND (default valgrind).
set -euo pipefail

usage() {
    echo "usage: $0 DB [K...]   (env: WARREN, THREADS, VALGRIND)" >&2
    exit 2
}

[[ $# -ge 1 ]] || usage
db=$1
shift
ks=("$@")
[[ ${#ks[@]} -gt 0 ]] || ks=(1 2 4 8 16 32 64 auto)

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
warren=${WARREN:-$root/target/release/warren}
threads=${THREADS:-2}
valgrind=${VALGRIND:-valgrind}

[[ -x $warren ]] || { echo "error: $warren is not built (cargo build --release)" >&2; exit 1; }
command -v "$valgrind" >/dev/null || { echo "error: $valgrind not found" >&2; exit 1; }
[[ -d $db ]] || { echo "error: database $db does not exist" >&2; exit 1; }
for k in "${ks[@]}"; do
    [[ $k == auto || $k =~ ^[1-9][0-9]*$ ]] || { echo "error: k must be a positive integer or auto, got $k" >&2; exit 2; }
done

sp64='MATCH p=(a:Person)-[r:Knows* SHORTEST 1..30]->(b:Person) WHERE a.ID < 64 RETURN a.ID, count(*), sum(length(p)) ORDER BY a.ID'
# The same process, opening the same database, with a query that traverses nothing.
baseline='MATCH (a:Person) WHERE a.ID < 0 RETURN count(*)'

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Prints "Ir D1mr DLmr" from a cachegrind output file's events and summary lines.
totals() {
    awk '
        /^events:/  { for (i = 2; i <= NF; i++) index_of[$i] = i - 1 }
        /^summary:/ { for (i = 2; i <= NF; i++) total[i - 1] = $i }
        END {
            if (!("Ir" in index_of) || !("D1mr" in index_of) || !("DLmr" in index_of)) {
                print "missing events (was --cache-sim=yes given?)" > "/dev/stderr"; exit 1
            }
            print total[index_of["Ir"]], total[index_of["D1mr"]], total[index_of["DLmr"]]
        }' "$1"
}

# Runs one query under cachegrind; prints "Ir D1mr DLmr".
simulate() {
    local name=$1 query=$2
    shift 2
    local out=$work/cachegrind.$name.out log=$work/cachegrind.$name.log
    if ! "$valgrind" --tool=cachegrind --cache-sim=yes --cachegrind-out-file="$out" \
        "$warren" query "$db" "$query" --format csv --threads "$threads" "$@" \
        >"$work/rows.$name.csv" 2>"$log"; then
        echo "error: the run for $name failed; its log:" >&2
        cat "$log" >&2
        exit 1
    fi
    totals "$out"
}

# A number with thousands separators (no locale needed).
grouped() {
    sed -e ':again' -e 's/\B[0-9]\{3\}\>/,&/' -e 't again' <<<"$1"
}

row() {
    printf '%-10s | %15s | %15s | %15s\n' "$1" "$(grouped "$2")" "$(grouped "$3")" "$(grouped "$4")"
}

printf 'cachegrind (simulated caches), %s threads, database %s\n' "$threads" "$db"
printf '%-10s | %15s | %15s | %15s\n' "k" "LL loads" "LL misses" "instructions"
printf -- '-----------+-----------------+-----------------+----------------\n'
counts=$(simulate baseline "$baseline")
read -r ir loads misses <<<"$counts"
row "baseline" "$loads" "$misses" "$ir"
for k in "${ks[@]}"; do
    counts=$(simulate "k$k" "$sp64" --k "$k")
    read -r ir loads misses <<<"$counts"
    row "$k" "$loads" "$misses" "$ir"
done
printf 'LL loads = D1 data read misses (D1mr), LL misses = LL data read misses (DLmr),\n'
printf 'instructions = Ir; whole process, the baseline row is opening the database and a\n'
printf 'query that traverses nothing. The sp64 answer is not checked here (use warren bench).\n'

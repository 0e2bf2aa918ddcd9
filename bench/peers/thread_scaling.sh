#!/usr/bin/env bash
# Thread scaling on a many-core machine, Warren against Kùzu: the peers table at 1, 2, 4, 8 and
# 16 threads (thread_scaling.py), then, when time is left, Warren's k-sweep and one PROFILE with
# the machine's thread count (hardware counters where the kernel allows them).
#
#   bench/peers/thread_scaling.sh KIT OUT [--scale 18] [--budget-s 420] [--threads-list 1,2,4,8,16]
#
# KIT: a folder with `warren` (a release binary) and, for a machine without Kùzu installed,
# Kùzu's wheels (`pip download --no-deps --only-binary=:all: --python-version 3.X kuzu==0.11.3`,
# one per Python version the machine may have); the matching wheel is unpacked and put on
# PYTHONPATH, so the machine needs python3 only, no pip and no network. OUT receives
# scaling.{txt,json}, each thread count's compare.py outputs, the ksweep and the machine's
# description (machine.txt). Every step is bounded: the whole run stops by itself within
# about --budget-s seconds.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ $# -lt 2 ]; then
    sed -n '2,14p' "$0" >&2
    exit 2
fi
kit="$(cd "$1" && pwd)"
out="$2"
shift 2
scale=18
budget_s=420
threads_list=1,2,4,8,16
while [ $# -gt 0 ]; do
    case "$1" in
        --scale) scale="$2"; shift 2 ;;
        --budget-s) budget_s="$2"; shift 2 ;;
        --threads-list) threads_list="$2"; shift 2 ;;
        *) echo "thread_scaling.sh: unknown option $1" >&2; exit 2 ;;
    esac
done
mkdir -p "$out"
out="$(cd "$out" && pwd)"
started=$(date +%s)
elapsed() { echo $(( $(date +%s) - started )); }
warren="$kit/warren"

describe_machine() {
    echo "date: $(date -u +%FT%TZ)"
    echo "nproc: $(nproc)"
    lscpu 2>/dev/null | grep -E 'Model name|^CPU\(s\)|Thread|Core|Socket|NUMA node|L1d|L2|L3|MHz' || true
    free -g 2>/dev/null | head -2 || true
    echo "perf_event_paranoid: $(cat /proc/sys/kernel/perf_event_paranoid 2>/dev/null || echo none)"
    echo "kernel: $(uname -r)"
    for p in python3 python3.13 python3.12 python3.11 python3.10; do
        command -v "$p" >/dev/null 2>&1 && echo "python: $p $("$p" --version 2>&1)"
    done
}
describe_machine | tee "$out/machine.txt"

python=""
for p in python3 python3.13 python3.12 python3.11 python3.10; do
    if command -v "$p" >/dev/null 2>&1; then python="$p"; break; fi
done
systems=warren
if [ -z "$python" ]; then
    echo "no python3 on this machine: Warren alone cannot fill the peers table" >&2
    exit 3
fi
if "$python" -c "import kuzu" 2>/dev/null; then
    systems=warren,kuzu
else
    tag="$("$python" -c 'import sys; print(f"cp{sys.version_info[0]}{sys.version_info[1]}")')"
    wheel="$(ls "$kit"/kuzu-*-"$tag"-*.whl 2>/dev/null | head -n 1)"
    if [ -n "$wheel" ]; then
        site="$kit/site-$tag"
        "$python" -c "import sys, zipfile; zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])" \
            "$wheel" "$site"
        export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
        if "$python" -c "import kuzu; print('kuzu', kuzu.__version__)"; then
            systems=warren,kuzu
        fi
    fi
    [ "$systems" = warren ] && echo "Kùzu not available for $tag: Warren alone" >&2
fi
echo "systems: $systems (after $(elapsed) s)" | tee -a "$out/machine.txt"

# The peers table per thread count; no new count starts past 75% of the budget.
deadline=$(( budget_s * 3 / 4 ))
timeout $(( budget_s - $(elapsed) )) "$python" "$here/thread_scaling.py" --scale "$scale" \
    --threads-list "$threads_list" --systems "$systems" --repeat 3 --timeout 60 \
    --workloads load,sp64,sp1,allsp,varlen3 --warren "$warren" --out "$out" \
    --deadline-s "$deadline" 2>"$out/scaling.log"
echo "thread_scaling.py exited $? after $(elapsed) s" | tee -a "$out/machine.txt"
cat "$out/scaling.txt" 2>/dev/null

# Warren's k-sweep and a PROFILE at every thread of the machine, in what time is left.
left=$(( budget_s - $(elapsed) ))
if [ "$left" -gt 40 ]; then
    db="$out/warren-db"
    dataset="$out/graph500-s$scale"
    rm -rf "$db"
    "$warren" run "$db" "$dataset/schema.cypher" >/dev/null &&
        "$warren" run "$db" "$dataset/copy.cypher" >/dev/null
    threads="$(nproc)"
    timeout $(( left / 2 )) "$warren" bench ksweep --db "$db" --threads "$threads" --repeat 3 \
        --no-check --plot "$out/ksweep-t$threads.svg" --output "$out/ksweep-t$threads.json" \
        >"$out/ksweep-t$threads.txt" 2>&1
    echo "ksweep exited $? after $(elapsed) s" | tee -a "$out/machine.txt"
    tail -n 20 "$out/ksweep-t$threads.txt"
    timeout 30 "$warren" query "$db" --threads "$threads" "PROFILE MATCH p=(a:Person)-[r:Knows* SHORTEST 1..30]->(b:Person) WHERE a.ID < 64 RETURN a.ID, count(*), sum(length(p)) ORDER BY a.ID" \
        >"$out/profile-sp64-t$threads.txt" 2>&1
    grep -iE 'cycles|instructions|llc|counters|time' "$out/profile-sp64-t$threads.txt" | head -n 20
    rm -rf "$db"
fi
rm -rf "$out/graph500-s$scale" "$kit"/site-*
echo "done after $(elapsed) s"

"""What the writes peers (writes_kuzu.py, writes_duckdb.py) share with each other and with
Warren's `warren bench writes`: the sizes, the id sequence, and the threaded commit loop that
measures commits per second and commit latency.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import threading
import time
from typing import Callable

Scenarios = list[tuple[str, Callable[[], dict]]]

COMMITS = 2048
BATCH_EDGES = 10_000
BATCH_STATEMENTS = 5


class Ids:
    """The same xorshift64* sequence as Warren's bench (node ids below `nodes`)."""

    def __init__(self, seed: int, nodes: int) -> None:
        self.state = (seed | 1) & 0xFFFFFFFFFFFFFFFF
        self.nodes = nodes

    def next(self) -> int:
        s = self.state
        s ^= s >> 12
        s ^= (s << 25) & 0xFFFFFFFFFFFFFFFF
        s ^= s >> 27
        self.state = s
        return ((s * 0x2545F4914F6CDD1D) & 0xFFFFFFFFFFFFFFFF) % self.nodes


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def measure_commits(
    connections: int,
    nodes: int,
    commit: Callable[[int], Callable[[dict], None]],
    refused: type[BaseException],
) -> tuple[int, dict]:
    """Runs COMMITS single-edge commits split over `connections` threads. `commit(index)` gives
    thread `index` its function that commits one edge (parameters `a`, `b`); a commit failing
    with `refused` (another write transaction holds the database) is retried and counted.
    Returns the commits made and the figures."""
    per = COMMITS // connections
    latencies: list[float] = []
    retries = [0]
    lock = threading.Lock()

    def work(index: int) -> None:
        run = commit(index)
        ids = Ids(0x9E3779B9 + index * 7919, nodes)
        mine = []
        for _ in range(per):
            parameters = {"a": ids.next(), "b": ids.next()}
            begun = time.perf_counter()
            while True:
                try:
                    run(parameters)
                    break
                except refused:
                    with lock:
                        retries[0] += 1
            mine.append(time.perf_counter() - begun)
        with lock:
            latencies.extend(mine)

    started = time.perf_counter()
    workers = [threading.Thread(target=work, args=(i,)) for i in range(connections)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    elapsed = time.perf_counter() - started
    made = per * connections
    micros = [latency * 1e6 for latency in latencies]
    return made, {
        "ops_per_s": made / elapsed,
        "latency_us_p50": percentile(micros, 0.50),
        "latency_us_p99": percentile(micros, 0.99),
        "latency_us_p999": percentile(micros, 0.999),
        "latency_us_max": max(micros),
        "retries": retries[0],
    }


def main(system: str, version: str, doc: str, scenarios: Callable[[argparse.Namespace], Scenarios]) -> None:
    """The command line of a writes peer: `--dataset DIR --db DIR --threads N --output FILE
    [--scenarios a,b]`; runs the scenarios `scenarios(args)` loads (those named by
    `--scenarios`, when given), writing the JSON after each (so a peer that stops midway still
    leaves its finished scenarios) and printing each one's figures."""
    parser = argparse.ArgumentParser(description=doc)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--db", required=True, help="a folder for the peer's database")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--output", required=True)
    parser.add_argument("--scenarios", help="comma-separated names: run only these")
    args = parser.parse_args()
    os.makedirs(args.db, exist_ok=True)
    results: dict = {"system": system, "version": version, "threads": args.threads, "scenarios": {}}
    loaded = scenarios(args)
    chosen = set(args.scenarios.split(",")) if args.scenarios else {name for name, _ in loaded}
    missing = chosen - {name for name, _ in loaded}
    if missing:
        print(f"{system} has no scenario {', '.join(sorted(missing))}: not run", file=sys.stderr)
    for name, run in loaded:
        if name not in chosen:
            continue
        results["scenarios"][name] = run()
        with open(args.output, "w") as f:
            json.dump(results, f, indent=2)
        print(name, results["scenarios"][name], flush=True)

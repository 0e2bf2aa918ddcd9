"""The `writes` workload's commit scenarios on Kùzu (PyPI `kuzu` 0.11.3), the same statements
Warren's `warren bench writes` runs, on the same Graph500 dataset, so that the two are compared
in one run (`writes.sh`):

* commit-1: single-edge CREATE commits from one connection, latency percentiles;
* commit-8, commit-64: the same from 8 and 64 threads, each with its own connection; Kùzu lets
  one write transaction run at a time, so a commit that finds another one running is retried
  (and counted) until it succeeds;
* batch: UNWIND of 10,000 edges per statement, edges per second.

    .venv/bin/python writes_kuzu.py --dataset DIR --db DBDIR --threads 2 --output kuzu-writes.json

Every scenario checks that the edge count grew by exactly the commits made.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import threading
import time

import kuzu

EDGE = "MATCH (a:Person {ID: $a}), (b:Person {ID: $b}) CREATE (a)-[:Knows]->(b)"
BATCH = "UNWIND $pairs AS p MATCH (a:Person {ID: p[1]}), (b:Person {ID: p[2]}) CREATE (a)-[:Knows]->(b)"
COMMITS = 2048
BATCH_EDGES = 10_000
BATCH_STATEMENTS = 5
# Kùzu plans the UNWIND batch as a join that can take minutes: each statement is stopped after
# this long, and the result is then reported as an upper bound on Kùzu's edges per second.
BATCH_TIMEOUT_MS = 60_000


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


def count(conn: kuzu.Connection, query: str) -> int:
    result = conn.execute(query)
    return int(result.get_next()[0])


def edges(conn: kuzu.Connection) -> int:
    return count(conn, "MATCH (a:Person)-[:Knows]->(b:Person) RETURN count(*)")


def load(dataset: str, path: str, threads: int) -> kuzu.Database:
    for stale in (path, path + ".wal", path + ".lock", path + ".shadow"):
        if os.path.isdir(stale):
            shutil.rmtree(stale)
        elif os.path.exists(stale):
            os.remove(stale)
    db = kuzu.Database(path, max_num_threads=threads)
    conn = kuzu.Connection(db, num_threads=threads)
    for name in ("schema.cypher", "copy.cypher"):
        with open(os.path.join(dataset, name)) as f:
            for line in f:
                if line.strip():
                    conn.execute(line.strip())
    return db


def commits(db: kuzu.Database, nodes: int, connections: int, threads: int) -> dict:
    conn = kuzu.Connection(db, num_threads=threads)
    before = edges(conn)
    per = COMMITS // connections
    latencies: list[float] = []
    retries = [0]
    lock = threading.Lock()

    def work(index: int) -> None:
        own = kuzu.Connection(db, num_threads=1)
        ids = Ids(0x9E3779B9 + index * 7919, nodes)
        mine = []
        for _ in range(per):
            parameters = {"a": ids.next(), "b": ids.next()}
            begun = time.perf_counter()
            while True:
                try:
                    own.execute(EDGE, parameters)
                    break
                except RuntimeError:
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
    assert edges(conn) == before + made, "edge count does not match the commits made"
    micros = [l * 1e6 for l in latencies]
    return {
        "ops_per_s": made / elapsed,
        "latency_us_p50": percentile(micros, 0.50),
        "latency_us_p99": percentile(micros, 0.99),
        "latency_us_p999": percentile(micros, 0.999),
        "latency_us_max": max(micros),
        "retries": retries[0],
    }


def batch(db: kuzu.Database, nodes: int, threads: int) -> dict:
    conn = kuzu.Connection(db, num_threads=threads)
    conn.set_query_timeout(BATCH_TIMEOUT_MS)
    before = edges(conn)
    ids = Ids(0x9E3779B9, nodes)
    statements = [
        [[ids.next(), ids.next()] for _ in range(BATCH_EDGES)] for _ in range(BATCH_STATEMENTS)
    ]
    started = time.perf_counter()
    made = 0
    for pairs in statements:
        try:
            conn.execute(BATCH, {"pairs": pairs})
        except RuntimeError as error:
            elapsed = time.perf_counter() - started
            assert edges(conn) == before + made, "a stopped batch left edges behind"
            return {
                "ops_per_s": made / elapsed if made else BATCH_EDGES / elapsed,
                "upper_bound": True,
                "stopped": str(error),
            }
        made += len(pairs)
    elapsed = time.perf_counter() - started
    assert edges(conn) == before + made, "edge count does not match the batch"
    return {"ops_per_s": made / elapsed}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--db", required=True, help="a folder for Kùzu's database")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    os.makedirs(args.db, exist_ok=True)
    db = load(args.dataset, os.path.join(args.db, "kuzu-writes.db"), args.threads)
    nodes = count(kuzu.Connection(db), "MATCH (a:Person) RETURN count(*)")
    results = {"system": "kuzu", "version": kuzu.__version__, "threads": args.threads,
               "scenarios": {}}
    scenarios = [
        ("commit-1", lambda: commits(db, nodes, 1, args.threads)),
        ("commit-8", lambda: commits(db, nodes, 8, args.threads)),
        ("commit-64", lambda: commits(db, nodes, 64, args.threads)),
        ("batch", lambda: batch(db, nodes, args.threads)),
    ]
    for name, run in scenarios:
        results["scenarios"][name] = run()
        with open(args.output, "w") as f:
            json.dump(results, f, indent=2)
        print(name, results["scenarios"][name], flush=True)


if __name__ == "__main__":
    main()

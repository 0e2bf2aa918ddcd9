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

import os
import shutil
import time

import kuzu

from writes_common import BATCH_EDGES, BATCH_STATEMENTS, Ids, Scenarios, main, measure_commits

EDGE = "MATCH (a:Person {ID: $a}), (b:Person {ID: $b}) CREATE (a)-[:Knows]->(b)"
BATCH = "UNWIND $pairs AS p MATCH (a:Person {ID: p[1]}), (b:Person {ID: p[2]}) CREATE (a)-[:Knows]->(b)"
# Kùzu plans the UNWIND batch as a join that can take minutes: each statement is stopped after
# this long, and the result is then reported as an upper bound on Kùzu's edges per second.
BATCH_TIMEOUT_MS = 60_000


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

    def commit(_index: int):
        own = kuzu.Connection(db, num_threads=1)
        return lambda parameters: own.execute(EDGE, parameters)

    made, figures = measure_commits(connections, nodes, commit, RuntimeError)
    assert edges(conn) == before + made, "edge count does not match the commits made"
    return figures


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


def scenarios(args) -> Scenarios:
    db = load(args.dataset, os.path.join(args.db, "kuzu-writes.db"), args.threads)
    nodes = count(kuzu.Connection(db), "MATCH (a:Person) RETURN count(*)")
    return [
        ("commit-1", lambda: commits(db, nodes, 1, args.threads)),
        ("commit-8", lambda: commits(db, nodes, 8, args.threads)),
        ("commit-64", lambda: commits(db, nodes, 64, args.threads)),
        ("batch", lambda: batch(db, nodes, args.threads)),
    ]


if __name__ == "__main__":
    main("kuzu", kuzu.__version__, __doc__, scenarios)

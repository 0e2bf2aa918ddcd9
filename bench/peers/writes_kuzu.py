"""The `writes` workload's commit scenarios on Kùzu (PyPI `kuzu` 0.11.3), the same statements
Warren's `warren bench writes` runs, on the same Graph500 dataset, so that the two are compared
in one run (`writes.sh`):

* commit-1: single-edge CREATE commits from one connection, latency percentiles;
* commit-8, commit-64: the same from 8 and 64 threads, each with its own connection; Kùzu lets
  one write transaction run at a time, so a commit that finds another one running is retried
  (and counted) until it succeeds;
* batch: UNWIND of 10,000 edges per statement, edges per second;
* mixed: one connection commits single edges while another counts two-hop neighbourhoods, for
  MIXED_S seconds; operations per second and the reads' latency;
* checkpoint: with 1% of the edges committed since the last checkpoint, a CHECKPOINT while
  another connection commits single edges: the checkpoint's time and the commits made meanwhile;
* recovery: single-row commits of RECOVERY_ROW_BYTES of text until the log holds
  RECOVERY_LOG_BYTES, then the time to open the database again (Kùzu replays its WAL);
* slowdown-1pct, slowdown-5pct: the seed queries with 1% or 5% of the edges committed since the
  last checkpoint, against the same queries after a CHECKPOINT (`slowdown`, as Warren reports it).

    .venv/bin/python writes_kuzu.py --dataset DIR --db DBDIR --threads 2 --output kuzu-writes.json

Every scenario checks that the edge count grew by exactly the commits made.
"""

from __future__ import annotations

import os
import shutil
import threading
import time

import kuzu

from writes_common import (
    BATCH_EDGES,
    BATCH_STATEMENTS,
    Ids,
    Scenarios,
    main,
    measure_commits,
    percentile,
)

EDGE = "MATCH (a:Person {ID: $a}), (b:Person {ID: $b}) CREATE (a)-[:Knows]->(b)"
BATCH = "UNWIND $pairs AS p MATCH (a:Person {ID: p[1]}), (b:Person {ID: p[2]}) CREATE (a)-[:Knows]->(b)"
# Kùzu plans the UNWIND batch as a join that can take minutes: each statement is stopped after
# this long, and the result is then reported as an upper bound on Kùzu's edges per second.
BATCH_TIMEOUT_MS = 60_000
# Edges per UNWIND statement when the delta scenarios insert their share of the edges: small
# statements, as Kùzu's plan for a large UNWIND is slow.
INSERT_EDGES = 200
TWO_HOPS = "MATCH (a:Person {ID: $a})-[:Knows]->()-[:Knows]->(c) RETURN count(*)"
MIXED_S = 2.0
RECOVERY_ROW_BYTES = 1_000
RECOVERY_LOG_BYTES = 64 << 20
SEED_QUERIES = [
    ("sp64", "MATCH p=(a:Person)-[r:Knows* SHORTEST 1..30]->(b:Person) WHERE a.ID < 64 RETURN a.ID, count(*), sum(length(p))"),
    ("sp1", "MATCH p=(a:Person)-[r:Knows* SHORTEST 1..30]->(b:Person) WHERE a.ID = 0 RETURN count(*), sum(length(p))"),
    ("walks3", "MATCH (a:Person)-[r:Knows*1..3]->(b:Person) WHERE a.ID < 5 AND b.ID < 500 RETURN count(*)"),
]
# Timed runs per seed query and phase (Warren's bench uses 5; sp64 takes seconds in Kùzu).
SEED_RUNS = 3


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


def insert_edges(conn: kuzu.Connection, ids: Ids, count_: int) -> None:
    """Commits `count_` edges in statements of INSERT_EDGES (untimed helper)."""
    left = count_
    while left > 0:
        size = min(left, INSERT_EDGES)
        conn.execute(BATCH, {"pairs": [[ids.next(), ids.next()] for _ in range(size)]})
        left -= size


def mixed(db: kuzu.Database, nodes: int) -> dict:
    conn = kuzu.Connection(db, num_threads=1)
    before = edges(conn)
    stop = threading.Event()
    made = [0]
    reads: list[float] = []

    def write() -> None:
        own = kuzu.Connection(db, num_threads=1)
        ids = Ids(0x77, nodes)
        while not stop.is_set():
            own.execute(EDGE, {"a": ids.next(), "b": ids.next()})
            made[0] += 1

    def read() -> None:
        own = kuzu.Connection(db, num_threads=1)
        ids = Ids(0x77 ^ 0xABCD, nodes)
        while not stop.is_set():
            begun = time.perf_counter()
            result = own.execute(TWO_HOPS, {"a": ids.next()})
            while result.has_next():
                result.get_next()
            reads.append((time.perf_counter() - begun) * 1e6)

    workers = [threading.Thread(target=write), threading.Thread(target=read)]
    for w in workers:
        w.start()
    time.sleep(MIXED_S)
    stop.set()
    for w in workers:
        w.join()
    assert edges(conn) == before + made[0], "edge count does not match the commits made"
    return {
        "ops_per_s": (made[0] + len(reads)) / MIXED_S,
        "latency_us_p50": percentile(reads, 0.50),
        "latency_us_p99": percentile(reads, 0.99),
    }


def checkpoint(db: kuzu.Database, nodes: int, threads: int) -> dict:
    conn = kuzu.Connection(db, num_threads=threads)
    conn.execute("CALL auto_checkpoint=false")
    conn.execute("CHECKPOINT")
    insert_edges(conn, Ids(0x5151, nodes), edges(conn) // 100)
    base = edges(conn)
    done = threading.Event()
    latencies: list[float] = []

    def write() -> None:
        own = kuzu.Connection(db, num_threads=1)
        ids = Ids(0x5555, nodes)
        while not done.is_set():
            begun = time.perf_counter()
            own.execute(EDGE, {"a": ids.next(), "b": ids.next()})
            latencies.append((time.perf_counter() - begun) * 1e6)

    writer = threading.Thread(target=write)
    writer.start()
    started = time.perf_counter()
    conn.execute("CHECKPOINT")
    checkpoint_s = time.perf_counter() - started
    done.set()
    writer.join()
    conn.execute("CALL auto_checkpoint=true")
    assert edges(conn) == base + len(latencies), "edge count does not match the commits made"
    return {
        "ops_per_s": len(latencies) / checkpoint_s,
        "time_s": checkpoint_s,
        "latency_us_p50": percentile(latencies, 0.50) if latencies else None,
        "latency_us_p99": percentile(latencies, 0.99) if latencies else None,
    }


def recovery(path: str, threads: int) -> dict:
    for stale in (path, path + ".wal", path + ".lock", path + ".shadow"):
        if os.path.exists(stale):
            os.remove(stale)
    db = kuzu.Database(path, max_num_threads=threads)
    conn = kuzu.Connection(db, num_threads=threads)
    conn.execute("CALL auto_checkpoint=false")
    conn.execute("CALL force_checkpoint_on_close=false")
    conn.execute("CREATE NODE TABLE BenchNote(id INT64, text STRING, PRIMARY KEY(id))")
    text = "x" * RECOVERY_ROW_BYTES
    rows = 0
    while os.path.getsize(path + ".wal") < RECOVERY_LOG_BYTES:
        for _ in range(256):
            conn.execute("CREATE (:BenchNote {id: $id, text: $text})", {"id": rows, "text": text})
            rows += 1
    log_bytes = os.path.getsize(path + ".wal")
    conn.close()
    db.close()
    started = time.perf_counter()
    db = kuzu.Database(path, max_num_threads=threads)
    open_s = time.perf_counter() - started
    found = count(kuzu.Connection(db, num_threads=threads), "MATCH (n:BenchNote) RETURN count(*)")
    assert found == rows, f"recovered {found} of {rows} rows"
    return {"ops_per_s": rows / open_s, "time_s": open_s, "log_bytes": log_bytes}


def query_time(conn: kuzu.Connection, query: str) -> tuple[float, list]:
    answer = sorted(map(str, conn.execute(query).get_all()))
    times = []
    for _ in range(SEED_RUNS):
        started = time.perf_counter()
        result = conn.execute(query)
        while result.has_next():
            result.get_next()
        times.append(time.perf_counter() - started)
    return sorted(times)[len(times) // 2], answer


def slowdown(db: kuzu.Database, nodes: int, threads: int, percent: int) -> dict:
    conn = kuzu.Connection(db, num_threads=threads)
    conn.execute("CALL auto_checkpoint=false")
    conn.execute("CHECKPOINT")
    insert_edges(conn, Ids(0x3131 + percent, nodes), edges(conn) * percent // 100)
    with_delta, answers = 0.0, []
    for _, query in SEED_QUERIES:
        elapsed, answer = query_time(conn, query)
        with_delta += elapsed
        answers.append(answer)
    conn.execute("CHECKPOINT")
    after = 0.0
    for (_, query), answer in zip(SEED_QUERIES, answers):
        elapsed, folded = query_time(conn, query)
        after += elapsed
        assert folded == answer, f"{query}: answers differ before and after the checkpoint"
    conn.execute("CALL auto_checkpoint=true")
    return {"ops_per_s": None, "slowdown": with_delta / after, "time_s": with_delta}


def scenarios(args) -> Scenarios:
    db = load(args.dataset, os.path.join(args.db, "kuzu-writes.db"), args.threads)
    nodes = count(kuzu.Connection(db), "MATCH (a:Person) RETURN count(*)")
    return [
        ("commit-1", lambda: commits(db, nodes, 1, args.threads)),
        ("commit-8", lambda: commits(db, nodes, 8, args.threads)),
        ("commit-64", lambda: commits(db, nodes, 64, args.threads)),
        ("batch", lambda: batch(db, nodes, args.threads)),
        ("mixed", lambda: mixed(db, nodes)),
        ("checkpoint", lambda: checkpoint(db, nodes, args.threads)),
        ("recovery", lambda: recovery(os.path.join(args.db, "kuzu-recovery.db"), args.threads)),
        ("slowdown-1pct", lambda: slowdown(db, nodes, args.threads, 1)),
        ("slowdown-5pct", lambda: slowdown(db, nodes, args.threads, 5)),
    ]


if __name__ == "__main__":
    main("kuzu", kuzu.__version__, __doc__, scenarios)

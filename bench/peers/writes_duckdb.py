"""The relational parts of the `writes` workload on DuckDB (PyPI `duckdb`), for `writes.sh`:
the same edges inserted into `knows(src, dst)` loaded from the same Graph500 files.

* commit-1, commit-8, commit-64: single-row `INSERT INTO knows VALUES ($a, $b)` statements in
  auto-commit mode (each a durable transaction) from 1, 8 and 64 threads, each with its own
  cursor; a commit refused by a conflict is retried and counted;
* batch: `INSERT INTO knows SELECT * FROM unnest(...)` of 10,000 rows per statement.

Unlike Warren's and Kùzu's `MATCH ... CREATE`, these inserts do not look up the endpoints: a
relational table has no rel semantics to check. Every scenario checks that the row count grew
by exactly the commits made.

    .venv/bin/python writes_duckdb.py --dataset DIR --db DBDIR --threads 2 --output duckdb-writes.json
"""

from __future__ import annotations

import os
import time

import duckdb

from writes_common import BATCH_EDGES, BATCH_STATEMENTS, Ids, Scenarios, main, measure_commits

INSERT = "INSERT INTO knows VALUES ($a, $b)"
BATCH = "INSERT INTO knows SELECT unnest($src), unnest($dst)"


def load(dataset: str, path: str, threads: int) -> duckdb.DuckDBPyConnection:
    for stale in (path, path + ".wal"):
        if os.path.exists(stale):
            os.remove(stale)
    conn = duckdb.connect(path)
    conn.execute(f"SET threads = {threads}")
    conn.execute("CREATE TABLE person (id BIGINT)")
    conn.execute("CREATE TABLE knows (src BIGINT, dst BIGINT)")
    conn.execute(f"COPY person FROM '{dataset}/nodes.csv' (HEADER true)")
    conn.execute(f"COPY knows FROM '{dataset}/edges.csv' (HEADER true)")
    conn.execute("CHECKPOINT")
    return conn


def rows(conn: duckdb.DuckDBPyConnection) -> int:
    return conn.execute("SELECT count(*) FROM knows").fetchone()[0]


def commits(conn: duckdb.DuckDBPyConnection, nodes: int, connections: int) -> dict:
    before = rows(conn)

    def commit(_index: int):
        own = conn.cursor()
        return lambda parameters: own.execute(INSERT, parameters)

    made, figures = measure_commits(connections, nodes, commit, duckdb.TransactionException)
    assert rows(conn) == before + made, "row count does not match the commits made"
    return figures


def batch(conn: duckdb.DuckDBPyConnection, nodes: int) -> dict:
    before = rows(conn)
    ids = Ids(0x9E3779B9, nodes)
    statements = []
    for _ in range(BATCH_STATEMENTS):
        pairs = [(ids.next(), ids.next()) for _ in range(BATCH_EDGES)]
        statements.append({"src": [p[0] for p in pairs], "dst": [p[1] for p in pairs]})
    started = time.perf_counter()
    for parameters in statements:
        conn.execute(BATCH, parameters)
    elapsed = time.perf_counter() - started
    made = BATCH_EDGES * BATCH_STATEMENTS
    assert rows(conn) == before + made, "row count does not match the batch"
    return {"ops_per_s": made / elapsed}


def scenarios(args) -> Scenarios:
    conn = load(args.dataset, os.path.join(args.db, "duckdb-writes.db"), args.threads)
    nodes = conn.execute("SELECT count(*) FROM person").fetchone()[0]
    return [
        ("commit-1", lambda: commits(conn, nodes, 1)),
        ("commit-8", lambda: commits(conn, nodes, 8)),
        ("commit-64", lambda: commits(conn, nodes, 64)),
        ("batch", lambda: batch(conn, nodes)),
    ]


if __name__ == "__main__":
    main("duckdb", duckdb.__version__, __doc__, scenarios)

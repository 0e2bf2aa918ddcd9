"""Runs one benchmark workload on DuckDB with recursive CTEs (`USING KEY`, DuckDB >= 1.3).

    .venv/bin/python peer_duckdb.py --workload allsp --dataset DIR --threads 2 --repeat 3 \
        --db DBDIR --output allsp.json

Tables: person(id) from nodes.csv and knows(src, dst) from edges.csv (COPY ... FROM, timed,
after CREATE TABLE, untimed), in a database file.
Threads: `SET threads = N`. Each formulation keeps one row per (source, node) or per
(node, level) in the recursion, never one row per path or walk:
* SHORTEST: a BFS per source; `USING KEY (source, node)` keeps each pair once, and the
  recursive step only adds pairs absent from the table so far (`recurring.bfs`), so each pair
  keeps its first, hence minimal, distance. The source itself is reached at distance 0 and so is
  never reported, as in Kùzu.
* ALL SHORTEST: a level-by-level BFS from one source that carries, per node, the number of
  shortest paths reaching it (the sum over its parents one level up).
* walks 1..H: per (node, level) the number of walks from the sources that end there.
"""

from __future__ import annotations

import os
from typing import Any

import duckdb

from peer_common import Peer, drive
from workloads import HOPS_MAX, Workload

SCHEMA_SQL = [
    "CREATE TABLE person (id BIGINT)",
    "CREATE TABLE knows (src BIGINT, dst BIGINT)",
]
COPY_SQL = [
    "COPY person FROM '{dataset}/nodes.csv' (HEADER true)",
    "COPY knows FROM '{dataset}/edges.csv' (HEADER true)",
]

SHORTEST_SQL = """
WITH RECURSIVE bfs(source, node, dist) USING KEY (source, node) AS (
    SELECT id, id, 0 FROM person WHERE {sources}
  UNION
    SELECT DISTINCT f.source, k.dst, f.dist + 1
    FROM bfs f JOIN knows k ON k.src = f.node
    WHERE f.dist < {hops_max}
      AND NOT EXISTS (
          SELECT 1 FROM recurring.bfs seen WHERE seen.source = f.source AND seen.node = k.dst)
)
SELECT source, count(*), sum(dist) FROM bfs WHERE dist > 0 GROUP BY source ORDER BY source
"""

ALL_SHORTEST_SQL = """
WITH RECURSIVE bfs(node, dist, paths) USING KEY (node) AS (
    SELECT id, 0, 1::HUGEINT FROM person WHERE {sources}
  UNION
    SELECT k.dst, f.dist + 1, sum(f.paths)
    FROM bfs f JOIN knows k ON k.src = f.node
    WHERE f.dist < {hops_max}
      AND NOT EXISTS (SELECT 1 FROM recurring.bfs seen WHERE seen.node = k.dst)
    GROUP BY k.dst, f.dist + 1
)
SELECT coalesce(sum(paths), 0) FROM bfs WHERE dist > 0
"""

WALKS_SQL = """
WITH RECURSIVE walk(node, hops, walks) USING KEY (node, hops) AS (
    SELECT id, 0, 1::HUGEINT FROM person WHERE {sources}
  UNION
    SELECT k.dst, f.hops + 1, sum(f.walks)
    FROM walk f JOIN knows k ON k.src = f.node
    WHERE f.hops < {hops}
    GROUP BY k.dst, f.hops + 1
)
SELECT coalesce(sum(walks), 0) FROM walk WHERE hops > 0 AND node < {destinations_below}
"""


def query_sql(work: Workload) -> str:
    """The SQL that answers `work`, with its parameters filled in."""
    sources = work.source_sql("id")
    if work.kind == "shortest":
        return SHORTEST_SQL.format(sources=sources, hops_max=HOPS_MAX)
    if work.kind == "all_shortest":
        assert work.source_equal is not None, "ALL SHORTEST counts paths from one source"
        return ALL_SHORTEST_SQL.format(sources=sources, hops_max=HOPS_MAX)
    if work.kind == "walks":
        assert work.hops is not None and 1 <= work.hops <= HOPS_MAX, work.hops
        return WALKS_SQL.format(
            sources=sources, hops=work.hops, destinations_below=work.destinations_below
        )
    raise ValueError(f"no SQL for workload kind {work.kind!r}")


def database_path(db_dir: str) -> str:
    return os.path.join(db_dir, "duckdb.db")


def connect(db_dir: str, threads: int, read_only: bool) -> duckdb.DuckDBPyConnection:
    connection = duckdb.connect(database_path(db_dir), read_only=read_only)
    connection.execute(f"SET threads = {threads}")
    return connection


def create(dataset: str, db_dir: str, threads: int) -> duckdb.DuckDBPyConnection:
    del dataset  # the schema is fixed
    connection = connect(db_dir, threads, read_only=False)
    for statement in SCHEMA_SQL:
        connection.execute(statement)
    return connection


def copy(connection: duckdb.DuckDBPyConnection, dataset: str) -> duckdb.DuckDBPyConnection:
    folder = os.path.abspath(dataset).replace("'", "''")
    for statement in COPY_SQL:
        connection.execute(statement.format(dataset=folder))
    connection.execute("CHECKPOINT")
    return connection


def open_database(db_dir: str, threads: int) -> duckdb.DuckDBPyConnection:
    return connect(db_dir, threads, read_only=True)


def query(connection: duckdb.DuckDBPyConnection, work: Workload) -> Any:
    found = [list(row) for row in connection.execute(query_sql(work)).fetchall()]
    if work.kind == "shortest":
        return found
    assert len(found) == 1 and len(found[0]) == 1, found
    return found[0][0]


def loaded(connection: duckdb.DuckDBPyConnection) -> dict[str, int]:
    nodes = connection.execute("SELECT count(*), coalesce(sum(id), 0) FROM person").fetchone()
    edges = connection.execute(
        "SELECT count(*), coalesce(sum(src), 0), coalesce(sum(dst), 0) FROM knows"
    ).fetchone()
    assert nodes is not None and edges is not None
    return {
        "nodes": nodes[0],
        "node_id_sum": nodes[1],
        "edges": edges[0],
        "from_id_sum": edges[1],
        "to_id_sum": edges[2],
    }


def peer() -> Peer:
    return Peer(
        name="duckdb",
        version=duckdb.__version__,
        threads_used=lambda threads: threads,
        methods={
            "shortest": "recursive CTE, BFS per source keyed by (source, node)",
            "all_shortest": "recursive CTE, BFS carrying path counts keyed by node",
            "walks": "recursive CTE, walk counts keyed by (node, level)",
            "load": "COPY person FROM nodes.csv, COPY knows FROM edges.csv, CHECKPOINT",
        },
        unsupported={},
        in_memory=False,
        create=create,
        copy=copy,
        open=open_database,
        query=query,
        loaded=loaded,
        close=lambda connection: connection.close(),
    )


if __name__ == "__main__":
    drive(peer())

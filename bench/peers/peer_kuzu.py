"""Runs one benchmark workload on Kùzu (the PyPI `kuzu` package, 0.11.3): the same Cypher
queries as Warren, over a database loaded with the dataset's own schema.cypher and copy.cypher.

    .venv/bin/python peer_kuzu.py --workload sp64 --dataset DIR --threads 2 --repeat 3 \
        --db DBDIR --output sp64.json

Threads: `kuzu.Database(max_num_threads=N)` and `kuzu.Connection(db, num_threads=N)`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

import kuzu

from peer_common import Peer, drive
from workloads import Workload


@dataclass
class Handle:
    database: kuzu.Database
    connection: kuzu.Connection


def database_path(db_dir: str) -> str:
    return os.path.join(db_dir, "kuzu.db")


def connect(db_dir: str, threads: int, read_only: bool) -> Handle:
    database = kuzu.Database(database_path(db_dir), read_only=read_only, max_num_threads=threads)
    return Handle(database, kuzu.Connection(database, num_threads=threads))


def statements(dataset: str, name: str) -> list[str]:
    """The statements of the dataset's script `name`, one per line."""
    with open(os.path.join(dataset, name)) as f:
        return [line.strip() for line in f if line.strip()]


def create(dataset: str, db_dir: str, threads: int) -> Handle:
    handle = connect(db_dir, threads, read_only=False)
    for statement in statements(dataset, "schema.cypher"):
        handle.connection.execute(statement)
    return handle


def copy(handle: Handle, dataset: str) -> Handle:
    for statement in statements(dataset, "copy.cypher"):
        handle.connection.execute(statement)
    return handle


def open_database(db_dir: str, threads: int) -> Handle:
    return connect(db_dir, threads, read_only=True)


def rows(handle: Handle, cypher: str) -> list[list[Any]]:
    result = handle.connection.execute(cypher)
    found = []
    while result.has_next():
        found.append(result.get_next())
    return found


def query(handle: Handle, work: Workload) -> Any:
    found = rows(handle, work.cypher)
    if work.kind == "shortest":
        return found
    assert len(found) == 1 and len(found[0]) == 1, found
    return found[0][0]


def loaded(handle: Handle) -> dict[str, int]:
    nodes = rows(handle, "MATCH (a:Person) RETURN count(*), sum(a.ID)")[0]
    edges = rows(
        handle, "MATCH (a:Person)-[:Knows]->(b:Person) RETURN count(*), sum(a.ID), sum(b.ID)"
    )[0]
    return {
        "nodes": nodes[0],
        "node_id_sum": nodes[1] or 0,
        "edges": edges[0],
        "from_id_sum": edges[1] or 0,
        "to_id_sum": edges[2] or 0,
    }


def close(handle: Handle) -> None:
    handle.connection.close()
    handle.database.close()


def peer() -> Peer:
    cypher = "the query's Cypher text, as Warren runs it"
    return Peer(
        name="kuzu",
        version=kuzu.__version__,
        threads_used=lambda threads: threads,
        methods={
            "shortest": cypher,
            "all_shortest": cypher,
            "walks": cypher,
            "load": "COPY of nodes.csv then edges.csv (copy.cypher) into a new database",
        },
        unsupported={},
        in_memory=False,
        create=create,
        copy=copy,
        open=open_database,
        query=query,
        loaded=loaded,
        close=close,
    )


if __name__ == "__main__":
    drive(peer())

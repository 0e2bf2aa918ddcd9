"""The benchmark workloads that Warren and its peers run side by side: their Cypher text, their
parameters, the project's goal for each, and the one normal form their answers are compared in.

Every peer script and the runner (compare.py) take workload names and answers from here, so a
workload is defined once. Datasets are Graph500 graphs written by `warren generate`: node table
Person(ID), rel table Knows(FROM Person TO Person).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# What a load answers: counts and ID sums of what the database holds, as Warren reports them.
LOAD_KEYS = ["nodes", "node_id_sum", "edges", "from_id_sum", "to_id_sum"]

# The deepest hop count of SHORTEST and ALL SHORTEST, as in the queries (`1..30`).
HOPS_MAX = 30


@dataclass(frozen=True)
class Goal:
    """Warren must be at least `factor` times faster than `peer` on the workload."""

    peer: str
    factor: float


@dataclass(frozen=True)
class Workload:
    name: str
    kind: str  # "shortest", "all_shortest", "walks" or "load"
    cypher: str
    goals: tuple[Goal, ...]
    # Sources are the persons with ID < sources_below, or with ID = source_equal when it is set.
    sources_below: int | None = None
    source_equal: int | None = None
    hops: int | None = None
    destinations_below: int | None = None

    def source_ids(self, ids: list[int]) -> list[int]:
        """The IDs among `ids` that the query's source filter keeps, sorted."""
        if self.source_equal is not None:
            return [self.source_equal] if self.source_equal in set(ids) else []
        assert self.sources_below is not None, self.name
        return sorted(i for i in ids if i < self.sources_below)

    def source_sql(self, column: str) -> str:
        """The source filter as a SQL condition on `column`."""
        if self.source_equal is not None:
            return f"{column} = {self.source_equal}"
        assert self.sources_below is not None, self.name
        return f"{column} < {self.sources_below}"


SHORTEST = (
    "MATCH p=(a:Person)-[r:Knows* SHORTEST 1..30]->(b:Person) WHERE a.ID {sources} "
    "RETURN a.ID, count(*), sum(length(p)) ORDER BY a.ID"
)
ALL_SHORTEST = (
    "MATCH p = (a:Person)-[r:Knows* ALL SHORTEST 1..30]->(b:Person) WHERE a.ID = {source} "
    "RETURN count(*)"
)
WALKS = (
    "MATCH (a:Person)-[r:Knows*1..{hops}]->(b:Person) WHERE a.ID < {sources} "
    "AND b.ID < {destinations} RETURN count(*)"
)
LOAD = "schema.cypher, then COPY Person FROM nodes.csv, COPY Knows FROM edges.csv"


def shortest_workload(name: str, goals: tuple[Goal, ...], **sources: int) -> Workload:
    """SHORTEST from the persons with ID < `sources_below` or ID = `source_equal`."""
    if "source_equal" in sources:
        condition = f"= {sources['source_equal']}"
    else:
        condition = f"< {sources['sources_below']}"
    return Workload(name, "shortest", SHORTEST.format(sources=condition), goals, **sources)


def all_shortest_workload(name: str, goals: tuple[Goal, ...], source: int) -> Workload:
    cypher = ALL_SHORTEST.format(source=source)
    return Workload(name, "all_shortest", cypher, goals, source_equal=source)


def walks_workload(
    name: str, goals: tuple[Goal, ...], hops: int, sources_below: int, destinations_below: int
) -> Workload:
    assert 1 <= hops <= HOPS_MAX, hops
    cypher = WALKS.format(hops=hops, sources=sources_below, destinations=destinations_below)
    return Workload(
        name,
        "walks",
        cypher,
        goals,
        sources_below=sources_below,
        hops=hops,
        destinations_below=destinations_below,
    )


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in [
        shortest_workload("sp64", (Goal("kuzu", 30.0),), sources_below=64),
        shortest_workload("sp1", (Goal("kuzu", 5.0),), source_equal=0),
        all_shortest_workload("allsp", (Goal("kuzu", 10.0), Goal("duckdb", 5.0)), source=0),
        walks_workload("varlen3", (Goal("kuzu", 100.0),), 3, 5, 500),
        walks_workload("varlen5", (Goal("duckdb", 10.0),), 5, 5, 500),
        Workload("load", "load", LOAD, (Goal("kuzu", 3.0),)),
    ]
}

DEFAULT_WORKLOADS = ["sp64", "sp1", "allsp", "varlen3", "varlen5", "load"]


def workload(name: str) -> Workload:
    """The workload called `name`; a clear error for an unknown name."""
    if name not in WORKLOADS:
        raise ValueError(f"unknown workload {name!r}; known: {', '.join(WORKLOADS)}")
    return WORKLOADS[name]


def normal_answer(kind: str, answer: Any) -> Any:
    """The answer in the form every system's answer is compared in.

    shortest: a list of [a.ID, count, sum of lengths] rows of ints (a single row given bare,
    as Warren's sp1 may, is wrapped); all_shortest and walks: one int; load: a dict of the
    LOAD_KEYS.
    Decimals and integral floats (Kùzu's sum is a DECIMAL) become ints; None stays None.
    """
    if answer is None:
        return None
    if kind == "shortest":
        rows = answer if answer and isinstance(answer[0], list) else [answer] if answer else []
        return [[_integer(v) for v in row] for row in rows]
    if kind in ("all_shortest", "walks"):
        if isinstance(answer, list):
            assert len(answer) == 1, answer
            answer = answer[0][0] if isinstance(answer[0], list) else answer[0]
        return _integer(answer)
    if kind == "load":
        assert sorted(answer) == sorted(LOAD_KEYS), answer
        return {key: _integer(answer[key]) for key in LOAD_KEYS}
    raise ValueError(f"unknown workload kind {kind!r}")


def _integer(value: Any) -> int:
    """`value` as an int, refusing anything that is not integral."""
    if isinstance(value, bool):
        raise ValueError(f"boolean {value!r} where a count was expected")
    if isinstance(value, str):
        return int(value)
    as_int = int(value)
    if as_int != value:
        raise ValueError(f"non-integral value {value!r} where a count was expected")
    return as_int

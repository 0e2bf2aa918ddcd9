"""Runs one benchmark workload on igraph (python-igraph), single-threaded as igraph is.

    .venv/bin/python peer_igraph.py --workload sp1 --dataset DIR --repeat 3 --output sp1.json

The graph is built in memory from nodes.csv and edges.csv (vertex i is the i-th smallest ID).
* SHORTEST: `Graph.bfs` from each source; its layers give every reached node's distance, so
  count and sum of lengths need no path enumeration.
* ALL SHORTEST: `Graph.bfs` for distances, then the number of shortest paths per node by
  dynamic programming over the edges level by level (numpy), summed over reached nodes.
  (`get_all_shortest_paths` would materialize every path: ten million at scale 18.)
* walks 1..H: igraph has no walk counter, so this is scipy: H sparse matrix-vector products
  with the transposed adjacency matrix; it is labelled "scipy" in the results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import igraph
import numpy as np
import scipy
import scipy.sparse

from peer_common import Peer, dense_indices, drive, read_edges, read_node_ids
from workloads import HOPS_MAX, Workload

# Path and walk counts are int64; a step whose counts could exceed this is refused, not wrapped.
COUNT_MAX = 2**62


@dataclass
class Handle:
    graph: igraph.Graph
    ids: np.ndarray  # sorted Person IDs: vertex i has ID ids[i]
    edges: np.ndarray  # (E, 2) vertex indices
    # scipy's transposed adjacency matrix for walk counts, built before the timed queries.
    transposed: scipy.sparse.csr_matrix | None = None


def copy(created: None, dataset: str) -> Handle:
    """Builds the graph in memory (igraph is single-threaded and has no database)."""
    del created
    ids, edges = dense_indices(read_node_ids(dataset), read_edges(dataset))
    graph = igraph.Graph(n=len(ids), directed=True)
    graph.add_edges(edges)
    return Handle(graph, ids, edges)


def vertex_of(handle: Handle, person_id: int) -> int:
    index = int(np.searchsorted(handle.ids, person_id))
    assert handle.ids[index] == person_id, person_id
    return index


def levels(handle: Handle, source: int) -> np.ndarray:
    """Hop distance from vertex `source` to every vertex (-1: unreached or beyond HOPS_MAX)."""
    visited, starts, _ = handle.graph.bfs(source, mode="out")
    distance = np.full(len(handle.ids), -1, dtype=np.int64)
    for level in range(min(len(starts) - 1, HOPS_MAX + 1)):
        distance[visited[starts[level] : starts[level + 1]]] = level
    return distance


def shortest(handle: Handle, work: Workload) -> list[list[int]]:
    found = []
    for person_id in work.source_ids(handle.ids.tolist()):
        distance = levels(handle, vertex_of(handle, person_id))
        reached = distance[distance > 0]
        if len(reached) > 0:
            found.append([person_id, len(reached), int(reached.sum())])
    return found


def all_shortest(handle: Handle, work: Workload) -> int:
    sources = work.source_ids(handle.ids.tolist())
    assert len(sources) <= 1, "ALL SHORTEST counts paths from one source"
    if not sources:
        return 0
    distance = levels(handle, vertex_of(handle, sources[0]))
    return shortest_path_total(handle.edges, distance)


def shortest_path_total(edges: np.ndarray, distance: np.ndarray) -> int:
    """Sum over reached nodes of their number of shortest paths from the source (distance 0)."""
    src, dst = edges[:, 0], edges[:, 1]
    tight = (distance[src] >= 0) & (distance[dst] == distance[src] + 1)
    src, dst = src[tight], dst[tight]
    paths = (distance == 0).astype(np.int64)
    for level in range(int(distance.max(initial=0))):
        step = distance[src] == level
        added = paths[src[step]]
        assert int(added.sum()) < COUNT_MAX, "path counts would overflow int64"
        np.add.at(paths, dst[step], added)
    return int(paths[distance > 0].sum())


def prepare(handle: Handle, work: Workload) -> None:
    """Builds scipy's matrix for the walk workloads (untimed, like loading)."""
    if work.kind == "walks" and handle.transposed is None:
        n = len(handle.ids)
        ones = np.ones(len(handle.edges), dtype=np.int64)
        handle.transposed = scipy.sparse.csr_matrix(
            (ones, (handle.edges[:, 1], handle.edges[:, 0])), shape=(n, n)
        )


def walks(handle: Handle, work: Workload) -> int:
    assert work.hops is not None and work.destinations_below is not None
    transposed = handle.transposed
    assert transposed is not None, "prepare() builds the matrix"
    n = len(handle.ids)
    in_degree_max = int(np.diff(transposed.indptr).max(initial=0))
    counts = np.zeros(n, dtype=np.int64)
    for person_id in work.source_ids(handle.ids.tolist()):
        counts[vertex_of(handle, person_id)] = 1
    wanted = handle.ids < work.destinations_below
    total = 0
    for _ in range(work.hops):
        assert int(counts.max(initial=0)) * max(in_degree_max, 1) < COUNT_MAX, "overflow"
        counts = transposed @ counts
        total += int(counts[wanted].sum())
    return total


def query(handle: Handle, work: Workload) -> Any:
    if work.kind == "shortest":
        return shortest(handle, work)
    if work.kind == "all_shortest":
        return all_shortest(handle, work)
    if work.kind == "walks":
        return walks(handle, work)
    raise ValueError(f"igraph has no query for workload kind {work.kind!r}")


def loaded(handle: Handle) -> dict[str, int]:
    """What the igraph graph holds, its edge list read back from igraph."""
    edges = np.array(handle.graph.get_edgelist(), dtype=np.int64).reshape(-1, 2)
    return {
        "nodes": handle.graph.vcount(),
        "node_id_sum": int(handle.ids.sum()),
        "edges": handle.graph.ecount(),
        "from_id_sum": int(handle.ids[edges[:, 0]].sum()),
        "to_id_sum": int(handle.ids[edges[:, 1]].sum()),
    }


def no_database(db_dir: str, threads: int) -> Handle:
    raise AssertionError("igraph keeps no database to open")


def peer() -> Peer:
    return Peer(
        name="igraph",
        version=f"{igraph.__version__} (scipy {scipy.__version__})",
        threads_used=lambda threads: 1,
        methods={
            "shortest": "igraph Graph.bfs per source; count and sum of its levels",
            "all_shortest": "igraph Graph.bfs, then shortest-path counts by numpy DP per level",
            "walks": "scipy: H sparse matrix-vector products (not igraph)",
            "load": "numpy.loadtxt of the CSV files, then igraph Graph.add_edges",
        },
        unsupported={},
        in_memory=True,
        create=lambda dataset, db_dir, threads: None,
        copy=copy,
        open=no_database,
        prepare=prepare,
        labels={"walks": "scipy"},
        query=query,
        loaded=loaded,
        close=lambda handle: None,
    )


if __name__ == "__main__":
    drive(peer())

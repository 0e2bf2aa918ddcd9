"""Runs one benchmark workload on networkx, single-threaded pure Python as networkx is.

    .venv/bin/python peer_networkx.py --workload sp1 --dataset DIR --repeat 3 --output sp1.json

The graph is a `networkx.DiGraph` whose nodes are the Person IDs.
* SHORTEST: `single_source_shortest_path_length(G, source, cutoff=30)` per source.
* ALL SHORTEST: a level-by-level BFS over `G.succ` that carries, per node, the number of
  shortest paths reaching it (networkx has no path counter; `all_shortest_paths` per target
  would enumerate ten million paths at scale 18).
* walks 1..H: not answered (networkx has no walk counter); the results say `n/a`.
"""

from __future__ import annotations

from typing import Any

import networkx

from peer_common import Peer, drive, read_edges, read_node_ids
from workloads import HOPS_MAX, Workload


def copy(created: None, dataset: str) -> networkx.DiGraph:
    """Builds the graph in memory (networkx is single-threaded and has no database)."""
    del created
    edges = read_edges(dataset)
    graph = networkx.DiGraph()
    graph.add_nodes_from(read_node_ids(dataset).tolist())
    graph.add_edges_from(edges.tolist())
    # A DiGraph merges parallel rels, which would change path counts: refuse them.
    assert graph.number_of_edges() == len(edges), "edges.csv has parallel rels"
    return graph


def shortest(graph: networkx.DiGraph, work: Workload) -> list[list[int]]:
    found = []
    for source in work.source_ids(list(graph.nodes)):
        lengths = networkx.single_source_shortest_path_length(graph, source, cutoff=HOPS_MAX)
        del lengths[source]
        if lengths:
            found.append([source, len(lengths), sum(lengths.values())])
    return found


def shortest_path_counts(graph: networkx.DiGraph, source: int) -> dict[int, int]:
    """For each node reached within HOPS_MAX hops, its number of shortest paths from `source`."""
    distance = {source: 0}
    paths = {source: 1}
    frontier = [source]
    for level in range(1, HOPS_MAX + 1):
        reached = []
        for node in frontier:
            for neighbour in graph.succ[node]:
                if neighbour not in distance:
                    distance[neighbour] = level
                    paths[neighbour] = 0
                    reached.append(neighbour)
                if distance[neighbour] == level:
                    paths[neighbour] += paths[node]
        if not reached:
            break
        frontier = reached
    return paths


def all_shortest(graph: networkx.DiGraph, work: Workload) -> int:
    sources = work.source_ids(list(graph.nodes))
    assert len(sources) <= 1, "ALL SHORTEST counts paths from one source"
    if not sources:
        return 0
    paths = shortest_path_counts(graph, sources[0])
    return sum(paths.values()) - 1  # the source's own empty path is not a result


def query(graph: networkx.DiGraph, work: Workload) -> Any:
    if work.kind == "shortest":
        return shortest(graph, work)
    if work.kind == "all_shortest":
        return all_shortest(graph, work)
    raise ValueError(f"networkx has no query for workload kind {work.kind!r}")


def loaded(graph: networkx.DiGraph) -> dict[str, int]:
    return {
        "nodes": graph.number_of_nodes(),
        "node_id_sum": sum(graph.nodes),
        "edges": graph.number_of_edges(),
        "from_id_sum": sum(a for a, _ in graph.edges),
        "to_id_sum": sum(b for _, b in graph.edges),
    }


def no_database(db_dir: str, threads: int) -> networkx.DiGraph:
    raise AssertionError("networkx keeps no database to open")


def peer() -> Peer:
    return Peer(
        name="networkx",
        version=networkx.__version__,
        threads_used=lambda threads: 1,
        methods={
            "shortest": "networkx single_source_shortest_path_length per source",
            "all_shortest": "BFS with path counts over networkx's adjacency (pure Python)",
            "load": "numpy.loadtxt of the CSV files, then DiGraph.add_nodes_from/add_edges_from",
        },
        unsupported={"walks": "networkx has no walk counter"},
        in_memory=True,
        create=lambda dataset, db_dir, threads: None,
        copy=copy,
        open=no_database,
        query=query,
        loaded=loaded,
        close=lambda graph: None,
    )


if __name__ == "__main__":
    drive(peer())

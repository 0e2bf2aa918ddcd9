"""Writes a copy of a Graph500 dataset whose nodes.csv lists the same IDs in another row order, so
that COPY gives the nodes other internal offsets while every user-visible ID stays the same
(edges.csv is linked, not changed). Used to measure node reordering at COPY (issue 11, item 3).

    reorder_nodes.py DATASET OUT --order degree|bfs|rcm

degree: by total degree (in + out), highest first, ties by ID; bfs: breadth-first order of the
undirected graph from the highest-degree node, unreached nodes after in ID order; rcm: reverse
Cuthill-McKee of the undirected graph (scipy).
"""

import argparse
import os
import time

import numpy as np
from scipy.sparse import csr_matrix
from scipy.sparse.csgraph import breadth_first_order, reverse_cuthill_mckee


def read_pairs(path: str) -> np.ndarray:
    with open(path, "rb") as f:
        f.readline()  # header
        text = f.read()
    values = np.fromstring(text.replace(b",", b" ").decode(), dtype=np.int64, sep=" ")
    return values.reshape(-1, 2)


def undirected(edges: np.ndarray, nodes: int) -> csr_matrix:
    rows = np.concatenate([edges[:, 0], edges[:, 1]])
    cols = np.concatenate([edges[:, 1], edges[:, 0]])
    data = np.ones(len(rows), dtype=np.int8)
    return csr_matrix((data, (rows, cols)), shape=(nodes, nodes))


def order_of(kind: str, edges: np.ndarray, nodes: int) -> np.ndarray:
    degree = np.bincount(edges.ravel(), minlength=nodes)
    if kind == "degree":
        return np.lexsort((np.arange(nodes), -degree))
    graph = undirected(edges, nodes)
    if kind == "rcm":
        return reverse_cuthill_mckee(graph, symmetric_mode=True).astype(np.int64)
    start = int(np.argmax(degree))
    reached = breadth_first_order(graph, start, directed=False, return_predecessors=False)
    seen = np.zeros(nodes, dtype=bool)
    seen[reached] = True
    return np.concatenate([reached, np.flatnonzero(~seen)]).astype(np.int64)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("dataset")
    parser.add_argument("out")
    parser.add_argument("--order", choices=["degree", "bfs", "rcm"], required=True)
    args = parser.parse_args()
    started = time.time()
    ids = np.loadtxt(os.path.join(args.dataset, "nodes.csv"), dtype=np.int64, skiprows=1)
    assert np.array_equal(ids, np.arange(len(ids))), "expects IDs 0..n-1"
    edges = read_pairs(os.path.join(args.dataset, "edges.csv"))
    order = order_of(args.order, edges, len(ids))
    assert len(order) == len(ids) and len(np.unique(order)) == len(ids)
    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "nodes.csv"), "w") as f:
        f.write("ID\n")
        f.write("\n".join(map(str, order.tolist())))
        f.write("\n")
    edges_link = os.path.join(args.out, "edges.csv")
    if not os.path.exists(edges_link):
        os.symlink(os.path.abspath(os.path.join(args.dataset, "edges.csv")), edges_link)
    for name in ("schema.cypher", "copy.cypher"):
        with open(os.path.join(args.dataset, name)) as f:
            text = f.read().replace(os.path.abspath(args.dataset), os.path.abspath(args.out))
        with open(os.path.join(args.out, name), "w") as f:
            f.write(text)
    print(f"{args.order}: {len(ids)} nodes, {len(edges)} edges in {time.time() - started:.1f} s")


if __name__ == "__main__":
    main()

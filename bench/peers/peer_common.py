"""What every peer script shares: its command line, reading the dataset's CSV files, the timed
loops (with the progress markers that the runner's per-query timeout watches), and the JSON
result they all write.

A peer script describes its system as a `Peer` and calls `drive(peer)`. The driver then:
* for `--workload load`: loads the dataset `--repeat` times, each into a fresh database under
  `--db`, timing each load; the last one is left in place for the query workloads;
* for a query workload: opens the database under `--db` (loading it first, untimed, when it is
  missing; that time is `figures.setup_s`), runs the query `--warmup` times untimed (as
  `warren bench` does once) and then `--repeat` times, timing each.
Before each run it prints `@start I` to standard output and after it `@end I SECONDS` (warm-up
runs have negative I), so the runner can stop a run past its timeout; everything else goes to
standard error.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from workloads import Workload, normal_answer, workload

if TYPE_CHECKING:
    import numpy as np

MARK_START = "@start"
MARK_END = "@end"


@dataclass(frozen=True)
class Peer:
    """One system: how it loads, opens and queries, and what it cannot do.

    Loading is two steps, as in Warren's load workload: `create(dataset, db_dir, threads)`
    makes a new database with the schema in the empty folder `db_dir` (untimed), then
    `copy(created, dataset)` copies nodes then edges into it and returns a handle (timed).
    Systems without a database on disk (`in_memory`) build their graph in `copy` and ignore
    `db_dir`; the others are opened again for queries with `open(db_dir, threads)`.
    `query(handle, workload)` returns the answer; `loaded(handle)` what the handle holds (see
    `workloads.LOAD_KEYS`); `close(handle)` releases it; `prepare(handle, workload)` builds what a
    workload needs besides the loaded graph, untimed. `labels` name, per workload kind, another
    library that does the work (shown in the table).
    """

    name: str
    version: str
    in_memory: bool
    threads_used: Callable[[int], int]
    methods: dict[str, str]  # workload kind -> how this system answers it
    unsupported: dict[str, str]  # workload kind -> why this system cannot answer it
    create: Callable[[str, str, int], Any]
    copy: Callable[[Any, str], Any]
    open: Callable[[str, int], Any]
    query: Callable[[Any, Workload], Any]
    loaded: Callable[[Any], dict[str, int]]
    close: Callable[[Any], None]
    prepare: Callable[[Any, Workload], None] = lambda handle, work: None
    labels: dict[str, str] = field(default_factory=dict)


def parse_args(system: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=f"Runs one benchmark workload on {system} and writes the result as JSON."
    )
    parser.add_argument("--workload", required=True, help="sp64, sp1, allsp, varlen3, ...")
    parser.add_argument("--dataset", required=True, help="folder written by `warren generate`")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs before --repeat")
    parser.add_argument("--output", required=True, help="the JSON result file")
    parser.add_argument(
        "--db", help="database folder (kept between workloads); a temporary one when omitted"
    )
    args = parser.parse_args()
    if args.threads < 1 or args.repeat < 1 or args.warmup < 0:
        parser.error("--threads and --repeat must be at least 1, --warmup at least 0")
    return args


def read_node_ids(dataset: str) -> np.ndarray:
    """The Person IDs of nodes.csv (header `ID`), as int64."""
    # numpy is imported here, not at the top: the on-disk peers (Kùzu, DuckDB) never read the
    # CSV files themselves, so a Kùzu-only environment (the thread-scaling run) needs no numpy.
    import numpy as np

    ids = np.loadtxt(os.path.join(dataset, "nodes.csv"), skiprows=1, dtype=np.int64, ndmin=1)
    return ids


def read_edges(dataset: str) -> np.ndarray:
    """The Knows rels of edges.csv (header `from,to`) as an (E, 2) int64 array of Person IDs."""
    import numpy as np

    path = os.path.join(dataset, "edges.csv")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # a graph without edges is fine
        edges = np.loadtxt(path, delimiter=",", skiprows=1, dtype=np.int64, ndmin=2)
    if edges.size == 0:
        return np.zeros((0, 2), dtype=np.int64)
    assert edges.shape[1] == 2, f"{path}: expected two columns, got {edges.shape[1]}"
    return edges


def dense_indices(ids: np.ndarray, edges: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Maps IDs to indices 0..n-1 (in sorted ID order): returns (sorted ids, edges as indices).

    Every rel endpoint must be a known Person ID, as COPY in Kùzu and Warren requires.
    """
    import numpy as np

    order = np.sort(ids)
    assert len(np.unique(order)) == len(order), "nodes.csv has duplicate IDs"
    indices = np.searchsorted(order, edges)
    inside = indices < len(order)
    known = inside & (order[np.minimum(indices, len(order) - 1)] == edges)
    assert known.all(), "edges.csv names a Person ID that nodes.csv lacks"
    return order, indices


def fresh_directory(path: str) -> str:
    """Empties (or creates) the folder `path` and returns it."""
    if os.path.exists(path):
        shutil.rmtree(path)
    os.makedirs(path)
    return path


def time_figures(samples: list[float]) -> dict[str, Any]:
    return {
        "min": min(samples),
        "median": statistics.median(samples),
        "max": max(samples),
        "samples": samples,
    }


def peak_rss_bytes() -> int:
    """This process's peak resident set size so far (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def mark(label: str, index: int, seconds: float | None = None) -> None:
    text = f"{label} {index}" if seconds is None else f"{label} {index} {seconds:.6f}"
    print(text, flush=True)


def load(peer: Peer, dataset: str, db_dir: str, threads: int) -> Any:
    """Loads the dataset into a fresh `db_dir`, untimed; returns the handle."""
    fresh_directory(db_dir)
    return peer.copy(peer.create(dataset, db_dir, threads), dataset)


def time_loads(peer: Peer, args: argparse.Namespace, db_dir: str) -> tuple[list[float], Any]:
    """Loads `--repeat` times into a fresh `db_dir`, timing the copy of nodes and edges;
    returns the times and what was loaded. The last database stays in `db_dir`."""
    samples: list[float] = []
    answer = None
    for index in range(args.repeat):
        fresh_directory(db_dir)
        created = peer.create(args.dataset, db_dir, args.threads)
        mark(MARK_START, index)
        started = time.perf_counter()
        handle = peer.copy(created, args.dataset)
        seconds = time.perf_counter() - started
        mark(MARK_END, index, seconds)
        loaded = peer.loaded(handle)
        peer.close(handle)
        assert answer is None or loaded == answer, f"load {index}: {loaded} != {answer}"
        answer = loaded
        samples.append(seconds)
    return samples, answer


def open_for_queries(peer: Peer, dataset: str, db_dir: str, threads: int) -> Any:
    """A handle to query: the in-memory graph built now, or the database in `db_dir` (loaded
    first when the folder is empty)."""
    if peer.in_memory:
        return load(peer, dataset, db_dir, threads)
    if not is_loaded(db_dir):
        peer.close(load(peer, dataset, db_dir, threads))
    return peer.open(db_dir, threads)


def time_queries(run_once: Callable[[], Any], warmup: int, repeat: int) -> tuple[list[float], Any]:
    """Runs the query `warmup` times untimed, then `repeat` times timed; every run must give
    the same answer. Returns the timed runs' seconds and the answer."""
    samples: list[float] = []
    answer = None
    for index in range(-warmup, repeat):
        mark(MARK_START, index)
        started = time.perf_counter()
        result = run_once()
        seconds = time.perf_counter() - started
        mark(MARK_END, index, seconds)
        first = index == -warmup
        assert first or result == answer, f"run {index}: {result!r} != {answer!r}"
        answer = result
        if index >= 0:
            samples.append(seconds)
    return samples, answer


def is_loaded(db_dir: str) -> bool:
    return os.path.isdir(db_dir) and bool(os.listdir(db_dir))


def run_workload(peer: Peer, args: argparse.Namespace, db_dir: str) -> dict[str, Any]:
    """Runs the workload and returns the result's figures, answer and method."""
    work = workload(args.workload)
    figures: dict[str, Any]
    if work.kind == "load":
        samples, answer = time_loads(peer, args, db_dir)
        figures = {"time_s": time_figures(samples)}
        figures["edges_per_s"] = answer["edges"] / figures["time_s"]["median"]
        return {"figures": figures, "answer": answer, "method": peer.methods["load"]}
    started = time.perf_counter()
    handle = open_for_queries(peer, args.dataset, db_dir, args.threads)
    peer.prepare(handle, work)
    setup_s = time.perf_counter() - started
    samples, answer = time_queries(lambda: peer.query(handle, work), args.warmup, args.repeat)
    peer.close(handle)
    figures = {"time_s": time_figures(samples), "setup_s": setup_s}
    return {"figures": figures, "answer": answer, "method": peer.methods[work.kind]}


def drive(peer: Peer) -> None:
    """The whole peer script: parse the command line, run, write the JSON result."""
    args = parse_args(peer.name)
    work = workload(args.workload)
    result: dict[str, Any] = {
        "workload": work.name,
        "system": peer.name,
        "version": peer.version,
        "threads": peer.threads_used(args.threads),
        "threads_asked": args.threads,
        "repeat": args.repeat,
        "warmup": 0 if work.kind == "load" else args.warmup,
        "dataset": os.path.abspath(args.dataset),
        "query": work.cypher,
    }
    reason = peer.unsupported.get(work.kind)
    if reason is not None:
        result.update({"supported": False, "reason": reason, "answer": None})
        write_json(args.output, result)
        return
    with tempfile.TemporaryDirectory(prefix=f"peer-{peer.name}-") as scratch:
        db_dir = args.db or os.path.join(scratch, "db")
        outcome = run_workload(peer, args, db_dir)
    outcome["answer"] = normal_answer(work.kind, outcome["answer"])
    outcome["figures"]["peak_rss_bytes"] = peak_rss_bytes()
    outcome["label"] = peer.labels.get(work.kind, "")
    result.update({"supported": True, **outcome})
    write_json(args.output, result)
    print(
        f"{peer.name} {work.name}: {result['figures']['time_s']['median']:.3f} s", file=sys.stderr
    )


def write_json(path: str, payload: dict[str, Any]) -> None:
    folder = os.path.dirname(os.path.abspath(path))
    os.makedirs(folder, exist_ok=True)
    with open(path, "w") as f:
        json.dump(payload, f, indent=1)
        f.write("\n")

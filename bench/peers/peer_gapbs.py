"""Runs the one-source SHORTEST workload (`sp1`) on GAPBS's direction-optimizing BFS.

    .venv/bin/python peer_gapbs.py --workload sp1 --dataset DIR --threads 2 --repeat 3 \
        --output sp1.json [--gapbs-src PATH] [--build-dir DIR]

GAPBS (the GAP Benchmark Suite, github.com/sbeamer/gapbs) is the reference implementation of
direction-optimizing BFS (Beamer et al.); it is not part of the repository. `--gapbs-src` (or
the environment variable GAPBS_SRC) names its source: a folder holding `src/bfs.cc`, or a bare
git repository, whose HEAD is extracted with `git archive`. The build folder (`--build-dir`,
GAPBS_BUILD, by default ~/.cache/warren-bench/gapbs) receives the extracted source, the
binaries `bfs` and `converter` (g++ -O3 -fopenmp) and the converted graphs; nothing is written
into the repository.

The dataset becomes a GAPBS edge list (`.el`, vertex i is the i-th smallest Person ID, as for
igraph), serialized once to `.sg` with GAPBS's converter so that each run reads it quickly.
The timed part is GAPBS's own "Trial Time" (the BFS only, the graph already built), with
OMP_NUM_THREADS = --threads: one `bfs -n (warmup + repeat)` process whose first `--warmup`
trials are dropped. The answer comes from one more run with `-l` (per-level log): the nodes
each level reached give count(*) and sum(length(p)) for levels 1..30. Workloads other than
`sp1` are n/a: GAPBS's `bfs` runs from one source and counts neither paths nor walks.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from typing import Any

import numpy as np

from peer_common import (
    MARK_END,
    MARK_START,
    dense_indices,
    mark,
    read_edges,
    read_node_ids,
    time_figures,
    write_json,
)
from workloads import HOPS_MAX, Workload, normal_answer, workload

DEFAULT_SOURCE = "/work/.mirror/sbeamer+gapbs/repo"
DEFAULT_BUILD = os.path.join(os.path.expanduser("~"), ".cache", "warren-bench", "gapbs")
BINARIES = ("bfs", "converter")
COMPILE = ["g++", "-std=c++11", "-O3", "-Wall", "-fopenmp"]

TRIAL_TIME = re.compile(r"^Trial Time:\s+([0-9.]+)\s*$")
# A level of the `-l` log: "   td       1234    0.00012" or "   bu  ..." (nodes reached).
LEVEL_STEP = re.compile(r"^\s*(td|bu)\s+(-?\d+)\s+[0-9.]+\s*$")


class GapbsMissing(Exception):
    """The GAPBS source is not where the options say."""


@dataclass(frozen=True)
class Graph:
    """A dataset converted for GAPBS: its serialized graph and the Person IDs by vertex."""

    serialized: str
    ids: np.ndarray


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description="Runs sp1 on GAPBS's BFS; writes JSON.")
    parser.add_argument("--workload", required=True)
    parser.add_argument("--dataset", required=True, help="folder written by `warren generate`")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--warmup", type=int, default=1, help="trials dropped before --repeat")
    parser.add_argument("--output", required=True)
    parser.add_argument("--db", help="unused: GAPBS keeps no database")
    parser.add_argument(
        "--gapbs-src",
        default=os.environ.get("GAPBS_SRC", DEFAULT_SOURCE),
        help="GAPBS source: a folder with src/bfs.cc or a bare git repository (env GAPBS_SRC)",
    )
    parser.add_argument(
        "--build-dir",
        default=os.environ.get("GAPBS_BUILD", DEFAULT_BUILD),
        help="where GAPBS is built and graphs are converted (env GAPBS_BUILD)",
    )
    args = parser.parse_args()
    if args.threads < 1 or args.repeat < 1 or args.warmup < 0:
        parser.error("--threads and --repeat must be at least 1, --warmup at least 0")
    return args


def extract_source(source: str, destination: str) -> None:
    """Copies GAPBS's source tree into `destination` (from a folder or a bare repository)."""
    if os.path.isfile(os.path.join(source, "src", "bfs.cc")):
        shutil.copytree(source, destination, dirs_exist_ok=True)
        return
    if os.path.isfile(os.path.join(source, "HEAD")) and os.path.isdir(
        os.path.join(source, "objects")
    ):
        os.makedirs(destination, exist_ok=True)
        archive = subprocess.run(
            ["git", "--git-dir", source, "archive", "HEAD"], check=True, capture_output=True
        )
        subprocess.run(["tar", "-x", "-C", destination], input=archive.stdout, check=True)
        return
    raise GapbsMissing(
        f"GAPBS source not found at {source!r}: pass --gapbs-src (or set GAPBS_SRC) to a "
        "checkout of https://github.com/sbeamer/gapbs (a folder with src/bfs.cc) or a bare "
        "git repository of it"
    )


def build(source: str, build_dir: str) -> str:
    """Builds `bfs` and `converter` once; returns the folder holding them."""
    binaries = os.path.join(build_dir, "bin")
    if all(os.access(os.path.join(binaries, name), os.X_OK) for name in BINARIES):
        return binaries
    tree = os.path.join(build_dir, "src-tree")
    if os.path.exists(tree):
        shutil.rmtree(tree)
    extract_source(source, tree)
    os.makedirs(binaries, exist_ok=True)
    for name in BINARIES:
        output = os.path.join(binaries, name)
        command = COMPILE + [os.path.join(tree, "src", f"{name}.cc"), "-o", output + ".tmp"]
        print(" ".join(command), file=sys.stderr, flush=True)
        subprocess.run(command, check=True, stdout=sys.stderr)
        os.replace(output + ".tmp", output)
    return binaries


def edge_list(ids: np.ndarray, edges: np.ndarray) -> np.ndarray:
    """The edges as vertex indices, plus a self loop on the last vertex so that GAPBS (which
    sizes the graph by the largest vertex in the list and drops self loops) has every node."""
    pad = np.array([[len(ids) - 1, len(ids) - 1]], dtype=np.int64)
    return np.concatenate([edges, pad]) if len(ids) > 0 else edges


def dataset_key(dataset: str) -> str:
    """Names a dataset's converted files by its path and its CSV files' sizes and times."""
    parts = [os.path.abspath(dataset)]
    for name in ("nodes.csv", "edges.csv"):
        status = os.stat(os.path.join(dataset, name))
        parts.append(f"{status.st_size}:{status.st_mtime_ns}")
    return hashlib.sha256("|".join(parts).encode()).hexdigest()[:16]


def convert(dataset: str, binaries: str, build_dir: str) -> Graph:
    """The dataset as GAPBS's serialized graph (made once per dataset version)."""
    ids, edges = dense_indices(read_node_ids(dataset), read_edges(dataset))
    folder = os.path.join(build_dir, "graphs")
    os.makedirs(folder, exist_ok=True)
    serialized = os.path.join(folder, dataset_key(dataset) + ".sg")
    if not os.path.exists(serialized):
        with tempfile.TemporaryDirectory(dir=folder) as scratch:
            listed = os.path.join(scratch, "graph.el")
            np.savetxt(listed, edge_list(ids, edges), fmt="%d", delimiter=" ")
            made = os.path.join(scratch, "graph.sg")
            command = [os.path.join(binaries, "converter"), "-f", listed, "-b", made]
            subprocess.run(command, check=True, stdout=sys.stderr)
            os.replace(made, serialized)
    return Graph(serialized, ids)


def run_bfs(binaries: str, graph: Graph, source: int, threads: int, flags: list[str]) -> str:
    environment = dict(os.environ, OMP_NUM_THREADS=str(threads))
    command = [os.path.join(binaries, "bfs"), "-f", graph.serialized, "-r", str(source)]
    done = subprocess.run(
        command + flags, check=True, capture_output=True, text=True, env=environment
    )
    sys.stderr.write(done.stdout)
    return done.stdout


def trial_times(output: str) -> list[float]:
    return [float(m.group(1)) for m in map(TRIAL_TIME.match, output.splitlines()) if m]


def level_sizes(log: str) -> list[int]:
    """Nodes reached per level (level 1 first) from one trial's `-l` log."""
    sizes = [int(m.group(2)) for m in map(LEVEL_STEP.match, log.splitlines()) if m]
    assert all(size >= 0 for size in sizes), sizes
    while sizes and sizes[-1] == 0:
        sizes.pop()  # the last top-down step finds nothing
    return sizes


def shortest_answer(person_id: int, sizes: list[int]) -> list[list[int]]:
    """sp1's rows from the level sizes: destinations at distance 1..HOPS_MAX."""
    kept = sizes[:HOPS_MAX]
    count = sum(kept)
    total = sum(level * size for level, size in enumerate(kept, start=1))
    return [[person_id, count, total]] if count > 0 else []


def timed_trials(
    binaries: str, graph: Graph, source: int, args: argparse.Namespace
) -> list[float]:
    """GAPBS's trial times, warm-up trials dropped. The markers span the whole process, whose
    graph reading is untimed but short (a serialized graph)."""
    trials = args.warmup + args.repeat
    mark(MARK_START, 0)
    output = run_bfs(binaries, graph, source, args.threads, ["-n", str(trials)])
    times = trial_times(output)
    assert len(times) == trials, f"expected {trials} trial times, got {times}"
    mark(MARK_END, 0, sum(times))
    return times[args.warmup :]


def run(args: argparse.Namespace, work: Workload) -> dict[str, Any]:
    binaries = build(args.gapbs_src, args.build_dir)
    graph = convert(args.dataset, binaries, args.build_dir)
    sources = work.source_ids(graph.ids.tolist())
    assert sources, f"the dataset has no Person with the source ID of {work.name}"
    person_id = sources[0]
    vertex = int(np.searchsorted(graph.ids, person_id))
    samples = timed_trials(binaries, graph, vertex, args)
    log = run_bfs(binaries, graph, vertex, args.threads, ["-n", "1", "-l"])
    answer = shortest_answer(person_id, level_sizes(log))
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024
    figures = {"time_s": time_figures(samples), "gapbs_peak_rss_bytes": children}
    return {"figures": figures, "answer": answer}


def main() -> int:
    args = parse_args()
    work = workload(args.workload)
    result: dict[str, Any] = {
        "workload": work.name,
        "system": "gapbs",
        "version": "GAPBS bfs (direction-optimizing), g++ -O3 -fopenmp",
        "threads": args.threads,
        "threads_asked": args.threads,
        "repeat": args.repeat,
        "warmup": args.warmup,
        "dataset": os.path.abspath(args.dataset),
        "query": work.cypher,
    }
    if work.name != "sp1":
        reason = "GAPBS's bfs runs from one source and counts neither paths nor walks"
        result.update({"supported": False, "reason": reason, "answer": None})
        write_json(args.output, result)
        return 0
    try:
        outcome = run(args, work)
    except GapbsMissing as missing:
        print(f"error: {missing}", file=sys.stderr)
        return 2
    outcome["answer"] = normal_answer(work.kind, outcome["answer"])
    outcome["figures"]["peak_rss_bytes"] = resource.getrusage(
        resource.RUSAGE_SELF
    ).ru_maxrss * 1024
    policy = os.environ.get("OMP_WAIT_POLICY", "the OpenMP default")
    method = f"bfs -r SOURCE (direction-optimizing), OMP_WAIT_POLICY {policy}"
    result.update({"supported": True, "method": method, "label": "", **outcome})
    write_json(args.output, result)
    print(f"gapbs {work.name}: {result['figures']['time_s']['median']:.6f} s", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())

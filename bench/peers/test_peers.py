"""Tests of the side-by-side runner: every peer's answers against brute-force enumeration on
small random graphs, the timeout and memory measurement of child processes, answer checking,
and the table's ratios and goal verdicts.

    bench/peers/.venv/bin/python -m unittest discover -s bench/peers -p 'test_*.py'
"""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import unittest
from decimal import Decimal
from typing import Any

import child
import peer_duckdb
import peer_gapbs
import peer_igraph
import peer_kuzu
import peer_networkx
import report
from cells import Cell, check_answers
from peer_common import Peer, load, open_for_queries
from workloads import (
    WORKLOADS,
    Goal,
    Workload,
    all_shortest_workload,
    normal_answer,
    shortest_workload,
    walks_workload,
)

PEERS = [peer_kuzu.peer(), peer_duckdb.peer(), peer_igraph.peer(), peer_networkx.peer()]


def write_dataset(folder: str, nodes: int, edges: list[tuple[int, int]]) -> None:
    """A dataset in `warren generate`'s layout; node IDs are written shuffled."""
    ids = list(range(nodes))
    random.Random(nodes).shuffle(ids)
    with open(os.path.join(folder, "nodes.csv"), "w") as f:
        f.write("ID\n" + "".join(f"{i}\n" for i in ids))
    with open(os.path.join(folder, "edges.csv"), "w") as f:
        f.write("from,to\n" + "".join(f"{a},{b}\n" for a, b in edges))
    with open(os.path.join(folder, "schema.cypher"), "w") as f:
        f.write("CREATE NODE TABLE Person(ID INT64, PRIMARY KEY(ID));\n")
        f.write("CREATE REL TABLE Knows(FROM Person TO Person);\n")
    with open(os.path.join(folder, "copy.cypher"), "w") as f:
        for table, name in (("Person", "nodes.csv"), ("Knows", "edges.csv")):
            f.write(f"COPY {table} FROM '{os.path.join(folder, name)}' (HEADER=true);\n")


def random_edges(rng: random.Random, nodes: int, count: int) -> list[tuple[int, int]]:
    """Distinct directed edges, self loops allowed."""
    found: set[tuple[int, int]] = set()
    while len(found) < count:
        found.add((rng.randrange(nodes), rng.randrange(nodes)))
    return sorted(found)


def walks_by_length(
    edges: list[tuple[int, int]], source: int, hops: int
) -> list[list[tuple[int, ...]]]:
    """Every walk from `source`, as node tuples, grouped by length 0..hops (enumerated)."""
    successors: dict[int, list[int]] = {}
    for a, b in edges:
        successors.setdefault(a, []).append(b)
    by_length: list[list[tuple[int, ...]]] = [[(source,)]]
    for _ in range(hops):
        by_length.append([(*w, n) for w in by_length[-1] for n in successors.get(w[-1], [])])
    return by_length


def brute_shortest(edges, sources, hops_max):
    """For each source: {target: (distance, number of shortest paths)}, target != source."""
    found = {}
    for source in sources:
        seen: dict[int, tuple[int, int]] = {}
        for length, walks in enumerate(walks_by_length(edges, source, hops_max)):
            ends: dict[int, int] = {}
            for walk in walks:
                ends[walk[-1]] = ends.get(walk[-1], 0) + 1
            for node, count in ends.items():
                if node not in seen:
                    seen[node] = (length, count)
        seen.pop(source, None)
        found[source] = seen
    return found


def brute_answer(work: Workload, nodes: int, edges: list[tuple[int, int]]):
    ids = list(range(nodes))
    if work.kind == "walks":
        assert work.hops is not None and work.destinations_below is not None
        total = 0
        for source in work.source_ids(ids):
            for walks in walks_by_length(edges, source, work.hops)[1:]:
                total += sum(1 for w in walks if w[-1] < work.destinations_below)
        return total
    # Shortest walks are simple paths, so nodes - 1 hops reach every reachable node.
    shortest = brute_shortest(edges, work.source_ids(ids), max(nodes - 1, 1))
    if work.kind == "all_shortest":
        return sum(count for seen in shortest.values() for _, count in seen.values())
    return [
        [source, len(seen), sum(d for d, _ in seen.values())]
        for source, seen in sorted(shortest.items())
        if seen
    ]


def peer_answer(peer: Peer, work: Workload, dataset: str, db_dir: str):
    handle = open_for_queries(peer, dataset, db_dir, 2)
    peer.prepare(handle, work)
    try:
        return normal_answer(work.kind, peer.query(handle, work))
    finally:
        peer.close(handle)


TEST_WORKLOADS = [
    shortest_workload("sp", (), sources_below=6),
    shortest_workload("sp1", (), source_equal=0),
    all_shortest_workload("allsp", (), source=0),
    all_shortest_workload("allsp3", (), source=3),
    walks_workload("walks3", (), 3, 3, 9),
    walks_workload("walks5", (), 5, 2, 12),
]


class PeersAgreeWithBruteForce(unittest.TestCase):
    def check_graph(self, seed: int, nodes: int, edge_count: int) -> None:
        rng = random.Random(seed)
        edges = random_edges(rng, nodes, edge_count)
        with tempfile.TemporaryDirectory() as folder:
            write_dataset(folder, nodes, edges)
            for peer in PEERS:
                db_dir = os.path.join(folder, f"db-{peer.name}")
                os.makedirs(db_dir)
                for work in TEST_WORKLOADS:
                    if work.kind in peer.unsupported:
                        continue
                    with self.subTest(seed=seed, peer=peer.name, workload=work.name):
                        expected = brute_answer(work, nodes, edges)
                        got = peer_answer(peer, work, folder, db_dir)
                        self.assertEqual(got, expected)

    def test_random_graphs(self) -> None:
        for seed, nodes, edge_count in [(1, 12, 30), (2, 16, 24), (3, 9, 40), (4, 14, 14)]:
            self.check_graph(seed, nodes, edge_count)

    def test_source_without_edges(self) -> None:
        self.check_graph(5, 10, 0)

    def test_loads_report_what_they_hold(self) -> None:
        edges = random_edges(random.Random(6), 11, 25)
        expected = {
            "nodes": 11,
            "node_id_sum": sum(range(11)),
            "edges": 25,
            "from_id_sum": sum(a for a, _ in edges),
            "to_id_sum": sum(b for _, b in edges),
        }
        with tempfile.TemporaryDirectory() as folder:
            write_dataset(folder, 11, edges)
            for peer in PEERS:
                handle = load(peer, folder, os.path.join(folder, f"db-{peer.name}"), 2)
                with self.subTest(peer=peer.name):
                    self.assertEqual(normal_answer("load", peer.loaded(handle)), expected)
                peer.close(handle)


GAPBS_SRC = os.environ.get("GAPBS_SRC", peer_gapbs.DEFAULT_SOURCE)
GAPBS_PRESENT = os.path.exists(GAPBS_SRC) and shutil.which("g++") is not None


class GapbsLogAndEdges(unittest.TestCase):
    """What peer_gapbs.py computes itself, testable without GAPBS's source."""

    LOG = "\n".join(
        [
            "Source:                    7",
            "    i                0.00010",
            "   td          2     0.00001",
            "   td        318     0.00020",
            "    e                0.00003",
            "   bu      59246     0.00100",
            "   bu       2566     0.00050",
            "    c                0.00002",
            "   td         22     0.00001",
            "   td          0     0.00001",
            "Trial Time:          0.00190",
        ]
    )

    def test_level_sizes_follow_the_log_in_order(self) -> None:
        self.assertEqual(peer_gapbs.level_sizes(self.LOG), [2, 318, 59246, 2566, 22])
        self.assertEqual(peer_gapbs.trial_times(self.LOG), [0.0019])

    def test_answer_counts_levels_one_to_thirty(self) -> None:
        self.assertEqual(peer_gapbs.shortest_answer(7, [2, 3]), [[7, 5, 2 + 6]])
        self.assertEqual(peer_gapbs.shortest_answer(7, []), [])
        sizes = [1] * 35  # a path of 35 hops: SHORTEST 1..30 keeps 30 destinations
        self.assertEqual(peer_gapbs.shortest_answer(0, sizes), [[0, 30, 465]])

    def test_edge_list_keeps_every_node(self) -> None:
        edges = peer_gapbs.edge_list(list(range(5)), [[0, 1], [1, 2]])
        self.assertEqual(edges.tolist(), [[0, 1], [1, 2], [4, 4]])

    def test_a_missing_source_says_where_to_point(self) -> None:
        with tempfile.TemporaryDirectory() as folder:
            with self.assertRaisesRegex(peer_gapbs.GapbsMissing, "--gapbs-src"):
                peer_gapbs.extract_source(os.path.join(folder, "absent"), folder)


@unittest.skipUnless(GAPBS_PRESENT, f"GAPBS source not at {GAPBS_SRC} (set GAPBS_SRC) or no g++")
class GapbsAgreesWithBruteForce(unittest.TestCase):
    def setUp(self) -> None:
        self.build = tempfile.mkdtemp(prefix="gapbs-test-")
        self.addCleanup(shutil.rmtree, self.build)

    def gapbs_answer(self, folder: str) -> Any:
        output = os.path.join(folder, "gapbs.json")
        command = [sys.executable, os.path.join(os.path.dirname(__file__), "peer_gapbs.py")]
        command += ["--workload", "sp1", "--dataset", folder, "--threads", "2"]
        command += ["--repeat", "2", "--output", output, "--build-dir", self.build]
        command += ["--gapbs-src", GAPBS_SRC]
        subprocess.run(command, check=True, capture_output=True)
        with open(output) as f:
            result = json.load(f)
        self.assertEqual(len(result["figures"]["time_s"]["samples"]), 2)
        return result["answer"]

    def test_random_graphs(self) -> None:
        for seed, nodes, edge_count in [(1, 12, 30), (2, 16, 24), (4, 14, 14), (5, 10, 0)]:
            edges = random_edges(random.Random(seed), nodes, edge_count)
            with tempfile.TemporaryDirectory() as folder, self.subTest(seed=seed):
                write_dataset(folder, nodes, edges)
                expected = brute_answer(WORKLOADS["sp1"], nodes, edges)
                self.assertEqual(self.gapbs_answer(folder), expected)


class ChildProcesses(unittest.TestCase):
    def run_python(self, code: str, **limits: Any) -> child.Outcome:
        with tempfile.TemporaryDirectory() as folder:
            log = os.path.join(folder, "log")
            return child.run_child([sys.executable, "-c", code], log, **limits)

    def test_a_timed_step_past_its_timeout_is_killed(self) -> None:
        code = "import time; print('@start 0', flush=True); time.sleep(30)"
        outcome = self.run_python(code, step_timeout_s=0.5, setup_timeout_s=20)
        self.assertEqual(outcome.status, "timeout")
        self.assertLess(outcome.wall_s, 10)

    def test_setup_past_its_timeout_is_killed(self) -> None:
        outcome = self.run_python(
            "import time; time.sleep(30)", step_timeout_s=20, setup_timeout_s=0.5
        )
        self.assertEqual(outcome.status, "timeout")

    def test_total_timeout_ignores_markers(self) -> None:
        code = "import time; print('@end 0 1', flush=True); time.sleep(30)"
        outcome = self.run_python(code, step_timeout_s=20, setup_timeout_s=20, total_timeout_s=0.5)
        self.assertEqual(outcome.status, "timeout")

    def test_peak_memory_is_the_childs(self) -> None:
        code = "b = bytearray(300 * 2**20); b[::4096] = b'x' * len(b[::4096])"
        outcome = self.run_python(code, step_timeout_s=20, setup_timeout_s=20)
        self.assertEqual(outcome.status, "ok")
        self.assertGreater(outcome.peak_rss_bytes, 300 * 2**20)
        self.assertLess(outcome.peak_rss_bytes, 600 * 2**20)

    def test_a_child_over_its_memory_limit_is_stopped(self) -> None:
        # A child (and a grandchild in its process group) growing past the limit.
        code = (
            "import subprocess, sys, time\n"
            "subprocess.Popen([sys.executable, '-c', 'b = bytearray(200 * 2**20); "
            "b[::4096] = b\"x\" * len(b[::4096]); import time; time.sleep(30)'])\n"
            "b = bytearray(200 * 2**20); b[::4096] = b'x' * len(b[::4096]); time.sleep(30)"
        )
        outcome = self.run_python(
            code, step_timeout_s=60, setup_timeout_s=60, memory_limit_bytes=300 * 2**20
        )
        self.assertEqual(outcome.status, "memory", outcome.detail)
        self.assertIn("passed the limit of 0.3 GiB", outcome.detail)
        self.assertLess(outcome.wall_s, 20)

    def test_a_failing_child_is_an_error(self) -> None:
        outcome = self.run_python("raise SystemExit(3)", step_timeout_s=20, setup_timeout_s=20)
        self.assertEqual((outcome.status, outcome.exit_code), ("error", 3))


def cell(system: str, median_s: float | None, answer=None, status: str = "ok") -> Cell:
    return Cell(system, status, median_s=median_s, peak_rss_bytes=2**20, answer=answer)


def speedup_text(row: report.Row, peer: str) -> str:
    speedup = row.speedup(peer)
    return "-" if speedup is None else speedup.text()


class AnswersAndTable(unittest.TestCase):
    def test_normal_answers(self) -> None:
        self.assertEqual(normal_answer("shortest", [[0, 5, Decimal("12")]]), [[0, 5, 12]])
        self.assertEqual(normal_answer("shortest", [0, 5, 12]), [[0, 5, 12]])
        self.assertEqual(normal_answer("shortest", []), [])
        self.assertEqual(normal_answer("walks", [[7]]), 7)
        self.assertEqual(normal_answer("all_shortest", "10427291"), 10427291)
        with self.assertRaises(ValueError):
            normal_answer("walks", 2.5)
        loaded = {"nodes": 3, "node_id_sum": 3, "edges": 2, "from_id_sum": "1", "to_id_sum": 2}
        self.assertEqual(normal_answer("load", loaded)["from_id_sum"], 1)

    def test_kuzu_is_the_reference_and_mismatches_are_marked(self) -> None:
        cells = {
            "warren": cell("warren", 1.0, 5),
            "kuzu": cell("kuzu", 2.0, 5),
            "duckdb": cell("duckdb", 3.0, 6),
        }
        lines = check_answers(cells)
        self.assertEqual([c.check for c in cells.values()], ["ok", "reference", "MISMATCH"])
        self.assertEqual(len(lines), 1)
        self.assertIn("DuckDB answered 6", lines[0])

    def test_warren_is_the_reference_when_kuzu_timed_out(self) -> None:
        cells = {
            "warren": cell("warren", 1.0, 5),
            "kuzu": cell("kuzu", None, None, "timeout"),
            "duckdb": cell("duckdb", 3.0, 5),
        }
        self.assertEqual(check_answers(cells), [])
        self.assertEqual(cells["warren"].check, "reference")

    def test_speedups_and_goals(self) -> None:
        work = WORKLOADS["allsp"]  # >= 10x Kùzu and >= 5x DuckDB
        row = report.Row(
            work,
            {
                "warren": cell("warren", 0.1),
                "kuzu": cell("kuzu", 2.0),
                "duckdb": cell("duckdb", 0.3),
            },
            timeout_s=120,
        )
        self.assertEqual(speedup_text(row, "kuzu"), "20.0x")
        self.assertEqual(row.goal_verdict(Goal("kuzu", 10)), "yes")
        self.assertEqual(row.goal_verdict(Goal("duckdb", 5)), "no")
        self.assertEqual(row.verdict(), "no")

    def test_a_timed_out_peer_gives_a_lower_bound(self) -> None:
        work = WORKLOADS["varlen5"]
        timed_out = cell("kuzu", None, status="timeout")
        row = report.Row(work, {"warren": cell("warren", 2.0), "kuzu": timed_out}, 120)
        self.assertEqual(speedup_text(row, "kuzu"), ">60.0x")
        self.assertEqual(row.goal_verdict(Goal("kuzu", 100)), "unknown")
        self.assertEqual(row.goal_verdict(Goal("kuzu", 50)), "yes")
        self.assertEqual(report.cell_text(timed_out, 120), ">120 s")

    def test_a_wrong_warren_answer_fails_its_goal(self) -> None:
        cells = {"warren": cell("warren", 0.01, 4), "kuzu": cell("kuzu", 9.0, 5)}
        check_answers(cells)
        row = report.Row(WORKLOADS["sp1"], cells, 120)
        self.assertEqual(row.verdict(), "no")
        self.assertIn("MISMATCH", report.cell_text(cells["warren"], 120))

    def test_table_columns_line_up(self) -> None:
        row = report.Row(
            WORKLOADS["sp64"], {"warren": cell("warren", 0.05), "kuzu": cell("kuzu", 3.6)}, 120
        )
        lines = report.text_table([row]).splitlines()
        self.assertEqual(len({line.index("|") for line in lines if "|" in line}), 1)
        self.assertIn("72.0x", lines[2])
        self.assertEqual(report.format_seconds(0.0000788), "0.0788 ms")
        self.assertEqual(report.format_bytes(3 * 2**30), "3.00 GiB")


if __name__ == "__main__":
    unittest.main()

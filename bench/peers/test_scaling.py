"""Tests of the scale table (`scaling.py`): reading results.json files, the growth figure,
speedups, timeouts and out-of-memory cells, and the figure's files.

    bench/peers/.venv/bin/python -m unittest discover -s bench/peers -p 'test_*.py'
"""

from __future__ import annotations

import json
import os
import tempfile
import unittest

import scaling


def results(folder: str, scale: int, edges: int, cells: dict[str, dict[str, object]]) -> str:
    """Writes a results.json as compare.py does, with a load row giving the edge count."""
    path = os.path.join(folder, f"peers-s{scale}")
    os.makedirs(path)
    rows = [
        {
            "workload": "load",
            "cells": {"warren": {"status": "ok", "median_s": 1.0, "answer": {"edges": edges}}},
        },
        {"workload": "sp64", "cells": cells},
    ]
    summary = {
        "config": {"dataset": f"/data/graph500-s{scale}", "threads": 2, "timeout_s": 120.0},
        "load_average_start": [1.5, 1.0, 1.0],
        "rows": rows,
    }
    with open(os.path.join(path, "results.json"), "w") as f:
        json.dump(summary, f)
    return path


class ScaleTableTest(unittest.TestCase):
    def setUp(self) -> None:
        self.folder = tempfile.mkdtemp()
        self.small = results(
            self.folder,
            18,
            1_000,
            {
                "warren": {"status": "ok", "median_s": 0.01},
                "kuzu": {"status": "ok", "median_s": 1.0},
                "duckdb": {"status": "ok", "median_s": 2.0},
                "gapbs": {"status": "ok", "median_s": 0.02},
            },
        )
        self.large = results(
            self.folder,
            22,
            16_000,
            {
                "warren": {"status": "ok", "median_s": 0.2},
                "kuzu": {"status": "timeout"},
                "duckdb": {"status": "memory", "peak_rss_bytes": 5},
            },
        )

    def test_reads_scale_edges_and_outcomes(self) -> None:
        run = scaling.read_run(self.large)
        self.assertEqual(run.scale, 22)
        self.assertEqual(run.edges, 16_000)
        self.assertEqual(run.outcomes["sp64"]["kuzu"].status, "timeout")
        self.assertEqual(run.outcomes["sp64"]["kuzu"].seconds, 120.0)
        self.assertEqual(run.outcomes["sp64"]["duckdb"].status, "out of memory")

    def test_growth_is_time_growth_over_edge_growth(self) -> None:
        runs = [scaling.read_run(self.small), scaling.read_run(self.large)]
        # Time grew 20x for 16x the edges: 1.25, above the 1.2 goal.
        self.assertEqual(scaling.growth(runs, "sp64", "warren", (18, 22)), "1.25 (20.0x / 16.0x)")
        # A peer stopped at the timeout grew at least this much.
        self.assertEqual(scaling.growth(runs, "sp64", "kuzu", (18, 22)), ">7.50")
        self.assertEqual(scaling.growth(runs, "sp64", "duckdb", (18, 22)), "-")
        self.assertEqual(scaling.growth(runs, "sp64", "warren", (18, 21)), "-")

    def test_table_names_every_outcome_and_lower_bounds(self) -> None:
        runs = [scaling.read_run(self.large), scaling.read_run(self.small)]
        text = scaling.table(runs, (18, 22))
        lines = text.splitlines()
        self.assertIn("s18", lines[0].split("|")[2], "scales are sorted")
        self.assertIn(">120 s", text)
        self.assertIn("out of memory", text)
        self.assertIn("Warren vs Kùzu   | 100x", text)
        self.assertIn(">600x", text)

    def test_figure_is_written_as_svg_and_png(self) -> None:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            self.skipTest("matplotlib is not installed (bench/peers/setup.sh installs it)")
        runs = [scaling.read_run(self.small), scaling.read_run(self.large)]
        svg = os.path.join(self.folder, "scaling.svg")
        scaling.draw(runs, svg)
        with open(svg) as f:
            self.assertIn("<svg", f.read(1000))
        self.assertGreater(os.path.getsize(os.path.join(self.folder, "scaling.png")), 1000)

    def test_runs_of_one_scale_are_merged(self) -> None:
        extra = results(
            os.path.join(self.folder, "more"),
            22,
            16_000,
            {"igraph": {"status": "ok", "median_s": 0.4}, "kuzu": {"status": "ok", "median_s": 150.0}},
        )
        runs = scaling.merge_by_scale(
            [scaling.read_run(p) for p in (self.large, self.small, extra)]
        )
        self.assertEqual([run.scale for run in runs], [18, 22])
        cells = runs[1].outcomes["sp64"]
        self.assertEqual(cells["igraph"].seconds, 0.4)
        self.assertEqual(cells["kuzu"].status, "ok", "the later file's cell replaces")
        self.assertEqual(cells["warren"].seconds, 0.2, "cells only in the earlier file stay")
        other = results(os.path.join(self.folder, "other"), 22, 9, {})
        with self.assertRaisesRegex(ValueError, "different edge counts"):
            scaling.merge_by_scale([scaling.read_run(self.large), scaling.read_run(other)])

    def test_an_unknown_scale_is_a_clear_error(self) -> None:
        with self.assertRaisesRegex(ValueError, "cannot tell the scale"):
            scaling.scale_of("/data/graph")


if __name__ == "__main__":
    unittest.main()

"""Tests of the thread-scaling table (`thread_scaling.py`): each system's speedup over its own
fewest-threads time, Warren's ratio over each peer, cells that did not run, and the
compare.py command it runs per thread count. Standard library only:

    python3 -m unittest discover -s bench/peers -p 'test_thread_scaling.py'
"""

from __future__ import annotations

import argparse
import unittest

import thread_scaling


def cell(median_s: float | None, status: str = "ok") -> dict[str, object]:
    return {"status": status, "median_s": median_s}


def run(sp64: dict[str, dict[str, object]]) -> dict[str, object]:
    """A compare.py results.json holding one sp64 row."""
    return {"rows": [{"workload": "sp64", "cells": sp64}]}


class TableTest(unittest.TestCase):
    def test_speedups_are_over_each_systems_own_first_time(self) -> None:
        runs = {
            1: run({"warren": cell(0.036), "kuzu": cell(7.2)}),
            2: run({"warren": cell(0.018), "kuzu": cell(3.6)}),
            16: run({"warren": cell(0.009), "kuzu": cell(0.9)}),
        }
        lines = thread_scaling.table(runs, ["warren", "kuzu"])
        self.assertEqual(lines[0], "workload | threads | Warren | x1t | Kùzu | x1t | vs Kùzu")
        self.assertEqual(lines[1], "sp64 | 1 | 36 ms | 1.00 | 7.2 s | 1.00 | 200x")
        self.assertEqual(lines[2], "sp64 | 2 | 18 ms | 2.00 | 3.6 s | 2.00 | 200x")
        self.assertEqual(lines[3], "sp64 | 16 | 9 ms | 4.00 | 900 ms | 8.00 | 100x")

    def test_a_cell_that_did_not_run_shows_its_status_and_no_ratio(self) -> None:
        runs = {
            1: run({"warren": cell(0.02), "kuzu": cell(None, "timeout")}),
            4: run({"warren": cell(0.01), "kuzu": cell(1.0)}),
        }
        lines = thread_scaling.table(runs, ["warren", "kuzu"])
        self.assertEqual(lines[1], "sp64 | 1 | 20 ms | 1.00 | timeout | - | -")
        # Kùzu's base is its first time that ran: none here, so no speedup either.
        self.assertEqual(lines[2], "sp64 | 4 | 10 ms | 2.00 | 1 s | - | 100x")

    def test_compare_runs_with_the_thread_count_and_the_shared_dataset(self) -> None:
        args = argparse.Namespace(
            scale=18,
            repeat=3,
            timeout=60.0,
            systems="warren,kuzu",
            workloads="sp64,sp1",
            warren="/bin/warren",
            warren_reorder=None,
        )
        command = thread_scaling.compare_command(args, 8, "/data/g18", "/out/threads-8")
        self.assertEqual(command[command.index("--threads") + 1], "8")
        self.assertEqual(command[command.index("--dataset") + 1], "/data/g18")
        self.assertEqual(command[command.index("--out") + 1], "/out/threads-8")
        self.assertNotIn("--warren-reorder", command)


if __name__ == "__main__":
    unittest.main()

"""Tests of vectors.py: every peer on a tiny clustered dataset finds the exact neighbours at a
wide beam, recall counts overlaps, and the table's ratios point the right way.

    cd bench/peers && .venv/bin/python -m unittest test_vectors
"""

from __future__ import annotations

import unittest

import numpy as np

import vectors

META = {"rows": 400, "dim": 8, "queries": 10, "k": 10, "metric": "cosine", "efs_values": [64],
        "mu": 8, "ml": 16, "pu": 0.05, "efc": 64}


def tiny_dataset():
    rng = np.random.default_rng(7)
    centres = rng.uniform(-1, 1, (5, 8)).astype(np.float32)
    picks = rng.integers(0, 5, 410)
    data = (centres[picks] + rng.normal(0, 0.2, (410, 8))).astype(np.float32)
    base, queries = data[:400], data[400:]
    scores = vectors.normalized(queries) @ vectors.normalized(base).T
    truth = np.argsort(-scores, axis=1)[:, :10]
    return base, queries, truth


class VectorPeersTest(unittest.TestCase):
    def test_recall_counts_overlaps(self):
        truth = np.array([[1, 2, 3], [4, 5, 6]])
        self.assertEqual(vectors.recall(np.array([[3, 2, 1], [4, 9, 8]]), truth), 4 / 6)

    def test_peers_find_the_exact_neighbours_at_a_wide_beam(self):
        base, queries, truth = tiny_dataset()
        hnsw = vectors.run_hnswlib(base, queries, truth, META, threads=1, repeat=1, builds=3)
        self.assertGreaterEqual(hnsw["queries"][0]["recall_at_10"], 0.99)
        self.assertEqual(len(hnsw["build_samples"]), 3)
        self.assertEqual(hnsw["build_s"], sorted(hnsw["build_samples"])[1])
        faiss_hnsw, flat = vectors.run_faiss(base, queries, truth, META, threads=1, repeat=1)
        self.assertGreaterEqual(faiss_hnsw["queries"][0]["recall_at_10"], 0.99)
        self.assertEqual(flat["recall_at_10"], 1.0)
        kuzu = vectors.run_kuzu(base, queries, META, threads=1, kuzu_rows=400, kuzu_queries=5,
                                builds=2)
        self.assertEqual(kuzu["brute_recall_at_10"], 1.0)
        self.assertGreaterEqual(kuzu["queries"][0]["recall_at_10"], 0.9)
        # Dropped and built again: two samples, the median between them.
        self.assertEqual(len(kuzu["build_samples"]), 2)
        self.assertEqual(kuzu["build_s"], sum(kuzu["build_samples"]) / 2)
        alone = vectors.run_kuzu_brute(base, queries, truth, META, threads=1, rows=len(base),
                                       kuzu_queries=5, repeat=2)
        self.assertEqual((alone["rows"], alone["brute_recall_at_10"]), (len(base), 1.0))
        part = vectors.run_kuzu_brute(base, queries, truth, META, threads=1, rows=300,
                                      kuzu_queries=5, repeat=1)
        self.assertEqual((part["rows"], part["brute_recall_at_10"]), (300, 1.0))

    def test_table_ratios(self):
        warren = {"rows": 1000, "read_gb_s": 10.0, "brute_s": 0.001, "brute_gb_s": 5.0,
                  "brute_percent": 50.0, "build_s": 1.0,
                  "queries": [{"efs": 64, "qps": 2000.0, "recall_at_10": 0.99}]}
        peer = {"system": "slow", "rows": 100, "build_s": 1.0,
                "brute_s": {"median": 0.001},
                "queries": [{"efs": 64, "qps": {"median": 1000.0}, "recall_at_10": 0.98}]}
        text = vectors.table(warren, [peer])
        # Warren builds 1000 rows/s against 100: 10x; per row, its brute force is 10x faster.
        self.assertIn("slow               100         1       100       10          1       10        -",
                      text)
        warren["cypher_brute_s"] = 0.002
        text = vectors.table(warren, [peer])
        # Through Cypher Warren takes 2 ms for 1000 rows; the peer 1 ms for 100: 5x per row.
        self.assertIn("warren-cypher     1,000", text)
        self.assertIn("slow               100         1       100       10          1       10        5",
                      text)
        self.assertIn("(2x)", text)
        self.assertNotIn("median of each system's builds", text)
        warren["build_samples"] = [1.0, 0.5, 2.0]
        peer["build_samples"] = [1.0, 3.0, 0.9]
        text = vectors.table(warren, [peer])
        self.assertIn("build s: the median of each system's builds, in run order: "
                      "warren 1, 0.5, 2; slow 1, 3, 0.9", text)


if __name__ == "__main__":
    unittest.main()

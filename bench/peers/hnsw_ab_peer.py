"""hnswlib on the very dataset of `crates/warren-vector/examples/hnsw_ab.rs`, for alternating
with it: the same rows, queries and exact answers (CACHE_DIR/base.f32, queries.f32, truth.u32,
written by hnsw_ab), the same parameters (M = mu = 30, so 2M = ml = 60 links in the bottom layer,
ef_construction = efc = 200, cosine), the same threads (2) and efs values, and the same figures:
best-of-ROUNDS queries/s by the wall clock and per second of CPU time the process got, and
recall@10. The index is built once and saved as CACHE_DIR/hnswlib.bin. HNSW_EFS=32,64 limits
the efs values (as in hnsw_ab).

    python bench/peers/hnsw_ab_peer.py DIM CACHE_DIR [ROUNDS]
"""

import os
import sys
import time

import hnswlib
import numpy as np

THREADS = 2
K = 10
# HNSW_EFS=32,64 measures those efs values only, as hnsw_ab does.
EFS = [int(e) for e in os.environ.get("HNSW_EFS", "16,32,64,128,200").split(",")]


def load_index(cache, base, dim):
    path = os.path.join(cache, "hnswlib.bin")
    index = hnswlib.Index(space="cosine", dim=dim)
    if os.path.exists(path):
        start = time.perf_counter()
        index.load_index(path, max_elements=len(base))
        print(f"load {time.perf_counter() - start:.3f} s")
        return index
    index.init_index(max_elements=len(base), M=30, ef_construction=200, random_seed=42)
    index.set_num_threads(THREADS)
    start = time.perf_counter()
    index.add_items(base, np.arange(len(base)))
    seconds = time.perf_counter() - start
    print(f"build {seconds:.2f} s {len(base) / seconds:.0f} rows/s")
    index.save_index(path)
    return index


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit("usage: hnsw_ab_peer.py DIM CACHE_DIR [ROUNDS]")
    dim, cache = int(sys.argv[1]), sys.argv[2]
    rounds = int(sys.argv[3]) if len(sys.argv) == 4 else 3
    base = np.fromfile(os.path.join(cache, "base.f32"), dtype="<f4").reshape(-1, dim)
    queries = np.fromfile(os.path.join(cache, "queries.f32"), dtype="<f4").reshape(-1, dim)
    truth = np.fromfile(os.path.join(cache, "truth.u32"), dtype="<u4").reshape(-1, K)
    index = load_index(cache, base, dim)
    index.set_num_threads(THREADS)
    for efs in EFS:
        index.set_ef(max(efs, K))
        best = best_cpu = 0.0
        recall = None
        for _ in range(rounds):
            wall, cpu = time.perf_counter(), time.process_time()
            labels, _ = index.knn_query(queries, k=K, num_threads=THREADS)
            wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
            best = max(best, len(queries) / wall)
            best_cpu = max(best_cpu, len(queries) / (cpu / THREADS))
            if recall is None:
                hits = sum(len(set(row) & set(want)) for row, want in zip(labels, truth))
                recall = hits / truth.size
        print(
            f"efs {efs:>3} {'hnswlib':>10} best-of-{rounds} QPS {best:>8.0f} "
            f"per-CPU-second QPS {best_cpu:>8.0f} recall {recall:.4f}"
        )


if __name__ == "__main__":
    main()

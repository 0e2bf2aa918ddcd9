"""Brute-force top-10 cosine over FLOAT[DIM] vectors in Kùzu 0.11.3, on the CSV Warren loads.

Usage: vector_topk_kuzu.py CSV DIM [REPEAT THREADS]
CSV rows are `id,"[x1,x2,...]"` (written by Warren's `vector_scan` example with
VECTOR_SCAN_KEEP_CSV=path). The query vector is Warren's (the same xorshift, seed 7), so both
answer the same question. Prints the load time, the median query time and the top rows.
"""

import os
import shutil
import statistics
import sys
import tempfile
import time

import kuzu


def query_vector(dim: int) -> list[float]:
    """The example's `Rng(7)`: xorshift64* mapped to [-1, 1)."""
    state = 7
    mask = (1 << 64) - 1
    values = []
    for _ in range(dim):
        state ^= state >> 12
        state ^= (state << 25) & mask
        state ^= state >> 27
        x = (state * 0x2545F4914F6CDD1D) & mask
        values.append(float((x >> 40) / float(1 << 24) * 2.0 - 1.0))
    return values


def main() -> None:
    csv, dim = sys.argv[1], int(sys.argv[2])
    repeat = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    threads = int(sys.argv[4]) if len(sys.argv) > 4 else 2
    scratch = tempfile.mkdtemp(prefix="kuzu-vectors-")
    try:
        db = kuzu.Database(os.path.join(scratch, "db"), max_num_threads=threads)
        conn = kuzu.Connection(db, num_threads=threads)
        conn.execute(f"CREATE NODE TABLE V(id INT64, emb FLOAT[{dim}], PRIMARY KEY(id))")
        started = time.perf_counter()
        conn.execute(f"COPY V FROM '{csv}' (HEADER=false)")
        print(f"kuzu load {time.perf_counter() - started:.1f} s", flush=True)
        q = query_vector(dim)
        text = (
            f"MATCH (n:V) RETURN n.id, array_cosine_similarity(n.emb, CAST($q AS FLOAT[{dim}])) AS s "
            "ORDER BY s DESC LIMIT 10"
        )
        times, rows = [], []
        for _ in range(repeat):
            started = time.perf_counter()
            result = conn.execute(text, {"q": q})
            rows = []
            while result.has_next():
                rows.append(result.get_next())
            times.append(time.perf_counter() - started)
        print(
            f"kuzu threads={threads}: top-10 cosine median {statistics.median(times) * 1e3:.1f} ms "
            f"of {repeat}; top rows {rows[:3]}"
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()

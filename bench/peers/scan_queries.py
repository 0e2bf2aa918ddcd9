"""Whole-table aggregates, a top-k and a grouped count over a node table, Warren beside Kùzu
0.11.3 in the same run: the queries a user tries first on a large graph (`max`, `avg` of a
property, a filtered count, the largest keys, a count per group). Both systems load the dataset's `nodes.csv` (one INT64
column `ID`, as `bench/peers/run.sh` generates it); Kùzu runs in-process, Warren as one
`warren run` process per query (every statement under PROFILE, the first run dropped as its
warm-up, the median of the rest taken from the reported execution times). Answers are
compared.

Usage: scan_queries.py --dataset DIR --warren BIN --warren-db DB [--repeat R] [--threads T]
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time

import kuzu

QUERIES = [
    "MATCH (a:Person) RETURN max(a.ID)",
    "MATCH (a:Person) RETURN min(a.ID), avg(a.ID), sum(a.ID)",
    "MATCH (a:Person) WHERE a.ID < 1000000 RETURN count(*), avg(a.ID)",
    "MATCH (a:Person) RETURN a.ID ORDER BY a.ID DESC LIMIT 5",
    "MATCH (a:Person) RETURN a.ID % 4 AS k, count(*) ORDER BY k",
    "MATCH (a:Person) RETURN a.ID % 1000 AS k, count(*), sum(a.ID) ORDER BY k LIMIT 5",
    "MATCH (a:Person) WHERE a.ID < 1000000 RETURN a.ID % 7 AS k, min(a.ID), max(a.ID) ORDER BY k",
    "MATCH (a:Person) WHERE a.ID % 1000 = 0 RETURN count(*)",
    "MATCH (a:Person) WHERE a.ID < 10 OR a.ID > 4194300 RETURN a.ID ORDER BY a.ID",
]


def kuzu_times(dataset: str, repeat: int, threads: int) -> tuple[list[float], list[list]]:
    """Median seconds and the rows of each query in Kùzu, after loading the nodes."""
    scratch = tempfile.mkdtemp(prefix="kuzu-scan-queries-")
    try:
        db = kuzu.Database(os.path.join(scratch, "db"), max_num_threads=threads)
        conn = kuzu.Connection(db, num_threads=threads)
        conn.execute("CREATE NODE TABLE Person(ID INT64, PRIMARY KEY(ID))")
        started = time.perf_counter()
        conn.execute(f"COPY Person FROM '{os.path.join(dataset, 'nodes.csv')}' (HEADER=true)")
        print(f"kuzu load {time.perf_counter() - started:.1f} s", flush=True)
        medians, answers = [], []
        for query in QUERIES:
            times, rows = [], []
            for _ in range(repeat + 1):
                started = time.perf_counter()
                result = conn.execute(query)
                rows = []
                while result.has_next():
                    rows.append(result.get_next())
                times.append(time.perf_counter() - started)
            medians.append(statistics.median(times[1:]))
            answers.append(rows)
        return medians, answers
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def warren_times(binary: str, db: str, repeat: int, threads: int) -> tuple[list[float], list[list]]:
    """Median seconds and the rows of each query in Warren (one process per query)."""
    medians, answers = [], []
    for query in QUERIES:
        with tempfile.NamedTemporaryFile("w", suffix=".cypher", delete=False) as script:
            script.write("".join(f"PROFILE {query};\n" for _ in range(repeat + 1)))
            script.write(f"{query};\n")
        out = subprocess.run(
            [binary, "run", db, script.name, "--threads", str(threads)],
            check=True,
            capture_output=True,
            text=True,
        ).stdout
        os.unlink(script.name)
        times = [float(t) / 1e3 for t in re.findall(r"execution time: ([0-9.]+) ms", out)]
        medians.append(statistics.median(times[1:]))
        answers.append(table_rows(out.split("execution time")[-1]))
    return medians, answers


def table_rows(text: str) -> list[list]:
    """The data rows of the last table `warren run` printed, as numbers."""
    rows = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("|") and all(re.fullmatch(r"-?[0-9.]+", c) for c in cells):
            rows.append([float(c) if "." in c else int(c) for c in cells])
    return rows


def same(kuzu_rows: list[list], warren_rows: list[list]) -> bool:
    if len(kuzu_rows) != len(warren_rows):
        return False
    for k, w in zip(kuzu_rows, warren_rows):
        if len(k) != len(w):
            return False
        for a, b in zip(k, w):
            if isinstance(a, float) or isinstance(b, float):
                if abs(float(a) - float(b)) > 1e-6 * max(1.0, abs(float(a))):
                    return False
            elif int(a) != int(b):
                return False
    return True


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", required=True)
    parser.add_argument("--warren", required=True)
    parser.add_argument("--warren-db", required=True)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    warren, warren_rows = warren_times(args.warren, args.warren_db, args.repeat, args.threads)
    kuzu_s, kuzu_rows = kuzu_times(args.dataset, args.repeat, args.threads)
    print(f"{'query':<66} {'warren ms':>10} {'kuzu ms':>10} {'x':>7}  answers")
    for query, w, k, wr, kr in zip(QUERIES, warren, kuzu_s, warren_rows, kuzu_rows):
        verdict = "equal" if same(kr, wr) else f"DIFFER warren {wr} kuzu {kr}"
        print(f"{query:<66} {w * 1e3:>10.2f} {k * 1e3:>10.2f} {k / w:>6.1f}x  {verdict}")


if __name__ == "__main__":
    main()

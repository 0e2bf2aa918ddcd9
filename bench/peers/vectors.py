"""The `vectors` workload on the peers: hnswlib, faiss-cpu and Kùzu 0.11.3's vector extension,
on the dataset `warren bench vectors --vectors-out DIR` wrote (base.npy, queries.npy, truth.npy:
Warren's brute-force top-10 cosine answers, meta.json), with the same threads, in the same run
(`vectors.sh`). Then the table, Warren's report beside the peers', with ratios.

    .venv/bin/python vectors.py --data DIR --warren-report warren-vectors.json \
        --threads 2 --repeat 3 --kuzu-rows 10000 [--build-repeat 3] --output peers-vectors.json

`--build-repeat N` builds every index N times (Warren's too, given the same option) and counts
the median: one build on a shared machine can land in a busy minute.

* hnswlib: `space='cosine'`, `M = mu` (hnswlib's bottom layer then has 2M = ml links, as
  Warren's lower layer), `ef_construction = efc`; queries in one `knn_query` call on the threads.
* faiss: `IndexHNSWFlat(d, mu, METRIC_INNER_PRODUCT)` on normalized rows (normalizing counts in
  the build), and `IndexFlatIP` brute force one query at a time (as Warren's brute force) and
  as one batch (BLAS).
* Kùzu: on the first `--kuzu-rows` rows only (Kùzu builds slowly: 98 s for 20,000 x 64), its
  recall against the exact answers on that subset: `CREATE_VECTOR_INDEX` (defaults, cosine),
  `QUERY_VECTOR_INDEX` at each efs, and brute force `ORDER BY array_cosine_similarity LIMIT 10`.
  The rows are loaded from .npy files (`COPY ... BY COLUMN`).
* `kuzu-brute` (`--kuzu-brute-rows N`): Kùzu's brute force alone, no index, on the first N rows
  (up to all of them: its index build at 1M rows would take hours), best of `--repeat` per query.

Every peer's recall@10 is against Warren's brute-force answers (on Kùzu's subset, numpy's).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time

import numpy as np

K = 10


def recall(found: np.ndarray, truth: np.ndarray) -> float:
    hits = sum(len(set(map(int, f)) & set(map(int, t))) for f, t in zip(found, truth))
    return hits / truth.size


def summary(samples: list[float]) -> dict:
    return {"median": statistics.median(samples), "min": min(samples), "max": max(samples),
            "samples": samples}


def timed_builds(build, builds: int):
    """Runs `build()` `builds` times (at least once); the last result and the median seconds
    with every sample (each build starts from nothing, as Warren's `--build-repeat` does)."""
    samples, result = [], None
    for _ in range(max(1, builds)):
        started = time.perf_counter()
        result = build()
        samples.append(time.perf_counter() - started)
    return result, statistics.median(samples), samples


def run_hnswlib(base, queries, truth, meta, threads, repeat, builds=1) -> dict:
    import hnswlib

    def build():
        index = hnswlib.Index(space="cosine", dim=meta["dim"])
        index.init_index(max_elements=len(base), ef_construction=meta["efc"], M=meta["mu"])
        index.set_num_threads(threads)
        index.add_items(base, num_threads=threads)
        return index

    index, build_s, build_samples = timed_builds(build, builds)
    queries_out = []
    for efs in meta["efs_values"]:
        index.set_ef(efs)
        times, labels = [], None
        for _ in range(repeat):
            started = time.perf_counter()
            labels, _ = index.knn_query(queries, k=K, num_threads=threads)
            times.append(time.perf_counter() - started)
        queries_out.append({"efs": efs, "qps": summary([len(queries) / t for t in times]),
                            "recall_at_10": recall(labels, truth)})
    return {"system": "hnswlib", "version": hnswlib.__version__ if hasattr(hnswlib, "__version__")
            else "0.8.0", "rows": len(base), "build_s": build_s, "build_samples": build_samples,
            "queries": queries_out}


def normalized(matrix: np.ndarray) -> np.ndarray:
    return (matrix / np.linalg.norm(matrix, axis=1, keepdims=True)).astype(np.float32)


def run_faiss(base, queries, truth, meta, threads, repeat, builds=1) -> list[dict]:
    import faiss

    faiss.omp_set_num_threads(threads)
    unit_queries = normalized(queries)

    def build():
        unit_base = normalized(base)
        index = faiss.IndexHNSWFlat(meta["dim"], meta["mu"], faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = meta["efc"]
        index.add(unit_base)
        return index, unit_base

    (index, unit_base), build_s, build_samples = timed_builds(build, builds)
    queries_out = []
    for efs in meta["efs_values"]:
        index.hnsw.efSearch = efs
        times, labels = [], None
        for _ in range(repeat):
            started = time.perf_counter()
            _, labels = index.search(unit_queries, K)
            times.append(time.perf_counter() - started)
        queries_out.append({"efs": efs, "qps": summary([len(queries) / t for t in times]),
                            "recall_at_10": recall(labels, truth)})
    hnsw = {"system": "faiss-hnsw", "version": faiss.__version__, "rows": len(base),
            "build_s": build_s, "build_samples": build_samples, "queries": queries_out}
    flat = faiss.IndexFlatIP(meta["dim"])
    flat.add(unit_base)
    per_query, labels = [], []
    for query in unit_queries:
        started = time.perf_counter()
        _, found = flat.search(query[None, :], K)
        per_query.append(time.perf_counter() - started)
        labels.append(found[0])
    started = time.perf_counter()
    flat.search(unit_queries, K)
    batch_s = time.perf_counter() - started
    brute = {"system": "faiss-flat", "version": faiss.__version__, "rows": len(base),
             "brute_s": summary(per_query), "brute_batch_s_per_query": batch_s / len(queries),
             "recall_at_10": recall(np.array(labels), truth)}
    return [hnsw, brute]


def kuzu_connection(folder: str, rows: np.ndarray, threads: int):
    """A Kùzu database in `folder` holding `rows` as `V(id INT64, vec FLOAT[dim])`, loaded by
    `COPY ... BY COLUMN` from .npy files (Kùzu parses a CSV of arrays slowly: 271 s for
    100,000 x 128; the .npy load takes seconds at 1M rows)."""
    import kuzu

    np.save(os.path.join(folder, "id.npy"), np.arange(len(rows), dtype=np.int64))
    np.save(os.path.join(folder, "vec.npy"), np.ascontiguousarray(rows, dtype=np.float32))
    db = kuzu.Database(os.path.join(folder, "db"), max_num_threads=threads)
    conn = kuzu.Connection(db, num_threads=threads)
    for statement in ("LOAD VECTOR", "LOAD EXTENSION VECTOR"):
        try:
            conn.execute(statement)
            break
        except RuntimeError:
            continue
    conn.execute(f"CREATE NODE TABLE V(id INT64, vec FLOAT[{rows.shape[1]}], PRIMARY KEY(id))")
    conn.execute(f"COPY V FROM ('{folder}/id.npy', '{folder}/vec.npy') BY COLUMN")
    for name in ("id.npy", "vec.npy"):
        os.remove(os.path.join(folder, name))
    return db, conn


def exact_top_k(rows: np.ndarray, queries: np.ndarray) -> np.ndarray:
    """numpy's exact top-10 cosine rows of each query, best first."""
    unit_rows = normalized(rows)
    out = []
    for query in normalized(queries):
        scores = unit_rows @ query
        top = np.argpartition(-scores, K)[:K]
        out.append(top[np.argsort(-scores[top])])
    return np.array(out)


def kuzu_brute(conn, queries, dim: int, repeat: int) -> tuple[list[float], list[list[int]]]:
    """Kùzu's brute force, the query text Warren's Cypher brute force runs: per query the best
    of `repeat` runs, and its rows."""
    text = (f"MATCH (v:V) RETURN v.id, array_cosine_similarity(v.vec, CAST($q, 'FLOAT[{dim}]')) "
            f"AS s ORDER BY s DESC LIMIT 10")
    times, labels = [], []
    for query in queries:
        best, rows = float("inf"), []
        for _ in range(max(repeat, 1)):
            started = time.perf_counter()
            result = conn.execute(text, {"q": query.tolist()})
            rows = [result.get_next()[0] for _ in range(result.get_num_tuples())]
            best = min(best, time.perf_counter() - started)
        times.append(best)
        labels.append(rows)
    return times, labels


def run_kuzu(base, queries, meta, threads, kuzu_rows, kuzu_queries, repeat=1, builds=1) -> dict:
    """Kùzu's index (build and queries at each efs) and brute force on the first `kuzu_rows`;
    with `builds` over 1 the index is built that many times, each in a new database (0.11.3
    cannot build an index again under a dropped one's name: "Index with name v_index already
    exists"), and the median build counts; the last database answers the queries."""
    import kuzu

    subset = base[:kuzu_rows]
    queries = queries[:kuzu_queries]
    exact = exact_top_k(subset, queries)
    folder = tempfile.mkdtemp(prefix="kuzu-vectors-")
    try:
        build_samples = []
        for build in range(max(1, builds)):
            if build > 0:
                del conn, db
                shutil.rmtree(os.path.join(folder, f"build-{build - 1}"), ignore_errors=True)
            build_folder = os.path.join(folder, f"build-{build}")
            os.makedirs(build_folder)
            db, conn = kuzu_connection(build_folder, subset, threads)
            started = time.perf_counter()
            conn.execute("CALL CREATE_VECTOR_INDEX('V', 'v_index', 'vec', metric := 'cosine')")
            build_samples.append(time.perf_counter() - started)
        build_s = statistics.median(build_samples)
        queries_out = []
        for efs in meta["efs_values"]:
            times, labels = [], []
            for query in queries:
                started = time.perf_counter()
                result = conn.execute(
                    "CALL QUERY_VECTOR_INDEX('V', 'v_index', $q, 10, efs := $efs) "
                    "RETURN node.id ORDER BY distance",
                    {"q": query.tolist(), "efs": efs})
                rows = [result.get_next()[0] for _ in range(result.get_num_tuples())]
                times.append(time.perf_counter() - started)
                labels.append(rows)
            queries_out.append({"efs": efs, "qps": summary([1 / t for t in times]),
                                "recall_at_10": recall(labels, exact)})
        brute, labels = kuzu_brute(conn, queries, meta["dim"], repeat)
        del conn, db
        return {"system": "kuzu", "version": kuzu.__version__, "rows": len(subset),
                "build_s": build_s, "build_samples": build_samples, "queries": queries_out,
                "brute_s": summary(brute),
                "brute_recall_at_10": recall(labels, exact), "query_count": len(queries)}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def run_kuzu_brute(base, queries, truth, meta, threads, rows, kuzu_queries, repeat) -> dict:
    """Kùzu's brute force alone on the first `rows` rows (no index: its build at 1M rows would
    take hours), best of `repeat` per query; recall against Warren's answers at all rows, else
    numpy's on the subset."""
    import kuzu

    subset = base[:rows]
    queries = queries[:kuzu_queries]
    exact = truth[:kuzu_queries] if rows == len(base) else exact_top_k(subset, queries)
    folder = tempfile.mkdtemp(prefix="kuzu-brute-")
    try:
        started = time.perf_counter()
        db, conn = kuzu_connection(folder, subset, threads)
        load_s = time.perf_counter() - started
        brute, labels = kuzu_brute(conn, queries, meta["dim"], repeat)
        del conn, db
        return {"system": "kuzu-brute", "version": kuzu.__version__, "rows": len(subset),
                "load_s": load_s, "brute_s": summary(brute),
                "brute_recall_at_10": recall(labels, exact), "query_count": len(queries)}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def fmt(value: float | None, digits: int = 3) -> str:
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.{digits}g}"


def warren_figures(report: dict) -> dict:
    runs = {run["dataset"]: run for run in report["runs"]}
    queries = [{"efs": run["answer"]["efs"], "qps": run["figures"]["ops_per_s"]["median"],
                "recall_at_10": run["answer"]["recall_at_10"]}
               for name, run in runs.items()
               if name.startswith("index query") and "no-prefetch" not in name]
    return {
        "rows": report["answer"]["rows"],
        "read_gb_s": runs["memory read"]["figures"]["gb_per_s"]["median"],
        "brute_s": runs["brute force top-10"]["figures"]["time_s"]["median"],
        "brute_gb_s": runs["brute force top-10"]["figures"]["gb_per_s"]["median"],
        "brute_percent": runs["brute force top-10"]["answer"]["percent_of_bandwidth"],
        "build_s": runs.get("index build", {}).get("figures", {}).get("time_s", {})
                       .get("median"),
        "build_samples": runs.get("index build", {}).get("figures", {}).get("time_s", {})
                             .get("samples"),
        "queries": queries,
        # The same brute force through Cypher (the query text Kùzu runs), when the report has it.
        "cypher_brute_s": runs.get("brute force top-10 (Cypher)", {}).get("figures", {})
                               .get("time_s", {}).get("median"),
    }


def table(warren: dict, peers: list[dict]) -> str:
    lines = []
    rows = warren["rows"]
    lines.append(f"memory read: {warren['read_gb_s']:.2f} GB/s; Warren brute force "
                 f"{warren['brute_gb_s']:.2f} GB/s = {warren['brute_percent']:.1f}% of it")
    lines.append("")
    cypher = warren.get("cypher_brute_s")
    lines.append(f"{'system':<12} {'rows':>9} {'build s':>9} {'rows/s':>9} {'build x':>8} "
                 f"{'brute ms/q':>10} {'brute x':>8} {'cypher x':>8}")
    build_rate = rows / warren["build_s"] if warren["build_s"] else None
    lines.append(f"{'warren':<12} {rows:>9,} {fmt(warren['build_s']):>9} {fmt(build_rate):>9} "
                 f"{'1':>8} {fmt(warren['brute_s'] * 1e3):>10} {'1':>8} {'-':>8}")
    if cypher:
        lines.append(f"{'warren-cypher':<12} {rows:>9,} {'-':>9} {'-':>9} {'-':>8} "
                     f"{fmt(cypher * 1e3):>10} {fmt(cypher / warren['brute_s']):>8} {'1':>8}")
    for peer in peers:
        build = peer.get("build_s")
        rate = peer["rows"] / build if build else None
        brute = peer.get("brute_s", {}).get("median")
        # Per row, so that a peer measured on a subset is compared fairly: Warren's rows/s over
        # the peer's, and the peer's brute-force seconds per row over Warren's.
        def per_row_ratio(warren_s):
            return (brute / peer["rows"]) / (warren_s / rows) if brute and warren_s else None
        lines.append(f"{peer['system']:<12} {peer['rows']:>9,} {fmt(build):>9} {fmt(rate):>9} "
                     f"{fmt(build_rate / rate if rate and build_rate else None):>8} "
                     f"{fmt(brute * 1e3 if brute else None):>10} "
                     f"{fmt(per_row_ratio(warren['brute_s'])):>8} "
                     f"{fmt(per_row_ratio(cypher)):>8}")
    lines.append("")
    samples = [("warren", warren.get("build_samples"))] + [
        (peer["system"], peer.get("build_samples")) for peer in peers]
    if any(len(times or []) > 1 for _, times in samples):
        lines.append("build s: the median of each system's builds, in run order: " + "; ".join(
            f"{system} {', '.join(f'{t:.3g}' for t in times)}" for system, times in samples
            if times))
    lines.append("x: Warren's speed over the peer's (rows/s for build, per-row time for brute "
                 "force; brute x against the scan kernel, cypher x against Warren's MATCH ... "
                 "ORDER BY array_cosine_similarity ... LIMIT 10); compare rows: a peer on fewer "
                 "rows reads less")
    lines.append("")
    lines.append(f"{'efs':>5} " + " ".join(f"{name:>22}" for name in
                 ["warren QPS / recall"] + [p["system"] + " QPS / recall" for p in peers
                                            if p.get("queries")]))
    for point in warren["queries"]:
        cells = [f"{fmt(point['qps']):>9} / {point['recall_at_10']:.3f}"]
        for peer in peers:
            if not peer.get("queries"):
                continue
            match = next((q for q in peer["queries"] if q["efs"] == point["efs"]), None)
            if match is None:
                cells.append("-")
            else:
                qps = match["qps"]["median"]
                cells.append(f"{fmt(qps):>9} / {match['recall_at_10']:.3f} "
                             f"({fmt(point['qps'] / qps)}x)")
        lines.append(f"{point['efs']:>5} " + " ".join(f"{cell:>22}" for cell in cells))
    lines.append("(Nx): Warren's QPS over the peer's at the same efs")
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", required=True)
    parser.add_argument("--warren-report", required=True)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--systems", default="hnswlib,faiss,kuzu")
    parser.add_argument("--kuzu-rows", type=int, default=10_000)
    parser.add_argument("--kuzu-queries", type=int, default=50)
    parser.add_argument("--kuzu-brute-rows", type=int, default=0,
                        help="also run Kùzu's brute force alone (no index) on this many rows")
    parser.add_argument("--build-repeat", type=int, default=1,
                        help="build each index this many times and count the median (pass "
                             "warren bench vectors the same --build-repeat)")
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    meta = json.load(open(os.path.join(args.data, "meta.json")))
    base = np.load(os.path.join(args.data, "base.npy"))
    queries = np.load(os.path.join(args.data, "queries.npy"))
    truth = np.load(os.path.join(args.data, "truth.npy"))
    assert base.shape == (meta["rows"], meta["dim"]) and truth.shape == (meta["queries"], K)
    systems = args.systems.split(",")
    peers = []
    if "hnswlib" in systems:
        peers.append(run_hnswlib(base, queries, truth, meta, args.threads, args.repeat,
                                 args.build_repeat))
    if "faiss" in systems:
        peers.extend(run_faiss(base, queries, truth, meta, args.threads, args.repeat,
                               args.build_repeat))
    if "kuzu" in systems:
        peers.append(run_kuzu(base, queries, meta, args.threads, args.kuzu_rows,
                              args.kuzu_queries, args.repeat, args.build_repeat))
    if args.kuzu_brute_rows:
        peers.append(run_kuzu_brute(base, queries, truth, meta, args.threads,
                                    min(args.kuzu_brute_rows, len(base)), args.kuzu_queries,
                                    args.repeat))
    warren = warren_figures(json.load(open(args.warren_report)))
    with open(args.output, "w") as out:
        json.dump({"meta": meta, "threads": args.threads, "load": os.getloadavg(),
                   "warren": warren, "peers": peers}, out, indent=1)
    print(table(warren, peers), end="")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Python-side benchmark: Warren's Python package against Kùzu 0.11.3 (PyPI `kuzu`), same process.

Both systems load the dataset (untimed) into fresh databases, then each workload runs on both,
alternating Warren/Kùzu: one warm-up run each, then R timed repeats each; the median is reported.
The answers of the two systems must agree, else MISMATCH is printed and the exit status is 1.

Workloads (times include the query and the result's fetch/conversion in Python):

  sp64      SHORTEST paths from 64 sources, rows fetched with get_all()
  sp1       the same from one source
  arrow     the whole edge list (a.ID, b.ID) then get_as_arrow()
  df        the same query then get_as_df()
  networkx  the edges out of the 64 sources, RETURN a, r, b, then get_as_networkx()

Memory (arrow, df): before the timed runs, each system's query + conversion also runs R times
(alternating) in child processes of their own, one run per child: the child opens the loaded
database, imports pyarrow/pandas, resets its peak-RSS mark (writes 5 to /proc/self/clear_refs),
reads VmRSS, runs one `execute` + conversion with the result kept alive, and reads VmHWM. The
figure is the median of VmHWM - VmRSS: the peak growth of resident memory over one query and
conversion, counting the system's caches of the pages read, the query's working memory and the
converted table. (ru_maxrss is not usable here: Linux carries it over execve from the parent.)
The database files are in the OS page cache; mapped file pages count in RSS when touched.

    python bench/peers/python_side.py --dataset /tmp/g18 --repeat 3 --out bench/out/python-side
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import time
import traceback
from typing import Any, Callable

SP64 = (
    "MATCH p=(a:Person)-[r:Knows* SHORTEST 1..30]->(b:Person) WHERE a.ID < 64 "
    "RETURN a.ID, count(*), sum(length(p)) ORDER BY a.ID"
)
SP1 = "MATCH p=(a:Person)-[r:Knows* SHORTEST 1..30]->(b:Person) WHERE a.ID = 0 RETURN count(*), sum(length(p))"
EDGES = "MATCH (a:Person)-[:Knows]->(b:Person) RETURN a.ID, b.ID"
NX = "MATCH (a:Person)-[r:Knows]->(b:Person) WHERE a.ID < 64 RETURN a, r, b"

# workload -> (query, goal ratio Kùzu/Warren)
WORKLOADS: dict[str, tuple[str, float]] = {
    "sp64": (SP64, 30.0),
    "sp1": (SP1, 5.0),
    "arrow": (EDGES, 3.0),
    "df": (EDGES, 3.0),
    "networkx": (NX, 2.0),
}
SYSTEMS = ("warren", "kuzu")
MEMORY_WORKLOADS = ("arrow", "df")


# ---------------------------------------------------------------------------------------------
# opening and loading


def open_system(system: str, path: str, threads: int) -> tuple[Any, Any]:
    if system == "warren":
        import warren

        db = warren.Database(path)
        return db, warren.Connection(db, num_threads=threads)
    import kuzu

    db = kuzu.Database(path, max_num_threads=threads)
    return db, kuzu.Connection(db, num_threads=threads)


def close_system(db: Any, conn: Any) -> None:
    for obj in (conn, db):
        close = getattr(obj, "close", None)
        if close is not None:
            close()


def statements(dataset: str) -> list[str]:
    out = []
    for name in ("schema.cypher", "copy.cypher"):
        with open(os.path.join(dataset, name), encoding="utf-8") as fh:
            out.extend(line.strip() for line in fh if line.strip() and not line.strip().startswith("//"))
    return out


def load(system: str, path: str, dataset: str, threads: int) -> float:
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)
    for extra in (path + ".wal", path + ".lock"):
        if os.path.exists(extra):
            os.remove(extra)
    start = time.perf_counter()
    db, conn = open_system(system, path, threads)
    for stmt in statements(dataset):
        conn.execute(stmt)
    close_system(db, conn)
    return time.perf_counter() - start


# ---------------------------------------------------------------------------------------------
# one run of a workload: returns the converted result (kept by the caller until timing ends)


LAST_EXECUTE_S = [0.0]


def run_once(workload: str, conn: Any) -> Any:
    query = WORKLOADS[workload][0]
    start = time.perf_counter()
    result = conn.execute(query)
    LAST_EXECUTE_S[0] = time.perf_counter() - start
    if workload in ("sp64", "sp1"):
        return result.get_all()
    if workload == "arrow":
        return result.get_as_arrow()
    if workload == "df":
        return result.get_as_df()
    if workload == "networkx":
        return result.get_as_networkx(directed=True)
    raise ValueError(workload)


def answer_of(workload: str, value: Any) -> Any:
    """A comparable summary of a result (computed untimed)."""
    import numpy as np

    if workload in ("sp64", "sp1"):
        return [[None if x is None else int(x) for x in row] for row in value]
    if workload in ("arrow", "df"):
        if workload == "arrow":
            names = list(value.column_names)
            cols = [value.column(i).to_numpy() for i in range(value.num_columns)]
            types = [str(t) for t in value.schema.types]
            rows = value.num_rows
        else:
            names = [str(c) for c in value.columns]
            cols = [value.iloc[:, i].to_numpy() for i in range(value.shape[1])]
            types = [str(t) for t in value.dtypes]
            rows = len(value)
        a = np.asarray(cols[0], dtype=np.int64)
        b = np.asarray(cols[1], dtype=np.int64)
        # Order-independent checksums of the (a, b) multiset.
        with np.errstate(over="ignore"):
            mix = (a * np.int64(1_000_003) + b) * np.int64(0x9E3779B1)
            mix ^= mix >> np.int64(29)
        return {
            "rows": int(rows),
            "columns": len(cols),
            "sum_a": int(a.sum()),
            "sum_b": int(b.sum()),
            "mix": int(mix.sum()),
            "_names": names,
            "_types": types,
        }
    if workload == "networkx":
        kinds = sorted({type(value).__name__})
        return {
            "nodes": value.number_of_nodes(),
            "edges": value.number_of_edges(),
            "_graph_type": kinds[0],
            "_sample_node": repr(next(iter(value.nodes(data=True)), None))[:300],
        }
    raise ValueError(workload)


def comparable(answer: Any) -> Any:
    """The part of an answer that must agree (keys starting with _ are informational)."""
    if isinstance(answer, dict):
        return {k: v for k, v in answer.items() if not k.startswith("_")}
    return answer


# ---------------------------------------------------------------------------------------------
# memory child


def _status_kib(field: str) -> int:
    with open("/proc/self/status", encoding="ascii") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise KeyError(field)


def child_memory(args: argparse.Namespace) -> None:
    """One execute()+conversion in a fresh process; peak-RSS growth from /proc/self/status.

    ru_maxrss is not used: Linux carries it over execve from the parent (this benchmark's main
    process, hundreds of MiB after loading), so it would hide the child's own peak. VmHWM belongs
    to the new address space, and writing 5 to /proc/self/clear_refs resets it to the current RSS.
    """
    import numpy  # noqa: F401
    import pandas  # noqa: F401
    import pyarrow  # noqa: F401

    db, conn = open_system(args.system, args.db, args.threads)
    try:
        with open("/proc/self/clear_refs", "w", encoding="ascii") as fh:
            fh.write("5")
        reset = True
    except OSError:
        reset = False
    before = _status_kib("VmRSS")
    hwm_before = _status_kib("VmHWM")
    start = time.perf_counter()
    value = run_once(args.child_memory, conn)
    elapsed = time.perf_counter() - start
    hwm = _status_kib("VmHWM")
    rss_after = _status_kib("VmRSS")
    info = {
        "rss_before_kib": before,
        "hwm_before_kib": hwm_before,
        "hwm_reset": reset,
        "peak_kib": hwm,
        "rss_after_kib": rss_after,
        "growth_kib": hwm - before,
        "time_s": elapsed,
    }
    if args.child_memory == "arrow":
        info["result_nbytes"] = int(value.nbytes)
    else:
        info["result_nbytes"] = int(value.memory_usage(deep=True).sum())
    del value
    close_system(db, conn)
    print(json.dumps(info))


def memory_in_child(system: str, workload: str, path: str, threads: int) -> dict[str, Any]:
    cmd = [
        sys.executable,
        os.path.abspath(__file__),
        "--child-memory",
        workload,
        "--system",
        system,
        "--db",
        path,
        "--threads",
        str(threads),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=480)
    if proc.returncode != 0:
        return {"error": f"exit {proc.returncode}: {(proc.stderr or proc.stdout).strip()[-2000:]}"}
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------------------------------------
# formatting


def fmt_ms(seconds: float | None) -> str:
    if seconds is None:
        return "failed"
    ms = seconds * 1000.0
    if ms >= 100:
        return f"{ms:.0f}"
    if ms >= 10:
        return f"{ms:.1f}"
    return f"{ms:.2f}"


def fmt_mib(kib: int | None) -> str:
    return "-" if kib is None else f"{kib / 1024:.0f} MiB"


def table(rows: list[list[str]]) -> str:
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = [" | ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "-+-".join("-" * w for w in widths))
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------
# main


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--dataset", default="/tmp/g18")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", default="bench/out/python-side")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--work", default=None, help="where the databases go (default: OUT/dbs)")
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--no-memory", action="store_true", help="skip the memory child processes")
    parser.add_argument("--child-memory", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--system", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--db", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.child_memory:
        child_memory(args)
        return 0

    import kuzu
    import warren

    workloads = [w for w in args.workloads.split(",") if w]
    os.makedirs(args.out, exist_ok=True)
    work = args.work or os.path.join(args.out, "dbs")
    os.makedirs(work, exist_ok=True)
    paths = {"warren": os.path.join(work, "warren-db"), "kuzu": os.path.join(work, "kuzu.db")}

    report: dict[str, Any] = {
        "schema": "warren-python-side/1",
        "dataset": os.path.abspath(args.dataset),
        "threads": args.threads,
        "repeat": args.repeat,
        "versions": {
            "warren": getattr(warren, "__version__", "?"),
            "kuzu": getattr(kuzu, "__version__", "?"),
            "python": platform.python_version(),
        },
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
        "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "loadavg_start": os.getloadavg(),
        "load_s": {},
        "workloads": {},
    }
    try:
        report["git"] = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            cwd=os.path.dirname(os.path.abspath(__file__)),
        ).stdout.strip()
    except OSError:
        pass

    print(f"warren {report['versions']['warren']}, kuzu {report['versions']['kuzu']}, threads {args.threads}, "
          f"repeat {args.repeat}, dataset {args.dataset}", flush=True)
    for system in SYSTEMS:
        secs = load(system, paths[system], args.dataset, args.threads)
        report["load_s"][system] = secs
        print(f"loaded {system} in {secs:.2f} s (untimed)", flush=True)

    # Memory children first, while no database is open in this process (both systems lock files).
    memory: dict[str, dict[str, Any]] = {}
    if not args.no_memory:
        for workload in [w for w in workloads if w in MEMORY_WORKLOADS]:
            runs: dict[str, list[dict[str, Any]]] = {s: [] for s in SYSTEMS}
            for _ in range(args.repeat):
                for system in SYSTEMS:
                    info = memory_in_child(system, workload, paths[system], args.threads)
                    runs[system].append(info)
                    print(f"memory {workload} {system}: {info}", flush=True)
            memory[workload] = {}
            for system in SYSTEMS:
                ok = [r for r in runs[system] if "error" not in r]
                if ok:
                    memory[workload][system] = {
                        "growth_kib": int(statistics.median(r["growth_kib"] for r in ok)),
                        "runs": runs[system],
                    }
                else:
                    memory[workload][system] = {"error": runs[system][0]["error"], "runs": runs[system]}

    conns = {s: open_system(s, paths[s], args.threads) for s in SYSTEMS}
    failed = False
    mismatched = False
    for workload in workloads:
        entry: dict[str, Any] = {"query": WORKLOADS[workload][0], "goal": WORKLOADS[workload][1]}
        samples: dict[str, list[float]] = {s: [] for s in SYSTEMS}
        exec_samples: dict[str, list[float]] = {s: [] for s in SYSTEMS}
        answers: dict[str, Any] = {}
        errors: dict[str, str] = {}
        for rep in range(args.repeat + 1):  # rep 0: warm-up
            for system in SYSTEMS:
                if system in errors:
                    continue
                conn = conns[system][1]
                try:
                    start = time.perf_counter()
                    value = run_once(workload, conn)
                    elapsed = time.perf_counter() - start
                    executed = LAST_EXECUTE_S[0]
                    answer = answer_of(workload, value)
                    del value
                except Exception as exc:  # noqa: BLE001
                    errors[system] = f"{type(exc).__name__}: {exc}"
                    entry.setdefault("tracebacks", {})[system] = traceback.format_exc()
                    print(f"!!! {workload} {system} FAILED: {errors[system]}", flush=True)
                    continue
                if system in answers and comparable(answers[system]) != comparable(answer):
                    errors[system] = f"answer changed between repeats: {answers[system]} vs {answer}"
                    print(f"!!! {workload} {system}: {errors[system]}", flush=True)
                    continue
                answers[system] = answer
                if rep > 0:
                    samples[system].append(elapsed)
                    exec_samples[system].append(executed)
        medians = {s: (statistics.median(samples[s]) if samples[s] and s not in errors else None) for s in SYSTEMS}
        entry["samples_s"] = samples
        entry["median_s"] = medians
        entry["execute_samples_s"] = exec_samples
        entry["execute_median_s"] = {s: (statistics.median(v) if v else None) for s, v in exec_samples.items()}
        entry["answers"] = {s: (a if workload not in ("sp64",) else a[:3] + [["...", len(a), "rows"]])
                            for s, a in answers.items()}
        entry["errors"] = errors
        if errors:
            failed = True
        match = None
        if "warren" in answers and "kuzu" in answers and not errors:
            match = comparable(answers["warren"]) == comparable(answers["kuzu"])
            if not match:
                mismatched = True
                print(f"!!! MISMATCH {workload}: warren {answers['warren']} kuzu {answers['kuzu']}", flush=True)
        entry["match"] = match
        if workload in memory:
            entry["memory"] = memory[workload]
        report["workloads"][workload] = entry
        print(f"{workload}: warren {fmt_ms(medians['warren'])} ms, kuzu {fmt_ms(medians['kuzu'])} ms, "
              f"match {match} {errors or ''}", flush=True)

    for system in SYSTEMS:
        close_system(*conns[system])

    rows = [["workload", "Warren ms", "Kùzu ms", "ratio", "goal", "met", "Warren mem", "Kùzu mem", "answer"]]
    for workload, entry in report["workloads"].items():
        w, k = entry["median_s"]["warren"], entry["median_s"]["kuzu"]
        goal = entry["goal"]
        ratio = k / w if (w and k) else None
        mem = entry.get("memory", {})
        wm = mem.get("warren", {}).get("growth_kib")
        km = mem.get("kuzu", {}).get("growth_kib")
        met = "unknown" if ratio is None else ("yes" if ratio >= goal else "no")
        if workload in MEMORY_WORKLOADS and met == "yes" and wm is not None and km is not None and wm >= km:
            met = "no (memory)"
        if entry["match"] is False:
            met = "MISMATCH"
        answer = {True: "same", False: "MISMATCH", None: "n/a"}[entry["match"]]
        rows.append([
            workload,
            fmt_ms(w) if "warren" not in entry["errors"] else "FAILED",
            fmt_ms(k) if "kuzu" not in entry["errors"] else "FAILED",
            "-" if ratio is None else f"{ratio:.2f}x",
            f">={goal:g}x",
            met,
            fmt_mib(wm) if workload in MEMORY_WORKLOADS else "-",
            fmt_mib(km) if workload in MEMORY_WORKLOADS else "-",
            answer,
        ])
        entry["ratio"] = ratio
        entry["met"] = met
    text = table(rows)
    notes = [
        f"Graph500 dataset {args.dataset}; {args.threads} threads each; median of {args.repeat} timed runs "
        "after one warm-up, Warren and Kùzu alternating in one process.",
        "Times: execute() plus the fetch/conversion (get_all, get_as_arrow, get_as_df, get_as_networkx).",
        "mem: median over R fresh child processes of the peak-RSS growth (VmHWM after, reset by clear_refs, "
        "minus VmRSS before) of one execute()+conversion on the just-opened database, the converted "
        "result kept alive; it includes what the system caches of the pages read.",
    ]
    for workload, entry in report["workloads"].items():
        for system, err in entry["errors"].items():
            notes.append(f"{workload} {system} FAILED: {err}")
        for system, info in entry.get("memory", {}).items():
            if "error" in info:
                notes.append(f"{workload} {system} memory child FAILED: {info['error']}")
        em = entry.get("execute_median_s", {})
        if all(em.get(x) is not None and entry["median_s"].get(x) is not None for x in SYSTEMS):
            notes.append(f"{workload}: execute() alone (median): warren {fmt_ms(em['warren'])} ms, "
                         f"kuzu {fmt_ms(em['kuzu'])} ms; "
                         f"fetch/conversion: warren {fmt_ms(entry['median_s']['warren'] - em['warren'])} ms, "
                         f"kuzu {fmt_ms(entry['median_s']['kuzu'] - em['kuzu'])} ms")
        if workload in ("arrow", "df") and "warren" in entry["answers"] and "kuzu" in entry["answers"]:
            wa, ka = entry["answers"]["warren"], entry["answers"]["kuzu"]
            if wa["_types"] != ka["_types"] or wa["_names"] != ka["_names"]:
                notes.append(f"{workload}: columns differ: warren {wa['_names']} {wa['_types']}, "
                             f"kuzu {ka['_names']} {ka['_types']}")
    full = text + "\n\n" + "\n".join(notes) + "\n"
    print()
    print(full)
    report["loadavg_end"] = os.getloadavg()
    report["finished"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    report["table"] = text
    report["notes"] = notes
    with open(os.path.join(args.out, "results.txt"), "w", encoding="utf-8") as fh:
        fh.write(full)
    with open(os.path.join(args.out, "results.json"), "w", encoding="utf-8") as fh:
        json.dump(report, fh, indent=2, default=str)
    if mismatched:
        print("MISMATCH: the systems' answers differ", file=sys.stderr)
    return 1 if (mismatched or failed) else 0


if __name__ == "__main__":
    sys.exit(main())

"""Runs the benchmark workloads on Warren and its peers side by side, checks every answer against
Kùzu's, and prints one table of times, peak memory, Warren's speedups and the project's goals.

    bench/peers/run.sh [--scale 18] [--threads 2] [--repeat 3] [--timeout 120]
                       [--workloads sp64,sp1,allsp,varlen3,varlen5,load] [--out DIR]

(run.sh sets up the Python environment and builds Warren, then runs this with its Python.)
Each (system, workload) runs in its own process, one at a time, on the same dataset files
(generated once into OUT/graph500-sS); its peak memory is that process's ru_maxrss. Query times
never include loading: the `load` workload times loading alone. Writes OUT/results.{txt,md,json},
each process's JSON under OUT/runs/ and its output under OUT/logs/. The exit status is 1 when
any answer disagrees with the reference, 2 on a usage or setup error.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from typing import Any

import child
import report
import warren_side
from cells import DEFAULT_SYSTEMS, SYSTEMS, TITLES, Cell, abbreviate, check_answers
from workloads import DEFAULT_WORKLOADS, Workload, workload

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
# Systems whose database lives on disk and is loaded once, before the query workloads.
ON_DISK = ["warren", "kuzu", "duckdb"]


@dataclass(frozen=True)
class Plan:
    out: str
    dataset: str
    warren: str
    python: str
    threads: int
    repeat: int
    timeout_s: float
    load_timeout_s: float
    setup_timeout_s: float
    memory_limit_bytes: int
    systems: list[str]
    workloads: list[Workload]
    gapbs_src: str | None
    warren_help: str | None  # the help of `warren bench`; None when Warren is not run
    warren_reorder: str | None  # the order Warren's Person table is given after loading

    @property
    def warren_bench(self) -> bool:
        return self.warren_help is not None

    def timeout_for(self, work: Workload) -> float:
        """Seconds one timed run of `work` may take."""
        return self.load_timeout_s if work.kind == "load" else self.timeout_s

    def path(self, *parts: str) -> str:
        return os.path.join(self.out, *parts)


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=18, help="Graph500 scale (2^S nodes)")
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per workload")
    parser.add_argument("--workloads", default=",".join(DEFAULT_WORKLOADS))
    parser.add_argument(
        "--systems",
        default=",".join(DEFAULT_SYSTEMS),
        help=f"comma-separated, of {', '.join(SYSTEMS)} (default: all but gapbs)",
    )
    parser.add_argument(
        "--gapbs-src",
        help="GAPBS source for the gapbs peer: a folder with src/bfs.cc or a bare git "
        "repository (default: $GAPBS_SRC, else peer_gapbs.py's default)",
    )
    parser.add_argument("--out", help="output folder (default bench/out/peers-sS)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per timed run")
    parser.add_argument(
        "--load-timeout",
        type=float,
        help="seconds per timed run of the load workload (default: --timeout); large scales "
        "need more for the slower loaders",
    )
    parser.add_argument(
        "--setup-timeout",
        type=float,
        default=600.0,
        help="seconds a process may spend outside timed runs (loading, opening)",
    )
    parser.add_argument(
        "--memory-limit",
        type=float,
        default=default_memory_limit_gib(),
        help="GiB of resident memory a process may use before it is stopped and reported as "
        "out of memory (default: 80%% of this machine's memory)",
    )
    parser.add_argument("--dataset", help="use this dataset folder instead of generating one")
    parser.add_argument("--warren", default=os.path.join(ROOT, "target", "release", "warren"))
    parser.add_argument(
        "--warren-reorder",
        choices=["bfs", "degree"],
        help="after loading, give Warren's Person table this locality order with CALL "
        "reorder_nodes (untimed, like the load; its time is printed in the notes); the load "
        "workload still times the plain COPY",
    )
    args = parser.parse_args()
    if not 1 <= args.scale <= 30 or args.threads < 1 or args.repeat < 1 or args.timeout <= 0 \
        or (args.load_timeout is not None and args.load_timeout <= 0):
        parser.error(
            "need 1 <= --scale <= 30, --threads >= 1, --repeat >= 1, --timeout > 0, "
            "--load-timeout > 0"
        )
    unknown = set(args.systems.split(",")) - set(SYSTEMS)
    if unknown:
        parser.error(f"unknown systems {sorted(unknown)}; known: {', '.join(SYSTEMS)}")
    try:
        [workload(name) for name in args.workloads.split(",")]
    except ValueError as error:
        parser.error(str(error))
    return args


def default_memory_limit_gib() -> float:
    """80% of the machine's memory (MemTotal), leaving room for the runner and the OS."""
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) * 1024 * 0.8 / 2**30, 1)
    return 16.0


def make_plan(args: argparse.Namespace) -> Plan:
    out = os.path.abspath(args.out or os.path.join(ROOT, "bench", "out", f"peers-s{args.scale}"))
    names = args.workloads.split(",")
    # Loading first: it also leaves each on-disk database in place for the queries.
    ordered = (["load"] if "load" in names else []) + [n for n in names if n != "load"]
    dataset = os.path.abspath(args.dataset or os.path.join(out, f"graph500-s{args.scale}"))
    return Plan(
        out=out,
        dataset=dataset,
        warren=os.path.abspath(args.warren),
        python=sys.executable,
        threads=args.threads,
        repeat=args.repeat,
        timeout_s=args.timeout,
        load_timeout_s=args.load_timeout or args.timeout,
        setup_timeout_s=args.setup_timeout,
        memory_limit_bytes=int(args.memory_limit * 2**30),
        systems=[s for s in SYSTEMS if s in args.systems.split(",")],
        workloads=[workload(name) for name in ordered],
        gapbs_src=args.gapbs_src,
        warren_help=warren_side.bench_help(args.warren)
        if "warren" in args.systems.split(",")
        else None,
        warren_reorder=args.warren_reorder,
    )


def ensure_dataset(plan: Plan, scale: int, given: bool) -> None:
    """Generates the Graph500 dataset once; an existing complete folder is reused."""
    names = ["nodes.csv", "edges.csv", "schema.cypher", "copy.cypher"]
    if all(os.path.exists(os.path.join(plan.dataset, name)) for name in names):
        return
    if given:
        sys.exit(f"error: {plan.dataset} lacks one of {', '.join(names)}")
    command = [plan.warren, "generate", "graph500", "--scale", str(scale), "--out", plan.dataset]
    progress("generating: " + " ".join(command))
    # Its summary line goes to standard error with the rest of the progress.
    subprocess.run(command, check=True, stdout=sys.stderr)


def progress(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def peer_command(plan: Plan, system: str, work: Workload, repeat: int, output: str) -> list[str]:
    command = [
        plan.python,
        os.path.join(HERE, f"peer_{system}.py"),
        "--workload",
        work.name,
        "--dataset",
        plan.dataset,
        "--threads",
        str(plan.threads),
        "--repeat",
        str(repeat),
        "--warmup",
        "1",
        "--output",
        output,
    ]
    if system in ON_DISK:
        command += ["--db", plan.path("dbs", system)]
    if system == "gapbs" and plan.gapbs_src:
        command += ["--gapbs-src", plan.gapbs_src]
    return command


def run_peer(plan: Plan, system: str, work: Workload) -> Cell:
    output = plan.path("runs", f"{system}-{work.name}.json")
    log = plan.path("logs", f"{system}-{work.name}.log")
    remove(output)
    command = peer_command(plan, system, work, plan.repeat, output)
    outcome = child.run_child(
        command,
        log,
        plan.timeout_for(work),
        plan.setup_timeout_s,
        cwd=HERE,
        memory_limit_bytes=plan.memory_limit_bytes,
    )
    cell = Cell(
        system,
        outcome.status,
        peak_rss_bytes=outcome.peak_rss_bytes,
        detail=outcome.detail,
        result_path=output,
    )
    if outcome.status == "ok":
        fill_from_peer(cell, output)
    elif outcome.status == "error":
        cell.detail = f"{outcome.detail}; see {log}"
    return cell


def fill_from_peer(cell: Cell, output: str) -> None:
    with open(output) as f:
        result = json.load(f)
    cell.version = result["version"]
    if not result["supported"]:
        cell.status, cell.detail, cell.peak_rss_bytes = "n/a", result["reason"], None
        return
    times = result["figures"]["time_s"]
    cell.median_s, cell.samples_s = times["median"], times["samples"]
    cell.reported = {k: v for k, v in result["figures"].items() if k != "time_s"}
    cell.answer, cell.method, cell.label = result["answer"], result["method"], result["label"]


def run_warren(plan: Plan, work: Workload) -> Cell:
    if not plan.warren_bench:
        return Cell("warren", "missing", detail=f"{plan.warren} has no `bench` command")
    output = plan.path("runs", f"warren-{work.name}.json")
    log = plan.path("logs", f"warren-{work.name}.log")
    remove(output)
    db_dir = plan.path("dbs", "warren-load" if work.kind == "load" else "warren")
    command = warren_side.bench_command(
        plan.warren,
        work,
        plan.dataset,
        db_dir,
        plan.threads,
        plan.repeat,
        output,
        plan.warren_help or "",
    )
    # Warren prints no markers: it gets its setup time plus the warm-up and the timed runs.
    timeout_s = plan.timeout_for(work)
    total_s = plan.setup_timeout_s + (plan.repeat + 1) * timeout_s
    outcome = child.run_child(
        command,
        log,
        timeout_s,
        plan.setup_timeout_s,
        total_s,
        memory_limit_bytes=plan.memory_limit_bytes,
    )
    if work.kind == "load":
        remove(db_dir)
    cell = Cell(
        "warren",
        outcome.status,
        peak_rss_bytes=outcome.peak_rss_bytes,
        detail=outcome.detail,
        result_path=output,
        version=warren_side.version(plan.warren),
        method="warren bench",
    )
    if outcome.status == "ok":
        fill_from_warren(cell, output, work, timeout_s)
    elif outcome.status == "error":
        cell.detail = f"{outcome.detail}; see {log}"
    return cell


def fill_from_warren(cell: Cell, output: str, work: Workload, timeout_s: float) -> None:
    found = warren_side.read_result(output, work)
    cell.median_s, cell.samples_s, cell.answer = (
        found["median_s"],
        found["samples_s"],
        found["answer"],
    )
    cell.reported = {
        "self_reported_peak_rss_bytes": found["self_reported_peak_rss_bytes"],
        "answer_checked": found["answer_checked"],
    }
    if max(cell.samples_s, default=0.0) > timeout_s:
        cell.status, cell.detail = "timeout", f"a timed run took {max(cell.samples_s):.1f} s"


def remove(path: str) -> None:
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)


def prepare_databases(plan: Plan) -> dict[str, str]:
    """Loads each on-disk database that the load workload did not leave; returns failures."""
    failures = {}
    for system in [s for s in ON_DISK if s in plan.systems]:
        db_dir = plan.path("dbs", system)
        if os.path.isdir(db_dir) and os.listdir(db_dir):
            continue
        log = plan.path("logs", f"{system}-prepare.log")
        if system == "warren":
            if not plan.warren_bench:
                continue
            commands = warren_side.load_commands(plan.warren, db_dir, plan.dataset)
        else:
            output = plan.path("runs", f"{system}-prepare.json")
            commands = [peer_command(plan, system, workload("load"), 1, output)]
        progress(f"loading the {TITLES[system]} database (untimed) into {db_dir}")
        for command in commands:
            outcome = child.run_child(command, log, plan.setup_timeout_s, plan.setup_timeout_s)
            if outcome.status != "ok":
                failures[system] = f"loading failed ({outcome.detail}); see {log}"
                break
    return failures


def run_workload(plan: Plan, work: Workload, failures: dict[str, str]) -> report.Row:
    cells: dict[str, Cell] = {}
    for system in plan.systems:
        if system in failures and work.kind != "load":
            cells[system] = Cell(system, "error", detail=failures[system])
        elif system == "warren":
            cells[system] = run_warren(plan, work)
        else:
            cells[system] = run_peer(plan, system, work)
        progress(
            f"  {work.name:8} {TITLES[system]:9} {describe(cells[system], plan.timeout_for(work))}"
        )
    mismatches = check_answers(cells)
    for line in mismatches:
        progress(f"  !!! MISMATCH on {work.name}: {line}")
    return report.Row(work, cells, plan.timeout_for(work), mismatches)


def describe(cell: Cell, timeout_s: float) -> str:
    text = report.cell_text(cell, timeout_s)
    if cell.status == "ok":
        text += f"  answer {abbreviate(cell.answer, 60)}"
    if cell.detail:
        text += f"  ({cell.detail})"
    return text


def notes(plan: Plan, rows: list[report.Row], load_average: list[float]) -> list[str]:
    versions = {}
    for row in rows:
        for cell in row.cells.values():
            if cell.version:
                versions[TITLES[cell.system]] = cell.version
    lines = [
        f"Dataset: {plan.dataset}; threads: {plan.threads}; repeats: {plan.repeat}; "
        f"timeout: {plan.timeout_s:g} s per timed run"
        + (
            f" ({plan.load_timeout_s:g} s for the load)."
            if plan.load_timeout_s != plan.timeout_s
            else "."
        ),
        "Cells: median seconds over the repeats, then the peak RSS of that system's process "
        "(ru_maxrss from wait4: for the Python peers it includes the interpreter, and for "
        "igraph and networkx the graph built in memory; loading is never in the time).",
        "igraph and networkx run single-threaded; (scipy): walk counts by scipy sparse "
        "matrix-vector products, not igraph; n/a: the system has no way to answer it.",
        f">{plan.timeout_s:g} s: stopped at the timeout; a speedup over it is a lower bound. "
        f"out of memory: the process passed {plan.memory_limit_bytes / 2**30:.1f} GiB resident "
        "(--memory-limit) and was stopped, or the kernel killed it.",
        f"Load average (1, 5, 15 min) at the start: {', '.join(f'{v:.2f}' for v in load_average)}"
        f"; at the end: {', '.join(f'{v:.2f}' for v in os.getloadavg())} "
        f"on {os.cpu_count()} CPUs.",
        "Versions: " + "; ".join(f"{name} {text}" for name, text in versions.items()),
    ]
    if not plan.warren_bench and "warren" in plan.systems:
        lines.append(f"WARREN NOT RUN: {plan.warren} has no `bench` command yet.")
    return lines


def mismatch_lines(rows: list[report.Row]) -> list[str]:
    return [f"MISMATCH on {row.work.name}: {line}" for row in rows for line in row.mismatches]


def machine() -> dict[str, Any]:
    model = ""
    if os.path.exists("/proc/cpuinfo"):
        with open("/proc/cpuinfo") as f:
            names = (line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
            model = next(names, "")
    return {
        "cpu": model,
        "cpus": os.cpu_count(),
        "platform": platform.platform(),
        "python": platform.python_version(),
        "load_average_end": os.getloadavg(),
    }


def git_revision() -> str:
    try:
        found = subprocess.run(
            ["git", "-C", ROOT, "describe", "--always", "--dirty"],
            capture_output=True,
            text=True,
            check=False,
        )
    except FileNotFoundError:  # a machine without git (a lent benchmark machine)
        return os.environ.get("WARREN_REVISION", "unknown")
    return found.stdout.strip() or os.environ.get("WARREN_REVISION", "unknown")


def write_outputs(
    plan: Plan, rows: list[report.Row], text: str, started: str, load_average_start: list[float]
) -> None:
    lines = notes(plan, rows, load_average_start)
    markdown = report.markdown_table(rows) + "\n\n" + "\n".join(f"- {n}" for n in lines)
    summary = {
        "started": started,
        "finished": datetime.datetime.now().isoformat(timespec="seconds"),
        "revision": git_revision(),
        "machine": machine(),
        "load_average_start": load_average_start,
        "config": {
            "dataset": plan.dataset,
            "threads": plan.threads,
            "repeat": plan.repeat,
            "timeout_s": plan.timeout_s,
            "load_timeout_s": plan.load_timeout_s,
            "setup_timeout_s": plan.setup_timeout_s,
            "memory_limit_bytes": plan.memory_limit_bytes,
            "systems": plan.systems,
        },
        "rows": [report.row_json(row) for row in rows],
        "mismatches": mismatch_lines(rows),
    }
    with open(plan.path("results.txt"), "w") as f:
        f.write(text + "\n")
    with open(plan.path("results.md"), "w") as f:
        f.write(markdown + "\n")
    with open(plan.path("results.json"), "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")


def main() -> int:
    args = parse_args()
    plan = make_plan(args)
    started = datetime.datetime.now().isoformat(timespec="seconds")
    load_average = os.getloadavg()
    for folder in ("runs", "logs"):
        os.makedirs(plan.path(folder), exist_ok=True)
    remove(plan.path("dbs"))
    ensure_dataset(plan, args.scale, given=args.dataset is not None)
    if "warren" in plan.systems and not plan.warren_bench:
        progress(f"WARNING: {plan.warren} has no `bench` command: Warren is not run.")
    rows = []
    failures: dict[str, str] = {}
    reorder_note: list[str] | None = None
    for work in plan.workloads:
        if work.kind != "load" and not failures and not prepared(plan):
            failures = prepare_databases(plan)
        if work.kind != "load" and "warren" not in failures and reorder_note is None:
            reorder_note = reorder_warren(plan, failures)
        progress(f"{work.name}: {work.cypher}")
        rows.append(run_workload(plan, work, failures))
        if work.kind == "load":
            drop_failed_loads(plan, rows[-1])
    remove(plan.path("dbs"))
    text = report.text_table(rows) + "\n\n" + "\n".join(
        notes(plan, rows, list(load_average)) + (reorder_note or [])
    )
    mismatches = mismatch_lines(rows)
    if mismatches:
        text += "\n\n" + "\n".join("!!! " + line for line in mismatches)
    print(text)
    write_outputs(plan, rows, text, started, list(load_average))
    progress(f"written: {plan.path('results.txt')}, results.md, results.json")
    return 1 if mismatches else 0


def reorder_warren(plan: Plan, failures: dict[str, str]) -> list[str]:
    """Gives Warren's loaded Person table the order `--warren-reorder` names (once, before
    the first query workload); returns the note that says so, or records a failure."""
    if "warren" not in plan.systems or not plan.warren_bench:
        return []
    if not plan.warren_reorder:
        return ["Warren's database: rows in load order (no --warren-reorder)."]
    db_dir = plan.path("dbs", "warren")
    log = plan.path("logs", "warren-reorder.log")
    statement = f"CALL reorder_nodes('Person', order := '{plan.warren_reorder}')"
    progress(f"reordering Warren's database (untimed): {statement}")
    started = time.monotonic()
    command = [plan.warren, "query", db_dir, statement]
    outcome = child.run_child(command, log, plan.setup_timeout_s, plan.setup_timeout_s)
    seconds = time.monotonic() - started
    if outcome.status != "ok":
        failures["warren"] = f"reordering failed ({outcome.detail}); see {log}"
        return [f"Warren's database: {statement} failed ({outcome.detail})."]
    return [
        f"Warren's database: after loading, {statement} ({seconds:.1f} s as a process, not in "
        "any time above; the load row times the plain COPY)."
    ]


def drop_failed_loads(plan: Plan, row: report.Row) -> None:
    """A database whose timed load failed may be partial: remove it, so it is loaded again."""
    for system, cell in row.cells.items():
        if system in ON_DISK and cell.status != "ok":
            remove(plan.path("dbs", system))


def prepared(plan: Plan) -> bool:
    """Whether every on-disk database this run needs is already loaded."""
    for system in [s for s in ON_DISK if s in plan.systems]:
        if system == "warren" and not plan.warren_bench:
            continue
        db_dir = plan.path("dbs", system)
        if not (os.path.isdir(db_dir) and os.listdir(db_dir)):
            return False
    return True


if __name__ == "__main__":
    sys.exit(main())

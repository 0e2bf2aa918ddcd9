"""Thread scaling: runs the peers table (compare.py) once per thread count on one dataset and
prints one table of every workload's time against threads, for Warren and its peers, with each
system's speedup over its own one-thread time and Warren's ratio over each peer.

    python thread_scaling.py --scale 18 --threads-list 1,2,4,8,16 --systems warren,kuzu \
        --workloads load,sp64,sp1,allsp,varlen3 --repeat 3 --out DIR [--deadline-s 480]

Every compare.py run checks its answers against Kùzu's as usual (a mismatch makes this exit 1).
`--deadline-s` bounds the whole run: no new thread count starts once it has passed (the counts
not run are named in the table's notes), so a run on a lent machine stops by itself. Writes
DIR/threads-N/ (compare.py's own outputs) and DIR/scaling.{txt,json}. Needs only the Python
standard library and each peer's package (Kùzu alone for `--systems warren,kuzu`).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from typing import Any

import compare
from cells import TITLES

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--scale", type=int, default=18)
    parser.add_argument("--threads-list", default="1,2,4,8,16")
    parser.add_argument("--systems", default="warren,kuzu")
    parser.add_argument("--workloads", default="load,sp64,sp1,allsp,varlen3")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per timed run")
    parser.add_argument("--dataset", help="an existing dataset folder (default: generated)")
    parser.add_argument("--warren", default=os.path.join(ROOT, "target", "release", "warren"))
    parser.add_argument("--warren-reorder", choices=["bfs", "degree"])
    parser.add_argument("--out", default=os.path.join(ROOT, "bench", "out", "threads"))
    parser.add_argument(
        "--deadline-s",
        type=float,
        default=0.0,
        help="start no new thread count after this many seconds (0: no deadline)",
    )
    args = parser.parse_args()
    try:
        args.thread_counts = [int(t) for t in args.threads_list.split(",")]
    except ValueError:
        parser.error("--threads-list takes comma-separated integers, e.g. 1,2,4,8,16")
    if not args.thread_counts or min(args.thread_counts) < 1:
        parser.error("--threads-list needs thread counts of at least 1")
    return args


def compare_command(args: argparse.Namespace, threads: int, dataset: str, out: str) -> list[str]:
    command = [
        sys.executable,
        os.path.join(HERE, "compare.py"),
        "--scale",
        str(args.scale),
        "--threads",
        str(threads),
        "--repeat",
        str(args.repeat),
        "--timeout",
        str(args.timeout),
        "--systems",
        args.systems,
        "--workloads",
        args.workloads,
        "--dataset",
        dataset,
        "--warren",
        args.warren,
        "--out",
        out,
    ]
    if args.warren_reorder:
        command += ["--warren-reorder", args.warren_reorder]
    return command


def ensure_dataset(args: argparse.Namespace) -> str:
    """The dataset folder, generated once by `warren generate` unless one was given."""
    if args.dataset:
        return os.path.abspath(args.dataset)
    dataset = os.path.join(os.path.abspath(args.out), f"graph500-s{args.scale}")
    if not os.path.exists(os.path.join(dataset, "copy.cypher")):
        command = [args.warren, "generate", "graph500", "--scale", str(args.scale)]
        subprocess.run(command + ["--out", dataset], check=True, stdout=sys.stderr)
    return dataset


def cell_time(cell: dict[str, Any]) -> str:
    if cell["status"] != "ok" or cell["median_s"] is None:
        return cell["status"]
    seconds = cell["median_s"]
    return f"{seconds * 1000:.3g} ms" if seconds < 1 else f"{seconds:.3g} s"


def table(runs: dict[int, dict[str, Any]], systems: list[str]) -> list[str]:
    """One line per (workload, threads): each system's median, its speedup over its own
    one-thread median, and Warren's ratio over each peer."""
    peers = [s for s in systems if s != "warren"]
    header = ["workload", "threads"]
    for system in systems:
        header += [TITLES[system], "x1t"]
    header += [f"vs {TITLES[p]}" for p in peers if "warren" in systems]
    lines = [" | ".join(header)]
    workloads = [row["workload"] for row in next(iter(runs.values()))["rows"]]
    for name in workloads:
        base: dict[str, float | None] = {}
        for threads in sorted(runs):
            row = next(r for r in runs[threads]["rows"] if r["workload"] == name)
            fields = [name, str(threads)]
            medians: dict[str, float | None] = {}
            for system in systems:
                cell = row["cells"].get(system)
                median = cell["median_s"] if cell and cell["status"] == "ok" else None
                medians[system] = median
                base.setdefault(system, median)
                first = base[system]
                scaling = f"{first / median:.2f}" if first and median else "-"
                fields += [cell_time(cell) if cell else "-", scaling]
            if "warren" in systems:
                for peer in peers:
                    w, p = medians["warren"], medians[peer]
                    fields.append(f"{p / w:.3g}x" if w and p else "-")
            lines.append(" | ".join(fields))
    return lines


def machine() -> str:
    """The machine in one line, from compare.py's description of it."""
    found = compare.machine()
    return f"{found['cpu']} ({found['cpus']} CPUs, {found['platform']})"


def main() -> int:
    args = parse_args()
    started = time.monotonic()
    os.makedirs(args.out, exist_ok=True)
    dataset = ensure_dataset(args)
    runs: dict[int, dict[str, Any]] = {}
    skipped: list[int] = []
    mismatched = False
    for threads in args.thread_counts:
        if args.deadline_s and time.monotonic() - started > args.deadline_s:
            skipped.append(threads)
            continue
        out = os.path.join(os.path.abspath(args.out), f"threads-{threads}")
        print(f"== {threads} threads", file=sys.stderr, flush=True)
        done = subprocess.run(compare_command(args, threads, dataset, out), check=False)
        results = os.path.join(out, "results.json")
        if done.returncode not in (0, 1) or not os.path.exists(results):
            print(f"compare.py failed with {threads} threads", file=sys.stderr)
            return 2
        mismatched |= done.returncode == 1
        with open(results) as f:
            runs[threads] = json.load(f)
    if not runs:
        print("no thread count ran before the deadline", file=sys.stderr)
        return 2
    systems = next(iter(runs.values()))["config"]["systems"]
    lines = [f"Graph500 scale {args.scale}, repeats {args.repeat}, on {machine()}"]
    lines += table(runs, systems)
    lines.append(
        "Cells: median of the repeats; x1t: that system's speedup over its own time with the "
        "fewest threads run; vs: the peer's time over Warren's, same threads, same run."
    )
    loads = [runs[t]["load_average_start"][0] for t in sorted(runs)]
    lines.append(f"Load average (1 min) at each thread count's start: {loads}")
    if skipped:
        lines.append(f"Not run (deadline of {args.deadline_s:g} s passed): threads {skipped}")
    if mismatched:
        lines.append("!!! some answers differ from Kùzu's: see the threads-N/results.txt files")
    text = "\n".join(lines)
    print(text)
    with open(os.path.join(args.out, "scaling.txt"), "w") as f:
        f.write(text + "\n")
    with open(os.path.join(args.out, "scaling.json"), "w") as f:
        json.dump({"scale": args.scale, "machine": machine(), "runs": runs}, f, indent=1)
    return 1 if mismatched else 0


if __name__ == "__main__":
    sys.exit(main())

"""The scale table and figure: how each system's time grows with the graph, from the
`results.json` of several `run.sh --scale S` runs (one per scale).

    bench/peers/.venv/bin/python bench/peers/scaling.py bench/out/peers-s18 bench/out/peers-s20 \
        ... --svg docs/figures/scaling.svg --table /tmp/scaling.md

For each workload and system it prints the median time at every scale, Warren's speedup over
each peer per scale, and Warren's growth against the growth in edges between the smallest and
the largest scale of the `--growth` pair (default 18 to 22): the project's goal is a time that
grows no faster than 1.2x the edges. The figure has one log-log panel per workload (time
against edges), a line per system, and a dashed line through Warren's first point that grows
exactly as the edges do. A cell that timed out is drawn at its timeout with an open triangle
(the true time is above it); a cell that ran out of memory or failed is left out and named in
the table.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
from dataclasses import dataclass, field
from typing import Any

from cells import SYSTEMS, TITLES

# Warren's time may grow at most this much faster than the edges (issue 11).
GROWTH_LIMIT = 1.2


@dataclass
class Outcome:
    """One system's result on one workload at one scale."""

    status: str  # "ok", "timeout", "out of memory", "error", "n/a", "missing"
    seconds: float | None = None  # the median, or the timeout for "timeout"
    peak_rss_bytes: int | None = None


@dataclass
class ScaleRun:
    """One `results.json`: its scale, edge count, load average and outcomes."""

    scale: int
    edges: int
    load_average: list[float]
    threads: int
    # workload -> system -> outcome
    outcomes: dict[str, dict[str, Outcome]] = field(default_factory=dict)


def read_run(path: str) -> ScaleRun:
    """Reads one results.json (or the folder holding it)."""
    if os.path.isdir(path):
        path = os.path.join(path, "results.json")
    if not os.path.exists(path):
        raise SystemExit(f"scaling.py: no {path} (has that run.sh run finished?)")
    with open(path) as f:
        summary = json.load(f)
    dataset = summary["config"]["dataset"]
    run = ScaleRun(
        scale=scale_of(dataset),
        edges=edge_count(summary, dataset),
        load_average=summary.get("load_average_start", []),
        threads=summary["config"]["threads"],
    )
    for row in summary["rows"]:
        timeout = row.get("timeout_s", summary["config"]["timeout_s"])
        run.outcomes[row["workload"]] = {
            system: outcome_of(cell, timeout) for system, cell in row["cells"].items()
        }
    return run


def scale_of(dataset: str) -> int:
    found = re.search(r"s(\d+)$", os.path.basename(os.path.normpath(dataset)))
    if found is None:
        found = re.search(r"(\d+)$", os.path.basename(os.path.normpath(dataset)))
    if found is None:
        raise ValueError(f"cannot tell the scale of dataset {dataset!r} (expected a name ending in sS)")
    return int(found.group(1))


def edge_count(summary: dict[str, Any], dataset: str) -> int:
    """The edges loaded (the load row's answer), else the dataset's edges.csv data lines."""
    for row in summary["rows"]:
        for cell in row["cells"].values():
            answer = cell.get("answer")
            if isinstance(answer, dict) and isinstance(answer.get("edges"), int):
                return answer["edges"]
    edge_csv = os.path.join(dataset, "edges.csv")
    if not os.path.exists(edge_csv):
        raise ValueError(f"no load answer and no {edge_csv}: cannot tell the edge count")
    with open(edge_csv, "rb") as f:
        return sum(1 for _ in f) - 1


def outcome_of(cell: dict[str, Any], timeout_s: float) -> Outcome:
    status = cell.get("status", "missing")
    detail = (cell.get("detail") or "") + " " + (cell.get("label") or "")
    if status == "ok" and cell.get("median_s") is not None:
        return Outcome("ok", cell["median_s"], cell.get("peak_rss_bytes"))
    if status == "timeout":
        return Outcome("timeout", timeout_s, cell.get("peak_rss_bytes"))
    if status == "memory" or "out of memory" in detail:
        return Outcome("out of memory", None, cell.get("peak_rss_bytes"))
    return Outcome(status)


def merge_by_scale(runs: list[ScaleRun]) -> list[ScaleRun]:
    """One run per scale: a later results file adds its cells to (or replaces those of) an
    earlier one of the same scale, e.g. a second `run.sh` with only some systems or workloads."""
    merged: dict[int, ScaleRun] = {}
    for run in runs:
        into = merged.get(run.scale)
        if into is None:
            merged[run.scale] = run
            continue
        if into.edges != run.edges:
            raise ValueError(
                f"two runs of scale {run.scale} loaded different edge counts "
                f"({into.edges} and {run.edges}): not the same dataset"
            )
        for workload, cells in run.outcomes.items():
            into.outcomes.setdefault(workload, {}).update(cells)
        into.load_average = into.load_average or run.load_average
    return sorted(merged.values(), key=lambda r: r.scale)


def workloads_of(runs: list[ScaleRun]) -> list[str]:
    names: list[str] = []
    for run in runs:
        for name in run.outcomes:
            if name not in names:
                names.append(name)
    return names


def systems_of(runs: list[ScaleRun]) -> list[str]:
    present = {system for run in runs for row in run.outcomes.values() for system in row}
    return [system for system in SYSTEMS if system in present]


def cell_text(outcome: Outcome | None) -> str:
    if outcome is None:
        return "-"
    if outcome.status == "ok":
        return seconds_text(outcome.seconds)
    if outcome.status == "timeout":
        return f">{outcome.seconds:g} s"
    return outcome.status


def seconds_text(seconds: float | None) -> str:
    assert seconds is not None
    if seconds < 0.01:
        return f"{seconds * 1000:.3g} ms"
    return f"{seconds:.3g} s"


def growth(runs: list[ScaleRun], workload: str, system: str, pair: tuple[int, int]) -> str:
    """`time growth / edge growth` between the pair's scales, e.g. `1.07 (13.4x / 12.5x)`."""
    by_scale = {run.scale: run for run in runs}
    first, last = by_scale.get(pair[0]), by_scale.get(pair[1])
    if first is None or last is None:
        return "-"
    a = first.outcomes.get(workload, {}).get(system)
    b = last.outcomes.get(workload, {}).get(system)
    if a is None or b is None or a.status != "ok":
        return "-"
    edges = last.edges / first.edges
    if b.status == "timeout":
        return f">{b.seconds / a.seconds / edges:.2f}"
    if b.status != "ok":
        return "-"
    time = b.seconds / a.seconds
    return f"{time / edges:.2f} ({time:.1f}x / {edges:.1f}x)"


def speedup_text(warren: Outcome | None, peer: Outcome | None) -> str:
    if warren is None or peer is None or warren.status != "ok":
        return "-"
    if peer.status == "ok":
        return f"{peer.seconds / warren.seconds:.3g}x"
    if peer.status == "timeout":
        return f">{peer.seconds / warren.seconds:.3g}x"
    return peer.status


def table(runs: list[ScaleRun], pair: tuple[int, int]) -> str:
    """The scale table as aligned text."""
    runs = sorted(runs, key=lambda r: r.scale)
    systems = systems_of(runs)
    scales = [f"s{run.scale} ({run.edges / 1e6:.3g}M edges)" for run in runs]
    header = ["workload", "system"] + scales + [f"growth s{pair[0]}->s{pair[1]} (time/edges)"]
    lines = [header]
    for workload in workloads_of(runs):
        for system in systems:
            cells = [cell_text(run.outcomes.get(workload, {}).get(system)) for run in runs]
            if all(c in ("-", "n/a") for c in cells):
                continue
            lines.append(
                [workload, TITLES[system]] + cells + [growth(runs, workload, system, pair)]
            )
        for peer in systems:
            if peer == "warren":
                continue
            ratios = [
                speedup_text(
                    run.outcomes.get(workload, {}).get("warren"),
                    run.outcomes.get(workload, {}).get(peer),
                )
                for run in runs
            ]
            if all(r in ("-", "n/a") for r in ratios):
                continue
            lines.append([workload, f"Warren vs {TITLES[peer]}"] + ratios + [""])
    widths = [max(len(line[i]) for line in lines) for i in range(len(header))]
    text = [" | ".join(cell.ljust(w) for cell, w in zip(line, widths)).rstrip() for line in lines]
    text.insert(1, "-+-".join("-" * w for w in widths))
    loads = ", ".join(
        f"s{run.scale}: {run.load_average[0]:.1f}" for run in runs if run.load_average
    )
    text.append("")
    text.append(
        f"Median seconds; threads: {runs[0].threads}; growth: Warren's time growth divided by the "
        f"edge growth between s{pair[0]} and s{pair[1]} (goal: at most {GROWTH_LIMIT}); "
        f"load average (1 min) at each run's start: {loads}."
    )
    return "\n".join(text)


def draw(runs: list[ScaleRun], svg_path: str) -> None:
    """The figure: one log-log panel per workload, time against edges; SVG and a PNG beside."""
    import matplotlib

    matplotlib.use("agg")
    import matplotlib.pyplot as plt

    runs = sorted(runs, key=lambda r: r.scale)
    names = workloads_of(runs)
    systems = systems_of(runs)
    columns = 3
    rows = (len(names) + columns - 1) // columns
    figure, axes = plt.subplots(rows, columns, figsize=(5 * columns, 4 * rows), squeeze=False)
    palette = ["#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#8c564b", "#ff7f0e", "#17becf"]
    assert len(SYSTEMS) <= len(palette), "a colour for every system"
    colors = dict(zip(SYSTEMS, palette))
    for index, workload in enumerate(names):
        axis = axes[index // columns][index % columns]
        for system in systems:
            draw_system(axis, runs, workload, system, colors[system])
        draw_linear(axis, runs, workload)
        axis.set_xscale("log")
        axis.set_yscale("log")
        axis.set_title(workload)
        axis.set_xlabel("edges")
        axis.set_ylabel("median time (s)")
        axis.grid(True, which="both", alpha=0.3)
        axis.legend(fontsize=7)
    for index in range(len(names), rows * columns):
        axes[index // columns][index % columns].axis("off")
    figure.suptitle(
        f"Time against edges, Graph500 scales {runs[0].scale} to {runs[-1].scale}, "
        f"{runs[0].threads} threads (open triangle: stopped at the timeout)"
    )
    figure.tight_layout()
    figure.savefig(svg_path)
    figure.savefig(os.path.splitext(svg_path)[0] + ".png", dpi=80)
    plt.close(figure)


def draw_system(axis: Any, runs: list[ScaleRun], workload: str, system: str, color: str) -> None:
    done = [
        (run.edges, o.seconds)
        for run in runs
        if (o := run.outcomes.get(workload, {}).get(system)) is not None and o.status == "ok"
    ]
    stopped = [
        (run.edges, o.seconds)
        for run in runs
        if (o := run.outcomes.get(workload, {}).get(system)) is not None
        and o.status == "timeout"
    ]
    if done:
        axis.plot(*zip(*done), marker="o", color=color, label=TITLES[system])
    if stopped:
        axis.plot(
            *zip(*stopped),
            linestyle="none",
            marker="^",
            markerfacecolor="none",
            color=color,
            label=f"{TITLES[system]} (timeout)" if not done else None,
        )


def draw_linear(axis: Any, runs: list[ScaleRun], workload: str) -> None:
    """A dashed line from Warren's first time growing exactly as the edges."""
    first = next(
        (
            (run.edges, o.seconds)
            for run in runs
            if (o := run.outcomes.get(workload, {}).get("warren")) is not None
            and o.status == "ok"
        ),
        None,
    )
    if first is None:
        return
    xs = [run.edges for run in runs if run.edges >= first[0]]
    axis.plot(
        xs,
        [first[1] * x / first[0] for x in xs],
        linestyle="--",
        color="grey",
        label="linear in edges",
    )


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "results",
        nargs="+",
        help="results.json files or run.sh --out folders; several of one scale are merged",
    )
    parser.add_argument("--svg", help="write the figure here")
    parser.add_argument("--table", help="also write the table here")
    parser.add_argument("--growth", default="18,22", help="the scales to judge growth between")
    return parser.parse_args(argv)


def main(argv: list[str]) -> int:
    args = parse_args(argv)
    runs = merge_by_scale([read_run(path) for path in args.results])
    pair = tuple(int(s) for s in args.growth.split(","))
    if len(pair) != 2:
        raise SystemExit("--growth takes two scales, e.g. 18,22")
    text = table(runs, (pair[0], pair[1]))
    print(text)
    if args.table:
        with open(args.table, "w") as f:
            f.write(text + "\n")
    if args.svg:
        draw(runs, args.svg)
        print(f"figure: {args.svg} (and a PNG beside it)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

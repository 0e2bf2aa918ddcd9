"""Prints the writes table: Warren's `warren bench writes` report beside the peers' JSON files
(writes_kuzu.py, writes_duckdb.py), with Warren's ratio over each peer, so that above 1 always
means Warren is better. Each scenario is compared on one measure: operations per second
(Warren / peer) for the commit, batch and mixed scenarios; seconds (peer / Warren) for
`checkpoint` (the checkpoint's duration) and `recovery` (the open that replays the log); the
read slowdown with a delta (peer / Warren; each system against itself after a checkpoint) for
`slowdown-*`. A peer's figure marked `<` is an upper bound, and the ratio a lower bound.

    python writes_table.py warren-writes.json kuzu-writes.json [duckdb-writes.json ...]
"""

from __future__ import annotations

import json
import sys


def median(figure: dict | None) -> float | None:
    return None if figure is None else figure["median"]


def fmt(value: float | None) -> str:
    if value is None:
        return "-"
    if value >= 100:
        return f"{value:,.0f}"
    return f"{value:.3g}"


def measure(scenario: str) -> tuple[str, bool]:
    """The figure a scenario is compared on, and whether higher is better."""
    if scenario in ("checkpoint", "recovery"):
        return "time_s", False
    if scenario.startswith("slowdown"):
        return "slowdown", False
    return "ops_per_s", True


def main() -> None:
    warren = json.load(open(sys.argv[1]))
    peers = [json.load(open(path)) for path in sys.argv[2:]]
    names = [p["system"].replace("kuzu", "Kùzu").replace("duckdb", "DuckDB") for p in peers]
    header = ["scenario", "measure", "Warren"]
    for name in names:
        header += [name, "ratio"]
    header += ["Warren p50/p99 us"] + [f"{name} p50/p99 us" for name in names]
    rows = [header]
    for run in warren["runs"]:
        scenario = run["dataset"]
        figures = run["figures"]
        key, higher_better = measure(scenario)
        ours = median(figures.get(key))
        row = [scenario, key.replace("_per_s", "/s").replace("time_s", "s"), fmt(ours)]
        has_latency = "latency_us_p50" in figures
        latencies = []
        if has_latency:
            p50, p99 = median(figures.get("latency_us_p50")), median(figures.get("latency_us_p99"))
            latencies.append(f"{fmt(p50)}/{fmt(p99)}")
        else:
            latencies.append("-")
        for peer in peers:
            cell = peer["scenarios"].get(scenario, {})
            theirs = cell.get(key)
            bound = bool(cell.get("upper_bound"))
            row.append(("<" if bound and theirs else "") + fmt(theirs))
            if ours and theirs:
                ratio = ours / theirs if higher_better else theirs / ours
                row.append(f"{'>' if bound else ''}{ratio:.1f}x")
            else:
                row.append("-")
            if has_latency and cell.get("latency_us_p50") is not None:
                latencies.append(f"{fmt(cell['latency_us_p50'])}/{fmt(cell['latency_us_p99'])}")
            else:
                latencies.append("-")
        rows.append(row + latencies)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


if __name__ == "__main__":
    main()

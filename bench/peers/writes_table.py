"""Prints the writes table: Warren's `warren bench writes` report beside the peers' JSON files
(writes_kuzu.py, writes_duckdb.py), with Warren's ratio over each peer (ops per second: Warren /
peer, so above 1 means Warren is faster; a peer's figure marked `<` is an upper bound, and the
ratio a lower bound).

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


def main() -> None:
    warren = json.load(open(sys.argv[1]))
    peers = [json.load(open(path)) for path in sys.argv[2:]]
    names = [p["system"].replace("kuzu", "Kùzu").replace("duckdb", "DuckDB") for p in peers]
    header = ["scenario", "Warren ops/s"]
    for name in names:
        header += [f"{name} ops/s", "ratio"]
    header += ["Warren p50/p99 us"] + [f"{name} p50/p99 us" for name in names]
    rows = [header]
    for run in warren["runs"]:
        scenario = run["dataset"]
        figures = run["figures"]
        ops = median(figures.get("ops_per_s"))
        commit = scenario.startswith("commit")
        row = [scenario, fmt(ops)]
        latencies = []
        if commit:
            p50, p99 = median(figures.get("latency_us_p50")), median(figures.get("latency_us_p99"))
            latencies.append(f"{fmt(p50)}/{fmt(p99)}")
        else:
            latencies.append("-")
        for peer in peers:
            cell = peer["scenarios"].get(scenario, {})
            peer_ops = cell.get("ops_per_s")
            bound = bool(cell.get("upper_bound"))
            row.append(("<" if bound and peer_ops else "") + fmt(peer_ops))
            row.append(f"{'>' if bound else ''}{ops / peer_ops:.1f}x" if ops and peer_ops else "-")
            if commit and "latency_us_p50" in cell:
                latencies.append(f"{fmt(cell['latency_us_p50'])}/{fmt(cell['latency_us_p99'])}")
            else:
                latencies.append("-")
        rows.append(row + latencies)
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())


if __name__ == "__main__":
    main()

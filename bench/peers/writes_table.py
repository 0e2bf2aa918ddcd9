"""Prints the writes table: Warren's `warren bench writes` report beside writes_kuzu.py's, with
Warren's ratio over Kùzu (commits or edges per second: Warren / Kùzu; latency: Kùzu / Warren).

    python writes_table.py warren-writes.json kuzu-writes.json
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
    kuzu = json.load(open(sys.argv[2]))["scenarios"]
    header = ["scenario", "Warren ops/s", "Kùzu ops/s", "ratio", "Warren p50 us", "Kùzu p50 us",
              "Warren p99 us", "Kùzu p99 us", "p99 ratio"]
    rows = [header]
    for run in warren["runs"]:
        name = run["dataset"]
        f = run["figures"]
        ops = median(f.get("ops_per_s"))
        p50 = median(f.get("latency_us_p50"))
        p99 = median(f.get("latency_us_p99"))
        peer = kuzu.get(name, {})
        k_ops, k_p50, k_p99 = peer.get("ops_per_s"), peer.get("latency_us_p50"), peer.get("latency_us_p99")
        bound = ">" if peer.get("upper_bound") else ""
        ratio = f"{bound}{ops / k_ops:.1f}x" if ops and k_ops else "-"
        p99_ratio = f"{k_p99 / p99:.1f}x" if p99 and k_p99 and name.startswith("commit") else "-"
        rows.append([name, fmt(ops), ("<" if bound else "") + fmt(k_ops), ratio, fmt(p50) if name.startswith("commit") else "-",
                     fmt(k_p50), fmt(p99) if name.startswith("commit") else "-", fmt(k_p99), p99_ratio])
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    for r in rows:
        print(" | ".join(c.ljust(w) for c, w in zip(r, widths)))


if __name__ == "__main__":
    main()

"""The results table: each system's median time and peak memory per workload, Warren's speedup
over each peer, and whether the project's goal for the workload is met; as aligned text (what
the runner prints), as markdown and as JSON.

A peer that timed out prints as `>T s`; Warren's speedup over it is then only a lower bound
(`>T/warren x`), which meets a goal when the bound already does and leaves it "unknown" when not.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cells import SYSTEMS, TITLES, Cell
from workloads import Goal, Workload

PEERS = [system for system in SYSTEMS if system != "warren"]


@dataclass(frozen=True)
class Speedup:
    """Warren's speedup over a peer: exact, or a lower bound when the peer timed out."""

    ratio: float
    lower_bound: bool

    def text(self) -> str:
        return (">" if self.lower_bound else "") + format_ratio(self.ratio)


@dataclass
class Row:
    work: Workload
    cells: dict[str, Cell]
    timeout_s: float
    mismatches: list[str] = field(default_factory=list)  # one line per disagreeing answer

    def speedup(self, peer: str) -> Speedup | None:
        warren, other = self.cells.get("warren"), self.cells.get(peer)
        if warren is None or other is None or warren.status != "ok" or not warren.median_s:
            return None
        if other.status == "ok" and other.median_s is not None:
            return Speedup(other.median_s / warren.median_s, lower_bound=False)
        if other.status == "timeout":
            return Speedup(self.timeout_s / warren.median_s, lower_bound=True)
        return None

    def goal_verdict(self, goal: Goal) -> str:
        """ "yes", "no" or "unknown" for one goal."""
        warren = self.cells.get("warren")
        if warren is not None and warren.check == "MISMATCH":
            return "no"
        speedup = self.speedup(goal.peer)
        if speedup is None:
            return "unknown"
        if speedup.ratio >= goal.factor:
            return "yes"
        return "unknown" if speedup.lower_bound else "no"

    def verdict(self) -> str:
        verdicts = [self.goal_verdict(goal) for goal in self.work.goals]
        if "no" in verdicts:
            return "no"
        return "unknown" if "unknown" in verdicts else "yes"


def format_seconds(seconds: float) -> str:
    """Three significant digits: `1234 s`, `12.3 s`, `0.123 s`, `4.56 ms`."""
    if seconds >= 1000:
        return f"{seconds:.0f} s"
    if seconds < 0.01:
        return f"{seconds * 1000:.3g} ms"
    return f"{seconds:.3g} s"


def format_bytes(count: int) -> str:
    if count >= 2**30:
        return f"{count / 2**30:.2f} GiB"
    return f"{count / 2**20:.0f} MiB"


def format_ratio(ratio: float) -> str:
    if ratio >= 100:
        return f"{ratio:.0f}x"
    if ratio >= 10:
        return f"{ratio:.1f}x"
    return f"{ratio:.2f}x"


def cell_text(cell: Cell | None, timeout_s: float) -> str:
    if cell is None:
        return "-"
    if cell.status == "timeout":
        return f">{timeout_s:g} s"
    if cell.status == "memory":
        return "out of memory"
    if cell.status != "ok":
        return {"n/a": "n/a", "missing": "not run"}.get(cell.status, cell.status)
    parts = [format_seconds(cell.median_s or 0.0)]
    if cell.peak_rss_bytes is not None:
        parts.append(format_bytes(cell.peak_rss_bytes))
    text = ", ".join(parts)
    if cell.label:
        text += f" ({cell.label})"
    if cell.check == "MISMATCH":
        text += " MISMATCH"
    return text


def goal_text(work: Workload) -> str:
    return ", ".join(f">={goal.factor:g}x {TITLES[goal.peer]}" for goal in work.goals)


def header() -> list[str]:
    return (
        ["workload"]
        + [TITLES[system] for system in SYSTEMS]
        + [f"vs {TITLES[peer]}" for peer in PEERS]
        + ["goal", "met"]
    )


def row_texts(row: Row) -> list[str]:
    speedups = [row.speedup(peer) for peer in PEERS]
    return (
        [row.work.name]
        + [cell_text(row.cells.get(system), row.timeout_s) for system in SYSTEMS]
        + [speedup.text() if speedup else "-" for speedup in speedups]
        + [goal_text(row.work), row.verdict()]
    )


def text_table(rows: list[Row]) -> str:
    lines = [header()] + [row_texts(row) for row in rows]
    widths = [max(len(line[column]) for line in lines) for column in range(len(lines[0]))]
    rule = "-+-".join("-" * width for width in widths)
    formatted = [
        " | ".join(text.ljust(width) for text, width in zip(line, widths, strict=False))
        for line in lines
    ]
    return "\n".join([formatted[0], rule, *formatted[1:]])


def markdown_table(rows: list[Row]) -> str:
    lines = [header()] + [row_texts(row) for row in rows]
    out = ["| " + " | ".join(lines[0]) + " |", "|" + "---|" * len(lines[0])]
    out += ["| " + " | ".join(line) + " |" for line in lines[1:]]
    return "\n".join(out)


def cell_json(cell: Cell) -> dict[str, Any]:
    return {
        "status": cell.status,
        "median_s": cell.median_s,
        "samples_s": cell.samples_s,
        "peak_rss_bytes": cell.peak_rss_bytes,
        "answer": cell.answer,
        "check": cell.check,
        "version": cell.version,
        "method": cell.method,
        "label": cell.label,
        "detail": cell.detail,
        "result": cell.result_path,
        "reported": cell.reported,
    }


def row_json(row: Row) -> dict[str, Any]:
    speedups = {}
    for peer in PEERS:
        speedup = row.speedup(peer)
        if speedup is not None:
            speedups[peer] = {"ratio": speedup.ratio, "lower_bound": speedup.lower_bound}
    return {
        "workload": row.work.name,
        "query": row.work.cypher,
        "cells": {system: cell_json(cell) for system, cell in row.cells.items()},
        "speedup": speedups,
        "goals": [
            {"peer": goal.peer, "factor": goal.factor, "met": row.goal_verdict(goal)}
            for goal in row.work.goals
        ],
        "met": row.verdict(),
        "timeout_s": row.timeout_s,
        "mismatches": row.mismatches,
    }

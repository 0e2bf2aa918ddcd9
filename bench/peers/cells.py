"""One system's outcome on one workload (a cell of the results table), and the check of every
system's answer against the reference answer: Kùzu's, else Warren's, else the first peer's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SYSTEMS = ["warren", "kuzu", "duckdb", "igraph", "networkx", "gapbs"]
# Run unless --systems says otherwise; GAPBS (sp1 only, built from its source) is asked for.
DEFAULT_SYSTEMS = ["warren", "kuzu", "duckdb", "igraph", "networkx"]
TITLES = {
    "warren": "Warren",
    "kuzu": "Kùzu",
    "duckdb": "DuckDB",
    "igraph": "igraph",
    "networkx": "networkx",
    "gapbs": "GAPBS",
}
# The order in which a workload's reference answer is chosen.
REFERENCE_ORDER = ["kuzu", "warren", "duckdb", "igraph", "networkx", "gapbs"]


@dataclass
class Cell:
    """How one system did on one workload.

    status: "ok" (answered), "timeout", "error", "n/a" (the system cannot answer it) or
    "missing" (not run, e.g. `warren bench` absent). check: "reference", "ok", "MISMATCH" or
    "unchecked" (nothing to compare with).
    """

    system: str
    status: str
    median_s: float | None = None
    samples_s: list[float] = field(default_factory=list)
    peak_rss_bytes: int | None = None
    answer: Any = None
    check: str = "unchecked"
    version: str = ""
    method: str = ""
    label: str = ""  # shown next to the figures, e.g. "scipy"
    detail: str = ""  # why it timed out, failed or is n/a
    result_path: str = ""
    # Further figures the system reported itself (setup_s, edges_per_s, its own peak RSS).
    reported: dict[str, Any] = field(default_factory=dict)

    def answered(self) -> bool:
        return self.status == "ok" and self.answer is not None


def reference_system(cells: dict[str, Cell]) -> str | None:
    """The system whose answer the others are checked against, or None if none answered."""
    for system in REFERENCE_ORDER:
        cell = cells.get(system)
        if cell is not None and cell.answered():
            return system
    return None


def check_answers(cells: dict[str, Cell]) -> list[str]:
    """Marks each answered cell "reference", "ok" or "MISMATCH"; returns a line per mismatch."""
    reference = reference_system(cells)
    if reference is None:
        return []
    expected = cells[reference].answer
    mismatches = []
    for cell in cells.values():
        if not cell.answered():
            continue
        if cell.system == reference:
            cell.check = "reference"
        elif cell.answer == expected:
            cell.check = "ok"
        else:
            cell.check = "MISMATCH"
            mismatches.append(
                f"{TITLES[cell.system]} answered {abbreviate(cell.answer)}, "
                f"{TITLES[reference]} answered {abbreviate(expected)}"
            )
    if sum(1 for cell in cells.values() if cell.answered()) == 1:
        cells[reference].check = "unchecked"
    return mismatches


def abbreviate(answer: Any, chars_max: int = 120) -> str:
    text = repr(answer)
    if len(text) <= chars_max:
        return text
    rows = f" ({len(answer)} rows)" if isinstance(answer, list) else ""
    return text[: chars_max - 3] + "..." + rows

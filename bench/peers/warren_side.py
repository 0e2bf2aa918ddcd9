"""Warren's side of the comparison: the command lines that load its database (`warren run`) and
time a workload (`warren bench`), and the reading of `warren bench`'s JSON into the same cell
as the peers' results.

`warren bench WORKLOAD --db DB --dataset DIR --threads N --repeat R --output FILE.json` reports
`figures.time_s` (median, samples), `figures.peak_rss_bytes` (its own, after setup) and
`answer`; it runs the query once untimed before the timed repeats (the peers do the same). Walk
workloads are `warren bench varlen --hops H --sources S --destinations D`.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from workloads import Workload, normal_answer


def bench_help(warren: str) -> str | None:
    """The help text of this Warren binary's `bench` command, None when it has none."""
    if not os.access(warren, os.X_OK):
        return None
    found = subprocess.run([warren, "bench", "--help"], capture_output=True, text=True, check=False)
    return found.stdout if found.returncode == 0 else None


def version(warren: str) -> str:
    found = subprocess.run([warren, "--version"], capture_output=True, text=True, check=False)
    return found.stdout.strip() if found.returncode == 0 else "unknown"


def load_commands(warren: str, db_dir: str, dataset: str) -> list[list[str]]:
    """The commands that create and load Warren's database, as the README shows."""
    return [
        [warren, "run", db_dir, os.path.join(dataset, name)]
        for name in ("schema.cypher", "copy.cypher")
    ]


def bench_command(
    warren: str,
    work: Workload,
    dataset: str,
    db_dir: str,
    threads: int,
    repeat: int,
    output: str,
    help_text: str,
) -> list[str]:
    """The `warren bench` command line. Warren's own reference check is turned off where the
    command has `--no-check`: the runner checks Warren's answer against Kùzu's and the peers',
    and the reference graph would otherwise count in the process's peak memory."""
    name = work.name
    extra: list[str] = ["--no-check"] if "--no-check" in help_text else []
    if work.kind == "walks":
        assert work.hops is not None and work.sources_below is not None
        name = "varlen"
        extra += [
            "--hops",
            str(work.hops),
            "--sources",
            str(work.sources_below),
            "--destinations",
            str(work.destinations_below),
        ]
    return [
        warren,
        "bench",
        name,
        "--db",
        db_dir,
        "--dataset",
        dataset,
        "--threads",
        str(threads),
        "--repeat",
        str(repeat),
        "--output",
        output,
        *extra,
    ]


def read_result(path: str, work: Workload) -> dict[str, Any]:
    """The parts of `warren bench`'s JSON that the table needs, the answer in normal form."""
    with open(path) as f:
        raw = json.load(f)
    figures = raw["figures"]
    samples = [float(s) for s in figures["time_s"]["samples"]]
    return {
        "median_s": float(figures["time_s"]["median"]),
        "samples_s": samples,
        "self_reported_peak_rss_bytes": figures.get("peak_rss_bytes"),
        "answer": normal_answer(work.kind, raw.get("answer")),
        "answer_checked": raw.get("answer_checked"),
    }

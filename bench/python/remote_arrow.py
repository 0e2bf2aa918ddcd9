"""get_as_arrow() of a large two-column result, embedded vs through `warren serve` (remote).

Runs both side by side, alternating, and prints the median seconds, rows/s and the ratio for
each query. Usage (after scripts/test-python, or `maturin develop`, has installed warren):

    WARREN_BIN=target/ci/warren .venv-python/bin/python bench/python/remote_arrow.py [--rows N] [--repeat R]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import warren

QUERIES = {
    "INT64, DOUBLE": "UNWIND range(1, {rows}) AS i RETURN i, i * 0.5 AS x",
    "INT64, STRING": "UNWIND range(1, {rows}) AS i RETURN i, 'v' + cast(i, 'STRING') AS s",
}


def start_server(binary: str, db_path: Path) -> tuple[subprocess.Popen[str], str]:
    command = [binary, "serve", str(db_path), "--listen", "127.0.0.1:0", "--read-only"]
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert process.stdout is not None
    for line in process.stdout:
        if "listening on " in line:
            return process, line.split("listening on ", 1)[1].strip()
    msg = "warren serve did not start"
    raise RuntimeError(msg)


def timed(run: object) -> float:
    started = time.perf_counter()
    table = run()  # type: ignore[operator]
    elapsed = time.perf_counter() - started
    assert table.num_rows == ROWS, table.num_rows
    return elapsed


def first_row_s(conn: warren.Connection | warren.RemoteConnection, query: str) -> float:
    started = time.perf_counter()
    result = conn.execute(query)
    result.get_next()
    elapsed = time.perf_counter() - started
    result.close()
    return elapsed


def main() -> None:
    global ROWS  # noqa: PLW0603
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    ROWS = args.rows
    binary = os.environ.get("WARREN_BIN", "target/ci/warren")
    with tempfile.TemporaryDirectory() as directory:
        db_path = Path(directory) / "db"
        warren.Database(str(db_path)).close()
        process, url = start_server(binary, db_path)
        try:
            db = warren.Database(str(db_path), read_only=True)
            embedded = warren.Connection(db)
            remote = warren.connect(url)
            print(f"{ROWS} rows, {args.repeat} runs each, alternating; load: {os.getloadavg()}")
            for name, template in QUERIES.items():
                query = template.format(rows=ROWS)
                a, b = [], []
                for _ in range(args.repeat):
                    a.append(timed(lambda: embedded.execute(query).get_as_arrow()))  # noqa: B023
                    b.append(timed(lambda: remote.execute(query).get_as_arrow()))  # noqa: B023
                ea, rb = statistics.median(a), statistics.median(b)
                first_a = statistics.median(first_row_s(embedded, query) for _ in range(args.repeat))
                first_b = statistics.median(first_row_s(remote, query) for _ in range(args.repeat))
                print(
                    f"{name}: embedded {ea:.3f} s ({ROWS / ea / 1e6:.2f} M rows/s), "
                    f"remote {rb:.3f} s ({ROWS / rb / 1e6:.2f} M rows/s), remote/embedded {rb / ea:.2f}x; "
                    f"first row: embedded {first_a * 1000:.1f} ms, remote {first_b * 1000:.1f} ms"
                )
        finally:
            process.terminate()
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


ROWS = 0

if __name__ == "__main__":
    sys.exit(main())

"""Pytest plugin: marks the tests named in $WARREN_EXPECTED_FAILURES as expected failures.

Each line of the file is ``file.py::test_name  # reason`` (``#`` lines and blank lines are
ignored). The marks are strict, so a listed test that passes fails the run: the list can only
shrink. A ``[no-run]`` tag in the reason marks a test that is not even started (it would crash
or hang).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest


def _read(path: Path) -> dict[str, str]:
    entries: dict[str, str] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        test, _, reason = line.partition("#")
        test = test.strip()
        if test:
            entries[test] = reason.strip() or "expected to fail"
    return entries


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    del config
    path = os.environ.get("WARREN_EXPECTED_FAILURES")
    if not path:
        return
    entries = _read(Path(path))
    for item in items:
        reason = entries.get(f"{item.path.name}::{item.name}")
        if reason is not None:
            run = "[no-run]" not in reason
            item.add_marker(pytest.mark.xfail(reason=reason, strict=True, run=run))

"""Data frames as query parameters, for `LOAD FROM df` and `COPY t FROM df`.

A name after `LOAD FROM` or `COPY t FROM` that is not a given parameter is looked up, as in Kùzu,
among the variables of the code that called `execute`: a pandas DataFrame, a pyarrow Table or
RecordBatch, or a polars DataFrame found there is passed as that parameter. Frames cross as one
list of Python values per column (`Columns`); the engine gives each column the common type of
its values.
"""

from __future__ import annotations

import math
import sys
from typing import Any

from . import _warren

_FRAME_TYPES = {
    ("pandas", "DataFrame"),
    ("pyarrow", "Table"),
    ("pyarrow", "RecordBatch"),
    ("polars", "DataFrame"),
}


class Columns:
    """A data frame's columns: ``[(name, [value, ...]), ...]``."""

    def __init__(self, columns: list[tuple[str, list[Any]]]) -> None:
        self.columns = columns


def _kind(obj: Any) -> tuple[str, str]:
    cls = type(obj)
    return cls.__module__.split(".")[0], cls.__name__


def is_frame(obj: Any) -> bool:
    """Whether ``obj`` is a data frame Warren can scan."""
    return _kind(obj) in _FRAME_TYPES


def _is_null(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, float):
        return math.isnan(value)
    kind = type(value).__name__
    return kind in {"NaTType", "NAType"}


def to_columns(frame: Any) -> Columns:
    """The columns of a pandas, pyarrow or polars frame as lists of Python values."""
    module, _ = _kind(frame)
    if module == "polars":
        frame = frame.to_arrow()
        module = "pyarrow"
    if module == "pyarrow":
        return Columns([(name, frame.column(name).to_pylist()) for name in frame.column_names])
    return Columns([
        (str(name), [None if _is_null(v) else v for v in frame[name].tolist()]) for name in frame.columns
    ])


def _caller_variable(name: str) -> Any:
    """The variable ``name`` of the innermost caller outside this package that has it."""
    frame = sys._getframe(1)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module != "warren" and not module.startswith("warren."):
            if name in frame.f_locals:
                return frame.f_locals[name]
            if name in frame.f_globals:
                return frame.f_globals[name]
        frame = frame.f_back
    return None


def with_frames(query: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """``parameters`` with data frames converted, and with the frames the query reads by name
    taken from the caller's variables."""
    names = _warren.table_sources(query) if "FROM" in query.upper() else []
    result = dict(parameters)
    for name in names:
        if name not in result:
            value = _caller_variable(name)
            if value is not None and is_frame(value):
                result[name] = value
    for key, value in result.items():
        if is_frame(value):
            result[key] = to_columns(value)
    return result

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
    """A data frame's columns: ``[(name, [value, ...]), ...]`` and each column's Kùzu type name
    (``None`` where the values decide)."""

    def __init__(self, columns: list[tuple[str, list[Any]]], types: list[str | None]) -> None:
        self.columns = columns
        self.types = types


_ARROW_SCALARS = {
    "bool": "BOOL",
    "int8": "INT8",
    "int16": "INT16",
    "int32": "INT32",
    "int64": "INT64",
    "uint8": "UINT8",
    "uint16": "UINT16",
    "uint32": "UINT32",
    "uint64": "UINT64",
    "halffloat": "FLOAT",
    "float": "FLOAT",
    "double": "DOUBLE",
    "string": "STRING",
    "large_string": "STRING",
    "string_view": "STRING",
    "binary": "BLOB",
    "large_binary": "BLOB",
    "date32[day]": "DATE",
    "date64[ms]": "DATE",
}


def _arrow_type_name(arrow_type: Any) -> str | None:
    """The Kùzu type of a scalar Arrow type or of a UNION of scalar types; ``None`` for other
    nested ones (their values decide)."""
    import pyarrow as pa

    if pa.types.is_union(arrow_type):
        members = [(field.name, _arrow_type_name(field.type)) for field in arrow_type]
        if any(name is None for _, name in members):
            return None
        return "UNION(" + ", ".join(f"`{name}` {member}" for name, member in members) + ")"
    if pa.types.is_timestamp(arrow_type):
        if arrow_type.tz is not None:
            return "TIMESTAMP_TZ"
        return {"s": "TIMESTAMP_SEC", "ms": "TIMESTAMP_MS", "us": "TIMESTAMP", "ns": "TIMESTAMP_NS"}[arrow_type.unit]
    if pa.types.is_duration(arrow_type):
        return "INTERVAL"
    if pa.types.is_decimal(arrow_type):
        return f"DECIMAL({arrow_type.precision}, {arrow_type.scale})"
    return _ARROW_SCALARS.get(str(arrow_type))


def _reshape(value: Any, arrow_type: Any) -> Any:
    """A value read from Arrow with its MAPs (lists of key-value pairs) in Warren's parameter
    form, ``{"key": [...], "value": [...]}``, at any depth."""
    import pyarrow as pa

    if value is None:
        return None
    if pa.types.is_map(arrow_type):
        pairs = list(value.items()) if isinstance(value, dict) else list(value)
        return {
            "key": [_reshape(k, arrow_type.key_type) for k, _ in pairs],
            "value": [_reshape(v, arrow_type.item_type) for _, v in pairs],
        }
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type) or pa.types.is_fixed_size_list(arrow_type):
        return [_reshape(v, arrow_type.value_type) for v in value]
    if pa.types.is_struct(arrow_type):
        return {field.name: _reshape(value.get(field.name), field.type) for field in arrow_type}
    return value


def _has_map(arrow_type: Any) -> bool:
    import pyarrow as pa

    if pa.types.is_map(arrow_type):
        return True
    if pa.types.is_list(arrow_type) or pa.types.is_large_list(arrow_type) or pa.types.is_fixed_size_list(arrow_type):
        return _has_map(arrow_type.value_type)
    if pa.types.is_struct(arrow_type):
        return any(_has_map(field.type) for field in arrow_type)
    return False


class UnionMember:
    """A value of an Arrow UNION column with the name of the member it belongs to, so that the
    engine builds a tagged UNION value instead of guessing the member from the value."""

    __slots__ = ("tag", "value")

    def __init__(self, tag: str, value: Any) -> None:
        self.tag = tag
        self.value = value


def _union_members(array: Any) -> list[Any]:
    """The values of an Arrow UNION array (or chunked array) as ``UnionMember``s (``None`` for
    NULLs)."""
    union_type = array.type
    names = {code: union_type.field(i).name for i, code in enumerate(union_type.type_codes)}
    chunks = array.chunks if hasattr(array, "chunks") else [array]
    members: list[Any] = []
    for chunk in chunks:
        for scalar in chunk:
            member = scalar.value
            if member is None or not member.is_valid:
                members.append(None)
            else:
                members.append(UnionMember(names[scalar.type_code], member.as_py()))
    return members


def _arrow_values(values: list[Any], arrow_type: Any) -> list[Any]:
    """Values of an Arrow-typed column, MAPs reshaped."""
    if not _has_map(arrow_type):
        return values
    return [_reshape(v, arrow_type) for v in values]


def _arrow_column(column: Any) -> list[Any]:
    """The values of an Arrow (chunked) array: UNION members tagged, MAPs reshaped."""
    import pyarrow as pa

    if pa.types.is_union(column.type) and _arrow_type_name(column.type) is not None:
        return _union_members(column)
    return _arrow_values(column.to_pylist(), column.type)


def _pandas_type_name(dtype: Any) -> str | None:
    """The Kùzu type of a pandas column's dtype; ``None`` for object columns."""
    import pyarrow as pa

    if hasattr(dtype, "pyarrow_dtype"):
        return _arrow_type_name(dtype.pyarrow_dtype)
    name = str(dtype)
    if name == "object":
        return None
    try:
        return _arrow_type_name(pa.from_numpy_dtype(dtype.numpy_dtype if hasattr(dtype, "numpy_dtype") else dtype))
    except (TypeError, NotImplementedError, pa.ArrowNotImplementedError):
        return None


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
        return Columns(
            [(field.name, _arrow_column(frame.column(field.name))) for field in frame.schema],
            [_arrow_type_name(field.type) for field in frame.schema],
        )
    columns = [(str(name), _pandas_values(frame[name])) for name in frame.columns]
    types = [_pandas_type_name(frame[name].dtype) for name in frame.columns]
    for index, (_, values) in enumerate(columns):
        if types[index] is None and values and all(type(v) is int for v in values if v is not None):
            types[index] = "INT64"  # an object column of Python ints too large for numpy's int64
    return Columns(columns, types)


def _pandas_values(series: Any) -> list[Any]:
    """A pandas column's values. An object column whose values have no common type (strings
    next to numbers, dicts of different fields, ...) is read as their Python text, as Kùzu
    reads such columns."""
    if hasattr(series.dtype, "pyarrow_dtype") and hasattr(series.array, "__arrow_array__"):
        import pyarrow as pa

        if pa.types.is_union(series.dtype.pyarrow_dtype):
            return _arrow_column(series.array.__arrow_array__())
    values = [None if _is_null(v) else v for v in series.tolist()]
    if hasattr(series.dtype, "pyarrow_dtype"):
        return _arrow_values(values, series.dtype.pyarrow_dtype)
    if str(series.dtype) == "object":
        try:
            shape = None
            for value in values:
                shape = _merge(shape, _shape(value))
        except _NoCommonType:
            return [None if v is None else str(v) for v in values]
    return values


class _NoCommonType(Exception):
    """Two values of an object column have no common type."""


def _shape(value: Any) -> Any:
    """A value's type, structurally: a name for scalars, ``("list", element)`` for lists and
    ``("dict", {key: shape})`` for dicts; ``None`` (NULL) matches anything."""
    if value is None:
        return None
    if isinstance(value, dict):
        return ("dict", {k: _shape(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        element = None
        for item in value:
            element = _merge(element, _shape(item))
        return ("list", element)
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    return type(value).__name__


def _merge(a: Any, b: Any) -> Any:
    """The common shape of two shapes; raises ``_NoCommonType`` when there is none."""
    if a is None:
        return b
    if b is None:
        return a
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0]:
        if a[0] == "list":
            return ("list", _merge(a[1], b[1]))
        if a[1].keys() != b[1].keys():
            raise _NoCommonType
        return ("dict", {k: _merge(a[1][k], b[1][k]) for k in a[1]})
    if a != b:
        raise _NoCommonType
    return a


_MISSING = object()


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
    return _MISSING


def with_frames(query: str, parameters: dict[str, Any]) -> dict[str, Any]:
    """``parameters`` with data frames converted, and with the frames the query reads by name
    taken from the caller's variables."""
    names = _warren.table_sources(query) if "FROM" in query.upper() else []
    result = dict(parameters)
    for name in names:
        if name not in result:
            value = _caller_variable(name)
            if value is _MISSING:
                continue
            if not is_frame(value):
                msg = (
                    "Binder exception: Attempted to scan from unsupported python object. "
                    "Can only scan from pandas/polars dataframes and pyarrow tables."
                )
                raise RuntimeError(msg)
            result[name] = value
    for key, value in result.items():
        if is_frame(value):
            result[key] = to_columns(value)
    return result

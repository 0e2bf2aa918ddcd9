"""Whole results as pandas, pyarrow and polars frames.

Columns cross from Rust as Python values, one column at a time; fixed-width columns become numpy
arrays of the matching dtype (see docs/PYTHON.md for the full type mapping).
"""

from __future__ import annotations

from typing import Any

_NUMPY_DTYPES = {
    "BOOL": "bool",
    "INT8": "int8",
    "INT16": "int16",
    "INT32": "int32",
    "INT64": "int64",
    "SERIAL": "int64",
    "UINT8": "uint8",
    "UINT16": "uint16",
    "UINT32": "uint32",
    "UINT64": "uint64",
    "FLOAT": "float32",
    "DOUBLE": "float64",
    "INT128": "float64",
}

_TEMPORAL_DTYPES = {
    "DATE": "datetime64[us]",
    "TIMESTAMP": "datetime64[us]",
    "TIMESTAMP_TZ": "datetime64[us]",
    "TIMESTAMP_NS": "datetime64[ns]",
    "TIMESTAMP_MS": "datetime64[ms]",
    "TIMESTAMP_SEC": "datetime64[s]",
    "INTERVAL": "timedelta64[ns]",
}


def _pandas_column(values: list[Any], type_name: str) -> Any:
    """One column as a numpy array (fixed-width types) or a list of Python objects."""
    import numpy as np

    has_null = any(v is None for v in values)
    if type_name in _NUMPY_DTYPES:
        dtype = _NUMPY_DTYPES[type_name]
        if not has_null:
            return np.array(values, dtype=dtype)
        if dtype.startswith(("float", "int", "uint")):
            return np.array([np.nan if v is None else float(v) for v in values], dtype="float64")
        return np.array(values, dtype=object)
    if type_name in _TEMPORAL_DTYPES:
        dtype = _TEMPORAL_DTYPES[type_name]
        if type_name == "TIMESTAMP_TZ":
            values = [None if v is None else v.replace(tzinfo=None) for v in values]
        if type_name == "DATE":
            values = [None if v is None else np.datetime64(v, "D") for v in values]
        return np.array([np.datetime64("NaT") if v is None and dtype[0] == "d" else v for v in values], dtype=dtype)
    column = np.empty(len(values), dtype=object)
    column[:] = values
    return column


def to_pandas(native: Any) -> Any:
    """Every row of the result as a pandas DataFrame."""
    import pandas as pd

    names = native.get_column_names()
    types = native.get_column_data_types()
    columns = {
        name: _pandas_column(native.column_values(index), type_name)
        for index, (name, type_name) in enumerate(zip(names, types))
    }
    return pd.DataFrame(columns, columns=names)


def _arrow_type(type_name: str) -> Any:
    """The Arrow type of a scalar Kùzu type, or ``None`` to let pyarrow infer a nested one."""
    import pyarrow as pa

    scalars = {
        "BOOL": pa.bool_(),
        "INT8": pa.int8(),
        "INT16": pa.int16(),
        "INT32": pa.int32(),
        "INT64": pa.int64(),
        "SERIAL": pa.int64(),
        "UINT8": pa.uint8(),
        "UINT16": pa.uint16(),
        "UINT32": pa.uint32(),
        "UINT64": pa.uint64(),
        "FLOAT": pa.float32(),
        "DOUBLE": pa.float64(),
        "STRING": pa.string(),
        "BLOB": pa.binary(),
        "DATE": pa.date32(),
        "TIMESTAMP": pa.timestamp("us"),
        "TIMESTAMP_TZ": pa.timestamp("us", tz="UTC"),
        "TIMESTAMP_NS": pa.timestamp("ns"),
        "TIMESTAMP_MS": pa.timestamp("ms"),
        "TIMESTAMP_SEC": pa.timestamp("s"),
        "INTERVAL": pa.month_day_nano_interval(),
        "UUID": pa.string(),
    }
    return scalars.get(type_name)


def _arrow_values(values: list[Any], type_name: str) -> list[Any]:
    """Adjusts Python values to what pyarrow expects for the column's Arrow type."""
    if type_name == "UUID":
        return [None if v is None else str(v) for v in values]
    if type_name == "INTERVAL":
        return [None if v is None else (0, v.days, (v.seconds * 1_000_000 + v.microseconds) * 1000) for v in values]
    return values


def to_arrow(native: Any, chunk_size: int | None) -> Any:
    """Every row of the result as a pyarrow Table of record batches of ``chunk_size`` rows."""
    import pyarrow as pa

    names = native.get_column_names()
    types = native.get_column_data_types()
    arrays = []
    for index, type_name in enumerate(types):
        values = _arrow_values(native.column_values(index), type_name)
        arrays.append(pa.array(values, type=_arrow_type(type_name)))
    table = pa.Table.from_arrays(arrays, names=names)
    if chunk_size is not None and chunk_size > 0:
        table = pa.Table.from_batches(table.to_batches(max_chunksize=chunk_size), schema=table.schema)
    return table

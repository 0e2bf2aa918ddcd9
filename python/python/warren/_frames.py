"""Whole results as pandas, pyarrow and polars frames.

Results whose columns all have an Arrow form here (numbers, booleans, strings, dates and times)
cross from Rust as Arrow arrays built from the engine's column batches, through the Arrow C data
interface; others cross as Python values, one column at a time, fixed-width columns becoming
numpy arrays of the matching dtype (see docs/PYTHON.md for the full type mapping).
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
    import pandas as pd

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
    return pd.Series(values, dtype=object)


def _pandas_column_of(native: Any, index: int, type_name: str) -> Any:
    """Column ``index``: numeric, boolean and string columns through Arrow, the others as values."""
    import numpy as np
    import pandas as pd

    if type_name in _NUMPY_DTYPES:
        array = native.column_arrow(index)
        if array is not None:
            if array.null_count == 0:
                return array.to_numpy(zero_copy_only=False).astype(_NUMPY_DTYPES[type_name], copy=False)
            if type_name != "BOOL":
                return array.to_numpy(zero_copy_only=False).astype("float64")
            return np.array(array.to_pylist(), dtype=object)
    if type_name == "STRING":
        array = native.column_arrow(index)
        if array is not None:
            return pd.Series(array.to_numpy(zero_copy_only=False), dtype=object)
    return _pandas_column(native.column_values(index), type_name)


def _pandas_column_from_arrow(array: Any, type_name: str) -> Any:
    """One column built from a pyarrow array, by the same rules as ``_pandas_column_of``."""
    import numpy as np
    import pandas as pd

    if type_name in _NUMPY_DTYPES:
        if array.null_count == 0:
            return array.to_numpy(zero_copy_only=False).astype(_NUMPY_DTYPES[type_name], copy=False)
        if type_name != "BOOL":
            return array.to_numpy(zero_copy_only=False).astype("float64")
        return np.array(array.to_pylist(), dtype=object)
    if type_name == "STRING":
        return pd.Series(array.to_numpy(zero_copy_only=False), dtype=object)
    return None


def _copy_on_write(pd: Any) -> bool:
    """Whether pandas copies a frame's arrays before writing to them (always from pandas 3)."""
    if int(pd.__version__.split(".")[0]) >= 3:
        return True
    return getattr(pd.options.mode, "copy_on_write", False) is True


def to_pandas(native: Any) -> Any:
    """Every row of the result as a pandas DataFrame: numeric, boolean and string columns from
    the result's column batches through Arrow when every column has that form, else column by
    column from values."""
    import pandas as pd

    names = native.get_column_names()
    types = native.get_column_data_types()
    if names and all(t in _NUMPY_DTYPES or t == "STRING" for t in types):
        chunks = native.arrow_chunks(None)
        if chunks is not None:
            converted = [_pandas_column_from_arrow(array, t) for array, t in zip(chunks[0], types)]
            if all(c is not None for c in converted):
                # Under copy-on-write the (read-only, Arrow-backed) arrays can stay as they are;
                # older pandas gets writable copies, as Kùzu's frames are.
                copy = not _copy_on_write(pd)
                return pd.DataFrame(dict(zip(names, converted)), columns=names, copy=copy)
    columns = {
        name: _pandas_column_of(native, index, type_name) for index, (name, type_name) in enumerate(zip(names, types))
    }
    return pd.DataFrame(columns, columns=names)


def to_arrow(native: Any, chunk_size: int | None, *, uuid_as_string: bool = False) -> Any:
    """Every row of the result as a pyarrow Table of record batches of ``chunk_size`` rows;
    ``uuid_as_string`` gives UUIDs as strings instead of Arrow's UUID extension type."""
    import pyarrow as pa

    from ._arrow import MapNullKeyError, build, column_array, has_union

    names = native.get_column_names()
    if names:
        chunks = native.arrow_chunks(chunk_size)
        if chunks is not None:
            batches = [pa.RecordBatch.from_arrays(arrays, names=names) for arrays in chunks]
            return pa.Table.from_batches(batches, schema=batches[0].schema)
    arrays = []
    for index in range(len(names)):
        fast = native.column_arrow(index)
        if fast is not None:
            arrays.append(fast)
            continue
        tree = native.column_type_tree(index)
        if has_union(tree):
            arrays.append(build(native.column_values(index, tagged_unions=True), tree, uuid_as_string=uuid_as_string))
            continue
        values = native.column_values(index)
        try:
            arrays.append(column_array(values, tree, uuid_as_string=uuid_as_string))
        except MapNullKeyError:
            row = next(r for r, v in enumerate(values) if v is not None and None in v)
            msg = f"Cannot convert map with null key to Arrow: {native.format_value(row, index)}"
            raise RuntimeError(msg) from None
    table = pa.Table.from_arrays(arrays, names=names)
    return _rechunk(table, chunk_size)


def _rechunk(table: Any, chunk_size: int | None) -> Any:
    """Record batches of ``chunk_size`` rows, the remainder joining the last full batch (as
    Kùzu's chunks do); a single batch when ``chunk_size`` is ``None`` or not positive."""
    import pyarrow as pa

    rows = table.num_rows
    if chunk_size is None or chunk_size <= 0 or rows <= chunk_size:
        return table.combine_chunks()
    starts = list(range(0, rows - rows % chunk_size, chunk_size))
    ends = [*starts[1:], rows]
    batches = [table.slice(s, e - s).combine_chunks().to_batches()[0] for s, e in zip(starts, ends)]
    return pa.Table.from_batches(batches, schema=table.schema)

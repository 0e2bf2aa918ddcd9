"""Arrow types and arrays for result columns, built from the column type trees of the native
result (see python/src/type_tree.rs). Values cross as Python objects; UUIDs are built as their
16-byte storage and cast to Arrow's UUID extension type, so that they nest inside structs.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pyarrow as pa

from .constants import DST, ID, LABEL, NODES, RELS, SRC

_INTERNAL_ID = pa.struct([("offset", pa.int64()), ("table", pa.int64())])

_SCALARS = {
    "ANY": pa.null(),
    "BOOL": pa.bool_(),
    "INT8": pa.int8(),
    "INT16": pa.int16(),
    "INT32": pa.int32(),
    "INT64": pa.int64(),
    "SERIAL": pa.int64(),
    "INT128": pa.decimal128(38, 0),
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
    "INTERVAL": pa.duration("us"),
    "INTERNAL_ID": _INTERNAL_ID,
}


class MapNullKeyError(RuntimeError):
    """A MAP value has a NULL key, which Arrow maps cannot hold."""


def arrow_type(tree: Any, *, storage: bool = False, uuid_as_string: bool = False) -> pa.DataType:
    """The Arrow type of a column type tree; ``storage`` gives UUIDs as ``binary(16)``, and
    ``uuid_as_string`` as strings (for polars, which has no UUID type)."""
    if isinstance(tree, str):
        if tree == "UUID":
            if uuid_as_string:
                return pa.string()
            return pa.binary(16) if storage else pa.uuid()
        return _SCALARS[tree]
    kind = tree[0]
    if kind == "LIST":
        return pa.list_(arrow_type(tree[1], storage=storage, uuid_as_string=uuid_as_string))
    if kind == "ARRAY":
        return pa.list_(arrow_type(tree[1], storage=storage, uuid_as_string=uuid_as_string), tree[2])
    if kind == "DECIMAL":
        return pa.decimal128(tree[1], tree[2])
    if kind == "MAP":
        return pa.map_(
            arrow_type(tree[1], storage=storage, uuid_as_string=uuid_as_string),
            arrow_type(tree[2], storage=storage, uuid_as_string=uuid_as_string),
        )
    if kind in {"STRUCT", "NODE", "REL"}:
        return pa.struct(_fields(tree, storage=storage, uuid_as_string=uuid_as_string))
    if kind == "UNION":
        members = [
            pa.field(name, arrow_type(child, storage=storage, uuid_as_string=uuid_as_string)) for name, child in tree[1]
        ]
        return pa.dense_union(members)
    if kind == "RECURSIVE_REL":
        node, rel = (
            arrow_type(tree[1], storage=storage, uuid_as_string=uuid_as_string),
            arrow_type(tree[2], storage=storage, uuid_as_string=uuid_as_string),
        )
        return pa.struct([(NODES, pa.list_(node)), (RELS, pa.list_(rel))])
    msg = f"{kind} columns cannot be converted to Arrow yet."
    raise RuntimeError(msg)


def _header(kind: str) -> list[tuple[str, Any]]:
    """The fields a node or rel struct starts with."""
    if kind == "NODE":
        return [(ID, "INTERNAL_ID"), (LABEL, "STRING")]
    if kind == "REL":
        return [(SRC, "INTERNAL_ID"), (DST, "INTERNAL_ID"), (LABEL, "STRING"), (ID, "INTERNAL_ID")]
    return []


def _fields(tree: Any, *, storage: bool, uuid_as_string: bool) -> list[tuple[str, pa.DataType]]:
    members = _header(tree[0]) + list(tree[1])
    return [(name, arrow_type(child, storage=storage, uuid_as_string=uuid_as_string)) for name, child in members]


def storage_value(value: Any, tree: Any, *, uuid_as_string: bool = False) -> Any:
    """``value`` in the form pyarrow builds the storage type of ``tree`` from."""
    if value is None:
        return None
    if isinstance(tree, str):
        if tree == "UUID":
            return str(value) if uuid_as_string else value.bytes
        if tree == "INT128":
            return Decimal(value)
        return value
    kind = tree[0]
    if kind in {"LIST", "ARRAY"}:
        return [storage_value(v, tree[1], uuid_as_string=uuid_as_string) for v in value]
    if kind == "MAP":
        if any(k is None for k in value):
            raise MapNullKeyError
        return [
            (
                storage_value(k, tree[1], uuid_as_string=uuid_as_string),
                storage_value(v, tree[2], uuid_as_string=uuid_as_string),
            )
            for k, v in value.items()
        ]
    if kind in {"STRUCT", "NODE", "REL"}:
        members = _header(kind) + list(tree[1])
        return {name: storage_value(value.get(name), child, uuid_as_string=uuid_as_string) for name, child in members}
    if kind == "RECURSIVE_REL":
        return {
            NODES: [storage_value(n, tree[1], uuid_as_string=uuid_as_string) for n in value[NODES]],
            RELS: [storage_value(r, tree[2], uuid_as_string=uuid_as_string) for r in value[RELS]],
        }
    return value


def column_array(values: list[Any], tree: Any, *, uuid_as_string: bool = False) -> pa.Array:
    """One column as an Arrow array of the exact type of ``tree``."""
    storage_type = arrow_type(tree, storage=True, uuid_as_string=uuid_as_string)
    array = pa.array([storage_value(v, tree, uuid_as_string=uuid_as_string) for v in values], type=storage_type)
    final_type = arrow_type(tree, uuid_as_string=uuid_as_string)
    return array if final_type == storage_type else array.cast(final_type)


def has_union(tree: Any) -> bool:
    """Whether a UNION occurs anywhere in ``tree``."""
    if isinstance(tree, str):
        return False
    if tree[0] == "UNION":
        return True
    if tree[0] in {"STRUCT", "NODE", "REL"}:
        return any(has_union(child) for _, child in tree[1])
    if tree[0] == "DECIMAL":
        return False
    return any(has_union(child) for child in tree[1:] if not isinstance(child, int))


def build(values: list[Any], tree: Any, *, uuid_as_string: bool = False) -> pa.Array:
    """An Arrow array assembled bottom-up from its children, for trees with a UNION somewhere
    (pyarrow cannot build unions from Python values); UNION values come as ``(tag, value)``."""
    if isinstance(tree, str) or not has_union(tree):
        return column_array(values, tree, uuid_as_string=uuid_as_string)
    kind = tree[0]
    mask = pa.array([v is None for v in values], type=pa.bool_())
    if kind == "UNION":
        return _build_union(values, tree, uuid_as_string=uuid_as_string)
    if kind in {"STRUCT", "NODE", "REL"}:
        members = _header(kind) + list(tree[1])
        children = [
            build([None if v is None else v.get(name) for v in values], child, uuid_as_string=uuid_as_string)
            for name, child in members
        ]
        fields = [pa.field(name, child.type) for (name, _), child in zip(members, children)]
        return pa.StructArray.from_arrays(children, fields=fields, mask=mask)
    if kind in {"LIST", "ARRAY"}:
        offsets, flat = [0], []
        for v in values:
            flat.extend(v if v is not None else ([None] * tree[2] if kind == "ARRAY" else []))
            offsets.append(len(flat))
        child = build(flat, tree[1], uuid_as_string=uuid_as_string)
        if kind == "ARRAY":
            return pa.FixedSizeListArray.from_arrays(child, tree[2], mask=mask)
        return pa.ListArray.from_arrays(pa.array(offsets, type=pa.int32()), child, mask=mask)
    if kind == "RECURSIVE_REL":
        nodes = build(
            [None if v is None else v[NODES] for v in values], ("LIST", tree[1]), uuid_as_string=uuid_as_string
        )
        rels = build([None if v is None else v[RELS] for v in values], ("LIST", tree[2]), uuid_as_string=uuid_as_string)
        return pa.StructArray.from_arrays([nodes, rels], names=[NODES, RELS], mask=mask)
    msg = f"{kind} columns holding UNIONs cannot be converted to Arrow yet."
    raise RuntimeError(msg)


def _build_union(values: list[Any], tree: Any, *, uuid_as_string: bool) -> pa.Array:
    """A dense union; a NULL is a NULL of the first member (Arrow unions have no validity)."""
    names = [name for name, _ in tree[1]]
    members: list[list[Any]] = [[] for _ in names]
    type_ids, offsets = [], []
    for value in values:
        tag, member = (names[0], None) if value is None else value
        index = names.index(tag)
        type_ids.append(index)
        offsets.append(len(members[index]))
        members[index].append(member)
    children = [
        build(member_values, child, uuid_as_string=uuid_as_string)
        for member_values, (_, child) in zip(members, tree[1])
    ]
    return pa.UnionArray.from_dense(
        pa.array(type_ids, type=pa.int8()),
        pa.array(offsets, type=pa.int32()),
        children,
        field_names=names,
    )

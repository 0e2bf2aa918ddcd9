"""The Kùzu type names of a Python user function's parameters and result, as declared or as
inferred from its annotations."""

from __future__ import annotations

import datetime
import decimal
import inspect
import types
import typing
import uuid
from typing import Any

# Checked in order: `bool` before `int` and `datetime` before `date` (each is a subclass).
_SCALAR_TYPES: list[tuple[type, str]] = [
    (bool, "BOOL"),
    (int, "INT64"),
    (float, "DOUBLE"),
    (str, "STRING"),
    (bytes, "BLOB"),
    (datetime.datetime, "TIMESTAMP"),
    (datetime.date, "DATE"),
    (datetime.timedelta, "INTERVAL"),
    (uuid.UUID, "UUID"),
    (decimal.Decimal, "DOUBLE"),
]


def signature_types(
    name: str, udf: Any, params_type: list[Any] | None, return_type: Any
) -> tuple[list[str], str]:
    """The parameter type names and the return type name of ``udf``."""
    if not callable(udf):
        msg = f"Catalog exception: {name} is not a callable Python object."
        raise RuntimeError(msg)
    parameters = _positional_parameters(udf)
    hints = _type_hints(udf)
    if params_type:
        if len(params_type) != len(parameters):
            msg = (
                f"Catalog exception: {name} has {len(parameters)} parameters but "
                f"{len(params_type)} parameter types were given."
            )
            raise RuntimeError(msg)
        names = [_declared(t) for t in params_type]
    else:
        names = [_inferred(name, p, hints.get(p, inspect.Parameter.empty)) for p in parameters]
    returns = _declared(return_type) if return_type not in ("", None) else None
    if returns is None:
        returns = _inferred(name, "return", hints.get("return", inspect.Parameter.empty))
    return names, returns


def _positional_parameters(udf: Any) -> list[str]:
    kinds = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    signature = inspect.signature(udf)
    return [p.name for p in signature.parameters.values() if p.kind in kinds]


def _type_hints(udf: Any) -> dict[str, Any]:
    """Annotations with strings (``from __future__ import annotations``) evaluated."""
    try:
        return typing.get_type_hints(udf)
    except Exception:  # noqa: BLE001 - an annotation that does not evaluate is left as written
        return dict(getattr(udf, "__annotations__", {}))


def _declared(ty: Any) -> str:
    """A ``Type`` value or a type name."""
    return str(getattr(ty, "value", ty))


def _inferred(name: str, parameter: str, annotation: Any) -> str:
    type_name = _type_name(annotation)
    if type_name is None:
        what = "return type" if parameter == "return" else f"type of parameter {parameter}"
        found = f"annotation {annotation!r}"
        if annotation is inspect.Parameter.empty:
            found = "no annotation"
        msg = (
            f"Catalog exception: Could not infer the {what} of {name} from {found}; "
            "declare it in params_type or return_type."
        )
        raise RuntimeError(msg)
    return type_name


def _type_name(annotation: Any) -> str | None:
    """The Kùzu type of a Python annotation, or ``None`` when there is none."""
    if annotation is inspect.Parameter.empty or annotation is None:
        return None
    if isinstance(annotation, str):
        return _type_name(_builtin_type(annotation))
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin in (list, tuple) and args:
        element = _type_name(args[0])
        return None if element is None else f"{element}[]"
    if origin is dict and len(args) == 2:
        key, value = _type_name(args[0]), _type_name(args[1])
        return None if key is None or value is None else f"MAP({key}, {value})"
    if origin in (typing.Union, types.UnionType):
        members = [a for a in args if a is not type(None)]
        return _type_name(members[0]) if len(members) == 1 else None
    for python_type, type_name in _SCALAR_TYPES:
        if annotation is python_type:
            return type_name
    if hasattr(annotation, "value") and isinstance(annotation.value, str):
        return annotation.value
    return None


def _builtin_type(text: str) -> Any:
    """A string annotation naming a built-in scalar type, e.g. ``"int"``."""
    for python_type, _ in _SCALAR_TYPES:
        if text in (python_type.__name__, f"{python_type.__module__}.{python_type.__qualname__}"):
            return python_type
    return None

"""Connections to a Warren server (``warren serve``): ``warren.connect("http://127.0.0.1:7878")``.

A remote connection has the embedded ``Connection``'s ``execute`` and returns the same
``QueryResult`` (cursor, ``get_as_arrow``, ``get_as_df``, ``get_as_pl``, ``get_as_networkx``),
its values converted exactly as the embedded ones. The answer travels in Warren's binary wire
format and is decoded in Rust (``warren-client``); see docs/PYTHON.md, "Remote connections".
"""

from __future__ import annotations

import json
import math
from typing import Any

from . import _warren
from .prepared_statement import PreparedStatement
from .query_result import QueryResult

#: The default limit, in seconds, on connecting and on each wait for the server's bytes: longer
#: than the server's own 30 s query deadline, so that the server's error arrives first.
DEFAULT_TIMEOUT_S = 60.0

_SUPPORTED = "None, bool, int, float, str, and lists, tuples and dicts (with str keys) of them"


def _json_value(value: Any, name: str) -> Any:
    """``value`` checked to be one JSON carries as the server reads it (integers INT64, other
    numbers DOUBLE, strings STRING, lists lists, dicts structs, None NULL)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            msg = f"Parameter {name}: {value} cannot be sent to a server (JSON has no NaN or infinity)."
            raise RuntimeError(msg)
        return value
    if isinstance(value, (list, tuple)):
        return [_json_value(v, name) for v in value]
    if isinstance(value, dict):
        if not all(isinstance(k, str) for k in value):
            msg = f"Parameter {name}: a dict sent to a server needs str keys."
            raise RuntimeError(msg)
        return {k: _json_value(v, name) for k, v in value.items()}
    msg = (
        f"Parameter {name}: a value of type {type(value).__name__} cannot be sent to a server "
        f"(supported: {_SUPPORTED})."
    )
    raise RuntimeError(msg)


def parameters_json(parameters: dict[str, Any] | None) -> str:
    """The parameters as the JSON object of a ``POST /query`` body."""
    if parameters is None:
        return "{}"
    if not isinstance(parameters, dict):
        msg = f"Parameters must be a dict, got {type(parameters).__name__}."
        raise RuntimeError(msg)
    checked = {}
    for name, value in parameters.items():
        if not isinstance(name, str):
            msg = f"Parameter names must be strings, got {name!r}."
            raise RuntimeError(msg)
        checked[name] = _json_value(value, name)
    return json.dumps(checked)


class RemoteConnection:
    """A connection to a Warren server; results stream as they are read.

    Each ``execute`` is one request, hence one transaction on the server; a query of several
    ``;``-separated statements returns the last statement's result (the server answers that one).
    """

    def __init__(self, url: str, token: str | None = None, timeout: float | None = DEFAULT_TIMEOUT_S) -> None:
        self.url = url
        self.is_closed = False
        self._connection: Any = _warren.RemoteConnection(url, token, timeout)

    def __enter__(self) -> RemoteConnection:
        return self

    def __exit__(self, exc_type: object, exc_value: object, traceback: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"RemoteConnection({self.url!r})"

    def close(self) -> None:
        """Closes the idle connections; closing twice is harmless. Results already returned
        can still be read to their end."""
        if not self.is_closed:
            self.is_closed = True
            self._connection.close()

    def execute(
        self,
        query: str | PreparedStatement,
        parameters: dict[str, Any] | None = None,
    ) -> QueryResult:
        """Runs ``query`` on the server with ``parameters`` (see ``parameters_json`` for the
        types a parameter may have) and returns its result once the server has answered."""
        if self.is_closed:
            msg = "Connection is closed."
            raise RuntimeError(msg)
        if isinstance(query, PreparedStatement):
            query = query.query
        if not isinstance(query, str):
            msg = f"query must be a string or a PreparedStatement, got {type(query)}"
            raise RuntimeError(msg)
        native = self._connection.execute(query, parameters_json(parameters))
        return QueryResult(self, native)  # type: ignore[arg-type]


def connect(url: str, token: str | None = None, timeout: float | None = DEFAULT_TIMEOUT_S) -> RemoteConnection:
    """Connects to the Warren server at ``url`` (``http://host:port``). ``token`` is sent as
    ``Authorization: Bearer <token>``; ``timeout`` (seconds, ``None`` for no limit) bounds
    connecting and each wait for the server's bytes. Raises ``ConnectionError`` naming the URL
    when the server cannot be reached."""
    return RemoteConnection(url, token, timeout)

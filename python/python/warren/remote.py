"""Connections to a Warren server (``warren serve``): ``warren.connect("http://127.0.0.1:7878")``.

A remote connection has the embedded ``Connection``'s ``execute`` and returns the same
``QueryResult`` (cursor, ``get_as_arrow``, ``get_as_df``, ``get_as_pl``, ``get_as_networkx``),
its values converted exactly as the embedded ones. The answer travels in Warren's binary wire
format and is decoded in Rust (``warren-client``); see docs/PYTHON.md, "Remote connections".
"""

from __future__ import annotations

from typing import Any

from . import _warren
from .prepared_statement import PreparedStatement
from .query_result import QueryResult

#: The default limit, in seconds, on connecting and on each wait for the server's bytes: longer
#: than the server's own 30 s query deadline, so that the server's error arrives first.
DEFAULT_TIMEOUT_S = 60.0


class RemoteConnection:
    """A connection to a Warren server; results stream as they are read.

    Each ``execute`` is one request, hence one transaction on the server. As the embedded
    ``Connection``, a query of several ``;``-separated statements returns a list with one
    ``QueryResult`` per statement, and parameters may be of every type the embedded one takes
    (dates, timestamps, intervals, UUIDs, decimals, bytes, lists, dicts): they travel typed.
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

    def _check_usable(self) -> None:
        if self.is_closed:
            msg = "Connection is closed."
            raise RuntimeError(msg)

    def prepare(self, query: str, parameters: dict[str, Any] | None = None) -> PreparedStatement:
        """Prepares ``query`` to be run with ``execute``: parsed here (syntax errors show in
        the statement, as on the embedded connection), bound and run on the server."""
        del parameters
        self._check_usable()
        return PreparedStatement(self, query)  # type: ignore[arg-type]

    def interrupt(self) -> None:
        """Stops the queries of this connection still running on the server (call it from
        another thread); each raises the embedded connection's interrupt error."""
        self._connection.interrupt()

    def execute(
        self,
        query: str | PreparedStatement,
        parameters: dict[str, Any] | None = None,
    ) -> QueryResult | list[QueryResult]:
        """Runs ``query`` (one statement or several separated by ``;``) on the server with
        ``parameters`` and returns its result once the server has answered; a list of them when
        the query has several statements."""
        self._check_usable()
        if isinstance(query, PreparedStatement):
            query = query.query
        if not isinstance(query, str):
            msg = f"query must be a string or a PreparedStatement, got {type(query)}"
            raise RuntimeError(msg)
        natives = self._connection.execute(query, parameters)
        results = [QueryResult(self, native) for native in natives]  # type: ignore[arg-type]
        return results[0] if len(results) == 1 else results


def connect(url: str, token: str | None = None, timeout: float | None = DEFAULT_TIMEOUT_S) -> RemoteConnection:
    """Connects to the Warren server at ``url`` (``http://host:port``). ``token`` is sent as
    ``Authorization: Bearer <token>``; ``timeout`` (seconds, ``None`` for no limit) bounds
    connecting and each wait for the server's bytes. Raises ``ConnectionError`` naming the URL
    when the server cannot be reached."""
    return RemoteConnection(url, token, timeout)

"""Connection: runs Cypher statements against a database."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _scan, _udf, _warren
from .prepared_statement import PreparedStatement
from .query_result import QueryResult

if TYPE_CHECKING:
    from collections.abc import Callable

    from .database import Database


class Connection:
    """A connection to a database; use one per thread (a connection runs one query at a time).

    Queries run with the GIL released, so connections in other threads run in parallel.
    """

    def __init__(self, database: Database, num_threads: int = 0) -> None:
        self.database = database
        self.num_threads = num_threads
        self.is_closed = False
        self._connection: Any = None
        self.init_connection()

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, exc_type: object, exc_value: object, traceback: object) -> None:
        self.close()

    def init_connection(self) -> None:
        """Opens the native connection (the constructor does this)."""
        self.database.init_database()
        if self._connection is None:
            self._connection = _warren.Connection(self.database._database)
            if self.num_threads > 0:
                self.set_max_threads_for_exec(self.num_threads)

    def _check_usable(self) -> None:
        if self.database.is_closed:
            msg = "Database is closed"
            raise RuntimeError(msg)
        if self.is_closed:
            msg = "Connection is closed."
            raise RuntimeError(msg)

    def close(self) -> None:
        """Closes the connection; closing twice is harmless."""
        if self.is_closed:
            return
        self.is_closed = True
        if self._connection is not None:
            self._connection.close()
            self._connection = None

    def set_max_threads_for_exec(self, num_threads: int) -> None:
        """Sets how many threads one query may use."""
        self._check_usable()
        self._connection.set_max_threads(num_threads)

    def set_query_timeout(self, timeout_in_ms: int) -> None:
        """Stops queries that run longer than ``timeout_in_ms`` milliseconds (0 for no limit)."""
        self._check_usable()
        self._connection.set_timeout(timeout_in_ms)

    def interrupt(self) -> None:
        """Stops the query running on this connection (call it from another thread)."""
        if self._connection is not None:
            self._connection.interrupt()

    def prepare(self, query: str, parameters: dict[str, Any] | None = None) -> PreparedStatement:
        """Prepares ``query`` to be run with ``execute``."""
        del parameters
        self._check_usable()
        return PreparedStatement(self, query)

    def execute(
        self,
        query: str | PreparedStatement,
        parameters: dict[str, Any] | None = None,
    ) -> QueryResult | list[QueryResult]:
        """Runs ``query`` (one statement or several separated by ``;``) with ``parameters``.

        Returns a ``QueryResult``, or a list of them when the query has several statements.
        """
        self._check_usable()
        if isinstance(query, PreparedStatement):
            query = query.query
        if not isinstance(query, str):
            msg = f"query must be a string or a PreparedStatement, got {type(query)}"
            raise RuntimeError(msg)
        if parameters is None:
            parameters = {}
        if isinstance(parameters, dict):
            parameters = _scan.with_frames(query, parameters)
        results = [QueryResult(self, r) for r in self._connection.execute(query, parameters)]
        return results[0] if len(results) == 1 else results

    def create_function(
        self,
        name: str,
        udf: Callable[..., Any],
        params_type: list[Any] | None = None,
        return_type: Any = "",
        *,
        default_null_handling: bool = True,
        catch_exceptions: bool = False,
    ) -> None:
        """Defines the scalar function ``name`` that calls ``udf`` once per row.

        ``params_type`` and ``return_type`` are ``Type`` values or type names such as
        ``"MAP(STRING, INT64)"``; when omitted they are inferred from ``udf``'s annotations
        (``int`` is INT64, ``float`` DOUBLE, ``str`` STRING, ``list[int]`` INT64[],
        ``dict[str, int]`` MAP(STRING, INT64), ...). With ``default_null_handling`` a NULL
        argument gives NULL without calling ``udf``; with ``catch_exceptions`` an exception
        raised by ``udf`` gives NULL instead of failing the query.
        """
        self._check_usable()
        parameters, returns = _udf.signature_types(name, udf, params_type, return_type)
        self._connection.create_function(
            name, udf, parameters, returns, default_null_handling, catch_exceptions
        )

    def remove_function(self, name: str) -> None:
        """Removes a function defined with ``create_function``."""
        self._check_usable()
        self._connection.remove_function(name)

"""PreparedStatement: a statement checked once and run many times with parameters."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .connection import Connection


class PreparedStatement:
    """A query prepared on a connection; pass it to ``Connection.execute`` with parameters.

    Warren binds a statement against the parameters' types when it runs, so preparing parses the
    text (syntax errors show here) and running binds and executes it.
    """

    def __init__(self, connection: Connection, query: str) -> None:
        self._connection = connection
        self.query = query
        self._error: str | None = connection._connection.check_syntax(query)

    def is_success(self) -> bool:
        """Whether the statement parsed."""
        return self._error is None

    def get_error_message(self) -> str:
        """The parse error, or an empty string."""
        return self._error or ""

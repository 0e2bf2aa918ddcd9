"""Warren: an embeddable graph database for recursive path queries, with Kùzu's Python API.

>>> import warren
>>> db = warren.Database()            # in memory; pass a directory path to persist
>>> conn = warren.Connection(db)
>>> conn.execute("RETURN 1 + 1 AS two").get_next()
[2]

``warren.connect("http://127.0.0.1:7878")`` gives a connection to a server (``warren serve``)
with the same ``execute`` and ``QueryResult``.
"""

from __future__ import annotations

from . import constants
from ._warren import __version__, storage_version
from .async_connection import AsyncConnection
from .connection import Connection
from .database import Database
from .prepared_statement import PreparedStatement
from .query_result import QueryResult
from .remote import RemoteConnection, connect
from .types import Type

version = __version__

__all__ = [
    "AsyncConnection",
    "Connection",
    "Database",
    "PreparedStatement",
    "QueryResult",
    "RemoteConnection",
    "Type",
    "__version__",
    "connect",
    "constants",
    "storage_version",
    "version",
]

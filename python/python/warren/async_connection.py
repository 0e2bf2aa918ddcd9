"""AsyncConnection: a pool of connections that runs queries for asyncio code."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from . import _scan
from .connection import Connection

if TYPE_CHECKING:
    from .database import Database
    from .prepared_statement import PreparedStatement
    from .query_result import QueryResult


class AsyncConnection:
    """Runs queries on a pool of ``max_concurrent_queries`` connections in worker threads.

    Each ``execute`` borrows the least busy connection; since Warren releases the GIL while a
    query runs, queries on different connections run in parallel.
    """

    def __init__(
        self,
        database: Database,
        max_concurrent_queries: int = 4,
        max_threads_per_query: int = 0,
    ) -> None:
        self.database = database
        self.max_concurrent_queries = max_concurrent_queries
        self.connections = [Connection(database, max_threads_per_query) for _ in range(max_concurrent_queries)]
        self.connections_counter = [0] * max_concurrent_queries
        self.lock = threading.Lock()
        self.executor = ThreadPoolExecutor(max_workers=max_concurrent_queries)

    def __enter__(self) -> AsyncConnection:
        return self

    def __exit__(self, exc_type: object, exc_value: object, traceback: object) -> None:
        self.close()

    def acquire_connection(self) -> Connection:
        """Borrows the connection with the fewest queries in flight."""
        with self.lock:
            index = min(range(self.max_concurrent_queries), key=self.connections_counter.__getitem__)
            self.connections_counter[index] += 1
        return self.connections[index]

    def release_connection(self, conn: Connection) -> None:
        """Returns a connection borrowed with ``acquire_connection``."""
        with self.lock:
            for index, candidate in enumerate(self.connections):
                if candidate is conn:
                    self.connections_counter[index] -= 1
                    return

    def set_query_timeout(self, timeout_in_ms: int) -> None:
        """Sets the timeout of every pooled connection."""
        for conn in self.connections:
            conn.set_query_timeout(timeout_in_ms)

    def _run(self, query: str | PreparedStatement, parameters: dict[str, Any] | None) -> Any:
        conn = self.acquire_connection()
        try:
            return conn.execute(query, parameters)
        finally:
            self.release_connection(conn)

    async def execute(
        self,
        query: str | PreparedStatement,
        parameters: dict[str, Any] | None = None,
    ) -> QueryResult | list[QueryResult]:
        """Runs ``query`` in a worker thread and returns its result(s). Data frames named in the
        query are looked up among the caller's variables here, before the query leaves for the
        worker thread."""
        if isinstance(query, str) and (parameters is None or isinstance(parameters, dict)):
            parameters = _scan.with_frames(query, parameters or {})
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, self._run, query, parameters)

    async def prepare(self, query: str, parameters: dict[str, Any] | None = None) -> PreparedStatement:
        """Prepares ``query`` on one of the pooled connections."""
        conn = self.acquire_connection()
        try:
            return conn.prepare(query, parameters)
        finally:
            self.release_connection(conn)

    def close(self) -> None:
        """Waits for running queries, then closes the pool's connections."""
        self.executor.shutdown(wait=True)
        for conn in self.connections:
            conn.close()

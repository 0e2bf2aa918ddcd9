"""Database: an open Warren database (a directory on disk, or in memory)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from . import _warren

_MIN_BUFFER_POOL_BYTES = 4096
_MIN_DB_BYTES = 8 * 1024 * 1024
_DEFAULT_MAX_DB_BYTES = 1 << 43


def _check_sizes(buffer_pool_size: int, max_db_size: int) -> None:
    """Rejects the sizes Kùzu rejects, with Kùzu's messages."""
    if 0 < buffer_pool_size < _MIN_BUFFER_POOL_BYTES:
        msg = f"Buffer manager exception: The given buffer pool size should be at least {_MIN_BUFFER_POOL_BYTES} bytes."
        raise RuntimeError(msg)
    if max_db_size < _MIN_DB_BYTES:
        msg = f"Buffer manager exception: The given max db size should be at least {_MIN_DB_BYTES} bytes."
        raise RuntimeError(msg)
    if max_db_size & (max_db_size - 1):
        msg = "Buffer manager exception: The given max db size should be a power of 2."
        raise RuntimeError(msg)


class Database:
    """A Warren database.

    ``database_path`` names a directory (created if missing); ``None``, ``""`` or ``":memory:"``
    open an in-memory database. Kùzu's tuning arguments (buffer pool, compression, checkpoints)
    are accepted for compatibility; Warren sizes its memory itself. ``auto_checkpoint`` and
    ``checkpoint_threshold`` (bytes of write-ahead log; -1 for the default, 16 MiB) set when the
    log is folded into the data files.
    """

    def __init__(
        self,
        database_path: str | Path | None = None,
        *,
        buffer_pool_size: int = 0,
        max_num_threads: int = 0,
        compression: bool = True,
        lazy_init: bool = False,
        read_only: bool = False,
        max_db_size: int = _DEFAULT_MAX_DB_BYTES,
        auto_checkpoint: bool = True,
        checkpoint_threshold: int = -1,
        throw_on_wal_replay_failure: bool = True,
        enable_checksums: bool = True,
        enable_multi_writes: bool = False,
    ) -> None:
        _check_sizes(buffer_pool_size, max_db_size)
        self.database_path = "" if database_path is None else str(database_path)
        self.buffer_pool_size = buffer_pool_size
        self.max_num_threads = max_num_threads
        self.read_only = read_only
        self.auto_checkpoint = auto_checkpoint
        self.checkpoint_threshold = checkpoint_threshold
        self.enable_checksums = enable_checksums
        self.is_closed = False
        self._database: Any = None
        if not lazy_init:
            self.init_database()

    def __enter__(self) -> Database:
        return self

    def __exit__(self, exc_type: object, exc_value: object, traceback: object) -> None:
        self.close()

    def init_database(self) -> None:
        """Opens the database (done by the constructor unless ``lazy_init`` was set)."""
        self._check_open()
        if self._database is None:
            self._database = _warren.Database(
                self.database_path,
                self.read_only,
                self.auto_checkpoint,
                self.checkpoint_threshold,
                self.enable_checksums,
            )

    def _check_open(self) -> None:
        if self.is_closed:
            msg = "Database is closed"
            raise RuntimeError(msg)

    def close(self) -> None:
        """Closes the database and its connections; closing twice is harmless."""
        if self.is_closed:
            return
        self.is_closed = True
        if self._database is not None:
            self._database.close()
            self._database = None

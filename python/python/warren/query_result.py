"""QueryResult: the rows of one statement, with conversions to pandas, Arrow, polars, networkx."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _frames
from .constants import DST, ID, LABEL, NODES, RELS, SRC

if TYPE_CHECKING:
    from collections.abc import Iterator

    import networkx as nx
    import pandas as pd
    import polars as pl
    import pyarrow as pa

    from .connection import Connection


class QueryResult:
    """The result of one statement: a cursor over its rows plus whole-result conversions."""

    def __init__(self, connection: Connection, query_result: Any) -> None:
        self.connection = connection
        self._query_result = query_result
        self.is_closed = False

    def __enter__(self) -> QueryResult:
        return self

    def __exit__(self, exc_type: object, exc_value: object, traceback: object) -> None:
        self.close()

    def __iter__(self) -> Iterator[list[Any]]:
        return self

    def __next__(self) -> list[Any]:
        if self.has_next():
            return self.get_next()
        raise StopIteration

    def __len__(self) -> int:
        return self.get_num_tuples()

    def _native(self) -> Any:
        if self.is_closed:
            msg = "Query result is closed"
            raise RuntimeError(msg)
        return self._query_result

    def has_next(self) -> bool:
        """Whether another row is left."""
        return self._native().has_next()

    def get_next(self) -> list[Any]:
        """The next row, as a list of values."""
        return self._native().get_next()

    def get_all(self) -> list[list[Any]]:
        """Every remaining row."""
        return self._native().get_n(None)

    def get_n(self, count: int) -> list[list[Any]]:
        """Up to ``count`` next rows."""
        return self._native().get_n(max(count, 0))

    def close(self) -> None:
        """Frees the result; closing twice is harmless."""
        self.is_closed = True
        self._query_result = None

    def reset_iterator(self) -> None:
        """Moves the cursor back to the first row."""
        self._native().reset_iterator()

    def get_column_names(self) -> list[str]:
        """The names of the result's columns."""
        return self._native().get_column_names()

    def get_column_data_types(self) -> list[str]:
        """The Kùzu type names of the result's columns."""
        return self._native().get_column_data_types()

    def get_schema(self) -> dict[str, str]:
        """Column names mapped to their type names, in column order."""
        native = self._native()
        return dict(zip(native.get_column_names(), native.get_column_data_types()))

    def get_num_tuples(self) -> int:
        """How many rows the result has in all."""
        return self._native().get_num_tuples()

    def get_compiling_time(self) -> float:
        """Milliseconds spent parsing, binding and planning."""
        return self._native().get_compiling_time()

    def get_execution_time(self) -> float:
        """Milliseconds spent running the statement."""
        return self._native().get_execution_time()

    def get_as_df(self) -> pd.DataFrame:
        """The remaining rows as a pandas DataFrame (see docs/PYTHON.md for the type mapping)."""
        return _frames.to_pandas(self._native())

    def get_as_arrow(self, chunk_size: int | None = None) -> pa.Table:
        """The remaining rows as a pyarrow Table, in record batches of ``chunk_size`` rows."""
        return _frames.to_arrow(self._native(), chunk_size)

    def get_as_pl(self) -> pl.DataFrame:
        """The remaining rows as a polars DataFrame."""
        import polars as pl

        return pl.from_arrow(_frames.to_arrow(self._native(), None, uuid_as_string=True))

    def get_as_networkx(self, directed: bool = True) -> nx.MultiGraph | nx.MultiDiGraph:
        """The nodes and rels of every row (paths included) as a networkx multigraph.

        A node's key is ``"<label>_<primary key>"``; its attributes are its properties, ``_label``
        and ``<label>: True``. Rels become edges carrying their properties.
        """
        import networkx as nx

        graph = nx.MultiDiGraph() if directed else nx.MultiGraph()
        builder = _GraphBuilder(self.connection, graph)
        types = self.get_column_data_types()
        native = self._native()
        rows = [native.column_values(i) for i in range(len(types))]
        for row in zip(*rows):
            for value, type_name in zip(row, types):
                builder.add_value(value, type_name)
        builder.add_edges()
        return graph


class _GraphBuilder:
    """Collects nodes and rels into a networkx graph."""

    def __init__(self, connection: Connection, graph: Any) -> None:
        self.connection = connection
        self.graph = graph
        self.keys: dict[tuple[int, int], str] = {}
        self.rels: dict[tuple[int, int], dict[str, Any]] = {}
        self.primary_keys: dict[str, str] = {}

    def add_value(self, value: Any, type_name: str) -> None:
        if value is None:
            return
        if type_name == "NODE":
            self.add_node(value)
        elif type_name == "REL":
            self.rels[_id_key(value[ID])] = value
        elif type_name == "RECURSIVE_REL":
            for node in value[NODES]:
                self.add_node(node)
            for rel in value[RELS]:
                self.rels[_id_key(rel[ID])] = rel

    def primary_key(self, label: str) -> str:
        if label not in self.primary_keys:
            result = self.connection.execute(f"CALL table_info('{label}') RETURN *")
            for row in result.get_all():
                if row[4] is True:
                    self.primary_keys[label] = row[1]
            if label not in self.primary_keys:
                msg = f"Table {label} has no primary key."
                raise RuntimeError(msg)
        return self.primary_keys[label]

    def add_node(self, node: dict[str, Any]) -> None:
        label = node[LABEL]
        key = f"{label}_{node[self.primary_key(label)]}"
        self.keys[_id_key(node[ID])] = key
        attributes = dict(node)
        attributes[label] = True
        self.graph.add_node(key, **attributes)

    def add_edges(self) -> None:
        """Adds the rels whose both endpoints are among the nodes."""
        for rel in self.rels.values():
            src = self.keys.get(_id_key(rel[SRC]))
            dst = self.keys.get(_id_key(rel[DST]))
            if src is not None and dst is not None:
                self.graph.add_edge(src, dst, **rel)


def _id_key(internal_id: dict[str, int]) -> tuple[int, int]:
    return internal_id["table"], internal_id["offset"]

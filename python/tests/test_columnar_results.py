"""Results streamed in column batches: the columnar path answers as the row path does (rows,
Arrow, pandas, polars, NULLs included), cursors keep Kùzu's semantics (get_num_tuples,
reset_iterator, conversions covering every row), and iterating a big result holds a bounded
amount of memory."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import warren

QUERIES = [
    "MATCH (a:P) RETURN a.ID, a.name, a.score, a.ok, a.born",
    "MATCH (a:P) WHERE a.ID < 40 AND a.score IS NOT NULL RETURN a.name, a.ID",
    "MATCH (a:P)-[e:E]->(b:P) RETURN a.ID, e.w, e.note, b.name, b.ok",
    "MATCH (a:P)-[e:E]->(b:P) WHERE e.w > 1.0 AND b.ID <> 3 RETURN a.ID, b.ID, e.n",
    "MATCH (a:P)<-[e:E]-(b:P) RETURN a.ID, b.ID, a.born",
    "MATCH (a:P)-[e:E]->(b:P) RETURN a, e, b",
]


@pytest.fixture
def conn() -> warren.Connection:
    conn = warren.Connection(warren.Database())
    conn.execute("CREATE NODE TABLE P(ID INT64, name STRING, score DOUBLE, ok BOOL, born DATE, PRIMARY KEY(ID))")
    conn.execute("CREATE REL TABLE E(FROM P TO P, w DOUBLE, note STRING, n INT64)")
    conn.execute(
        "UNWIND range(0, 59) AS i CREATE (:P {ID: i,"
        " name: CASE WHEN i % 4 = 3 THEN NULL ELSE 'p' + cast(i, 'STRING') END,"
        " score: CASE WHEN i % 5 = 2 THEN NULL ELSE i * 0.5 END,"
        " ok: CASE i % 3 WHEN 0 THEN true WHEN 1 THEN false ELSE NULL END,"
        " born: date('2020-01-01') + CAST(i AS INT64)})"
    )
    conn.execute(
        "UNWIND range(0, 59) AS i UNWIND range(1, 3) AS k "
        "MATCH (a:P {ID: i}), (b:P {ID: (i * 7 + k) % 60}) "
        "CREATE (a)-[:E {w: k * 0.75, note: CASE WHEN (i + k) % 4 = 0 THEN NULL ELSE 'n' END,"
        " n: CASE WHEN (i + k) % 5 = 0 THEN NULL ELSE i * 10 + k END}]->(b)"
    )
    return conn


def _both(conn: warren.Connection, query: str, read):  # noqa: ANN001, ANN202
    conn.execute("CALL columnar_results=false")
    expected = read(conn.execute(query))
    conn.execute("CALL columnar_results=true")
    return read(conn.execute(query)), expected


@pytest.mark.parametrize("query", QUERIES)
def test_columnar_rows_and_frames_equal_the_row_path(conn: warren.Connection, query: str) -> None:
    got, expected = _both(conn, query, lambda r: r.get_all())
    assert got == expected
    assert len(got) > 0
    got, expected = _both(conn, query, lambda r: r.get_as_arrow(7))
    assert got.equals(expected)
    assert [b.num_rows for b in got.to_batches()] == [b.num_rows for b in expected.to_batches()]
    got, expected = _both(conn, query, lambda r: r.get_as_df())
    assert got.equals(expected)
    assert list(got.dtypes) == list(expected.dtypes)
    got, expected = _both(conn, query, lambda r: r.get_as_pl())
    assert got.equals(expected)
    got, expected = _both(conn, query, lambda r: r.get_num_tuples())
    assert got == expected


def test_nulls_cross_to_arrow_and_pandas(conn: warren.Connection) -> None:
    table = conn.execute("MATCH (a:P) RETURN a.ID, a.name, a.score, a.ok").get_as_arrow()
    assert table.column("a.name").null_count == 15
    assert table.column("a.score").null_count == 12
    assert table.column("a.ok").null_count == 20
    frame = conn.execute("MATCH (a:P) RETURN a.score, a.ok").get_as_df()
    assert str(frame["a.score"].dtype) == "float64"
    assert frame["a.ok"].iloc[2] is None


def test_cursor_semantics_of_a_streamed_result(conn: warren.Connection) -> None:
    query = "MATCH (a:P)-[e:E]->(b:P) RETURN a.ID, b.ID"
    result = conn.execute(query)
    assert result.get_num_tuples() == 180
    first = result.get_n(5)
    assert len(first) == 5
    # Conversions cover every row, whatever the cursor's position, and leave it in place.
    assert result.get_as_arrow().num_rows == 180
    assert result.get_next() == conn.execute(query).get_n(6)[5]
    rest = result.get_all()
    assert len(rest) == 174
    assert not result.has_next()
    with pytest.raises(RuntimeError, match="No more tuples"):
        result.get_next()
    result.reset_iterator()
    assert result.get_all() == conn.execute(query).get_all()
    assert len(result) == 180


def test_streamed_errors_and_empty_results(conn: warren.Connection) -> None:
    empty = conn.execute("MATCH (a:P) WHERE a.ID > 1000 RETURN a.ID, a.name")
    assert not empty.has_next()
    assert empty.get_num_tuples() == 0
    assert empty.get_as_arrow().num_rows == 0
    assert list(empty.get_as_df().columns) == ["a.ID", "a.name"]
    # An error in the first rows surfaces at execute, as in Kùzu.
    with pytest.raises(RuntimeError):
        conn.execute("MATCH (a:P) RETURN CAST(a.name AS INT64)")


def _memory_kib(field: str) -> int:
    with open("/proc/self/status", encoding="utf-8") as fh:
        for line in fh:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    msg = f"no {field} in /proc/self/status"
    raise RuntimeError(msg)


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w", encoding="utf-8") as fh:
            fh.write("5")
    except OSError:
        return False
    return True


# Peak resident growth allowed while iterating 2,000,000 rows. Materializing them as values
# took about 110 bytes a row (over 200 MiB); a stream holds one batch of 2,048 rows at a time.
GROWTH_BOUND_KIB = 48 * 1024


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux /proc")
def test_iterating_a_big_result_holds_bounded_memory(tmp_path: Path) -> None:
    nodes, edges = 5000, 2_000_000
    rng = random.Random(7)
    (tmp_path / "n.csv").write_text("ID\n" + "\n".join(map(str, range(nodes))) + "\n")
    lines = (f"{rng.randrange(nodes)},{rng.randrange(nodes)}" for _ in range(edges))
    (tmp_path / "e.csv").write_text("from,to\n" + "\n".join(lines) + "\n")
    conn = warren.Connection(warren.Database(str(tmp_path / "db")))
    conn.execute("CREATE NODE TABLE N(ID INT64, PRIMARY KEY(ID))")
    conn.execute("CREATE REL TABLE R(FROM N TO N)")
    conn.execute(f"COPY N FROM '{tmp_path / 'n.csv'}' (HEADER=true)")
    conn.execute(f"COPY R FROM '{tmp_path / 'e.csv'}' (HEADER=true)")
    # Warm the pages of the database files, so that the figure is the result's own memory.
    assert conn.execute("MATCH (a:N)-[:R]->(b:N) RETURN count(*)").get_next() == [edges]
    result = conn.execute("MATCH (a:N)-[:R]->(b:N) RETURN a.ID, b.ID")
    exact = _reset_peak()
    before = _memory_kib("VmRSS")
    count = 0
    checksum = 0
    while result.has_next():
        a, b = result.get_next()
        count += 1
        checksum += a - b
    peak = _memory_kib("VmHWM") if exact else _memory_kib("VmRSS")
    assert count == edges
    assert isinstance(checksum, int)
    assert peak - before < GROWTH_BOUND_KIB, f"peak growth {peak - before} KiB"
    assert result.get_num_tuples() == edges


@pytest.mark.parametrize(
    ("chunk_size", "sizes"),
    [(60, [60, 60, 60]), (50, [50, 50, 80]), (90, [90, 90]), (180, [180]), (200, [180]), (None, [180])],
)
def test_arrow_chunks_of_a_streamed_result(conn: warren.Connection, chunk_size: int | None, sizes: list[int]) -> None:
    table = conn.execute("MATCH (a:P)-[e:E]->(b:P) RETURN a.ID, e.note").get_as_arrow(chunk_size)
    assert [b.num_rows for b in table.to_batches()] == sizes

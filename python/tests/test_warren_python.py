"""Warren's own tests of its Python package: recursive queries, DataFrames, threads, errors."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
import warren


def _chain(conn: warren.Connection, length: int) -> None:
    """A path graph 0 -> 1 -> ... -> length, plus a shortcut 0 -> length - 1."""
    conn.execute("CREATE NODE TABLE N(id INT64, name STRING, PRIMARY KEY(id))")
    conn.execute("CREATE REL TABLE E(FROM N TO N, w DOUBLE)")
    for i in range(length + 1):
        conn.execute("CREATE (:N {id: $id, name: $name})", {"id": i, "name": f"n{i}"})
    for i in range(length):
        conn.execute(
            "MATCH (a:N {id: $a}), (b:N {id: $b}) CREATE (a)-[:E {w: 1.0}]->(b)",
            {"a": i, "b": i + 1},
        )
    conn.execute(
        "MATCH (a:N {id: 0}), (b:N {id: $b}) CREATE (a)-[:E {w: 5.0}]->(b)",
        {"b": length - 1},
    )


@pytest.fixture
def conn() -> warren.Connection:
    return warren.Connection(warren.Database())


def test_shortest_path_answer(conn: warren.Connection) -> None:
    _chain(conn, 6)
    result = conn.execute("MATCH p = (a:N {id: 0})-[e:E* SHORTEST 1..10]->(b:N {id: 6}) RETURN length(e), nodes(p)")
    hops, nodes = result.get_next()
    assert hops == 2
    assert [n["id"] for n in nodes] == [0, 5, 6]
    assert all(n[warren.constants.LABEL] == "N" for n in nodes)
    assert not result.has_next()


def test_recursive_rel_value_shape(conn: warren.Connection) -> None:
    _chain(conn, 3)
    (path,) = conn.execute("MATCH (a:N {id: 0})-[e:E*2..2]->(b:N {id: 2}) RETURN e").get_next()
    assert [n["id"] for n in path[warren.constants.NODES]] == [1]
    rels = path[warren.constants.RELS]
    assert [r["w"] for r in rels] == [1.0, 1.0]
    assert rels[0][warren.constants.SRC] == {"offset": 0, "table": 0}


def test_get_as_df_types(conn: warren.Connection) -> None:
    _chain(conn, 4)
    df = conn.execute("MATCH (n:N) RETURN n.id AS id, n.name AS name, n.id * 0.5 AS half ORDER BY id").get_as_df()
    assert df["id"].tolist() == [0, 1, 2, 3, 4]
    assert str(df["id"].dtype) == "int64"
    assert str(df["name"].dtype) == "object"
    assert df["half"].tolist() == [0.0, 0.5, 1.0, 1.5, 2.0]


def test_get_as_arrow_chunks(conn: warren.Connection) -> None:
    table = conn.execute("UNWIND range(1, 10) AS x RETURN x").get_as_arrow(4)
    assert table.num_rows == 10
    assert table.column(0).num_chunks == 2
    assert table.column(0).to_pylist() == list(range(1, 11))


def test_networkx_keys(conn: warren.Connection) -> None:
    _chain(conn, 2)
    graph = conn.execute("MATCH (a:N)-[e:E]->(b:N) RETURN a, e, b").get_as_networkx()
    assert sorted(graph.nodes) == ["N_0", "N_1", "N_2"]
    assert graph.number_of_edges() == 3


def test_threads_run_queries_in_parallel(tmp_path: Path) -> None:
    """Two threads, each with its own connection, run a long query at once while the main thread
    keeps ticking: queries release the GIL, so Python code runs while they do."""
    db = warren.Database(tmp_path / "db")
    query = "UNWIND range(1, 4000) AS x UNWIND range(1, 1000) AS y RETURN count(*)"
    answers: list[list[int]] = []

    def run() -> None:
        answers.append(warren.Connection(db).execute(query).get_next())

    threads = [threading.Thread(target=run) for _ in range(2)]
    started = time.perf_counter()
    for t in threads:
        t.start()
    ticks = [time.perf_counter()]
    while any(t.is_alive() for t in threads):
        time.sleep(0.005)
        ticks.append(time.perf_counter())
    elapsed = time.perf_counter() - started
    assert answers == [[4_000_000], [4_000_000]]
    longest_gap = max(b - a for a, b in zip(ticks, ticks[1:]))
    assert len(ticks) > 5
    assert longest_gap < elapsed / 2, (longest_gap, elapsed)


def test_errors_are_runtime_errors_with_kuzu_text(conn: warren.Connection) -> None:
    with pytest.raises(RuntimeError, match=r"Binder exception: Table nope does not exist."):
        conn.execute("MATCH (n:nope) RETURN n")
    with pytest.raises(RuntimeError, match=r"Parser exception"):
        conn.execute("MATCH (n RETURN n")
    with pytest.raises(RuntimeError, match=r"Parameters must be a dict"):
        conn.execute("RETURN $x", [1])  # type: ignore[arg-type]


def test_closed_objects_raise(tmp_path: Path) -> None:
    db = warren.Database(tmp_path / "db")
    conn = warren.Connection(db)
    result = conn.execute("RETURN 1")
    db.close()
    with pytest.raises(RuntimeError, match="Database is closed"):
        conn.execute("RETURN 1")
    with pytest.raises(RuntimeError, match="the parent database is closed"):
        result.get_next()
    # The lock was released: the directory opens again.
    warren.Database(tmp_path / "db").close()


def test_npy_copy_by_column(tmp_path: Path) -> None:
    np = pytest.importorskip("numpy")
    np.save(tmp_path / "id.npy", np.arange(3, dtype=np.int64))
    np.save(tmp_path / "v.npy", np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], dtype=np.float32))
    conn = warren.Connection(warren.Database())
    conn.execute("CREATE NODE TABLE T(id INT64, v FLOAT[2], PRIMARY KEY(id))")
    conn.execute(f'COPY T FROM ("{tmp_path}/id.npy", "{tmp_path}/v.npy") BY COLUMN')
    assert conn.execute("MATCH (t:T) RETURN t.id, t.v ORDER BY t.id").get_all() == [
        [0, [1.0, 2.0]],
        [1, [3.0, 4.0]],
        [2, [5.0, 6.0]],
    ]


def test_fixed_width_columns_cross_through_arrow(conn: warren.Connection) -> None:
    """Numeric, temporal and string columns are built in Rust and handed over through the Arrow
    C data interface; NULLs stay NULL and other types take the value-by-value path."""
    pa = pytest.importorskip("pyarrow")
    result = conn.execute(
        "UNWIND [1, NULL, 3] AS x RETURN x, CAST(x AS DOUBLE) AS d, CAST(x AS STRING) AS s, "
        "date('2020-01-01') AS day, [x] AS l"
    )
    native = result._query_result
    ints = native.column_arrow(0)
    assert isinstance(ints, pa.Array)
    assert ints.type == pa.int64()
    assert ints.to_pylist() == [1, None, 3]
    assert native.column_arrow(2).to_pylist() == ["1", None, "3"]
    assert native.column_arrow(3).type == pa.date32()
    assert native.column_arrow(4) is None
    table = result.get_as_arrow()
    assert table.column("d").to_pylist() == [1.0, None, 3.0]
    assert table.column("l").to_pylist() == [[1], [None], [3]]
    df = result.get_as_df()
    assert str(df["x"].dtype) == "float64"
    assert df["x"].isna().tolist() == [False, True, False]


def test_union_column_to_arrow(conn: warren.Connection) -> None:
    pa = pytest.importorskip("pyarrow")
    table = conn.execute("UNWIND [1, NULL, 3] AS x RETURN union_value(price := x) AS u").get_as_arrow()
    column = table.column("u")
    assert pa.types.is_union(column.type)
    assert column.type.mode == "dense"
    assert column.to_pylist() == [1, None, 3]


def test_merge_with_several_pattern_parts(conn: warren.Connection) -> None:
    """The parts of `MERGE a, b` are matched as one pattern: created together the first time,
    matched (and not created again) the second time."""
    conn.execute("CREATE NODE TABLE P(id INT64, PRIMARY KEY(id))")
    conn.execute("CREATE REL TABLE R(FROM P TO P)")
    conn.execute("CREATE (:P {id: 1}), (:P {id: 2}), (:P {id: 3})")
    query = "MATCH (a:P {id: 1}), (b:P {id: 2}), (c:P {id: 3}) MERGE (a)-[:R]->(b), (b)-[:R]->(c) RETURN count(*)"
    for _ in range(2):
        assert conn.execute(query).get_next() == [1]
    rels = conn.execute("MATCH (x:P)-[:R]->(y:P) RETURN x.id, y.id ORDER BY x.id").get_all()
    assert rels == [[1, 2], [2, 3]]


def test_async_connection_scans_a_caller_data_frame() -> None:
    """AsyncConnection finds a data frame named in the query among the awaiting code's
    variables, although the query runs in a worker thread."""
    import asyncio

    pd = pytest.importorskip("pandas")

    async def run() -> list[list[int]]:
        people = pd.DataFrame({"id": [3, 1, 2]})
        async_conn = warren.AsyncConnection(warren.Database())
        result = await async_conn.execute("LOAD FROM people RETURN id ORDER BY id")
        rows = result.get_all()
        async_conn.close()
        return rows

    assert asyncio.run(run()) == [[1], [2], [3]]


def _warren_binary() -> str:
    """The `warren` command line tool scripts/test-python points at (WARREN_BIN)."""
    import os

    binary = os.environ.get("WARREN_BIN", "")
    if not binary or not Path(binary).exists():
        pytest.skip("WARREN_BIN does not name the warren binary (scripts/test-python sets it)")
    return binary


SEED_QUERIES = [
    "MATCH p=(a:Person)-[r:Knows* SHORTEST 1..30]->(b:Person) WHERE a.ID < 64 "
    "RETURN a.ID, count(*), sum(length(p)) ORDER BY a.ID",
    "MATCH p = (a:Person)-[r:Knows* ALL SHORTEST 1..30]->(b:Person) WHERE a.ID = 0 RETURN count(*)",
    "MATCH (a:Person)-[r:Knows*1..4]->(b:Person) WHERE a.ID < 5 AND b.ID < 500 RETURN count(*)",
]


def test_seed_answers_equal_the_command_lines(tmp_path: Path) -> None:
    """A Graph500 graph loaded through Python answers the seed queries as `warren query` does
    on the same files loaded by `warren run`."""
    import csv
    import io
    import subprocess

    binary = _warren_binary()
    data = tmp_path / "g"
    subprocess.run([binary, "generate", "graph500", "--scale", "10", "--out", str(data)], check=True)
    cli_db = tmp_path / "cli-db"
    for script in ("schema.cypher", "copy.cypher"):
        subprocess.run([binary, "run", str(cli_db), str(data / script)], check=True, capture_output=True)
    db = warren.Database(str(tmp_path / "py-db"))
    conn = warren.Connection(db, num_threads=2)
    for script in ("schema.cypher", "copy.cypher"):
        for line in (data / script).read_text().splitlines():
            if line.strip():
                conn.execute(line)
    for query in SEED_QUERIES:
        cli = subprocess.run(
            [binary, "query", str(cli_db), query, "--format", "csv"], check=True, capture_output=True, text=True
        ).stdout
        expected = [[int(v) for v in row] for row in list(csv.reader(io.StringIO(cli)))[1:]]
        assert conn.execute(query).get_all() == expected, query


def _numbers_file(path: Path, count: int) -> None:
    path.write_text("".join(f"{i}\n" for i in range(count)))


def test_get_num_tuples_reads_ahead_instead_of_running_the_query_again(
    conn: warren.Connection, tmp_path: Path
) -> None:
    # LOAD FROM reads its file when it runs: were the query run again to count, the count
    # would come from the rewritten file.
    path = tmp_path / "numbers.csv"
    _numbers_file(path, 3000)
    result = conn.execute(f"LOAD WITH HEADERS (x INT64) FROM '{path}' RETURN x")
    assert result.get_next() == [0]
    _numbers_file(path, 1)
    assert result.get_num_tuples() == 3000
    assert [row[0] for row in result] == list(range(1, 3000))

    _numbers_file(path, 5)
    done = conn.execute(f"LOAD WITH HEADERS (x INT64) FROM '{path}' RETURN x")
    assert len(done.get_all()) == 5
    _numbers_file(path, 7)
    assert done.get_num_tuples() == 5


def test_get_num_tuples_of_a_long_result_counts_by_running_it_again(
    conn: warren.Connection, tmp_path: Path
) -> None:
    path = tmp_path / "numbers.csv"
    _numbers_file(path, 100_000)
    result = conn.execute(f"LOAD WITH HEADERS (x INT64) FROM '{path}' RETURN x")
    _numbers_file(path, 70_000)
    # Longer than the read-ahead (65,536 rows): the count is a second run's.
    assert result.get_num_tuples() == 70_000


def test_copy_from_csv_ignore_errors_lists_warnings(conn: warren.Connection, tmp_path: Path) -> None:
    path = tmp_path / "people.csv"
    path.write_text("id,age\n1,30\n2,abc\n1,40\n3,50\n")
    conn.execute("CREATE NODE TABLE P(id INT64, age INT32, PRIMARY KEY(id))")
    answer = conn.execute(f"COPY P FROM '{path}' (HEADER=true, IGNORE_ERRORS=true)").get_all()
    assert answer[0] == ["2 tuples have been copied to the P table."]
    assert answer[1][0].startswith("2 warnings encountered during copy.")
    warnings = conn.execute("CALL show_warnings() RETURN *").get_all()
    assert [(w[3], w[4]) for w in warnings] == [(3, "2,abc"), (4, "1,40")]
    assert warnings[0][1] == 'Conversion exception: Cast failed. Could not convert "abc" to INT32.'
    assert warnings[1][1].startswith("Found duplicated primary key value 1")
    assert all(w[2] == str(path) for w in warnings)
    conn.execute("CALL clear_warnings()")
    assert conn.execute("CALL show_warnings() RETURN *").get_all() == []

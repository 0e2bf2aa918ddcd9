"""warren.connect(url): a server's answers equal the embedded API's (values, types, Arrow,
pandas, polars, networkx), errors read the same, large results stream, tokens are checked.
Each test runs `warren serve` (WARREN_BIN, set by scripts/test-python) on a temporary database
on 127.0.0.1:0 and stops it afterwards."""

from __future__ import annotations

import datetime
import decimal
import os
import queue
import shutil
import subprocess
import threading
import time
import uuid
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
import warren

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

SERVER_START_S = 30


class Server:
    """A `warren serve` process and the URL it listens on."""

    def __init__(self, db_path: Path, *arguments: str) -> None:
        binary = os.environ.get("WARREN_BIN") or shutil.which("warren")
        if binary is None:
            pytest.skip("WARREN_BIN is not set (scripts/test-python sets it)")
        command = [binary, "serve", str(db_path), "--listen", "127.0.0.1:0", *arguments]
        self.process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        lines: queue.Queue[str] = queue.Queue()
        self.output: list[str] = []

        def drain() -> None:
            assert self.process.stdout is not None
            for line in self.process.stdout:
                self.output.append(line)
                lines.put(line)

        threading.Thread(target=drain, daemon=True).start()
        self.url = ""
        try:
            while not self.url:
                line = lines.get(timeout=SERVER_START_S)
                if "listening on " in line:
                    self.url = line.split("listening on ", 1)[1].strip()
        except queue.Empty:
            self.stop()
            pytest.fail(f"warren serve did not start: {''.join(self.output)}")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def _fill(db_path: Path) -> None:
    db = warren.Database(str(db_path))
    conn = warren.Connection(db)
    conn.execute("CREATE NODE TABLE P(ID INT64, name STRING, score DOUBLE, born DATE, PRIMARY KEY(ID))")
    conn.execute("CREATE NODE TABLE C(name STRING, PRIMARY KEY(name))")
    conn.execute("CREATE REL TABLE E(FROM P TO P, w DOUBLE, note STRING)")
    conn.execute("CREATE REL TABLE L(FROM P TO C)")
    conn.execute(
        "UNWIND range(0, 29) AS i CREATE (:P {ID: i,"
        " name: CASE WHEN i % 4 = 3 THEN NULL ELSE 'p' + cast(i, 'STRING') END,"
        " score: CASE WHEN i % 5 = 2 THEN NULL ELSE i * 0.5 END,"
        " born: date('2020-01-01') + CAST(i AS INT64)})"
    )
    conn.execute("CREATE (:C {name: 'x'}), (:C {name: 'y'})")
    conn.execute(
        "UNWIND range(0, 29) AS i UNWIND range(1, 2) AS k "
        "MATCH (a:P {ID: i}), (b:P {ID: (i * 7 + k) % 30}) "
        "CREATE (a)-[:E {w: k * 0.75, note: CASE WHEN (i + k) % 4 = 0 THEN NULL ELSE 'n' END}]->(b)"
    )
    conn.execute("MATCH (a:P), (c:C) WHERE a.ID % 10 = 0 AND c.name = 'x' CREATE (a)-[:L]->(c)")
    conn.close()
    db.close()


@pytest.fixture(scope="module")
def db_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("remote") / "db"
    _fill(path)
    return path


@pytest.fixture(scope="module")
def server(db_path: Path) -> Iterator[Server]:
    server = Server(db_path, "--read-only")
    yield server
    server.stop()


@pytest.fixture(scope="module")
def embedded(db_path: Path, server: Server) -> Iterator[warren.Connection]:
    del server  # started first: both open the database read-only
    db = warren.Database(str(db_path), read_only=True)
    conn = warren.Connection(db)
    yield conn
    conn.close()
    db.close()


@pytest.fixture
def remote(server: Server) -> Iterator[warren.RemoteConnection]:
    with warren.connect(server.url) as conn:
        yield conn


SCALARS = (
    "RETURN 1 AS i64, CAST(2 AS INT32) AS i32, CAST(3 AS INT16) AS i16, CAST(4 AS INT8) AS i8,"
    " CAST(5 AS UINT8) AS u8, CAST(6 AS UINT16) AS u16, CAST(7 AS UINT32) AS u32, CAST(8 AS UINT64) AS u64,"
    " CAST(9 AS INT128) AS i128, 1.5 AS dbl, CAST(2.5 AS FLOAT) AS flt, true AS b, 'text' AS s, NULL AS n,"
    " date('2024-02-29') AS d, timestamp('2024-01-02 03:04:05.123456') AS ts,"
    " interval('1 year 2 days 3 hours') AS iv, CAST(12.25 AS DECIMAL(10, 2)) AS dec,"
    " UUID('A0EEBC99-9c0b-4ef8-bb6d-6bb9bd380a12') AS id, BLOB('\\\\xAA\\\\xBB') AS bl"
)
NESTED = (
    "RETURN [1, 2, NULL] AS l, ['a', NULL] AS ls, [[1], [], [2, 3]] AS ll, {a: 1, b: 'x', c: [1.5]} AS st,"
    " map(['k1', 'k2'], [1, 2]) AS m, [{a: date('2020-01-01')}] AS lst"
)
MORE = [
    "RETURN union_value(price := 1) AS u",
    "RETURN CAST('2024-01-01 01:02:03' AS TIMESTAMP_TZ) AS tz, CAST('2024-01-01 01:02:03' AS TIMESTAMP_NS) AS ns,"
    " CAST('2024-01-01 01:02:03' AS TIMESTAMP_MS) AS ms, CAST('2024-01-01 01:02:03' AS TIMESTAMP_SEC) AS sec",
    "RETURN CAST([1, 2, 3] AS INT64[3]) AS arr, CAST(12345678901234567890123 AS INT128) AS big",
    "RETURN [map([1], [2])] AS lm, {a: {b: [1, NULL]}} AS deep",
    "UNWIND [1, NULL] AS x RETURN {a: x} AS st, [x] AS l, CAST(x AS DECIMAL(5, 1)) AS dec, CAST(x AS INT32) AS i",
]
ROWS = [
    "MATCH (a:P) RETURN a.ID, a.name, a.score, a.born ORDER BY a.ID",
    "MATCH (a:P)-[e:E]->(b:P) RETURN a.ID, e.w, e.note, b.name ORDER BY a.ID, b.ID",
    "UNWIND range(1, 5000) AS i RETURN i, i * 0.5, 'v' + cast(i, 'STRING'), i % 3 = 0",
    "UNWIND [1, NULL, 3] AS x RETURN x, CASE WHEN x IS NULL THEN NULL ELSE 's' END",
]
GRAPH = [
    "MATCH (a:P)-[e:E]->(b:P) WHERE a.ID < 6 RETURN a, e, b ORDER BY a.ID, b.ID",
    "MATCH (a:P)-[l:L]->(c:C) RETURN a, l, c ORDER BY a.ID",
    "MATCH p = (a:P)-[:E*1..2]->(b:P) WHERE a.ID = 1 RETURN p, length(p) ORDER BY b.ID, length(p)",
    "MATCH (a:P)-[r:E* SHORTEST 1..3]->(b:P) WHERE a.ID = 2 AND b.ID < 10 RETURN b.ID, r ORDER BY b.ID",
    "MATCH (a:P) WHERE a.ID < 3 RETURN collect(a) AS nodes",
]


@pytest.mark.parametrize("query", [SCALARS, NESTED, *MORE, *ROWS, *GRAPH])
def test_values_and_types_equal_the_embedded_ones(
    embedded: warren.Connection, remote: warren.RemoteConnection, query: str
) -> None:
    expected = embedded.execute(query)
    got = remote.execute(query)
    assert got.get_column_names() == expected.get_column_names()
    assert got.get_column_data_types() == expected.get_column_data_types()
    assert got.get_schema() == expected.get_schema()
    rows = got.get_all()
    assert rows == expected.get_all()
    assert len(rows) > 0
    assert got.get_num_tuples() == expected.get_num_tuples() == len(rows)


def test_python_types_are_the_embedded_ones(embedded: warren.Connection, remote: warren.RemoteConnection) -> None:
    row = remote.execute(SCALARS).get_next()
    assert [type(v) for v in row] == [type(v) for v in embedded.execute(SCALARS).get_next()]
    assert isinstance(row[14], datetime.date)
    assert isinstance(row[15], datetime.datetime)
    assert isinstance(row[16], datetime.timedelta)
    assert str(row[17]) == "12.25"
    assert str(row[18]) == "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12"
    node = remote.execute("MATCH (a:P) WHERE a.ID = 3 RETURN a").get_next()[0]
    assert node["_label"] == "P"
    assert node["name"] is None  # a NULL property is there, as embedded


@pytest.mark.parametrize("query", [SCALARS, NESTED, *MORE, *ROWS, *GRAPH])
def test_arrow_pandas_polars_equal_the_embedded_ones(
    embedded: warren.Connection, remote: warren.RemoteConnection, query: str
) -> None:
    for chunk_size in (None, 7):
        got = remote.execute(query).get_as_arrow(chunk_size)
        expected = embedded.execute(query).get_as_arrow(chunk_size)
        assert got.equals(expected)
        assert [b.num_rows for b in got.to_batches()] == [b.num_rows for b in expected.to_batches()]
    got_df = remote.execute(query).get_as_df()
    expected_df = embedded.execute(query).get_as_df()
    assert list(got_df.columns) == list(expected_df.columns)
    assert [str(t) for t in got_df.dtypes] == [str(t) for t in expected_df.dtypes]
    assert got_df.to_dict("list") == expected_df.to_dict("list") or got_df.equals(expected_df)
    if query not in (*GRAPH[2:4], MORE[0]):  # polars has no unions; paths: see below
        assert remote.execute(query).get_as_pl().equals(embedded.execute(query).get_as_pl())


def test_networkx_equals_the_embedded_one(embedded: warren.Connection, remote: warren.RemoteConnection) -> None:
    query = GRAPH[0]
    got = remote.execute(query).get_as_networkx()
    expected = embedded.execute(query).get_as_networkx()
    assert sorted(got.nodes) == sorted(expected.nodes)
    assert dict(got.nodes(data=True)) == dict(expected.nodes(data=True))
    assert sorted(got.edges) == sorted(expected.edges)


def test_cursor_api(remote: warren.RemoteConnection) -> None:
    result = remote.execute("UNWIND range(1, 10) AS i RETURN i")
    assert result.has_next()
    assert result.get_next() == [1]
    assert result.get_n(3) == [[2], [3], [4]]
    assert [row[0] for row in result] == list(range(5, 11))
    assert not result.has_next()
    with pytest.raises(RuntimeError, match="No more tuples"):
        result.get_next()
    result.reset_iterator()
    assert result.get_all() == [[i] for i in range(1, 11)]
    assert len(result) == 10
    assert result.get_compiling_time() >= 0.0
    assert result.get_execution_time() >= 0.0
    result.close()
    with pytest.raises(RuntimeError, match="closed"):
        result.get_next()


def test_parameters(embedded: warren.Connection, remote: warren.RemoteConnection) -> None:
    query = "RETURN $i, $f, $s, $b, $n, $l, $st"
    parameters = {"i": 7, "f": 0.25, "s": "é", "b": True, "n": None, "l": [1, 2], "st": {"a": 1, "b": "x"}}
    assert remote.execute(query, parameters).get_all() == embedded.execute(query, parameters).get_all()
    got = remote.execute("MATCH (a:P) WHERE a.ID < $n RETURN count(*)", {"n": 10}).get_next()
    assert got == [10]
    nan = remote.execute("RETURN $x", {"x": float("nan")}).get_next()[0]
    assert nan != nan  # noqa: PLR0124 (NaN travels typed, unlike JSON)
    with pytest.raises(RuntimeError) as got_error:
        remote.execute("RETURN $x", {"x": object()})
    with pytest.raises(RuntimeError) as expected_error:
        embedded.execute("RETURN $x", {"x": object()})
    assert str(got_error.value) == str(expected_error.value)


TYPED = {
    "d": datetime.date(2024, 2, 29),
    "ts": datetime.datetime(2024, 1, 2, 3, 4, 5, 123456),
    "tz": datetime.datetime(2024, 1, 2, 3, 4, 5, tzinfo=datetime.timezone.utc),
    "iv": datetime.timedelta(days=3, seconds=7, microseconds=11),
    "u": uuid.UUID("a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12"),
    "dec": decimal.Decimal("12.25"),
    "by": b"\x00\xaa\xff",
    "ba": bytearray(b"xy"),
    "ld": [datetime.date(2020, 1, 1), None],
    "lu": [uuid.UUID(int=1), uuid.UUID(int=2)],
    "st": {"when": datetime.datetime(2020, 5, 6, 7, 8, 9), "tags": ["a", "b"], "blob": b"\x01"},
    "m": {"key": ["k1", "k2"], "value": [datetime.date(2021, 1, 1), datetime.date(2022, 2, 2)]},
    "big": 2**63 + 5,
}


@pytest.mark.parametrize("name", sorted(TYPED))
def test_typed_parameters_equal_the_embedded_ones(
    embedded: warren.Connection, remote: warren.RemoteConnection, name: str
) -> None:
    query = f"RETURN ${name} AS v, [${name}] AS l"
    parameters = {name: TYPED[name]}
    expected = embedded.execute(query, parameters)
    got = remote.execute(query, parameters)
    assert got.get_column_data_types() == expected.get_column_data_types()
    row = got.get_next()
    expected_row = expected.get_next()
    assert row == expected_row
    assert [type(v) for v in row] == [type(v) for v in expected_row]
    # The value round-trips with its Python type (a date is a date, bytes are bytes, ...).
    if not isinstance(TYPED[name], (decimal.Decimal, bytearray, dict)):
        assert row[0] == TYPED[name]


def test_typed_parameters_filter_on_the_server(embedded: warren.Connection, remote: warren.RemoteConnection) -> None:
    query = "MATCH (a:P) WHERE a.born >= $from AND a.born < $from + $span RETURN a.ID ORDER BY a.ID"
    parameters = {"from": datetime.date(2020, 1, 5), "span": datetime.timedelta(days=4)}
    assert remote.execute(query, parameters).get_all() == embedded.execute(query, parameters).get_all() == [
        [4],
        [5],
        [6],
        [7],
    ]


def test_several_statements_return_a_list_as_embedded(
    embedded: warren.Connection, remote: warren.RemoteConnection
) -> None:
    query = "RETURN 1 AS one; MATCH (a:P) WHERE a.ID < $n RETURN a.ID ORDER BY a.ID; UNWIND [] AS x RETURN x"
    expected = embedded.execute(query, {"n": 3})
    got = remote.execute(query, {"n": 3})
    assert isinstance(got, list)
    assert isinstance(expected, list)
    assert len(got) == len(expected) == 3
    for g, e in zip(got, expected):
        assert g.get_column_names() == e.get_column_names()
        assert g.get_column_data_types() == e.get_column_data_types()
        assert g.get_all() == e.get_all()
    # An error in any statement raises, as embedded.
    with pytest.raises(RuntimeError, match="Binder exception"):
        remote.execute("RETURN 1; MATCH (x:Nope) RETURN x; RETURN 2")
    with pytest.raises(RuntimeError, match="Binder exception"):
        embedded.execute("RETURN 1; MATCH (x:Nope) RETURN x; RETURN 2")


def test_prepared_statements_as_embedded(embedded: warren.Connection, remote: warren.RemoteConnection) -> None:
    remote_statement = remote.prepare("MATCH (a:P) WHERE a.ID = $id AND a.born = $born RETURN a.name")
    embedded_statement = embedded.prepare("MATCH (a:P) WHERE a.ID = $id AND a.born = $born RETURN a.name")
    assert remote_statement.is_success()
    for i in (0, 1, 5):
        parameters = {"id": i, "born": datetime.date(2020, 1, 1) + datetime.timedelta(days=i)}
        got = remote.execute(remote_statement, parameters).get_all()
        assert got == embedded.execute(embedded_statement, parameters).get_all()
        assert len(got) == 1
    bad = remote.prepare("MATCH (a RETURN a")
    assert not bad.is_success()
    assert bad.get_error_message() == embedded.prepare("MATCH (a RETURN a").get_error_message()
    with pytest.raises(RuntimeError, match="Parser exception"):
        remote.execute(bad)


def _complete_graph(path: Path, nodes: int) -> None:
    db = warren.Database(str(path))
    conn = warren.Connection(db)
    conn.execute("CREATE NODE TABLE N(id INT64, PRIMARY KEY(id))")
    conn.execute("CREATE REL TABLE E(FROM N TO N)")
    conn.execute(f"UNWIND range(0, {nodes - 1}) AS i CREATE (:N {{id: i}})")
    conn.execute("MATCH (a:N), (b:N) WHERE a.id <> b.id CREATE (a)-[:E]->(b)")
    conn.close()
    db.close()


#: On a complete graph of 60 nodes: 59^5 (7 * 10^8) walks, each enumerated (the rel variable is
#: bound), far longer than the test waits.
LONG_VARLEN = "MATCH (a:N {id: 0})-[e:E*1..5]->(b:N) RETURN sum(b.id)"


def _interrupt_until_done(interrupt: Callable[[], None], done: threading.Event) -> threading.Thread:
    """Calls ``interrupt`` every 0.2 s until ``done`` is set: an interrupt that comes before
    the query has started (on a busy machine) is not lost."""

    def repeat() -> None:
        while not done.wait(0.2):
            interrupt()

    thread = threading.Thread(target=repeat, daemon=True)
    thread.start()
    return thread


def test_interrupt_stops_a_long_query_on_the_server(tmp_path: Path) -> None:
    path = tmp_path / "db"
    _complete_graph(path, 60)
    embedded_error = ""
    db = warren.Database(str(path), read_only=True)
    conn = warren.Connection(db)
    done = threading.Event()
    interrupter = _interrupt_until_done(conn.interrupt, done)
    with pytest.raises(RuntimeError) as caught:
        conn.execute(LONG_VARLEN)
    done.set()
    interrupter.join()
    embedded_error = str(caught.value)
    conn.close()
    db.close()
    server = Server(path, "--read-only")
    try:
        with warren.connect(server.url, timeout=20) as remote:
            errors: list[BaseException] = []

            def run() -> None:
                try:
                    remote.execute(LONG_VARLEN)
                except BaseException as error:  # noqa: BLE001 (handed to the test thread)
                    errors.append(error)

            thread = threading.Thread(target=run)
            thread.start()
            done = threading.Event()
            interrupter = _interrupt_until_done(remote.interrupt, done)
            # The server's own timeout (30 s) would end it with "exceeded its timeout" instead.
            thread.join(timeout=25)
            done.set()
            interrupter.join()
            assert not thread.is_alive()
            assert len(errors) == 1
            assert isinstance(errors[0], RuntimeError)
            assert str(errors[0]) == embedded_error
            assert "Interrupted" in embedded_error
            assert "the query was interrupted" in embedded_error
            # The connection and the server's query thread serve the next query.
            assert remote.execute("MATCH (a:N) RETURN count(*)").get_next() == [60]
            remote.interrupt()  # nothing in flight: nothing happens
            assert remote.execute("RETURN 1").get_next() == [1]
    finally:
        server.stop()


@pytest.mark.parametrize(
    "query",
    [
        "MATCH (a:Nope) RETURN a",
        "RETURN CAST('abc' AS INT64)",
        "RETURN 1 / 0",
        "MATCH (a:P) RETURN a.nope",
        # Fails after the first batches have been sent: the error ends the stream.
        "UNWIND range(1, 20000) AS i RETURN CASE WHEN i = 15000 THEN CAST('x' AS INT64) ELSE i END",
        "CREATE (:P {ID: 1000})",
    ],
)
def test_errors_read_as_the_embedded_ones(
    embedded: warren.Connection, remote: warren.RemoteConnection, query: str
) -> None:
    with pytest.raises(RuntimeError) as expected:
        embedded.execute(query).get_all()
    with pytest.raises(RuntimeError) as got:
        remote.execute(query).get_all()
    assert str(got.value) == " ".join(line.rstrip() for line in str(expected.value).split("\n"))


def test_a_syntax_error_gives_its_first_line(embedded: warren.Connection, remote: warren.RemoteConnection) -> None:
    with pytest.raises(RuntimeError) as expected:
        embedded.execute("MATCH (a RETURN a")
    with pytest.raises(RuntimeError) as got:
        remote.execute("MATCH (a RETURN a")
    assert str(got.value) == str(expected.value).split("\n")[0]
    assert str(got.value).startswith("Parser exception")


def test_unreachable_servers_and_bad_urls() -> None:
    with pytest.raises(ConnectionError, match=r"http://127\.0\.0\.1:1"):
        warren.connect("http://127.0.0.1:1", timeout=5)
    with pytest.raises(ValueError, match="Not a Warren server URL"):
        warren.connect("ftp://127.0.0.1:1")
    with pytest.raises(ValueError, match="timeout"):
        warren.connect("http://127.0.0.1:1", timeout=0)


def test_a_stopped_server_raises_a_connection_error(db_path: Path, embedded: warren.Connection) -> None:
    del embedded
    server = Server(db_path, "--read-only")
    conn = warren.connect(server.url, timeout=5)
    assert conn.execute("RETURN 1").get_next() == [1]
    server.stop()
    with pytest.raises(ConnectionError, match=server.url.replace(".", r"\.")):
        conn.execute("RETURN 1")


def test_a_large_result_streams(remote: warren.RemoteConnection) -> None:
    rows = 3_000_000
    result = remote.execute(f"UNWIND range(1, {rows}) AS i RETURN i, 'v' + cast(i, 'STRING')")
    assert result.get_next() == [1, "v1"]
    native = result._query_result
    # Only the first batch has been taken from the reader thread, not the whole result.
    assert native.received_rows() <= 2048
    total, retained_max = 1, 0
    for chunk in iter(lambda: result.get_n(50_000), []):
        total += len(chunk)
        retained_max = max(retained_max, native.retained_bytes())
    assert total == rows
    # Iterating keeps at most 32 MiB of rows behind the cursor (plus the batch being read).
    assert retained_max <= (32 << 20) + (1 << 20)
    with pytest.raises(RuntimeError, match="dropped behind its cursor"):
        result.reset_iterator()
    with pytest.raises(RuntimeError, match="dropped behind its cursor"):
        result.get_as_arrow()
    assert result.get_num_tuples() == rows
    table = remote.execute(f"UNWIND range(1, {rows}) AS i RETURN i, i * 2 AS j").get_as_arrow()
    assert table.num_rows == rows
    assert table.column("j")[rows - 1].as_py() == 2 * rows


def test_two_results_stream_at_once(remote: warren.RemoteConnection) -> None:
    first = remote.execute("UNWIND range(1, 100000) AS i RETURN i")
    second = remote.execute("UNWIND range(1, 100000) AS i RETURN -i")
    for i in range(1, 5000):
        assert first.get_next() == [i]
        assert second.get_next() == [-i]
    assert first.get_num_tuples() == second.get_num_tuples() == 100000


def test_token_auth(db_path: Path, embedded: warren.Connection, tmp_path: Path) -> None:
    del embedded
    token_file = tmp_path / "token"
    token_file.write_text("s3cret\n")
    server = Server(db_path, "--read-only", "--token-file", str(token_file))
    try:
        assert warren.connect(server.url, token="s3cret").execute("RETURN 1").get_next() == [1]
        for token in (None, "wrong"):
            conn = warren.connect(server.url, token=token)
            with pytest.raises(RuntimeError, match="Unauthorized"):
                conn.execute("RETURN 1")
    finally:
        server.stop()


def test_writes_and_several_statements(tmp_path: Path) -> None:
    path = tmp_path / "db"
    _fill(path)
    server = Server(path)
    try:
        with warren.connect(server.url) as conn:
            created, result = conn.execute("CREATE (:C {name: 'z'}); MATCH (c:C) RETURN c.name ORDER BY c.name")
            assert created.get_all() == []
            assert result.get_all() == [["x"], ["y"], ["z"]]
            assert conn.execute("MATCH (c:C) RETURN count(*)").get_next() == [3]
        with pytest.raises(RuntimeError, match="Connection is closed"):
            conn.execute("RETURN 1")
    finally:
        server.stop()


def test_a_connection_idle_past_the_servers_keep_alive_still_works(server: Server) -> None:
    # The server closes a connection that sends no request for 10 s; an idle client older than
    # 5 s is not reused (a request on a connection being closed cannot be retried safely).
    conn = warren.connect(server.url)
    assert conn.execute("RETURN 1").get_next() == [1]
    time.sleep(11)
    assert conn.execute("RETURN 2").get_next() == [2]

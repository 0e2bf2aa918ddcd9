"""FLOAT[n]/DOUBLE[n] columns from Python: numpy and list parameters, COPY from pandas and pyarrow
frames with list, numpy and FixedSizeList columns, results as Arrow fixed-size lists, and the
vector top-k query against numpy's answer."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest
import warren


@pytest.fixture
def conn() -> warren.Connection:
    connection = warren.Connection(warren.Database())
    connection.execute("CREATE NODE TABLE V(id INT64, emb FLOAT[4], PRIMARY KEY(id))")
    return connection


def _vectors(rows: int) -> np.ndarray:
    return np.random.default_rng(3).standard_normal((rows, 4)).astype(np.float32)


def test_copy_from_pandas_numpy_column_and_top_k(conn: warren.Connection) -> None:
    vectors = _vectors(500)
    df = pd.DataFrame({"id": np.arange(500), "emb": list(vectors)})
    conn.execute("COPY V FROM df")
    q = np.array([0.5, -1.0, 0.25, 2.0], dtype=np.float32)
    result = conn.execute(
        "MATCH (n:V) RETURN n.id, array_cosine_similarity(n.emb, $q) AS s ORDER BY s DESC LIMIT 5",
        {"q": q},
    )
    rows = []
    while result.has_next():
        rows.append(result.get_next())
    cosine = vectors @ q / (np.linalg.norm(vectors, axis=1) * np.linalg.norm(q))
    expected = np.argsort(-cosine, kind="stable")[:5]
    assert [row[0] for row in rows] == list(expected)
    assert rows[0][1] == pytest.approx(float(cosine[expected[0]]), rel=1e-5)


def test_copy_from_arrow_fixed_size_list_and_back(conn: warren.Connection) -> None:
    vectors = _vectors(10)
    emb = pa.FixedSizeListArray.from_arrays(pa.array(vectors.reshape(-1)), 4)
    table = pa.table({"id": pa.array(range(10), pa.int64()), "emb": emb})
    conn.execute("COPY V FROM table")
    conn.execute("CREATE (:V {id: 10, emb: [1.0, NULL, 2.0, 3.0]})")
    conn.execute("CREATE (:V {id: 11})")
    arrow = conn.execute("MATCH (n:V) RETURN n.id, n.emb ORDER BY n.id").get_as_arrow()
    column = arrow.column("n.emb")
    assert column.type == pa.list_(pa.float32(), 4)
    assert np.allclose(np.array(column.to_pylist()[:10], dtype=np.float32), vectors)
    assert column.to_pylist()[10] == [1.0, None, 2.0, 3.0]
    assert column.to_pylist()[11] is None


def test_list_parameter_of_the_wrong_length_fails_as_in_kuzu(conn: warren.Connection) -> None:
    conn.execute("CREATE (:V {id: 1, emb: [1.0, 2.0, 3.0, 4.0]})")
    with pytest.raises(RuntimeError, match="Expected: 4, Actual: 3"):
        conn.execute("MATCH (n:V) RETURN array_distance(n.emb, $q)", {"q": [1.0, 2.0, 3.0]})
    with pytest.raises(RuntimeError, match="Expected: 4, Actual: 2"):
        conn.execute("CREATE (:V {id: 2, emb: $v})", {"v": np.array([1.0, 2.0])})

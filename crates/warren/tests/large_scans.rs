//! Node scans of a table past a million rows whose filter its integer prefilters decide: the
//! row path's scan finds the passing rows a window at a time on the query's threads, and must
//! return them as one thread would, in row order, without deleted rows, and stop early under
//! a LIMIT; the columnar path must return the same rows.

use warren::{Connection, Database, Value};

/// Rows: one scan window (2^20 rows) and a part of a second.
const NODES: i64 = (1 << 20) + 70;
/// Nodes deleted before the checkpoint (the scan must skip them): one inside the first
/// window's first morsel, the rows on each side of the windows' boundary, one in the last.
const DELETED: [i64; 4] = [5, (1 << 20) - 1, 1 << 20, (1 << 20) + 60];

fn database() -> Connection {
    let db = Database::in_memory();
    let mut conn = db.connect();
    conn.query("CREATE NODE TABLE P(ID INT64, PRIMARY KEY(ID))")
        .unwrap();
    conn.query(&format!(
        "UNWIND range(0, {}) AS i CREATE (:P {{ID: i}})",
        NODES - 1
    ))
    .unwrap();
    for id in DELETED {
        conn.query(&format!("MATCH (a:P) WHERE a.ID = {id} DELETE a"))
            .unwrap();
    }
    // Prefilters read stored columns (a table with a delta is scanned row by row): the rows
    // and the deletions leave the delta.
    conn.query("CHECKPOINT").unwrap();
    conn
}

/// The IDs `query` returns, in the order it returns them.
fn ids(conn: &mut Connection, query: &str) -> Vec<i64> {
    let mut result = conn.query(query).unwrap_or_else(|e| panic!("{query}: {e}"));
    result
        .collect_rows()
        .unwrap_or_else(|e| panic!("{query}: {e}"))
        .into_iter()
        .map(|row| match row.as_slice() {
            [Value::Int64(id)] => *id,
            other => panic!("{query}: row {other:?}"),
        })
        .collect()
}

#[test]
fn a_prefiltered_scan_past_a_million_rows_returns_rows_in_order_on_any_threads() {
    let mut conn = database();
    let live = |range: std::ops::Range<i64>| -> Vec<i64> {
        range.filter(|id| !DELETED.contains(id)).collect()
    };
    let even = |range: std::ops::Range<i64>| -> Vec<i64> {
        live(range).into_iter().filter(|id| id % 2 == 0).collect()
    };
    let cases: [(&str, Vec<i64>); 9] = [
        ("a.ID >= 3 AND a.ID < 8", live(3..8)),
        (
            "a.ID >= 1048560 AND a.ID < 1048590",
            live(1_048_560..1_048_590),
        ),
        ("a.ID >= 1048590", live(1_048_590..NODES)),
        ("a.ID < 0", Vec::new()),
        ("a.ID > 65530 AND a.ID <= 65540", live(65_531..65_541)),
        // IN lists of INT64s: a few values (some deleted, one repeated), a NULL, and more
        // than the compares' limit (searched per value), returned in row order.
        (
            "a.ID IN [1048590, 5, 3, 1048576, 7, 3]",
            vec![3, 7, 1_048_590],
        ),
        ("a.ID IN [4, NULL] AND a.ID < 10", vec![4]),
        (
            "a.ID IN [9, 8, 70, 65536, 1048575, 1048577, 1048600, 2, 11, 12, 13, 5000000]",
            vec![2, 8, 9, 11, 12, 13, 70, 65_536, 1_048_577, 1_048_600],
        ),
        // A conjunct that is no prefilter: evaluated on the rows the prefilters pass.
        ("a.ID >= 1048570 AND a.ID % 2 = 0", even(1_048_570..NODES)),
    ];
    for (threads, columnar) in [("1", "false"), ("2", "false"), ("1", "true"), ("2", "true")] {
        conn.query(&format!("CALL threads={threads}")).unwrap();
        conn.query(&format!("CALL columnar_results={columnar}"))
            .unwrap();
        let setting = format!("{threads} thread(s), columnar_results={columnar}");
        for (filter, expected) in &cases {
            let query = format!("MATCH (a:P) WHERE {filter} RETURN a.ID");
            assert_eq!(&ids(&mut conn, &query), expected, "{query}, {setting}");
        }
        // Every live row, in row order.
        let every = ids(&mut conn, "MATCH (a:P) WHERE a.ID >= 0 RETURN a.ID");
        assert_eq!(every, live(0..NODES), "every row, {setting}");
        let first = ids(&mut conn, "MATCH (a:P) WHERE a.ID >= 4 RETURN a.ID LIMIT 3");
        assert_eq!(first, [4, 6, 7], "a LIMIT, {setting}");
    }
}

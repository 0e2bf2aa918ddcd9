//! `COPY t FROM $df (options)`: COPY's own options of a table parameter (the form Warren's
//! Python package gives data frames). `FROM`/`TO` pick the pair of a rel table with several,
//! and `IGNORE_ERRORS` skips the failing rows with a warning each; without it a failing row
//! fails the whole COPY, which keeps nothing.

use std::collections::HashMap;
use std::sync::Arc;

use warren::{Connection, Database};
use warren_common::value::{StructValue, Value};

/// A table parameter: a STRUCT of one LIST per column.
fn table(columns: &[(&str, Vec<Value>)]) -> HashMap<String, Value> {
    let fields = columns
        .iter()
        .map(|(name, values)| (Arc::from(*name), Value::List(Arc::from(values.clone()))))
        .collect();
    HashMap::from([(
        "df".to_string(),
        Value::Struct(Arc::new(StructValue { fields })),
    )])
}

fn ints(values: &[Option<i64>]) -> Vec<Value> {
    values
        .iter()
        .map(|v| v.map_or(Value::Null, Value::Int64))
        .collect()
}

fn strings(conn: &mut Connection, query: &str) -> Vec<String> {
    conn.query(query).unwrap().to_strings().unwrap()
}

#[test]
fn ignore_errors_skips_the_failing_node_rows_with_warnings() {
    let db = Database::in_memory();
    let mut conn = db.connect();
    conn.query("CREATE NODE TABLE N(k INT64, PRIMARY KEY(k))")
        .unwrap();
    conn.query("CREATE (:N {k: 5})").unwrap();
    let df = table(&[("k", ints(&[Some(1), Some(2), Some(1), None, Some(5)]))]);
    let error = conn.query_with("COPY N FROM $df", &df).unwrap_err();
    assert!(
        error.to_string().contains("row 4 of the query: Found NULL"),
        "{error}"
    );
    assert_eq!(strings(&mut conn, "MATCH (n:N) RETURN n.k"), ["5"]);

    conn.query_with("COPY N FROM $df (IGNORE_ERRORS = true)", &df)
        .unwrap();
    assert_eq!(
        strings(&mut conn, "MATCH (n:N) RETURN n.k ORDER BY n.k"),
        ["1", "2", "5"]
    );
    let warnings = strings(
        &mut conn,
        "CALL show_warnings() RETURN message, line_number",
    );
    assert_eq!(warnings.len(), 3, "{warnings:?}");
    assert!(warnings[0].starts_with("Found duplicated primary key value 1,"));
    assert!(warnings[0].ends_with("|3"));
    assert!(warnings[1].starts_with("Found NULL"));
    assert!(warnings[2].starts_with("Found duplicated primary key value 5,"));
}

#[test]
fn from_and_to_pick_the_rel_pair() {
    let db = Database::in_memory();
    let mut conn = db.connect();
    conn.query("CREATE NODE TABLE A(k INT64, PRIMARY KEY(k))")
        .unwrap();
    conn.query("CREATE NODE TABLE B(k INT64, PRIMARY KEY(k))")
        .unwrap();
    conn.query("CREATE (:A {k: 1}), (:A {k: 2}), (:B {k: 3})")
        .unwrap();
    conn.query("CREATE REL TABLE E(FROM A TO A, FROM A TO B, w INT64)")
        .unwrap();
    let df = table(&[
        ("from", ints(&[Some(1), Some(2)])),
        ("to", ints(&[Some(2), Some(9)])),
        ("w", ints(&[Some(10), Some(20)])),
    ]);
    let error = conn.query_with("COPY E FROM $df", &df).unwrap_err();
    assert!(
        error.to_string().contains("multiple FROM and TO pairs"),
        "{error}"
    );
    let error = conn
        .query_with("COPY E FROM $df (from = 'A', to = 'A')", &df)
        .unwrap_err();
    assert!(
        error
            .to_string()
            .contains("Unable to find primary key value 9."),
        "{error}"
    );
    assert!(strings(&mut conn, "MATCH ()-[e:E]->() RETURN e.w").is_empty());

    conn.query_with(
        "COPY E FROM $df (from = 'A', to = 'A', ignore_errors = true)",
        &df,
    )
    .unwrap();
    assert_eq!(
        strings(&mut conn, "MATCH (a:A)-[e:E]->(b:A) RETURN a.k, b.k, e.w"),
        ["1|2|10"]
    );
    let warnings = strings(&mut conn, "CALL show_warnings() RETURN message");
    assert_eq!(warnings, ["Unable to find primary key value 9."]);
}

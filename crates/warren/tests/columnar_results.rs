//! The columnar result path answers exactly as the row operators do: the same rows in the same
//! order with the same values (NULLs included), for node scans and one-hop expansions over
//! stored data, over the delta of committed writes, and over both mixed; and reading a result
//! as column batches gives the rows `next_row` gives.

use warren::{Connection, Database, QueryResult, Value};

/// Queries the columnar path runs (checked with `is_columnar`).
const COLUMNAR: &[&str] = &[
    "MATCH (a:P) RETURN a.ID, a.name, a.score, a.ok, a.born, a.age",
    "MATCH (a:P) WHERE a.ID < 5 AND a.name IS NOT NULL RETURN a.name, a.ID",
    "MATCH (a:P) RETURN a",
    "MATCH (a:P)-[e:E]->(b:P) RETURN a.ID, e.w, e.note, b.name, e.n",
    "MATCH (a:P)-[e:E]->(b:P) WHERE e.w > 1.0 AND b.ID <> 3 RETURN a.ID, b.ID, e.n",
    "MATCH (a:P)<-[e:E]-(b:P) RETURN a.ID, b.ID",
    "MATCH (a:P)-[:F]->(q:Q) RETURN a.ID, q.name",
    "MATCH (a:P)-[e]->(b) RETURN a.ID, b.ID, e",
    "MATCH (a:P)-[e:E]->(b:P) RETURN a, e, b",
    "MATCH (n) RETURN n.ID, n.name",
    "MATCH (a:P)-[e:E]-(b:P) RETURN a.ID, b.ID, e.n",
    "MATCH (a:P)-[e:E]->(b:P) WHERE a.ID > 7 RETURN b.ID, b.score",
    "MATCH (a:P)-[:E]->(b:P) RETURN b.ok, a.born",
];

/// Queries of other shapes, which take the row path whatever the setting.
const ROW_PATH: &[&str] = &[
    "MATCH (a:P)-[e:E]->(b:P) RETURN a.ID + 1, b.ID",
    "MATCH (a:P) RETURN a.ID ORDER BY a.ID DESC",
    "MATCH (a:P) RETURN a.ID LIMIT 3",
    "MATCH (a:P)-[e:E]->(b:P) WHERE a.ID = 1 RETURN b.ID, b.score",
    "MATCH (a:P)-[:E]->(b:P)-[:E]->(c:P) RETURN a.ID, c.ID",
];

fn load() -> (Database, Connection) {
    let db = Database::in_memory();
    let mut conn = db.connect();
    for statement in [
        "CREATE NODE TABLE P(ID INT64, name STRING, score DOUBLE, ok BOOL, born DATE, age INT32, PRIMARY KEY(ID))",
        "CREATE NODE TABLE Q(ID INT64, name STRING, PRIMARY KEY(ID))",
        "CREATE REL TABLE E(FROM P TO P, w DOUBLE, note STRING, n INT64)",
        "CREATE REL TABLE F(FROM P TO Q, k INT64)",
    ] {
        conn.query(statement).unwrap();
    }
    for i in 0..12 {
        let name = if i % 4 == 3 {
            "NULL".to_string()
        } else {
            format!("'p{i}'")
        };
        let score = if i % 5 == 2 {
            "NULL".to_string()
        } else {
            format!("{}.5", i)
        };
        let ok = ["true", "false", "NULL"][i % 3];
        conn.query(&format!(
            "CREATE (:P {{ID: {i}, name: {name}, score: {score}, ok: {ok}, born: date('2020-01-0{}'), age: {}}})",
            1 + i % 9,
            20 + i
        ))
        .unwrap();
    }
    conn.query("CREATE (:Q {ID: 100, name: 'q100'}), (:Q {ID: 101})")
        .unwrap();
    add_rels(&mut conn, 0);
    (db, conn)
}

/// Rels from every node `i` to `(i * 7 + k) % 12` for k in 1..=3, some properties NULL.
fn add_rels(conn: &mut Connection, salt: i64) {
    for i in 0..12i64 {
        for k in 1..=3i64 {
            let to = (i * 7 + k + salt) % 12;
            let note = if (i + k) % 4 == 0 {
                "NULL".to_string()
            } else {
                format!("'n{i}-{k}'")
            };
            let n = if (i + k) % 5 == 0 {
                "NULL".to_string()
            } else {
                (i * 10 + k + salt).to_string()
            };
            conn.query(&format!(
                "MATCH (a:P {{ID: {i}}}), (b:P {{ID: {to}}}) CREATE (a)-[:E {{w: {}.25, note: {note}, n: {n}}}]->(b)",
                k + salt
            ))
            .unwrap();
        }
        if i % 3 == 0 {
            conn.query(&format!(
                "MATCH (a:P {{ID: {i}}}), (q:Q {{ID: {}}}) CREATE (a)-[:F {{k: {i}}}]->(q)",
                100 + i % 2
            ))
            .unwrap();
        }
    }
}

fn rows(result: &mut QueryResult) -> Vec<Vec<Value>> {
    result.collect_rows().unwrap()
}

/// Every query answers the same with the columnar path on and off, row by row and batch by
/// batch.
fn check_all(conn: &mut Connection, layout: &str) {
    for (queries, columnar) in [(COLUMNAR, true), (ROW_PATH, false)] {
        for query in queries {
            conn.query("CALL columnar_results=false").unwrap();
            let mut expected_result = conn.query(query).unwrap();
            assert!(!expected_result.is_columnar());
            let expected = rows(&mut expected_result);
            let expected_strings = conn.query(query).unwrap().to_strings().unwrap();
            conn.query("CALL columnar_results=true").unwrap();
            let mut result = conn.query(query).unwrap();
            assert_eq!(result.is_columnar(), columnar, "{layout}: {query}");
            assert_eq!(rows(&mut result), expected, "{layout}: {query}");
            assert_eq!(
                conn.query(query).unwrap().to_strings().unwrap(),
                expected_strings,
                "{layout}: {query}"
            );
            // Batches of odd sizes, and batches after single rows.
            let mut result = conn.query(query).unwrap();
            let mut batched = Vec::new();
            if let Some(row) = result.next_row().unwrap() {
                batched.push(row);
            }
            while let Some(batch) = result.next_columns(5).unwrap() {
                assert!(batch.len() <= 5 && !batch.is_empty());
                batched.extend((0..batch.len()).map(|r| batch.row(r)));
            }
            assert_eq!(batched, expected, "{layout}, in batches: {query}");
            let rerun = result.rerun().expect("a read-only result reruns");
            assert_eq!(rows(&mut { rerun }), expected, "{layout}, rerun: {query}");
        }
    }
}

#[test]
fn columnar_answers_equal_the_row_path_over_delta_stored_and_mixed_data() {
    let (_db, mut conn) = load();
    check_all(&mut conn, "delta");
    conn.query("CHECKPOINT").unwrap();
    check_all(&mut conn, "stored");
    add_rels(&mut conn, 5);
    conn.query("MATCH (a:P {ID: 4})-[e:E]->(b:P) DELETE e")
        .unwrap();
    conn.query("MATCH (a:P {ID: 2}) SET a.name = NULL, a.score = 99.0")
        .unwrap();
    conn.query("MATCH (a:P)-[e:E]->(b:P) WHERE a.ID = 5 SET e.n = 7")
        .unwrap();
    conn.query("MATCH (a:P {ID: 9}) DETACH DELETE a").unwrap();
    conn.query("CREATE (:P {ID: 50, name: 'new'})").unwrap();
    conn.query("MATCH (a:P {ID: 50}), (b:P {ID: 1}) CREATE (a)-[:E {w: 3.0}]->(b)")
        .unwrap();
    check_all(&mut conn, "mixed");
}

#[test]
fn column_batches_hold_typed_vectors_with_validity() {
    use warren::column_batch::ColumnVector;
    let (_db, mut conn) = load();
    conn.query("CHECKPOINT").unwrap();
    let mut result = conn
        .query("MATCH (a:P) RETURN a.ID, a.score, a.ok, a.name, a.born")
        .unwrap();
    let batch = result.next_columns(1000).unwrap().unwrap();
    assert_eq!(batch.len(), 12);
    assert!(result.next_columns(1000).unwrap().is_none());
    assert!(matches!(
        batch.columns[0],
        ColumnVector::Int64 { validity: None, .. }
    ));
    assert!(matches!(
        batch.columns[1],
        ColumnVector::Double {
            validity: Some(_),
            ..
        }
    ));
    assert!(matches!(batch.columns[2], ColumnVector::Bool { .. }));
    assert!(matches!(batch.columns[3], ColumnVector::String { .. }));
    assert!(matches!(batch.columns[4], ColumnVector::Values(_)));
    assert!(batch.columns[3].is_null(3));
    assert_eq!(batch.columns[3].str_at(1), Some("p1"));
    assert_eq!(batch.columns[1].value(2), Value::Null);
}

/// Batches big enough to gather their columns on several threads answer as the row path does.
#[test]
fn parallel_gathers_answer_as_the_row_path() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = dir.path().join("nodes.csv");
    let edges = dir.path().join("edges.csv");
    let mut text = String::from("ID,name\n");
    for i in 0..1000 {
        text.push_str(&format!("{},n{}\n", 1000 - i, i % 7));
    }
    std::fs::write(&nodes, text).unwrap();
    let mut text = String::from("from,to,w\n");
    for i in 0..40_000u64 {
        let (a, b) = (1 + i * 7919 % 1000, 1 + i * 104_729 % 1000);
        text.push_str(&format!("{a},{b},{}\n", i % 13));
    }
    std::fs::write(&edges, text).unwrap();
    let db = Database::in_memory();
    let mut conn = db.connect();
    conn.query("CREATE NODE TABLE N(ID INT64, name STRING, PRIMARY KEY(ID))")
        .unwrap();
    conn.query("CREATE REL TABLE R(FROM N TO N, w INT64)")
        .unwrap();
    conn.query(&format!("COPY N FROM '{}' (HEADER=true)", nodes.display()))
        .unwrap();
    conn.query(&format!("COPY R FROM '{}' (HEADER=true)", edges.display()))
        .unwrap();
    let query = "MATCH (a:N)-[e:R]->(b:N) RETURN a.ID, b.name, e.w, b.ID";
    conn.query("CALL columnar_results=false").unwrap();
    let expected = rows(&mut conn.query(query).unwrap());
    assert_eq!(expected.len(), 40_000);
    conn.query("CALL columnar_results=true").unwrap();
    for threads in [1, 2, 3] {
        conn.query(&format!("CALL threads={threads}")).unwrap();
        for rows_max in [30_000, 1 << 16, 17_000] {
            let mut result = conn.query(query).unwrap();
            let mut got = Vec::new();
            while let Some(batch) = result.next_columns(rows_max).unwrap() {
                assert!(batch.len() <= rows_max);
                got.extend((0..batch.len()).map(|r| batch.row(r)));
            }
            assert_eq!(got, expected, "threads={threads}, rows_max={rows_max}");
        }
        // Rows read one by one after a batch, and the other shapes, in parallel too.
        let mut result = conn.query(query).unwrap();
        let mut got = vec![result.next_row().unwrap().unwrap()];
        while let Some(batch) = result.next_columns(20_000).unwrap() {
            got.extend((0..batch.len()).map(|r| batch.row(r)));
        }
        assert_eq!(got, expected, "threads={threads}, a row first");
        for other in [
            "MATCH (a:N)<-[e:R]-(b:N) RETURN a.ID, b.ID, e",
            "MATCH (a:N)-[e:R]->(b:N) WHERE e.w > 3 RETURN a.name, b.ID",
        ] {
            let mut result = conn.query(other).unwrap();
            assert!(result.is_columnar());
            let mut got = Vec::new();
            while let Some(batch) = result.next_columns(1 << 16).unwrap() {
                got.extend((0..batch.len()).map(|r| batch.row(r)));
            }
            conn.query("CALL columnar_results=false").unwrap();
            let want = rows(&mut conn.query(other).unwrap());
            conn.query("CALL columnar_results=true").unwrap();
            assert_eq!(got, want, "threads={threads}: {other}");
        }
    }
}

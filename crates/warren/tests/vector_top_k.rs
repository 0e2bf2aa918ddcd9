//! `ORDER BY <array function>(n.vector, $q) LIMIT k` runs as the parallel vector top-k scan and
//! answers exactly as the row path (the same query without LIMIT, fully sorted, then cut):
//! on random FLOAT[n] and DOUBLE[n] data with NULL rows, NULL elements and tied vectors, with
//! and without a WHERE, with SKIP, over stored rows, over the delta of committed writes
//! (inserts, deletes, updates) and after a checkpoint; and a general ORDER BY ... LIMIT
//! (a bounded heap) answers as the full sort does.

use std::collections::HashMap;

use proptest::prelude::*;
use warren::{Connection, Database, Value};

/// A small deterministic generator (xorshift64*), so that a failure reproduces.
struct TestRng(u64);

impl TestRng {
    fn new() -> Self {
        TestRng(0x9e37_79b9_7f4a_7c15)
    }

    fn random_range<R: Into<std::ops::Range<i64>>>(&mut self, range: R) -> i64 {
        let range = range.into();
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        range.start + (x % (range.end - range.start) as u64) as i64
    }
}

const ROWS: usize = 3000;

fn vector_literal(values: &[Option<f64>]) -> String {
    let items: Vec<String> = values
        .iter()
        .map(|v| v.map_or("NULL".to_string(), |x| format!("{x:.3}")))
        .collect();
    format!("[{}]", items.join(", "))
}

fn random_vector(rng: &mut TestRng, dim: usize, null_elements: bool) -> Vec<Option<f64>> {
    (0..dim)
        .map(|_| {
            if null_elements && rng.random_range(0..50) == 0 {
                None
            } else {
                // Few distinct values, so that some rows tie.
                Some(rng.random_range(-4..5) as f64 / 2.0)
            }
        })
        .collect()
}

fn create_rows(conn: &mut Connection, rng: &mut TestRng, first: usize, count: usize) {
    for id in first..first + count {
        let (e, d) = if rng.random_range(0..20) == 0 {
            ("NULL".to_string(), "NULL".to_string())
        } else {
            (
                vector_literal(&random_vector(rng, 7, true)),
                vector_literal(&random_vector(rng, 4, false)),
            )
        };
        let grp = rng.random_range(0..3);
        conn.query(&format!(
            "CREATE (:T {{id: {id}, grp: {grp}, e: {e}, d: {d}}})"
        ))
        .unwrap();
    }
}

fn load(db: &Database, rng: &mut TestRng) -> Connection {
    let mut conn = db.connect();
    conn.query(
        "CREATE NODE TABLE T(id INT64, grp INT64, e FLOAT[7], d DOUBLE[4], PRIMARY KEY(id))",
    )
    .unwrap();
    // Through a CSV COPY, so that the rows are stored in the segment's contiguous column.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("t.csv");
    let mut csv = String::new();
    for id in 0..ROWS {
        let grp = rng.random_range(0..3);
        let (e, d) = if id % 17 == 5 {
            (String::new(), String::new())
        } else {
            (
                format!("\"{}\"", vector_literal(&random_vector(rng, 7, true))),
                format!("\"{}\"", vector_literal(&random_vector(rng, 4, false))),
            )
        };
        csv.push_str(&format!("{id},{grp},{e},{d}\n"));
    }
    std::fs::write(&path, csv).unwrap();
    conn.query(&format!("COPY T FROM '{}' (HEADER=false)", path.display()))
        .unwrap();
    conn.query("CALL THREADS=2").unwrap();
    conn
}

fn ids(conn: &mut Connection, query: &str, parameters: &HashMap<String, Value>) -> Vec<Value> {
    let mut result = conn
        .query_with(query, parameters)
        .unwrap_or_else(|e| panic!("{query}: {e}"));
    result
        .collect_rows()
        .unwrap()
        .into_iter()
        .map(|row| row[0].clone())
        .collect()
}

fn explain(conn: &mut Connection, query: &str, parameters: &HashMap<String, Value>) -> String {
    let mut result = conn
        .query_with(&format!("EXPLAIN {query}"), parameters)
        .unwrap();
    result.to_strings().unwrap().join("\n")
}

/// Every query shape against its full sort, with a random query vector.
fn check_all(conn: &mut Connection, rng: &mut TestRng) {
    let q7: Vec<Value> = random_vector(rng, 7, false)
        .into_iter()
        .map(|x| Value::Double(x.unwrap()))
        .collect();
    let q4 = vector_literal(&random_vector(rng, 4, false));
    let parameters = HashMap::from([("q".to_string(), Value::List(q7.into()))]);
    let shapes = [
        ("array_cosine_similarity(n.e, $q)", "DESC", ""),
        ("array_distance(n.e, $q)", "", ""),
        ("array_inner_product($q, n.e)", "DESC", "WHERE n.grp = 1"),
        ("array_squared_distance(n.e, $q)", "ASC", "WHERE n.grp <> 2"),
        (&*format!("array_cosine_similarity(n.d, {q4})"), "DESC", ""),
        (
            &*format!("array_distance(n.d, {q4})"),
            "",
            "WHERE n.grp = 0",
        ),
    ];
    for (function, order, filter) in shapes {
        let full = format!("MATCH (n:T) {filter} RETURN n.id, {function} AS s ORDER BY s {order}");
        let sorted = ids(conn, &full, &parameters);
        for (skip, limit) in [(0, 10), (3, 7), (0, 1), (0, 5000)] {
            let query = format!("{full} SKIP {skip} LIMIT {limit}");
            let plan = explain(conn, &query, &parameters);
            assert!(plan.contains("VectorTopK"), "{query}\n{plan}");
            let expected: Vec<Value> = sorted.iter().skip(skip).take(limit).cloned().collect();
            assert_eq!(ids(conn, &query, &parameters), expected, "{query}");
        }
        // The function in ORDER BY itself.
        let query =
            format!("MATCH (n:T) {filter} RETURN n.id ORDER BY {function} {order} LIMIT 12");
        let plan = explain(conn, &query, &parameters);
        assert!(plan.contains("VectorTopK"), "{query}\n{plan}");
        let expected: Vec<Value> = sorted.iter().take(12).cloned().collect();
        assert_eq!(ids(conn, &query, &parameters), expected, "{query}");
        // The node carried by WITH, as a search that seeds a later clause is written.
        let function_of_m = function.replace("n.", "m.");
        let query = format!(
            "MATCH (n:T) {filter} WITH n AS m ORDER BY {function_of_m} {order} LIMIT 12 \
             RETURN m.id"
        );
        let plan = explain(conn, &query, &parameters);
        assert!(plan.contains("VectorTopK"), "{query}\n{plan}");
        assert_eq!(ids(conn, &query, &parameters), expected, "{query}");
        let query =
            format!("MATCH (n:T) {filter} WITH n ORDER BY {function} {order} LIMIT 12 RETURN n.id");
        assert!(
            explain(conn, &query, &parameters).contains("VectorTopK"),
            "{query}"
        );
        assert_eq!(ids(conn, &query, &parameters), expected, "{query}");
    }
}

#[test]
fn vector_top_k_answers_as_the_full_sort() {
    let mut rng = TestRng::new();
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path().join("db")).unwrap();
    let mut conn = load(&db, &mut rng);
    check_all(&mut conn, &mut rng);

    // The delta: appended rows, deleted rows, updated vectors.
    create_rows(&mut conn, &mut rng, ROWS, 200);
    conn.query("MATCH (n:T) WHERE n.id % 13 = 4 DELETE n")
        .unwrap();
    conn.query("MATCH (n:T) WHERE n.id % 29 = 1 SET n.e = [1.0, 0.5, 0.5, 0.0, 0.0, -1.0, 2.0]")
        .unwrap();
    conn.query("MATCH (n:T) WHERE n.id % 31 = 2 SET n.e = NULL")
        .unwrap();
    check_all(&mut conn, &mut rng);

    conn.query("CHECKPOINT").unwrap();
    check_all(&mut conn, &mut rng);
    drop(conn);
    drop(db);
    let db = Database::open(dir.path().join("db")).unwrap();
    let mut conn = db.connect();
    conn.query("CALL THREADS=2").unwrap();
    check_all(&mut conn, &mut rng);
}

#[test]
fn a_null_query_vector_orders_every_row_as_null() {
    let mut rng = TestRng::new();
    let db = Database::in_memory();
    let mut conn = load(&db, &mut rng);
    let parameters = HashMap::from([("q".to_string(), Value::Null)]);
    let query =
        "MATCH (n:T) RETURN n.id ORDER BY array_distance(n.e, CAST($q AS FLOAT[7])) LIMIT 3";
    let got = ids(&mut conn, query, &parameters);
    assert_eq!(got, vec![Value::Int64(0), Value::Int64(1), Value::Int64(2)]);
}

#[test]
fn a_query_vector_of_the_wrong_length_fails_as_in_kuzu() {
    let mut rng = TestRng::new();
    let db = Database::in_memory();
    let mut conn = load(&db, &mut rng);
    let parameters = HashMap::from([(
        "q".to_string(),
        Value::List(vec![Value::Double(1.0); 3].into()),
    )]);
    let error = conn
        .query_with(
            "MATCH (n:T) RETURN n.id ORDER BY array_distance(n.e, $q) LIMIT 3",
            &parameters,
        )
        .and_then(|mut r| r.collect_rows())
        .unwrap_err()
        .to_string();
    assert!(
        error.contains(
            "Unsupported casting LIST with incorrect list entry to ARRAY. Expected: 7, Actual: 3."
        ),
        "{error}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// A general ORDER BY ... SKIP ... LIMIT (a bounded heap) keeps what the full sort keeps.
    #[test]
    fn top_n_answers_as_the_full_sort(values in prop::collection::vec((0i64..5, prop::option::of(0i64..4)), 0..60),
                                      skip in 0usize..8, limit in 0usize..12) {
        let db = Database::in_memory();
        let mut conn = db.connect();
        conn.query("CREATE NODE TABLE U(id INT64, a INT64, b INT64, PRIMARY KEY(id))").unwrap();
        for (id, (a, b)) in values.iter().enumerate() {
            let b = b.map_or("NULL".to_string(), |b| b.to_string());
            conn.query(&format!("CREATE (:U {{id: {id}, a: {a}, b: {b}}})")).unwrap();
        }
        let full = "MATCH (u:U) RETURN u.id ORDER BY u.a, u.b DESC";
        let sorted = ids(&mut conn, full, &HashMap::new());
        let query = format!("{full} SKIP {skip} LIMIT {limit}");
        let plan = explain(&mut conn, &query, &HashMap::new());
        prop_assert!(plan.contains("TopN"), "{}", plan);
        let expected: Vec<Value> = sorted.into_iter().skip(skip).take(limit).collect();
        prop_assert_eq!(ids(&mut conn, &query, &HashMap::new()), expected);
    }
}

// ---- Through the int8 copy --------------------------------------------------------------
//
// `ORDER BY array_cosine_similarity(...) DESC LIMIT k` reads the int8 copy of the stored
// FLOAT block from the second query of that block on (`warren_exec::vector_copy`). Its answers
// (rows and score bits) must be exactly the FLOAT scan's: a database with the copies turned
// off (`set_vector_copy_limit(0)`) gets the same statements and is the reference.

/// A FLOAT value from a few regimes: ordinary, few distinct (ties), large, tiny, zero, NaN.
fn random_element(rng: &mut TestRng) -> f32 {
    match rng.random_range(0..40) {
        0 => f32::NAN,
        1..=3 => 0.0,
        4..=5 => rng.random_range(-1000..1000) as f32 * 1e3,
        6..=7 => rng.random_range(-1000..1000) as f32 * 1e-7,
        8..=15 => rng.random_range(-2..3) as f32 * 0.5,
        _ => rng.random_range(-10_000..10_000) as f32 / 7919.0,
    }
}

/// A row's vector: NULL, a zero vector, a copy of an earlier row (a tie), or random values.
fn random_row(rng: &mut TestRng, dim: usize, earlier: &[Option<Vec<f32>>]) -> Option<Vec<f32>> {
    match rng.random_range(0..30) {
        0 => None,
        1 => Some(vec![0.0; dim]),
        2..=4 if !earlier.is_empty() => {
            earlier[rng.random_range(0..earlier.len() as i64) as usize].clone()
        }
        _ => Some((0..dim).map(|_| random_element(rng)).collect()),
    }
}

fn float_list(values: &[f32]) -> Value {
    Value::List(values.iter().map(|&x| Value::Float(x)).collect())
}

fn query_vector(rng: &mut TestRng, dim: usize, rows: &[Option<Vec<f32>>]) -> Value {
    let values: Vec<f32> = match rng.random_range(0..12) {
        0 => vec![0.0; dim],
        1 => (0..dim)
            .map(|i| if i == 0 { f32::NAN } else { 1.0 })
            .collect(),
        2..=4 if rows.iter().any(Option::is_some) => loop {
            if let Some(row) = &rows[rng.random_range(0..rows.len() as i64) as usize] {
                break row.clone();
            }
        },
        _ => (0..dim)
            .map(|_| rng.random_range(-10_000..10_000) as f32 / 3571.0)
            .collect(),
    };
    // As the Python package passes it: a list of DOUBLE.
    Value::List(
        values
            .iter()
            .map(|&x| Value::Double(f64::from(x)))
            .collect(),
    )
}

/// The same table in two databases: `copies` with the int8 copies, `plain` without.
struct Pair {
    copies: Connection,
    plain: Connection,
}

impl Pair {
    fn run(&mut self, statement: &str, parameters: &HashMap<String, Value>) {
        for conn in [&mut self.copies, &mut self.plain] {
            conn.query_with(statement, parameters)
                .unwrap_or_else(|e| panic!("{statement}: {e}"));
        }
    }

    /// Both databases' rows for `query`, as text that keeps a float's bits.
    fn answers(&mut self, query: &str, parameters: &HashMap<String, Value>) -> [Vec<String>; 2] {
        [&mut self.copies, &mut self.plain].map(|conn| {
            conn.query_with(query, parameters)
                .and_then(|mut result| result.collect_rows())
                .unwrap_or_else(|e| panic!("{query}: {e}"))
                .into_iter()
                .map(|row| {
                    row.iter()
                        .map(|value| match value {
                            Value::Float(x) => format!("f{:08x}", x.to_bits()),
                            Value::Double(x) => format!("d{:016x}", x.to_bits()),
                            other => format!("{other:?}"),
                        })
                        .collect::<Vec<_>>()
                        .join(" ")
                })
                .collect()
        })
    }
}

/// The query shapes of one check, with `k` rows kept.
fn int8_queries(k: usize, grp: i64) -> Vec<String> {
    let skip = k / 3;
    vec![
        format!(
            "MATCH (n:T) RETURN n.id, array_cosine_similarity(n.e, $q) AS s ORDER BY s DESC LIMIT {k}"
        ),
        format!(
            "MATCH (n:T) WHERE n.grp = {grp} RETURN n.id, array_cosine_similarity($q, n.e) AS s \
             ORDER BY s DESC LIMIT {k}"
        ),
        format!(
            "MATCH (n:T) WHERE n.grp <> {grp} RETURN n.id ORDER BY array_cosine_similarity(n.e, $q) \
             DESC SKIP {skip} LIMIT {k}"
        ),
    ]
}

fn check_int8_against_plain(
    pair: &mut Pair,
    rng: &mut TestRng,
    dim: usize,
    rows: &[Option<Vec<f32>>],
) {
    for _ in 0..4 {
        let parameters = HashMap::from([("q".to_string(), query_vector(rng, dim, rows))]);
        let k = rng.random_range(0..rows.len() as i64 + 4) as usize;
        for query in int8_queries(k, rng.random_range(0..3)) {
            let [copies, plain] = pair.answers(&query, &parameters);
            assert_eq!(copies, plain, "{query} with {parameters:?}");
        }
    }
}

#[test]
fn the_int8_copy_answers_exactly_as_the_float_scan() {
    let mut rng = TestRng::new();
    let mut cases_through_the_copy = 0;
    for case in 0..14 {
        // Even cases: short rows (the int8 stage alone); odd ones: rows long enough for the
        // 4-bit stage (`warren_vector::quantized::NIBBLE_DIM_MIN`).
        let dim = if case % 2 == 0 {
            1 + rng.random_range(0..40) as usize
        } else {
            64 + rng.random_range(0..70) as usize
        };
        let stored = if case == 0 {
            0
        } else {
            rng.random_range(1..400) as usize
        };
        let mut rows: Vec<Option<Vec<f32>>> = Vec::new();
        for _ in 0..stored {
            let row = random_row(&mut rng, dim, &rows);
            rows.push(row);
        }
        let (with_copies, plain) = (Database::in_memory(), Database::in_memory());
        plain.set_vector_copy_limit(0);
        let mut pair = Pair {
            copies: with_copies.connect(),
            plain: plain.connect(),
        };
        pair.run(
            &format!("CREATE NODE TABLE T(id INT64, grp INT64, e FLOAT[{dim}], PRIMARY KEY(id))"),
            &HashMap::new(),
        );
        // COPY from a table parameter: the rows become the stored, contiguous FLOAT block.
        let column = |values: Vec<Value>| Value::List(values.into());
        let frame = Value::Struct(std::sync::Arc::new(warren_common::value::StructValue {
            fields: vec![
                (
                    "id".into(),
                    column((0..stored as i64).map(Value::Int64).collect()),
                ),
                (
                    "grp".into(),
                    column(
                        (0..stored)
                            .map(|_| Value::Int64(rng.random_range(0..3)))
                            .collect(),
                    ),
                ),
                (
                    "e".into(),
                    column(
                        rows.iter()
                            .map(|r| r.as_deref().map_or(Value::Null, float_list))
                            .collect(),
                    ),
                ),
            ],
        }));
        if stored > 0 {
            pair.run(
                "COPY T FROM $df",
                &HashMap::from([("df".to_string(), frame)]),
            );
        }
        pair.run(&format!("CALL THREADS={}", 1 + case % 3), &HashMap::new());
        check_int8_against_plain(&mut pair, &mut rng, dim, &rows);

        // The delta: appended rows, deleted rows, updated and NULLed vectors.
        for id in stored..stored + 20 {
            let row = random_row(&mut rng, dim, &rows);
            let vector = row.as_deref().map_or(Value::Null, float_list);
            let parameters = HashMap::from([("v".to_string(), vector)]);
            pair.run(
                &format!("CREATE (:T {{id: {id}, grp: {}, e: $v}})", id % 3),
                &parameters,
            );
            rows.push(row);
        }
        let modulus = 2 + rng.random_range(0..9);
        pair.run(
            &format!("MATCH (n:T) WHERE n.id % {modulus} = 1 DELETE n"),
            &HashMap::new(),
        );
        for _ in 0..5 {
            let id = rng.random_range(0..rows.len() as i64);
            let row = random_row(&mut rng, dim, &rows);
            let vector = row.as_deref().map_or(Value::Null, float_list);
            let parameters = HashMap::from([("v".to_string(), vector)]);
            pair.run(
                &format!("MATCH (n:T) WHERE n.id = {id} SET n.e = $v"),
                &parameters,
            );
        }
        check_int8_against_plain(&mut pair, &mut rng, dim, &rows);

        assert_eq!(plain.vector_copy_stats().used, 0);
        if with_copies.vector_copy_stats().used > 0 {
            cases_through_the_copy += 1;
        }
    }
    // Every case with stored rows and a describable query went through the copy at least once.
    assert!(
        cases_through_the_copy >= 10,
        "{cases_through_the_copy} of 14"
    );
}

#[test]
fn the_copy_is_built_on_the_second_query_and_follows_the_stored_block() {
    let mut rng = TestRng::new();
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open(dir.path().join("db")).unwrap();
    let mut conn = load(&db, &mut rng);
    let parameters = HashMap::from([(
        "q".to_string(),
        Value::List(vec![Value::Double(0.5); 7].into()),
    )]);
    // (NULL vectors come first in a descending order: the filter leaves them out.)
    let query = "MATCH (n:T) WHERE n.e IS NOT NULL RETURN n.id \
                 ORDER BY array_cosine_similarity(n.e, $q) DESC LIMIT 5";
    let first = ids(&mut conn, query, &parameters);
    assert_eq!(
        db.vector_copy_stats().built,
        0,
        "a one-off query builds nothing"
    );
    assert_eq!(ids(&mut conn, query, &parameters), first);
    let stats = db.vector_copy_stats();
    assert_eq!((stats.built, stats.used, stats.copies), (1, 1, 1));
    assert_eq!(stats.bytes, ROWS * (7 + 16) + 7 * 4);
    // A write goes to the delta: the stored block and its copy stay.
    conn.query("MATCH (n:T) WHERE n.id = 3 SET n.e = [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5]")
        .unwrap();
    assert!(ids(&mut conn, query, &parameters).contains(&Value::Int64(3)));
    assert_eq!(db.vector_copy_stats().built, 1);
    // A checkpoint writes a new block: the old copy goes with the old block, a new one is
    // built on the new block's second query.
    conn.query("CHECKPOINT").unwrap();
    let after = ids(&mut conn, query, &parameters);
    assert!(after.contains(&Value::Int64(3)));
    assert_eq!(ids(&mut conn, query, &parameters), after);
    let stats = db.vector_copy_stats();
    assert_eq!((stats.built, stats.copies), (2, 1), "{stats:?}");
}

//! Property tests of the operators that read a node scan's columns instead of its rows.
//!
//! Aggregates folded from the stored columns (`FoldColumns`): an aggregation
//! without keys over a node scan (`count`, `sum`, `min`, `max`, `avg` of the scanned node's
//! properties, `count(*)`) gives exactly what the same aggregation gives over rows (the
//! reference passes the node through a `WITH` that keeps a second column, so the aggregation
//! reads rows), value for value and type for type (DOUBLE sums and averages to the bit), or
//! the same error, on random tables with NULLs, NaNs, signed zeros, infinities and extreme
//! integers, stored in the delta, folded by a checkpoint, or both, with nodes deleted and
//! properties updated in the delta, scanning one table or every table (whose columns differ),
//! unfiltered, filtered by prefilters alone, or by a filter evaluated per node.
//!
//! Grouped by keys over the scanned node alone (`a.x % 3`, `a.s`, `a`), the folds give the
//! rows' groups in the rows' order of first appearance, or the rows' error (a zero divisor,
//! an overflow).
//!
//! Filters that are no prefilter, decided on the stored INT64 arrays where they compile
//! (`eval::column_expr`), keep the nodes the evaluator keeps, in order, or fail as it fails,
//! in a node scan, a fold and top nodes.
//!
//! Top nodes chosen from the key columns (`TopNodes`): `ORDER BY` properties of the scanned
//! node `[SKIP s] LIMIT k` over a projection of the scan gives the rows, in the order, that
//! the row path's stable sort gives (ties by scan order), on the same tables, layouts and
//! filters.

use proptest::prelude::*;
use warren::{Connection, Database};

/// One node of table P: (x INT64, y DOUBLE, z INT32, s STRING), each maybe NULL.
type Node = (Option<i64>, Option<f64>, Option<i32>, Option<String>);

/// How the nodes are stored: all in the delta, folded by a checkpoint, or the first `split`
/// folded and the rest in the delta. Deletions and updates come after the last checkpoint.
#[derive(Clone, Copy, Debug)]
enum Layout {
    Delta,
    Folded,
    Mixed { split: usize },
}

#[derive(Clone, Debug)]
struct Tables {
    p: Vec<Node>,
    /// Q's nodes: (x DOUBLE, y DOUBLE), so `x` is INT64 in P and DOUBLE in Q.
    q: Vec<(Option<f64>, Option<f64>)>,
    deleted: Vec<u32>,
    /// (P node, new x).
    updated: Vec<(u32, Option<i64>)>,
}

fn literal<T: ToString>(value: &Option<T>) -> String {
    value.as_ref().map_or("NULL".into(), T::to_string)
}

fn double(value: &Option<f64>) -> String {
    match value {
        None => "NULL".into(),
        Some(v) if v.is_nan() => "cast('nan', 'DOUBLE')".into(),
        Some(v) if v.is_infinite() && *v > 0.0 => "cast('inf', 'DOUBLE')".into(),
        Some(v) if v.is_infinite() => "cast('-inf', 'DOUBLE')".into(),
        Some(v) => format!("cast('{v:?}', 'DOUBLE')"),
    }
}

fn load(tables: &Tables, layout: Layout) -> Connection {
    let db = Database::in_memory();
    let mut conn = db.connect();
    for statement in [
        "CREATE NODE TABLE P(ID INT64, x INT64, y DOUBLE, z INT32, s STRING, PRIMARY KEY(ID))",
        "CREATE NODE TABLE Q(ID INT64, x DOUBLE, y DOUBLE, PRIMARY KEY(ID))",
    ] {
        conn.query(statement).unwrap();
    }
    let split = match layout {
        Layout::Delta => 0,
        Layout::Folded => tables.p.len(),
        Layout::Mixed { split } => split.min(tables.p.len()),
    };
    for (id, (x, y, z, s)) in tables.p.iter().enumerate() {
        let s = s.as_ref().map_or("NULL".into(), |s| format!("'{s}'"));
        conn.query(&format!(
            "CREATE (:P {{ID: {id}, x: {}, y: {}, z: cast({}, 'INT32'), s: {s}}})",
            literal(x),
            double(y),
            literal(z),
        ))
        .unwrap();
        if id + 1 == split {
            conn.query("CHECKPOINT").unwrap();
        }
    }
    for (id, (x, y)) in tables.q.iter().enumerate() {
        conn.query(&format!(
            "CREATE (:Q {{ID: {id}, x: {}, y: {}}})",
            double(x),
            double(y)
        ))
        .unwrap();
    }
    if matches!(layout, Layout::Folded) {
        conn.query("CHECKPOINT").unwrap();
    }
    for (id, x) in &tables.updated {
        conn.query(&format!(
            "MATCH (a:P {{ID: {id}}}) SET a.x = {}",
            literal(x)
        ))
        .unwrap();
    }
    for id in &tables.deleted {
        conn.query(&format!("MATCH (a:P {{ID: {id}}}) DELETE a"))
            .unwrap();
    }
    conn
}

fn int64s() -> impl Strategy<Value = Option<i64>> {
    prop_oneof![
        1 => Just(None),
        1 => Just(Some(i64::MAX)),
        1 => Just(Some(i64::MIN)),
        6 => (-50i64..50).prop_map(Some),
    ]
}

fn doubles() -> impl Strategy<Value = Option<f64>> {
    prop_oneof![
        2 => Just(None),
        1 => Just(Some(f64::NAN)),
        1 => Just(Some(-0.0)),
        1 => Just(Some(0.0)),
        1 => Just(Some(f64::INFINITY)),
        1 => Just(Some(f64::NEG_INFINITY)),
        8 => (-1e3f64..1e3).prop_map(Some),
        2 => (-5i32..5).prop_map(|v| Some(f64::from(v) * 0.1)),
    ]
}

fn tables() -> impl Strategy<Value = Tables> {
    let node = (
        int64s(),
        doubles(),
        proptest::option::weighted(0.8, any::<i32>()),
        proptest::option::weighted(0.8, "[a-c]{0,2}"),
    );
    (
        proptest::collection::vec(node, 0..24),
        proptest::collection::vec((doubles(), doubles()), 0..6),
        proptest::collection::vec(0u32..24, 0..4),
        proptest::collection::vec((0u32..24, int64s()), 0..4),
    )
        .prop_map(|(p, q, deleted, updated)| Tables {
            deleted: deleted
                .into_iter()
                .filter(|&id| (id as usize) < p.len())
                .collect(),
            updated: updated
                .into_iter()
                .filter(|&(id, _)| (id as usize) < p.len())
                .collect(),
            p,
            q,
        })
}

fn layouts() -> impl Strategy<Value = Layout> {
    prop_oneof![
        Just(Layout::Delta),
        Just(Layout::Folded),
        (0usize..24).prop_map(|split| Layout::Mixed { split }),
    ]
}

/// The rows (each value's debug form: its type and, for a DOUBLE, every bit) or the error.
fn answer(conn: &mut Connection, query: &str) -> Result<Vec<String>, String> {
    let mut result = conn.query(query).map_err(|e| e.to_string())?;
    let rows = result.collect_rows().map_err(|e| e.to_string())?;
    Ok(rows.iter().map(|row| format!("{row:?}")).collect())
}

fn plan(conn: &mut Connection, query: &str) -> String {
    let mut result = conn.query(&format!("EXPLAIN {query}")).unwrap();
    result.to_strings().unwrap().join("\n")
}

/// Checks that `folded` runs on `FoldColumns` and `reference` on rows (where either answers)
/// and that both give the same rows in the same order, or the same error.
fn folds_as_rows(
    conn: &mut Connection,
    folded: &str,
    reference: &str,
    data: &dyn std::fmt::Debug,
) -> Result<(), TestCaseError> {
    let (folded_answer, reference_answer) = (answer(conn, folded), answer(conn, reference));
    if folded_answer.is_ok() || reference_answer.is_ok() {
        prop_assert!(plan(conn, folded).contains("FoldColumns"), "{folded}");
        prop_assert!(
            !plan(conn, reference).contains("FoldColumns"),
            "{reference}"
        );
    }
    prop_assert_eq!(
        folded_answer,
        reference_answer,
        "{} over {:?}",
        folded,
        data
    );
    Ok(())
}

const SCANS: &[&str] = &["(a:P)", "(a:Q)", "(a)"];

const FILTERS: &[&str] = &[
    "",
    "WHERE a.ID < 7",
    "WHERE a.ID >= 3 AND a.ID < 40",
    "WHERE a.ID > 2 AND a.y > 0.1",
    "WHERE a.y > 0.1 OR a.x IS NULL",
];

const AGGREGATES: &[&str] = &[
    "count(*), count(a), count(a.x), sum(a.x), min(a.x), max(a.x), avg(a.x)",
    "count(a.y), sum(a.y), min(a.y), max(a.y), avg(a.y)",
    "sum(a.z), min(a.z), max(a.z), avg(a.z), count(a.z)",
    "min(a.s), max(a.s), count(a.s)",
    "sum(a.s)",
    "avg(a.s)",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn folded_aggregates_answer_what_the_rows_give(tables in tables(), layout in layouts()) {
        let mut conn = load(&tables, layout);
        for scan in SCANS {
            for filter in FILTERS {
                for aggregates in AGGREGATES {
                    let folded = format!("MATCH {scan} {filter} RETURN {aggregates}");
                    let reference =
                        format!("MATCH {scan} {filter} WITH a, 1 AS one RETURN {aggregates}");
                    folds_as_rows(&mut conn, &folded, &reference, &(&tables, layout))?;
                }
            }
        }
    }
}

const KEYS: &[&str] = &[
    "a.x AS k",
    "a.x % 3 AS k",
    "a.x / 2 AS k",
    "7 - a.x AS k",
    "a.x * 3037000500 AS k",
    "a.x % 0 AS k",
    "a.ID % 4 AS k, a.s AS t",
    "a.z AS k",
    "a.y AS k",
    "a.s AS k",
    "a AS k",
    "a.x + a.ID AS k",
    "1 AS k",
];

const GROUPED_AGGREGATES: &[&str] = &[
    "count(*), count(a.x), sum(a.x), min(a.x), max(a.x), avg(a.x)",
    "count(a), sum(a.y), min(a.y), max(a.y), avg(a.y)",
    "min(a.s), max(a.s), count(a.s), sum(a.z)",
    "count(*), sum(a.s)",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    /// Grouped by keys over the scanned node, the folds give the rows' groups, in the rows'
    /// order of first appearance, with the same values (or the same error).
    #[test]
    fn grouped_folds_answer_what_the_rows_give(tables in tables(), layout in layouts()) {
        let mut conn = load(&tables, layout);
        for scan in SCANS {
            for filter in &FILTERS[..3] {
                for keys in KEYS {
                    for aggregates in GROUPED_AGGREGATES {
                        let folded = format!("MATCH {scan} {filter} RETURN {keys}, {aggregates}");
                        let reference = format!(
                            "MATCH {scan} {filter} WITH a, 1 AS one RETURN {keys}, {aggregates}"
                        );
                        folds_as_rows(&mut conn, &folded, &reference, &(&tables, layout))?;
                    }
                }
            }
        }
    }
}

/// A random INT64 term over P's columns: `a.x`, `a.ID`, literals (NULL, zero, the extremes),
/// arithmetic of terms.
fn int_terms() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        3 => Just("a.x".to_string()),
        2 => Just("a.ID".to_string()),
        1 => Just("NULL".to_string()),
        1 => Just("0".to_string()),
        1 => Just("9223372036854775807".to_string()),
        3 => (-4i64..5).prop_map(|v| format!("({v})")),
    ];
    leaf.prop_recursive(2, 6, 2, |inner| {
        let op = prop::sample::select(vec!["+", "-", "*", "/", "%"]);
        (inner.clone(), op, inner).prop_map(|(a, op, b)| format!("({a} {op} {b})"))
    })
}

/// A random filter over P: comparisons and NULL tests of terms under AND, OR and NOT, with
/// parts that do not compile (a DOUBLE or INT32 property, a string) mixed in.
fn filters() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        6 => (int_terms(), prop::sample::select(vec!["=", "<>", "<", "<=", ">", ">="]), int_terms())
            .prop_map(|(a, op, b)| format!("{a} {op} {b}")),
        2 => (int_terms(), any::<bool>())
            .prop_map(|(a, negated)| format!("{a} IS {}NULL", if negated { "NOT " } else { "" })),
        1 => Just("true".to_string()),
        1 => Just("NULL".to_string()),
        1 => prop::sample::select(vec!["a.y > 0.1", "a.z < 0", "a.s = 'a'"]).prop_map(String::from),
    ];
    leaf.prop_recursive(2, 4, 2, |inner| {
        prop_oneof![
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} AND {b})")),
            (inner.clone(), inner.clone()).prop_map(|(a, b)| format!("({a} OR {b})")),
            inner.prop_map(|a| format!("NOT ({a})")),
        ]
    })
}

/// Statements over a filtered scan: the columnar path (`a.ID`), the row path's `ScanNodes` (a
/// computed column), a fold and top nodes.
const FILTERED: &[&str] = &[
    "RETURN a.ID",
    "RETURN a.ID, a.x + 0 AS y",
    "RETURN count(*), sum(a.x), min(a.y)",
    "RETURN a.ID ORDER BY a.ID DESC LIMIT 3",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Filters decided on the INT64 arrays (a node scan, a fold, top nodes) keep exactly the
    /// nodes, in order, that the evaluator keeps, or fail with its error.
    #[test]
    fn filters_on_the_arrays_keep_what_the_evaluator_keeps(
        tables in tables(),
        layout in layouts(),
        stored_only in any::<bool>(),
        filters in proptest::collection::vec(filters(), 4),
    ) {
        // Half the cases keep every node in the stored columns (no delta), where filters
        // compile; the others read through the delta, where they do not.
        let (tables, layout) = if stored_only {
            let mut stored = tables;
            stored.deleted.clear();
            stored.updated.clear();
            (stored, Layout::Folded)
        } else {
            (tables, layout)
        };
        let mut conn = load(&tables, layout);
        // A random filter goes under `NOT (NOT ...)`, the same truth, so that the scan takes no
        // prefilter from it: a prefilter skips a row before the filter's other conjuncts could
        // fail on it (a zero divisor, an overflow), where the row path's `Filter` evaluates
        // them in order and fails; that difference is older than the compiled filters and is
        // not what this tests. The fixed filters put a prefilter (never NULL) first, where the
        // row path's `AND` stops too, and a compiled rest after it (the prefilters' cursor).
        let random = filters.iter().map(|filter| format!("NOT (NOT ({filter}))"));
        let with_prefilters = [
            "a.ID >= 2 AND (a.x % 3 = 1 OR a.x IS NULL)",
            "a.ID < 20 AND a.x * a.x > 100",
            "a.ID <> 5 AND NOT (a.x - a.ID < 0)",
        ];
        for filter in random.chain(with_prefilters.iter().map(|f| f.to_string())) {
            for returned in FILTERED {
                let scanned = format!("MATCH (a:P) WHERE {filter} {returned}");
                let reference = format!("MATCH (a:P) WITH a, 1 AS one WHERE {filter} {returned}");
                prop_assert_eq!(
                    answer(&mut conn, &scanned),
                    answer(&mut conn, &reference),
                    "{} over {:?} stored {:?}",
                    scanned,
                    tables,
                    layout
                );
            }
        }
    }
}

/// A table past the prefiltered scan's parallel threshold (2^20 rows), with a few rows
/// deleted: the folds (grouped or not) and the top nodes over the windows found on the
/// query's threads give the rows' answer.
#[test]
fn a_large_table_folds_and_sorts_as_its_rows_do() {
    let dir = std::env::temp_dir().join(format!("warren-fold-columns-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let csv = dir.join("p.csv");
    let rows: u64 = (1 << 20) + 4097;
    let mut text = String::with_capacity(rows as usize * 24);
    for id in 0..rows {
        let x = (id * 7919) % 100_003;
        if id % 9 == 0 {
            text.push_str(&format!("{id},,{}\n", id as f64 * 0.37));
        } else {
            text.push_str(&format!("{id},{x},{}\n", (x as f64).sqrt()));
        }
    }
    std::fs::write(&csv, text).unwrap();
    let db = Database::in_memory();
    let mut conn = db.connect();
    conn.query("CREATE NODE TABLE P(ID INT64, x INT64, y DOUBLE, PRIMARY KEY(ID))")
        .unwrap();
    conn.query(&format!("COPY P FROM '{}'", csv.display()))
        .unwrap();
    conn.query("CHECKPOINT").unwrap();
    conn.query("MATCH (a:P) WHERE a.ID IN [5, 1048575, 1048576, 1048600] DELETE a")
        .unwrap();
    conn.query("CHECKPOINT").unwrap();
    conn.query("CALL threads=2").unwrap();
    for filter in [
        "",
        "WHERE a.ID >= 1000 AND a.ID < 1048590",
        "WHERE a.y > 100.5",
        // Decided on the arrays, windows of rows on the query's threads.
        "WHERE a.x % 7 = 3 OR a.ID < 5 OR a.x IS NULL AND a.ID % 2 = 0",
        // Constant divisors (no divide instruction per row): a NULL stays NULL under NOT.
        "WHERE NOT (a.x % 7 = 3) AND a.ID / -3 < -5 AND (a.ID - 500000) % 1000 <> 0",
    ] {
        let aggregates = "count(*), count(a.x), sum(a.x), min(a.x), max(a.x), avg(a.x), \
                          sum(a.y), min(a.y), max(a.y), avg(a.y)";
        let folded = format!("MATCH (a:P) {filter} RETURN {aggregates}");
        let reference = format!("MATCH (a:P) {filter} WITH a, 1 AS one RETURN {aggregates}");
        assert!(plan(&mut conn, &folded).contains("FoldColumns"), "{folded}");
        assert_eq!(
            answer(&mut conn, &folded),
            answer(&mut conn, &reference),
            "{folded}"
        );
        // Rows through the columnar path and `ScanNodes`, decided in runs that grow to
        // windows on the query's threads.
        let compiled_filter = filter.contains('%');
        for returned in ["RETURN a.ID", "RETURN a.ID, a.x + 0 AS y"]
            .into_iter()
            .filter(|_| compiled_filter)
        {
            let scanned = format!("MATCH (a:P) {filter} {returned}");
            let reference = format!("MATCH (a:P) WITH a, 1 AS one {filter} {returned}");
            assert_eq!(
                answer(&mut conn, &scanned),
                answer(&mut conn, &reference),
                "{scanned}"
            );
        }
        for keys in ["a.x % 10 AS k", "a.ID / 100000 AS k, a.x % 3 AS t"] {
            let grouped = format!("MATCH (a:P) {filter} RETURN {keys}, {aggregates}");
            let reference =
                format!("MATCH (a:P) {filter} WITH a, 1 AS one RETURN {keys}, {aggregates}");
            assert!(
                plan(&mut conn, &grouped).contains("FoldColumns"),
                "{grouped}"
            );
            assert_eq!(
                answer(&mut conn, &grouped),
                answer(&mut conn, &reference),
                "{grouped}"
            );
        }
        for order in [
            "RETURN a.ID, a.x ORDER BY a.x DESC, a.ID LIMIT 7",
            "RETURN a.ID ORDER BY a.ID DESC SKIP 3 LIMIT 4",
            "RETURN a.ID ORDER BY a.ID LIMIT 5",
        ] {
            let top = format!("MATCH (a:P) {filter} {order}");
            let reference = format!("MATCH (a:P) {filter} WITH a, 1 AS one {order}");
            assert!(plan(&mut conn, &top).contains("TopNodes"), "{top}");
            assert_eq!(
                answer(&mut conn, &top),
                answer(&mut conn, &reference),
                "{top}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

const ORDERS: &[&str] = &[
    "RETURN a.ID, a.x ORDER BY a.x DESC LIMIT 3",
    "RETURN a.ID ORDER BY a.ID DESC LIMIT 3",
    "RETURN a.ID, a.y ORDER BY a.y, a.ID LIMIT 4",
    "RETURN a.ID, a.x ORDER BY a.x SKIP 2 LIMIT 3",
    "RETURN a.ID, a.s, a.z ORDER BY a.s DESC, a.z LIMIT 5",
    "RETURN a.ID AS id, a.x AS x ORDER BY x DESC, id LIMIT 6",
    "RETURN a, 7 AS seven ORDER BY a.x LIMIT 2",
    "RETURN a.ID ORDER BY a.ID LIMIT 0",
    "RETURN a.ID, a.x ORDER BY a.x LIMIT 100",
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    #[test]
    fn top_nodes_are_the_rows_a_stable_sort_keeps(tables in tables(), layout in layouts()) {
        let mut conn = load(&tables, layout);
        for scan in SCANS {
            for filter in FILTERS {
                for order in ORDERS {
                    let top = format!("MATCH {scan} {filter} {order}");
                    let reference = format!("MATCH {scan} {filter} WITH a, 1 AS one {order}");
                    let (top_answer, reference_answer) =
                        (answer(&mut conn, &top), answer(&mut conn, &reference));
                    // (A property no scanned table has is an error in both.)
                    if top_answer.is_ok() || reference_answer.is_ok() {
                        prop_assert!(plan(&mut conn, &top).contains("TopNodes"), "{top}");
                        prop_assert!(
                            !plan(&mut conn, &reference).contains("TopNodes"),
                            "{reference}"
                        );
                    }
                    prop_assert_eq!(
                        &top_answer,
                        &reference_answer,
                        "{} over {:?} stored {:?}",
                        top,
                        tables,
                        layout
                    );
                }
            }
        }
    }
}

/// A projection that can fail (here a division) is evaluated on every row by the row path,
/// so its sort stays on rows; a key that is not a property (an expression, the node itself)
/// too.
#[test]
fn other_orders_stay_on_rows() {
    let tables = Tables {
        p: vec![
            (Some(1), Some(0.5), Some(2), None),
            (Some(0), None, None, None),
        ],
        q: Vec::new(),
        deleted: Vec::new(),
        updated: Vec::new(),
    };
    let mut conn = load(&tables, Layout::Folded);
    for query in [
        "MATCH (a:P) RETURN 10 / a.x ORDER BY a.ID LIMIT 1",
        "MATCH (a:P) RETURN a.ID ORDER BY a.x + 1 LIMIT 1",
        "MATCH (a:P) RETURN a.ID ORDER BY a LIMIT 1",
    ] {
        assert!(!plan(&mut conn, query).contains("TopNodes"), "{query}");
        assert!(plan(&mut conn, query).contains("TopN"), "{query}");
    }
}

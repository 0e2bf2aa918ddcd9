//! `PROFILE`: rows per operator match what each stage of the query produces, times nest, the
//! hardware-counter line is honest about availability, and non-queries are refused.

use warren::hardware::CounterGroup;
use warren::{Connection, Database, Value};

/// An in-memory database with the empty tables Person(ID) and Knows(Person -> Person).
fn schema() -> (Database, Connection) {
    let db = Database::in_memory();
    let mut conn = db.connect();
    conn.query("CREATE NODE TABLE Person(ID INT64, PRIMARY KEY(ID))")
        .expect("node table");
    conn.query("CREATE REL TABLE Knows(FROM Person TO Person)")
        .expect("rel table");
    (db, conn)
}

/// Persons 0..=5 and Knows 0->1, 1->2, 2->3, 3->1, 0->4, 4->5, 5->0.
fn graph() -> (Database, Connection) {
    let (db, mut conn) = schema();
    conn.query("UNWIND range(0, 5) AS i CREATE (:Person {ID: i})")
        .expect("nodes");
    conn.query(
        "UNWIND [[0,1],[1,2],[2,3],[3,1],[0,4],[4,5],[5,0]] AS e \
         MATCH (a:Person {ID: e[1]}), (b:Person {ID: e[2]}) CREATE (a)-[:Knows]->(b)",
    )
    .expect("rels");
    (db, conn)
}

/// One operator line of the report: rows, inclusive and self milliseconds, operator name.
#[derive(Debug)]
struct OperatorLine {
    rows: u64,
    inclusive_ms: f64,
    self_ms: f64,
    name: String,
}

fn profile_text(conn: &mut Connection, query: &str) -> String {
    let mut result = conn.query(&format!("PROFILE {query}")).expect("profile");
    assert_eq!(result.column_names(), ["profile"]);
    let rows = result.collect_rows().expect("rows");
    assert_eq!(rows.len(), 1, "one row");
    match &rows[0][0] {
        Value::String(text) => text.to_string(),
        other => panic!("profile is text, got {other:?}"),
    }
}

fn operator_lines(text: &str) -> Vec<OperatorLine> {
    let mut lines = text.lines();
    let header = lines.next().expect("header");
    assert!(header.trim_start().starts_with("rows"), "{header}");
    lines
        .take_while(|line| !line.starts_with('('))
        .map(|line| {
            let cells: Vec<&str> = line.split_whitespace().collect();
            OperatorLine {
                rows: cells[0].parse().expect("rows"),
                inclusive_ms: cells[1].parse().expect("inclusive"),
                self_ms: cells[2].parse().expect("self"),
                name: cells[3].to_string(),
            }
        })
        .collect()
}

fn count(conn: &mut Connection, query: &str) -> u64 {
    let rows = conn
        .query(query)
        .expect("query")
        .collect_rows()
        .expect("rows");
    u64::try_from(rows.len()).expect("fits")
}

fn line_value<'a>(text: &'a str, prefix: &str) -> &'a str {
    text.lines()
        .find_map(|line| line.strip_prefix(prefix))
        .unwrap_or_else(|| panic!("no line starting with {prefix:?} in\n{text}"))
}

const STAGED: &str = "MATCH (a:Person)-[r:Knows* SHORTEST 1..3]->(b:Person) \
                      WHERE a.ID < 3 AND b.ID > a.ID RETURN a.ID, count(*)";

#[test]
fn rows_per_operator_match_each_stage() {
    let (_db, mut conn) = graph();
    let text = profile_text(&mut conn, STAGED);
    let operators = operator_lines(&text);
    let names: Vec<&str> = operators.iter().map(|o| o.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "Project",
            "Aggregate",
            "Filter",
            "RecursiveJoin",
            "ScanNodes",
            "Unit"
        ],
        "{text}"
    );
    let rows: Vec<u64> = operators.iter().map(|o| o.rows).collect();
    // Sources 0, 1, 2. Shortest-path destinations within 3 hops (the source itself excluded):
    // 0 -> 1, 4, 2, 5, 3; 1 -> 2, 3; 2 -> 3, 1. Of these, b.ID > a.ID keeps 5 + 2 + 1.
    assert_eq!(rows, [3, 3, 8, 9, 3, 1], "{text}");
    // The same figures from the query's stages run on their own.
    let stage = |tail: &str| {
        format!("MATCH (a:Person)-[r:Knows* SHORTEST 1..3]->(b:Person) WHERE a.ID < 3 {tail}")
    };
    assert_eq!(
        count(&mut conn, "MATCH (a:Person) WHERE a.ID < 3 RETURN a"),
        3
    );
    assert_eq!(count(&mut conn, &stage("RETURN a.ID, b.ID")), 9);
    assert_eq!(
        count(&mut conn, &stage("AND b.ID > a.ID RETURN a.ID, b.ID")),
        8
    );
    assert_eq!(count(&mut conn, STAGED), 3);
    assert_eq!(line_value(&text, "result rows: "), "3");
}

#[test]
fn times_nest_and_are_non_negative() {
    let (_db, mut conn) = graph();
    let text = profile_text(&mut conn, STAGED);
    let operators = operator_lines(&text);
    // A millisecond of slack for the three-decimal rounding of each printed figure.
    let slack_ms = 0.002;
    for operator in &operators {
        assert!(
            operator.inclusive_ms >= 0.0 && operator.self_ms >= 0.0,
            "{text}"
        );
        assert!(
            operator.self_ms <= operator.inclusive_ms + slack_ms,
            "{text}"
        );
    }
    // Each operator here has one child: inclusive = self + the child's inclusive.
    for pair in operators.windows(2) {
        let expected = pair[0].self_ms + pair[1].inclusive_ms;
        assert!(
            (pair[0].inclusive_ms - expected).abs() <= slack_ms,
            "{text}"
        );
    }
    let execution: f64 = line_value(&text, "execution time: ")
        .trim_end_matches(" ms")
        .parse()
        .expect("execution time");
    assert!(operators[0].inclusive_ms <= execution + slack_ms, "{text}");
    line_value(&text, "compile time: ");
    line_value(&text, "peak query memory: ");
}

#[test]
fn hardware_counter_line_is_honest() {
    let (_db, mut conn) = graph();
    let text = profile_text(&mut conn, STAGED);
    match CounterGroup::open() {
        Err(reason) => {
            eprintln!("hardware counters unavailable here: {reason}");
            let line = line_value(&text, "hardware counters: unavailable (");
            assert!(
                line.ends_with(')') && line.contains("perf_event_open"),
                "{text}"
            );
            assert!(
                !text.contains("hardware counters ("),
                "no counts are printed: {text}"
            );
        }
        Ok(_) => {
            let line = line_value(&text, "hardware counters (user space, all query threads): ");
            let cycles: u64 = line
                .strip_prefix("cycles ")
                .and_then(|rest| rest.split(',').next())
                .and_then(|n| n.parse().ok())
                .expect("cycles");
            assert!(cycles > 0, "{text}");
        }
    }
}

#[test]
fn software_counters_follow_the_engine() {
    let (_db, mut conn) = graph();
    let text = profile_text(&mut conn, STAGED);
    let mut result = conn.query(STAGED).expect("query");
    result.collect_rows().expect("rows");
    let traversals = result.traversals();
    if traversals.is_empty() {
        assert!(text.contains("software counters: none recorded by the 1 recursive join(s)"));
    } else {
        assert_eq!(traversals.len(), 1, "{text}");
        let summary = &traversals[0];
        let header = format!("recursive join 1: {}\n", summary.algorithm);
        assert!(text.contains(&header), "{text}");
        let sources = format!(
            "  sources: {}, edges scanned: {} (",
            summary.sources, summary.edges_scanned
        );
        assert!(text.contains(&sources), "{text}");
        let level_rows = text
            .lines()
            .skip_while(|line| !line.trim_start().starts_with("level"))
            .skip(1)
            .count();
        assert_eq!(level_rows, summary.levels.len(), "{text}");
    }
    let plain = profile_text(&mut conn, "MATCH (a:Person) RETURN count(*)");
    assert!(
        plain.ends_with("software counters: no recursive join\n"),
        "{plain}"
    );
}

#[test]
fn non_queries_are_refused_and_not_run() {
    let (_db, mut conn) = graph();
    let error = conn
        .query("PROFILE CREATE NODE TABLE Other(ID INT64, PRIMARY KEY(ID))")
        .expect_err("DDL cannot be profiled");
    let message = error.to_string();
    assert!(
        message.contains("PROFILE runs queries") && message.contains("CREATE NODE TABLE"),
        "{message}"
    );
    assert!(
        conn.query("MATCH (o:Other) RETURN o").is_err(),
        "the table was not created"
    );
    let error = conn.query("PROFILE CALL threads=1").expect_err("settings");
    assert!(error.to_string().contains("CALL"), "{error}");
}

#[test]
fn updating_queries_are_profiled_and_committed() {
    let (_db, mut conn) = graph();
    let text = profile_text(&mut conn, "CREATE (:Person {ID: 100})");
    let operators = operator_lines(&text);
    assert_eq!(operators[0].name, "Create", "{text}");
    assert_eq!(operators[0].rows, 1, "{text}");
    assert_eq!(
        count(&mut conn, "MATCH (p:Person) WHERE p.ID = 100 RETURN p"),
        1
    );
}

/// Many-source SHORTEST names its lane width and sweeps, and why, with the state size and the
/// cache budget; a k setting shows as set and changes the width.
#[test]
fn sweep_choice_and_reason_are_shown() {
    let (_db, mut conn) = graph();
    let query = "MATCH p=(a:Person)-[:Knows* SHORTEST 1..5]->(b:Person) RETURN a.ID, count(*)";
    let text = profile_text(&mut conn, query);
    assert!(
        text.contains("multi-source BFS (6 lanes x u8 per sweep, 1 sweep(s) at once)"),
        "{text}"
    );
    assert!(
        text.contains(
            "k (max active sources): 6 (auto: lanes 6 x u8, 1 sweep(s) at once, 1 in all: \
             state 3 B/node x 6 nodes = 18 B per sweep, which fits in the 32 MiB cache budget)"
        ),
        "{text}"
    );
    conn.query("CALL max_active_sources=2").expect("setting");
    let text = profile_text(&mut conn, query);
    assert!(
        text.contains("multi-source BFS (2 lanes x u8 per sweep, 1 sweep(s) at once)"),
        "{text}"
    );
    assert!(
        text.contains("(set (max_active_sources): lanes 2 x u8, 1 sweep(s) at once, 3 in all"),
        "{text}"
    );
}

#[test]
fn profile_copy_copies_and_reports_each_phase() {
    let dir = tempfile::tempdir().expect("temp dir");
    let (nodes, edges) = (dir.path().join("nodes.csv"), dir.path().join("edges.csv"));
    std::fs::write(&nodes, "0\n1\n2\n").expect("nodes file");
    std::fs::write(&edges, "0,1\n1,2\n2,0\n0,2\n").expect("edges file");
    let (_db, mut conn) = schema();
    let copy =
        |file: &std::path::Path, table: &str| format!("COPY {table} FROM '{}'", file.display());
    let node_report = profile_text(&mut conn, &copy(&nodes, "Person"));
    assert!(
        node_report.starts_with("COPY Person: 3 rows\n"),
        "{node_report}"
    );
    for phase in ["read and convert rows", "primary-key index", "commit ("] {
        assert!(node_report.contains(phase), "{phase}: {node_report}");
    }
    let rel_report = profile_text(&mut conn, &copy(&edges, "Knows"));
    assert!(
        rel_report.starts_with("COPY Knows: 4 rows\n"),
        "{rel_report}"
    );
    let phases = [
        "split input at line breaks",
        "read, parse and resolve endpoints",
        "endpoint range check",
        "both CSRs, on two threads",
        "forward CSR (its thread)",
        "backward CSR (its thread)",
        "commit (",
        "the whole statement",
    ];
    let mut at = 0;
    for phase in phases {
        let found = rel_report[at..].find(phase);
        at += found.unwrap_or_else(|| panic!("{phase} in order: {rel_report}"));
    }
    let mut result = conn
        .query("MATCH (a:Person)-[:Knows]->(b:Person) RETURN count(*)")
        .expect("count");
    assert_eq!(result.collect_rows().expect("rows"), [[Value::Int64(4)]]);
}

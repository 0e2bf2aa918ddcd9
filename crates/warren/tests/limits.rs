//! Limits: path enumeration streams with bounded memory; materializing more than the memory
//! limit is a clear `LimitExceeded` error (never an out-of-memory kill); the timeout interrupts
//! long queries; the hop limit is a setting.

use warren::{Connection, Database, Error, Value};

/// A complete directed graph on `n` nodes with self loops: n^k walks of k hops from each node.
fn complete_graph(n: i64) -> Connection {
    let db = Database::in_memory();
    let mut conn = db.connect();
    conn.query("CREATE NODE TABLE P(ID INT64, PRIMARY KEY(ID))")
        .unwrap();
    conn.query("CREATE REL TABLE E(FROM P TO P)").unwrap();
    conn.query(&format!(
        "UNWIND range(0, {}) AS i CREATE (:P {{ID: i}})",
        n - 1
    ))
    .unwrap();
    conn.query("MATCH (a:P), (b:P) CREATE (a)-[:E]->(b)")
        .unwrap();
    conn
}

#[test]
fn path_enumeration_streams_in_bounded_memory() {
    let mut conn = complete_graph(8);
    // 8^7 = 2,097,152 walks of 7 hops from node 0; each row carries a whole path.
    let mut result = conn
        .query("MATCH p = (a:P)-[e:E*7..7]->(b:P) WHERE a.ID = 0 RETURN p")
        .unwrap();
    let mut rows = 0u64;
    while let Some(row) = result.next_row().unwrap() {
        assert!(matches!(row[0], Value::Path(_)));
        rows += 1;
    }
    assert_eq!(rows, 8u64.pow(7));
    assert!(
        result.peak_memory() < 1 << 20,
        "peak memory {} bytes",
        result.peak_memory()
    );
}

#[test]
fn counting_needs_no_enumeration() {
    let mut conn = complete_graph(8);
    // 8^1 + ... + 8^20 walks: far too many to enumerate, counted exactly.
    let mut result = conn
        .query("MATCH (a:P)-[e:E*1..20]->(b:P) WHERE a.ID = 0 RETURN count(*)")
        .unwrap();
    let expected: u64 = (1..=20).map(|k| 8u64.pow(k)).sum();
    assert_eq!(result.to_strings().unwrap(), vec![expected.to_string()]);
}

#[test]
fn exceeding_the_memory_limit_is_a_limit_error() {
    let mut conn = complete_graph(8);
    conn.query("CALL memory_limit = 1000000").unwrap();
    let sorted = conn
        .query("MATCH p = (a:P)-[e:E*1..7]->(b:P) RETURN p ORDER BY length(p)")
        .and_then(|mut r| r.next_row());
    match sorted {
        Err(Error::LimitExceeded(message)) => {
            assert!(message.contains("memory_limit"), "{message}")
        }
        other => panic!("expected LimitExceeded, got {other:?}"),
    }
    let collected = conn
        .query("MATCH p = (a:P)-[e:E*1..7]->(b:P) RETURN p")
        .and_then(|mut r| r.collect_rows());
    assert!(
        matches!(collected, Err(Error::LimitExceeded(_))),
        "{collected:?}"
    );
    // The connection stays usable.
    let mut ok = conn.query("MATCH (a:P) RETURN count(*)").unwrap();
    assert_eq!(ok.to_strings().unwrap(), vec!["8"]);
}

#[test]
fn the_timeout_interrupts_long_queries() {
    let mut conn = complete_graph(8);
    conn.query("CALL timeout = 200").unwrap();
    let started = std::time::Instant::now();
    let result = conn
        .query("MATCH p = (a:P)-[e:E*1..12]->(b:P) RETURN length(p)")
        .and_then(|mut r| {
            while r.next_row()?.is_some() {}
            Ok(())
        });
    assert!(
        matches!(&result, Err(Error::Interrupted(m)) if m.contains("exceeded its timeout")),
        "{result:?}"
    );
    // Interrupted promptly: far sooner than the enumeration (billions of paths) would end; the
    // bound leaves a busy machine room.
    assert!(started.elapsed().as_secs() < 60);
}

#[test]
fn the_hop_limit_is_a_setting() {
    let mut conn = complete_graph(2);
    let error = conn
        .query("MATCH (a:P)-[e:E*1..31]->(b:P) RETURN count(*)")
        .unwrap_err();
    assert_eq!(
        error.to_string(),
        "Binder exception: Upper bound of rel e exceeds maximum: 30."
    );
    conn.query("CALL var_length_extend_max_depth = 40").unwrap();
    let mut result = conn
        .query("MATCH (a:P)-[e:E*31..31]->(b:P) WHERE a.ID = 0 RETURN count(*)")
        .unwrap();
    assert_eq!(result.to_strings().unwrap(), vec![(1u64 << 31).to_string()]);
}

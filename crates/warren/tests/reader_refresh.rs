//! A process that reads a database another process writes sees each statement as of its start:
//! rows, DDL and COPY committed after it opened, across checkpoints that replace the log, while
//! an explicit transaction keeps the snapshot it began with. (Two `Database` handles on one
//! directory in one process stand for the two processes: the second finds the writer's lock
//! taken and reads only.)

use std::path::Path;

use warren::{Database, DatabaseOptions};

fn one(db: &Database, query: &str) -> String {
    let mut conn = db.connect();
    let rows = conn
        .query(query)
        .unwrap_or_else(|e| panic!("{query}: {e}"))
        .to_strings()
        .unwrap();
    assert_eq!(rows.len(), 1, "{query}: {rows:?}");
    rows[0].clone()
}

fn run(db: &Database, queries: &[&str]) {
    let mut conn = db.connect();
    for query in queries {
        conn.query(query).unwrap_or_else(|e| panic!("{query}: {e}"));
    }
}

fn writer(path: &Path) -> Database {
    let options = DatabaseOptions {
        auto_checkpoint: false,
        ..DatabaseOptions::default()
    };
    Database::open_with(path, options).unwrap()
}

fn reader(path: &Path) -> Database {
    let options = DatabaseOptions {
        read_only: true,
        ..DatabaseOptions::default()
    };
    let db = Database::open_with(path, options).unwrap();
    assert!(db.is_read_only());
    db
}

#[test]
fn a_reader_sees_rows_committed_after_it_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let writer = writer(&path);
    run(
        &writer,
        &[
            "CREATE NODE TABLE N(id INT64, PRIMARY KEY(id))",
            "CREATE (:N {id: 1})",
        ],
    );
    let reader = reader(&path);
    assert_eq!(one(&reader, "MATCH (n:N) RETURN count(*)"), "1");
    for id in 2..=5 {
        run(&writer, &[&format!("CREATE (:N {{id: {id}}})")]);
        assert_eq!(one(&reader, "MATCH (n:N) RETURN count(*)"), id.to_string());
    }
    run(&writer, &["MATCH (n:N) WHERE n.id = 3 DELETE n"]);
    assert_eq!(one(&reader, "MATCH (n:N) RETURN sum(n.id)"), "12");
}

#[test]
fn a_reader_sees_ddl_copy_and_checkpoints_after_it_opened() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let csv = dir.path().join("m.csv");
    std::fs::write(&csv, "1\n2\n3\n").unwrap();
    let writer = writer(&path);
    run(&writer, &["CREATE NODE TABLE N(id INT64, PRIMARY KEY(id))"]);
    let reader = reader(&path);
    assert_eq!(one(&reader, "MATCH (n:N) RETURN count(*)"), "0");
    run(
        &writer,
        &[
            "CREATE NODE TABLE M(id INT64, PRIMARY KEY(id))",
            &format!("COPY M FROM '{}'", csv.display()),
        ],
    );
    assert_eq!(one(&reader, "MATCH (m:M) RETURN count(*)"), "3");
    // A checkpoint replaces the log; commits after it land in the new one.
    run(&writer, &["CHECKPOINT", "CREATE (:M {id: 4})"]);
    assert_eq!(one(&reader, "MATCH (m:M) RETURN sum(m.id)"), "10");
    run(&writer, &["CHECKPOINT"]);
    assert_eq!(one(&reader, "MATCH (m:M) RETURN sum(m.id)"), "10");
    run(&writer, &["ALTER TABLE M ADD note STRING DEFAULT 'x'"]);
    assert_eq!(
        one(&reader, "MATCH (m:M) WHERE m.id = 4 RETURN m.note"),
        "x"
    );
}

#[test]
fn a_reader_transaction_keeps_its_snapshot() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let writer = writer(&path);
    run(
        &writer,
        &[
            "CREATE NODE TABLE N(id INT64, PRIMARY KEY(id))",
            "CREATE (:N {id: 1})",
        ],
    );
    let reader = reader(&path);
    let mut conn = reader.connect();
    conn.query("BEGIN TRANSACTION READ ONLY").unwrap();
    let count = |conn: &mut warren::Connection| {
        conn.query("MATCH (n:N) RETURN count(*)")
            .unwrap()
            .to_strings()
            .unwrap()
    };
    assert_eq!(count(&mut conn), ["1"]);
    run(&writer, &["CREATE (:N {id: 2})"]);
    assert_eq!(count(&mut conn), ["1"], "a transaction reads its snapshot");
    conn.query("COMMIT").unwrap();
    assert_eq!(
        count(&mut conn),
        ["2"],
        "the next statement reads the new state"
    );
}

/// What the check costs a statement: a point lookup, 20,000 times, on a reading process's
/// handle and on the writer's. `cargo test --profile ci -p warren --test reader_refresh --
/// --ignored --nocapture`.
#[test]
#[ignore = "a timing, not a check"]
fn the_check_per_statement_costs_little() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let writer = writer(&path);
    run(
        &writer,
        &[
            "CREATE NODE TABLE N(id INT64, PRIMARY KEY(id))",
            "UNWIND range(1, 1000) AS i CREATE (:N {id: i})",
        ],
    );
    let reader = reader(&path);
    for round in 0..3 {
        for (name, db) in [("reader", &reader), ("writer", &writer)] {
            let mut conn = db.connect();
            let started = std::time::Instant::now();
            for i in 0..20_000 {
                let rows = conn
                    .query(&format!("MATCH (n:N {{id: {}}}) RETURN n.id", i % 1000 + 1))
                    .unwrap()
                    .to_strings()
                    .unwrap();
                assert_eq!(rows.len(), 1);
            }
            let micros = started.elapsed().as_secs_f64() * 1e6 / 20_000.0;
            println!("round {round} {name}: {micros:.2} us per point lookup");
        }
    }
}

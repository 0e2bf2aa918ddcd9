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

/// A refresh reads only what was appended since the last one: many commits between two
/// statements all arrive, in order, and so do single ones after them.
#[test]
fn a_reader_takes_in_many_commits_appended_between_statements() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let writer = writer(&path);
    run(
        &writer,
        &["CREATE NODE TABLE N(id INT64, v INT64, PRIMARY KEY(id))"],
    );
    let reader = reader(&path);
    assert_eq!(one(&reader, "MATCH (n:N) RETURN count(*)"), "0");
    let mut conn = writer.connect();
    for id in 1..=2000 {
        conn.query(&format!("CREATE (:N {{id: {id}, v: {id}}})"))
            .unwrap();
    }
    conn.query("MATCH (n:N) WHERE n.id <= 10 SET n.v = 0")
        .unwrap();
    assert_eq!(
        one(&reader, "MATCH (n:N) RETURN count(*), sum(n.v)"),
        "2000|2000945"
    );
    for id in 2001..=2003 {
        conn.query(&format!("CREATE (:N {{id: {id}, v: 1}})"))
            .unwrap();
        assert_eq!(one(&reader, "MATCH (n:N) RETURN count(*)"), id.to_string());
    }
}

/// A checkpoint between two statements recycles the log the reader was reading: the reader
/// notices the new log, reads the new manifest and the frames after it, and then reads the
/// new log incrementally.
#[test]
fn a_reader_follows_the_log_across_a_recycle() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let writer = writer(&path);
    run(&writer, &["CREATE NODE TABLE N(id INT64, PRIMARY KEY(id))"]);
    let reader = reader(&path);
    let mut conn = writer.connect();
    for id in 1..=100 {
        conn.query(&format!("CREATE (:N {{id: {id}}})")).unwrap();
    }
    assert_eq!(one(&reader, "MATCH (n:N) RETURN count(*)"), "100");
    for id in 101..=150 {
        conn.query(&format!("CREATE (:N {{id: {id}}})")).unwrap();
    }
    conn.query("CHECKPOINT").unwrap();
    for id in 151..=160 {
        conn.query(&format!("CREATE (:N {{id: {id}}})")).unwrap();
    }
    assert_eq!(
        one(&reader, "MATCH (n:N) RETURN count(*), sum(n.id)"),
        "160|12880"
    );
    conn.query("MATCH (n:N) WHERE n.id > 150 DELETE n").unwrap();
    assert_eq!(one(&reader, "MATCH (n:N) RETURN count(*)"), "150");
    // Two recycles in a row, with nothing appended after the second.
    conn.query("CREATE (:N {id: 500})").unwrap();
    conn.query("CHECKPOINT").unwrap();
    conn.query("CREATE (:N {id: 501})").unwrap();
    conn.query("CHECKPOINT").unwrap();
    assert_eq!(one(&reader, "MATCH (n:N) RETURN count(*)"), "152");
    conn.query("CREATE (:N {id: 502})").unwrap();
    assert_eq!(one(&reader, "MATCH (n:N) RETURN max(n.id)"), "502");
}

/// What a refresh costs a reading process's statement when the log holds many frames and one
/// more was appended since its last statement. Per statement, alternating: the read the
/// refresh did before it was incremental (the whole log, `Wal::read`), the read it does now
/// (`Wal::read_after` the cursor), and a reader statement end to end. `cargo test --profile
/// ci -p warren --test reader_refresh -- --ignored --nocapture refresh_cost`.
#[test]
#[ignore = "a timing, not a check"]
fn refresh_cost_with_a_long_log() {
    use std::time::{Duration, Instant};
    use warren_storage::io::RealFileSystem;
    use warren_storage::wal::Wal;

    fn median(mut samples: Vec<Duration>) -> f64 {
        samples.sort();
        samples[samples.len() / 2].as_secs_f64() * 1e6
    }

    for frames in [10_000, 100_000] {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let writer = writer(&path);
        run(&writer, &["CREATE NODE TABLE N(id INT64, PRIMARY KEY(id))"]);
        // Eight committers share the log's syncs, so the long log is written quickly.
        std::thread::scope(|scope| {
            for thread in 0..8 {
                let writer = &writer;
                scope.spawn(move || {
                    let mut conn = writer.connect();
                    for id in (thread..frames).step_by(8) {
                        conn.query(&format!("CREATE (:N {{id: {id}}})")).unwrap();
                    }
                });
            }
        });
        let mut conn = writer.connect();
        let reader = reader(&path);
        let mut reading = reader.connect();
        let log = path.join(warren_storage::database_dir::WAL);
        let id: [u8; 16] = std::fs::read(&log).unwrap()[16..32].try_into().unwrap();
        let fs = RealFileSystem;
        let mut cursor = Wal::read(&fs, &log, id).unwrap().cursor;
        let (mut whole, mut appended, mut statement) = (Vec::new(), Vec::new(), Vec::new());
        for round in 0..300 {
            conn.query(&format!("CREATE (:N {{id: {}}})", frames + round))
                .unwrap();
            let mut read_whole = || {
                let started = Instant::now();
                let read = Wal::read(&fs, &log, id).unwrap();
                whole.push(started.elapsed());
                read.frames.len()
            };
            let mut read_appended = || {
                let started = Instant::now();
                let read = Wal::read_after(&fs, &log, id, &cursor).unwrap().unwrap();
                appended.push(started.elapsed());
                read.cursor
            };
            let (count, next) = if round % 2 == 0 {
                (read_whole(), read_appended())
            } else {
                let next = read_appended();
                (read_whole(), next)
            };
            // The table's DDL is the log's first frame.
            assert_eq!(count, frames + round + 2);
            cursor = next;
            let started = Instant::now();
            let rows = reading
                .query("MATCH (n:N {id: 0}) RETURN n.id")
                .unwrap()
                .to_strings()
                .unwrap();
            statement.push(started.elapsed());
            assert_eq!(rows, ["0"]);
        }
        let (whole, appended, statement) = (median(whole), median(appended), median(statement));
        println!(
            "log of {frames} frames ({} bytes), one appended per statement, medians of 300: \
             whole-log read {whole:.1} us, read after the cursor {appended:.1} us ({:.0}x); \
             reader statement now {statement:.1} us (with the whole-log read it would be about \
             {:.1} us)",
            writer.wal_bytes(),
            whole / appended,
            statement - appended + whole
        );
    }
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

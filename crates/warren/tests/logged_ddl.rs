//! DDL, ALTER and COPY commit through the write-ahead log: a catalog change record, durable
//! before the statement returns, that recovery and reading processes replay in order with the
//! row records around it, and that the next checkpoint folds into the manifest without writing
//! a copied table's data again.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use warren::{Database, DatabaseOptions};
use warren_storage::io::{FaultPlan, FileSystem, SimulatedFileSystem};

fn one(db: &Database, query: &str) -> String {
    let mut conn = db.connect();
    let mut result = conn.query(query).unwrap_or_else(|e| panic!("{query}: {e}"));
    let rows = result.to_strings().unwrap();
    assert_eq!(rows.len(), 1, "{query}: {rows:?}");
    rows[0].clone()
}

fn run(db: &Database, queries: &[&str]) {
    let mut conn = db.connect();
    for query in queries {
        conn.query(query).unwrap_or_else(|e| panic!("{query}: {e}"));
    }
}

/// Neither background checkpoints nor one at close: what is committed stays in the log.
fn log_only() -> DatabaseOptions {
    DatabaseOptions {
        auto_checkpoint: false,
        checkpoint_on_close: false,
        ..DatabaseOptions::default()
    }
}

fn manifest(path: &Path) -> String {
    std::fs::read_to_string(path.join("warren.manifest")).unwrap()
}

fn segment_files(path: &Path) -> BTreeSet<String> {
    std::fs::read_dir(path.join("data"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

fn write_csv(path: &Path, name: &str, lines: impl Iterator<Item = String>) -> String {
    let file = path.join(name);
    std::fs::write(&file, lines.collect::<Vec<_>>().join("\n") + "\n").unwrap();
    file.display().to_string()
}

#[test]
fn a_created_table_is_in_the_log_and_recovered_without_a_checkpoint() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = Database::open_with(&path, log_only()).unwrap();
        let before = db.wal_bytes();
        run(
            &db,
            &["CREATE NODE TABLE Person(id INT64, PRIMARY KEY(id))"],
        );
        assert!(db.wal_bytes() > before, "the DDL is a log record");
    }
    // Dropped without a checkpoint, as after a crash: the manifest does not know the table.
    assert!(!manifest(&path).contains("Person"));
    let db = Database::open_with(&path, log_only()).unwrap();
    run(&db, &["CREATE (:Person {id: 7})"]);
    assert_eq!(one(&db, "MATCH (p:Person) RETURN p.id"), "7");
}

#[test]
fn ddl_and_rows_in_one_log_replay_in_order() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let check = |db: &Database| {
        assert_eq!(
            one(
                db,
                "MATCH (a:Item) RETURN count(*), sum(a.price), min(a.label), max(a.label)"
            ),
            "4|25|a|d"
        );
        assert_eq!(
            one(
                db,
                "MATCH (a:Item)-[l:Link]->(b:Item) RETURN a.id, b.id, l.w"
            ),
            "1|4|9"
        );
        let tables = db
            .connect()
            .query("CALL show_tables() RETURN name ORDER BY name")
            .unwrap()
            .to_strings()
            .unwrap();
        assert_eq!(tables, ["Item", "Link"]);
    };
    {
        let db = Database::open_with(&path, log_only()).unwrap();
        run(
            &db,
            &[
                "CREATE NODE TABLE Thing(id INT64, name STRING, PRIMARY KEY(id))",
                "CREATE (:Thing {id: 1, name: 'a'}), (:Thing {id: 2, name: 'b'})",
                // Rows before an ALTER are decoded with the old schema, rows after with the new.
                "ALTER TABLE Thing ADD price INT64 DEFAULT 5",
                "CREATE (:Thing {id: 3, name: 'c', price: 10})",
                "ALTER TABLE Thing RENAME name TO label",
                "ALTER TABLE Thing RENAME TO Item",
                "CREATE NODE TABLE Gone(id INT64, PRIMARY KEY(id))",
                "CREATE (:Gone {id: 1})",
                "DROP TABLE Gone",
                "BEGIN TRANSACTION",
                "CREATE (:Item {id: 4, label: 'd', price: 5})",
                "CREATE REL TABLE Link(FROM Item TO Item, w INT64)",
                "MATCH (a:Item {id: 1}), (b:Item {id: 4}) CREATE (a)-[:Link {w: 9}]->(b)",
                "COMMIT",
            ],
        );
        check(&db);
    }
    let db = Database::open_with(&path, log_only()).unwrap();
    check(&db);
    run(&db, &["CHECKPOINT"]);
    check(&db);
    drop(db);
    assert!(manifest(&path).contains("Item"));
    check(&Database::open_with(&path, log_only()).unwrap());
}

#[test]
fn a_copy_is_recovered_from_its_logged_segment_file_after_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = write_csv(dir.path(), "nodes.csv", (0..1000).map(|i| i.to_string()));
    let more = write_csv(dir.path(), "more.csv", (1000..1500).map(|i| i.to_string()));
    let edges = write_csv(
        dir.path(),
        "edges.csv",
        (1..1500).map(|i| format!("{},{i}", i - 1)),
    );
    let path = dir.path().join("db");
    let sim = SimulatedFileSystem::new(FaultPlan::default());
    let fs: Arc<dyn FileSystem> = Arc::new(sim.clone());
    let db = Database::open_with_file_system(&path, log_only(), fs.clone()).unwrap();
    run(
        &db,
        &[
            "CREATE NODE TABLE N(id INT64, PRIMARY KEY(id))",
            "CREATE REL TABLE E(FROM N TO N)",
            &format!("COPY N FROM '{nodes}'"),
            "CREATE (:N {id: 5000})",
            // An append COPY onto a table with rows (and a delta).
            &format!("COPY N FROM '{more}'"),
            &format!("COPY E FROM '{edges}'"),
        ],
    );
    sim.crash();
    drop(db);
    sim.set_faults(FaultPlan::default());
    let db = Database::open_with_file_system(&path, log_only(), fs.clone()).unwrap();
    let path_query = "MATCH p = (a:N)-[:E* SHORTEST 1..30]->(b:N) WHERE a.id = 1470 AND b.id = 1499 RETURN length(p)";
    assert_eq!(one(&db, "MATCH (n:N) RETURN count(*)"), "1501");
    assert_eq!(one(&db, "MATCH ()-[e:E]->() RETURN count(*)"), "1499");
    assert_eq!(one(&db, path_query), "29");
    run(&db, &["CHECKPOINT"]);
    drop(db);
    let db = Database::open_with_file_system(&path, log_only(), fs).unwrap();
    assert_eq!(one(&db, "MATCH (n:N) RETURN count(*)"), "1501");
    assert_eq!(one(&db, path_query), "29");
}

#[test]
fn a_checkpoint_names_a_copied_tables_file_without_writing_it_again() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = write_csv(dir.path(), "nodes.csv", (0..100).map(|i| i.to_string()));
    let path = dir.path().join("db");
    let db = Database::open_with(&path, log_only()).unwrap();
    run(&db, &["CREATE NODE TABLE N(id INT64, PRIMARY KEY(id))"]);
    run(&db, &["CHECKPOINT"]);
    let before = segment_files(&path);
    run(&db, &[&format!("COPY N FROM '{nodes}'")]);
    let copied: BTreeSet<String> = segment_files(&path).difference(&before).cloned().collect();
    assert_eq!(
        copied.len(),
        1,
        "the COPY wrote one segment file: {copied:?}"
    );
    let copied = copied.into_iter().next().unwrap();
    assert!(
        !manifest(&path).contains(&copied),
        "logged, not yet in the manifest"
    );
    run(&db, &["CHECKPOINT"]);
    assert!(manifest(&path).contains(&copied), "the checkpoint names it");
    assert_eq!(
        segment_files(&path),
        BTreeSet::from([copied]),
        "and writes no other file for the table"
    );
    assert_eq!(one(&db, "MATCH (n:N) RETURN count(*)"), "100");
}

#[test]
fn a_log_holding_only_ddl_is_refused_in_the_other_checksum_mode() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = Database::open_with(&path, log_only()).unwrap();
        run(&db, &["CREATE NODE TABLE test(id INT64, PRIMARY KEY(id))"]);
    }
    let unchecksummed = DatabaseOptions {
        enable_checksums: false,
        ..log_only()
    };
    let error = Database::open_with(&path, unchecksummed)
        .unwrap_err()
        .to_string();
    assert!(error.contains("enable_checksums=true"), "{error}");
    let db = Database::open_with(&path, log_only()).unwrap();
    assert_eq!(one(&db, "MATCH (t:test) RETURN count(*)"), "0");
}

#[test]
fn a_reading_process_replays_logged_ddl_and_copy() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = write_csv(dir.path(), "nodes.csv", (0..10).map(|i| i.to_string()));
    let path = dir.path().join("db");
    let writer = Database::open_with(&path, log_only()).unwrap();
    run(
        &writer,
        &[
            "CREATE NODE TABLE N(id INT64, PRIMARY KEY(id))",
            &format!("COPY N FROM '{nodes}'"),
            "CREATE (:N {id: 10})",
        ],
    );
    let read_only = DatabaseOptions {
        read_only: true,
        ..DatabaseOptions::default()
    };
    let reader = Database::open_with(&path, read_only.clone()).unwrap();
    assert_eq!(
        one(&reader, "MATCH (n:N) RETURN count(*), max(n.id)"),
        "11|10"
    );
    // A checkpoint keeps the file the reader mapped, and a new reader reads its manifest.
    run(&writer, &["CHECKPOINT"]);
    assert_eq!(one(&reader, "MATCH (n:N) RETURN count(*)"), "11");
    let later = Database::open_with(&path, read_only).unwrap();
    assert_eq!(one(&later, "MATCH (n:N) RETURN count(*)"), "11");
}

#[test]
fn files_of_an_unlogged_copy_are_removed_at_open() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = Database::open_with(&path, log_only()).unwrap();
        run(&db, &["CREATE NODE TABLE N(id INT64, PRIMARY KEY(id))"]);
    }
    // What a COPY leaves when the process dies after writing its file and before its record
    // is durable.
    std::fs::write(path.join("data").join("t0-g99.seg"), b"partial").unwrap();
    let db = Database::open_with(&path, log_only()).unwrap();
    assert!(!segment_files(&path).contains("t0-g99.seg"));
    assert_eq!(one(&db, "MATCH (n:N) RETURN count(*)"), "0");
}

#[test]
fn a_logged_copy_triggers_a_background_checkpoint_past_the_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = write_csv(dir.path(), "nodes.csv", (0..100).map(|i| i.to_string()));
    let path = dir.path().join("db");
    let options = DatabaseOptions {
        checkpoint_threshold_bytes: 1,
        ..log_only()
    };
    let db = Database::open_with(&path, options).unwrap();
    run(
        &db,
        &[
            "CREATE NODE TABLE Person(id INT64, PRIMARY KEY(id))",
            // Only now: a commit made while a background checkpoint runs starts none.
            "CALL auto_checkpoint=true",
            &format!("COPY Person FROM '{nodes}'"),
        ],
    );
    // The checkpoint runs in the background: wait (bounded) for its manifest.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !(manifest(&path).contains("Person") && manifest(&path).contains("\"rows\": 100")) {
        assert!(
            std::time::Instant::now() < deadline,
            "no background checkpoint named the copied table: {}",
            manifest(&path)
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    drop(db);
    let db = Database::open_with(&path, log_only()).unwrap();
    assert_eq!(one(&db, "MATCH (p:Person) RETURN count(*)"), "100");
}

#[test]
fn a_reader_reports_a_missing_logged_file() {
    let dir = tempfile::tempdir().unwrap();
    let nodes = write_csv(dir.path(), "nodes.csv", (0..10).map(|i| i.to_string()));
    let path = dir.path().join("db");
    let writer = Database::open_with(&path, log_only()).unwrap();
    run(&writer, &["CREATE NODE TABLE N(id INT64, PRIMARY KEY(id))"]);
    run(&writer, &["CHECKPOINT"]);
    let before = segment_files(&path);
    run(&writer, &[&format!("COPY N FROM '{nodes}'")]);
    for file in segment_files(&path).difference(&before) {
        std::fs::remove_file(path.join("data").join(file)).unwrap();
    }
    let read_only = DatabaseOptions {
        read_only: true,
        ..DatabaseOptions::default()
    };
    let error = Database::open_with(&path, read_only)
        .unwrap_err()
        .to_string();
    assert!(error.contains(".seg"), "{error}");
}

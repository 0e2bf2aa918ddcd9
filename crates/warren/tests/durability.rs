//! Durable writes on disk: commits replayed from the write-ahead log after a reopen, explicit
//! transactions, checkpoints (explicit, automatic in the background, and by DDL), concurrent
//! writers sharing syncs, readers that never see a half-applied state, reading processes beside
//! a writing one, and random interleavings of inserts, updates, deletes, checkpoints and
//! reopens checked against a simple model of the data.

use std::collections::BTreeMap;
use std::path::Path;

use proptest::prelude::*;
use warren::{Database, DatabaseOptions};

fn strings(db: &Database, query: &str) -> Vec<String> {
    let mut conn = db.connect();
    let mut result = conn.query(query).unwrap_or_else(|e| panic!("{query}: {e}"));
    result.to_strings().unwrap()
}

fn one(db: &Database, query: &str) -> String {
    let rows = strings(db, query);
    assert_eq!(rows.len(), 1, "{query}: {rows:?}");
    rows[0].clone()
}

fn schema(db: &Database) {
    let mut conn = db.connect();
    conn.query("CREATE NODE TABLE P(ID INT64, name STRING, PRIMARY KEY(ID))")
        .unwrap();
    conn.query("CREATE REL TABLE E(FROM P TO P, w INT64)")
        .unwrap();
}

/// Options that keep the log at close, so that reopening replays it.
fn keep_log() -> DatabaseOptions {
    DatabaseOptions {
        checkpoint_on_close: false,
        ..DatabaseOptions::default()
    }
}

#[test]
fn commits_survive_a_reopen_through_the_log() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = Database::open_with(&path, keep_log()).unwrap();
        schema(&db);
        let mut conn = db.connect();
        for i in 0..50 {
            conn.query(&format!("CREATE (:P {{ID: {i}, name: 'n{i}'}})"))
                .unwrap();
        }
        for i in 1..50 {
            conn.query(&format!(
                "MATCH (a:P {{ID: {}}}), (b:P {{ID: {i}}}) CREATE (a)-[:E {{w: {i}}}]->(b)",
                i - 1
            ))
            .unwrap();
        }
        conn.query("MATCH (a:P {ID: 7}) SET a.name = 'seven'")
            .unwrap();
        conn.query("MATCH (a:P {ID: 49}) DETACH DELETE a").unwrap();
        assert!(db.wal_bytes() > 0, "row commits go to the log");
    }
    assert!(log_used_bytes(&path.join("warren.wal")) > 64);
    let db = Database::open_with(&path, keep_log()).unwrap();
    assert_eq!(one(&db, "MATCH (a:P) RETURN count(*)"), "49");
    assert_eq!(one(&db, "MATCH (a:P {ID: 7}) RETURN a.name"), "seven");
    let query = "MATCH p = (a:P)-[:E* SHORTEST 1..30]->(b:P) WHERE a.ID = 0 RETURN count(*), max(length(p))";
    assert_eq!(one(&db, query), "30|30");
    db.connect().query("CHECKPOINT").unwrap();
    assert_eq!(one(&db, query), "30|30");
    drop(db);
    let db = Database::open(&path).unwrap();
    assert_eq!(one(&db, query), "30|30");
    assert_eq!(one(&db, "MATCH (a:P {ID: 7}) RETURN a.name"), "seven");
}

#[test]
fn a_log_written_in_one_checksum_mode_is_not_replayed_in_the_other() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let unchecksummed = DatabaseOptions {
        enable_checksums: false,
        ..keep_log()
    };
    {
        let db = Database::open_with(&path, unchecksummed.clone()).unwrap();
        schema(&db);
        db.connect()
            .query("CREATE (:P {ID: 1, name: 'a'})")
            .unwrap();
    }
    let error = Database::open_with(&path, keep_log()).unwrap_err();
    assert!(
        error.to_string().contains("enable_checksums=false"),
        "{error}"
    );
    {
        // The same mode replays the log; a checkpoint at close then empties it.
        let db = Database::open_with(
            &path,
            DatabaseOptions {
                enable_checksums: false,
                ..DatabaseOptions::default()
            },
        )
        .unwrap();
        assert_eq!(one(&db, "MATCH (p:P) RETURN p.name"), "a");
    }
    // An empty log takes the mode asked for.
    let db = Database::open_with(&path, keep_log()).unwrap();
    db.connect()
        .query("CREATE (:P {ID: 2, name: 'b'})")
        .unwrap();
    drop(db);
    let db = Database::open_with(&path, keep_log()).unwrap();
    assert_eq!(one(&db, "MATCH (p:P) RETURN count(*)"), "2");
}

/// The bytes of the log at `log` that hold its header and frames (the file is preallocated:
/// zeros follow them).
fn log_used_bytes(log: &Path) -> u64 {
    let id: [u8; 16] = std::fs::read(log).unwrap()[16..32].try_into().unwrap();
    let fs = warren_storage::io::RealFileSystem;
    warren_storage::wal::Wal::read(&fs, log, id)
        .unwrap()
        .cursor
        .offset
}

#[test]
fn closing_checkpoints_unless_told_not_to() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let log_bytes = || log_used_bytes(&path.join("warren.wal"));
    {
        let db = Database::open(&path).unwrap();
        schema(&db);
        db.connect().query("CREATE (:P {ID: 1})").unwrap();
        assert!(log_bytes() > 64);
    }
    assert_eq!(
        log_bytes(),
        64,
        "the close folded the log into the segments"
    );
    {
        let db = Database::open(&path).unwrap();
        let mut conn = db.connect();
        conn.query("CALL force_checkpoint_on_close=false").unwrap();
        conn.query("CREATE (:P {ID: 2})").unwrap();
        assert_eq!(
            one(
                &db,
                "CALL current_setting('force_checkpoint_on_close') RETURN *"
            ),
            "False"
        );
    }
    assert!(log_bytes() > 64, "the log was kept");
    let db = Database::open(&path).unwrap();
    assert_eq!(
        strings(&db, "MATCH (a:P) RETURN a.ID ORDER BY a.ID"),
        vec!["1", "2"]
    );
}

#[test]
fn explicit_transactions_commit_once_and_roll_back_entirely() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = Database::open(&path).unwrap();
        schema(&db);
        let mut conn = db.connect();
        conn.query("BEGIN TRANSACTION").unwrap();
        conn.query("CREATE (:P {ID: 1})").unwrap();
        conn.query("CREATE (:P {ID: 2})").unwrap();
        assert_eq!(
            one(&db, "MATCH (a:P) RETURN count(*)"),
            "0",
            "not yet visible"
        );
        conn.query("COMMIT").unwrap();
        conn.query("BEGIN TRANSACTION").unwrap();
        conn.query("CREATE (:P {ID: 3})").unwrap();
        conn.query("ROLLBACK").unwrap();
    }
    let db = Database::open(&path).unwrap();
    assert_eq!(
        strings(&db, "MATCH (a:P) RETURN a.ID ORDER BY a.ID"),
        vec!["1", "2"]
    );
}

#[test]
fn ddl_after_row_commits_keeps_them() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    {
        let db = Database::open(&path).unwrap();
        schema(&db);
        let mut conn = db.connect();
        conn.query("CREATE (:P {ID: 1, name: 'a'})-[:E {w: 5}]->(:P {ID: 2, name: 'b'})")
            .unwrap();
        conn.query("ALTER TABLE P ADD age INT64 DEFAULT 3").unwrap();
        conn.query("CREATE (:P {ID: 3, name: 'c', age: 9})")
            .unwrap();
        conn.query("CREATE NODE TABLE Q(ID INT64, PRIMARY KEY(ID))")
            .unwrap();
    }
    let db = Database::open(&path).unwrap();
    assert_eq!(
        strings(&db, "MATCH (a:P) RETURN a.ID, a.name, a.age ORDER BY a.ID"),
        vec!["1|a|3", "2|b|3", "3|c|9"]
    );
    assert_eq!(
        one(&db, "MATCH (a:P)-[e:E]->(b:P) RETURN a.ID, e.w, b.ID"),
        "1|5|2"
    );
}

#[test]
fn concurrent_writers_all_commit_and_readers_see_whole_commits() {
    writers_and_a_reader(DatabaseOptions::default());
}

/// The same across checkpoints: a tiny threshold makes background checkpoints fold the delta
/// and recycle the log again and again while the writers and the reader go on.
#[test]
fn writers_and_readers_go_on_across_background_checkpoints() {
    writers_and_a_reader(DatabaseOptions {
        checkpoint_threshold_bytes: 2048,
        ..DatabaseOptions::default()
    });
}

fn writers_and_a_reader(options: DatabaseOptions) {
    let dir = tempfile::tempdir().unwrap();
    let db = Database::open_with(dir.path().join("db"), options).unwrap();
    schema(&db);
    const WRITERS: i64 = 8;
    const EACH: i64 = 40;
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let reader = {
        let db = db.clone();
        let stop = stop.clone();
        std::thread::spawn(move || {
            // Each commit creates a node and a rel to itself: a reader never sees one without
            // the other.
            let mut last = 0;
            while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                let rows = strings(
                    &db,
                    "MATCH (a:P) OPTIONAL MATCH (a)-[e:E]->(a) RETURN count(a), count(e)",
                );
                let (nodes, rels) = rows[0].split_once('|').unwrap();
                assert_eq!(nodes, rels, "a commit seen half-applied");
                let nodes: i64 = nodes.parse().unwrap();
                assert!(nodes >= last, "a reader went back in time");
                last = nodes;
            }
        })
    };
    let writers: Vec<_> = (0..WRITERS)
        .map(|t| {
            let db = db.clone();
            std::thread::spawn(move || {
                let mut conn = db.connect();
                for i in 0..EACH {
                    let id = t * 1000 + i;
                    conn.query(&format!("CREATE (a:P {{ID: {id}}})-[:E {{w: {i}}}]->(a)"))
                        .unwrap_or_else(|e| panic!("{e}"));
                }
            })
        })
        .collect();
    for writer in writers {
        writer.join().unwrap();
    }
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    reader.join().unwrap();
    let total = (WRITERS * EACH).to_string();
    assert_eq!(one(&db, "MATCH (a:P) RETURN count(*)"), total);
    let path = dir.path().join("db");
    drop(db);
    let db = Database::open(&path).unwrap();
    assert_eq!(one(&db, "MATCH (a:P)-[:E]->(a) RETURN count(*)"), total);
}

#[test]
fn background_checkpoints_keep_every_commit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let options = DatabaseOptions {
        checkpoint_threshold_bytes: 4096,
        ..DatabaseOptions::default()
    };
    {
        let db = Database::open_with(&path, options.clone()).unwrap();
        schema(&db);
        let mut conn = db.connect();
        for i in 0..300 {
            conn.query(&format!("CREATE (:P {{ID: {i}, name: 'x'}})"))
                .unwrap();
            if i > 0 {
                conn.query(&format!(
                    "MATCH (a:P {{ID: {}}}), (b:P {{ID: {i}}}) CREATE (a)-[:E {{w: 1}}]->(b)",
                    i - 1
                ))
                .unwrap();
            }
        }
        assert_eq!(one(&db, "MATCH (a:P) RETURN count(*)"), "300");
        assert!(
            db.wal_bytes() < 64 * 1024,
            "the log was recycled: {}",
            db.wal_bytes()
        );
    }
    let db = Database::open_with(&path, options).unwrap();
    assert_eq!(one(&db, "MATCH (a:P)-[:E]->(b:P) RETURN count(*)"), "299");
    let query = "MATCH p = (a:P)-[:E* SHORTEST 1..30]->(b:P) WHERE a.ID = 280 RETURN count(*), max(length(p))";
    assert_eq!(one(&db, query), "19|19");
}

/// Commits made while a background checkpoint runs find it running and start none; when it
/// ends with the log still past the threshold, it starts another, so once the writers stop
/// the log ends up empty without a further commit.
#[test]
fn commits_during_a_background_checkpoint_trigger_the_next_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let options = DatabaseOptions {
        // Any frame puts the log past the threshold.
        checkpoint_threshold_bytes: 1,
        checkpoint_on_close: false,
        ..DatabaseOptions::default()
    };
    let db = Database::open_with(&path, options).unwrap();
    let empty_log = db.wal_bytes();
    schema(&db);
    std::thread::scope(|scope| {
        for writer in 0..2 {
            let db = &db;
            scope.spawn(move || {
                let mut conn = db.connect();
                for i in 0..150 {
                    let id = writer * 1000 + i;
                    conn.query(&format!("CREATE (:P {{ID: {id}, name: 'x'}})"))
                        .unwrap();
                }
            });
        }
    });
    db.wait_for_background_checkpoint();
    assert_eq!(
        db.wal_bytes(),
        empty_log,
        "commits made during the last background checkpoint were left in the log"
    );
    assert_eq!(one(&db, "MATCH (a:P) RETURN count(*)"), "300");
    drop(db);
    let db = Database::open_with(&path, DatabaseOptions::default()).unwrap();
    assert_eq!(one(&db, "MATCH (a:P) RETURN count(*)"), "300");
}

#[test]
fn a_reading_process_opens_beside_a_writing_one() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let writer = Database::open(&path).unwrap();
    schema(&writer);
    writer
        .connect()
        .query("CREATE (:P {ID: 1})-[:E {w: 1}]->(:P {ID: 2})")
        .unwrap();
    let read_only = DatabaseOptions {
        read_only: true,
        ..DatabaseOptions::default()
    };
    let reader = Database::open_with(&path, read_only.clone()).unwrap();
    assert_eq!(
        one(&reader, "MATCH (a:P)-[:E]->(b:P) RETURN a.ID, b.ID"),
        "1|2"
    );
    let error = reader
        .connect()
        .query("CREATE (:P {ID: 3})")
        .unwrap_err()
        .to_string();
    assert!(error.contains("read-only"), "{error}");
    let second_writer = DatabaseOptions {
        write_if_free: true,
        ..DatabaseOptions::default()
    };
    let fallback = Database::open_with(&path, second_writer).unwrap();
    assert!(fallback.is_read_only());
    let error = fallback
        .connect()
        .query("CREATE (:P {ID: 3})")
        .unwrap_err()
        .to_string();
    assert!(error.contains("another process"), "{error}");
    writer.connect().query("CHECKPOINT").unwrap();
    let later = Database::open_with(&path, read_only).unwrap();
    assert_eq!(one(&later, "MATCH (a:P) RETURN count(*)"), "2");
}

/// One random step of a workload against a database and its model.
#[derive(Clone, Debug)]
enum Step {
    AddNode(i64),
    AddRel(i64, i64),
    SetName(i64, u8),
    DeleteNode(i64),
    DeleteRels(i64),
    Checkpoint,
    Reopen,
}

fn steps() -> impl Strategy<Value = Vec<Step>> {
    let step = prop_oneof![
        4 => (0i64..12).prop_map(Step::AddNode),
        6 => (0i64..12, 0i64..12).prop_map(|(a, b)| Step::AddRel(a, b)),
        2 => (0i64..12, 0u8..5).prop_map(|(a, n)| Step::SetName(a, n)),
        1 => (0i64..12).prop_map(Step::DeleteNode),
        1 => (0i64..12).prop_map(Step::DeleteRels),
        1 => Just(Step::Checkpoint),
        1 => Just(Step::Reopen),
    ];
    proptest::collection::vec(step, 1..40)
}

/// The data as the model sees it: node id -> name, and rels (from, to) with their serial.
#[derive(Default)]
struct Model {
    nodes: BTreeMap<i64, String>,
    rels: Vec<(i64, i64, i64)>,
    next_rel: i64,
}

impl Model {
    fn apply(&mut self, db: &Database, step: &Step) {
        let mut conn = db.connect();
        match step {
            Step::AddNode(id) => {
                let result = conn.query(&format!("CREATE (:P {{ID: {id}, name: 'n'}})"));
                assert_eq!(result.is_ok(), !self.nodes.contains_key(id), "{step:?}");
                self.nodes.entry(*id).or_insert_with(|| "n".into());
            }
            Step::AddRel(a, b) => {
                let w = self.next_rel;
                conn.query(&format!(
                    "MATCH (a:P {{ID: {a}}}), (b:P {{ID: {b}}}) CREATE (a)-[:E {{w: {w}}}]->(b)"
                ))
                .unwrap();
                if self.nodes.contains_key(a) && self.nodes.contains_key(b) {
                    self.rels.push((*a, *b, w));
                    self.next_rel += 1;
                }
            }
            Step::SetName(a, n) => {
                conn.query(&format!("MATCH (a:P {{ID: {a}}}) SET a.name = 'v{n}'"))
                    .unwrap();
                if let Some(name) = self.nodes.get_mut(a) {
                    *name = format!("v{n}");
                }
            }
            Step::DeleteNode(a) => {
                conn.query(&format!("MATCH (a:P {{ID: {a}}}) DETACH DELETE a"))
                    .unwrap();
                self.nodes.remove(a);
                self.rels.retain(|(x, y, _)| x != a && y != a);
            }
            Step::DeleteRels(a) => {
                conn.query(&format!("MATCH (a:P {{ID: {a}}})-[e:E]->() DELETE e"))
                    .unwrap();
                self.rels.retain(|(x, _, _)| x != a);
            }
            Step::Checkpoint => {
                conn.query("CHECKPOINT").unwrap();
            }
            Step::Reopen => {}
        }
    }

    fn check(&self, db: &Database) {
        let nodes: Vec<String> = self.nodes.iter().map(|(i, n)| format!("{i}|{n}")).collect();
        assert_eq!(
            strings(db, "MATCH (a:P) RETURN a.ID, a.name ORDER BY a.ID"),
            nodes
        );
        let mut rels: Vec<String> = self
            .rels
            .iter()
            .map(|(a, b, w)| format!("{a}|{b}|{w}"))
            .collect();
        rels.sort();
        let mut got = strings(db, "MATCH (a:P)-[e:E]->(b:P) RETURN a.ID, b.ID, e.w");
        got.sort();
        assert_eq!(got, rels);
        // Two hops through the engine's CSR (merged with the delta) against the model.
        let mut two_hops = 0usize;
        for (_, b, _) in &self.rels {
            two_hops += self.rels.iter().filter(|(x, _, _)| x == b).count();
        }
        assert_eq!(
            one(db, "MATCH (a:P)-[:E*2..2]->(c:P) RETURN count(*)"),
            two_hops.to_string()
        );
    }
}

fn open_with_schema(path: &Path) -> Database {
    let fresh = !path.exists();
    let db = Database::open(path).unwrap();
    if fresh {
        schema(&db);
    }
    db
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 40, ..ProptestConfig::default() })]

    /// Random inserts, updates, deletes, checkpoints and reopens: after every step the
    /// database equals the model.
    #[test]
    fn random_writes_checkpoints_and_reopens_match_a_model(steps in steps()) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let mut db = open_with_schema(&path);
        let mut model = Model::default();
        for step in &steps {
            if let Step::Reopen = step {
                drop(db);
                db = open_with_schema(&path);
            }
            model.apply(&db, step);
            model.check(&db);
        }
    }
}

/// DDL (a structural commit, holding the writer slot) while background checkpoints run (which
/// take the slot at their end): neither waits for the other forever, and every commit stays.
#[test]
fn ddl_and_background_checkpoints_do_not_deadlock() {
    let (done, finished) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let options = DatabaseOptions {
            checkpoint_threshold_bytes: 1024,
            ..DatabaseOptions::default()
        };
        let db = Database::open_with(&path, options.clone()).unwrap();
        schema(&db);
        std::thread::scope(|scope| {
            let writer = db.clone();
            scope.spawn(move || {
                let mut conn = writer.connect();
                for i in 0..1500 {
                    conn.query(&format!("CREATE (:P {{ID: {i}}})")).unwrap();
                }
            });
            let ddl = db.clone();
            scope.spawn(move || {
                let mut conn = ddl.connect();
                for t in 0..120 {
                    conn.query(&format!(
                        "CREATE NODE TABLE Q{t}(ID INT64, PRIMARY KEY(ID))"
                    ))
                    .unwrap();
                }
            });
        });
        drop(db);
        let db = Database::open_with(&path, options).unwrap();
        assert_eq!(one(&db, "MATCH (a:P) RETURN count(*)"), "1500");
        assert_eq!(strings(&db, "CALL show_tables() RETURN name").len(), 122);
        done.send(()).unwrap();
    });
    finished
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("DDL and checkpoints finished (no deadlock)");
}

//! Durability under injected faults: the database (its write-ahead log, and with it every other
//! file of its directory) runs on a simulated file system that crashes at a random operation
//! (keeping a random subset of the unsynced writes, torn at 512-byte sectors), writes short, or
//! fails a sync with EIO, while 1 to 4 connections commit single rows. After the crash the database reopens on what the file system kept, and
//! it must hold every acknowledged commit and, per connection, only a prefix of the commits
//! attempted: never a gap, never a lost acknowledged row.

use std::sync::{Arc, Mutex};

use proptest::prelude::*;
use warren::{Database, DatabaseOptions};
use warren_storage::io::{FaultPlan, FileSystem, SimulatedFileSystem};

const COMMITS_PER_CONNECTION: i64 = 40;

fn options() -> DatabaseOptions {
    DatabaseOptions {
        checkpoint_on_close: false,
        ..DatabaseOptions::default()
    }
}

fn ids(db: &Database) -> Vec<i64> {
    db.connect()
        .query("MATCH (t:T) RETURN t.id ORDER BY t.id")
        .unwrap()
        .to_strings()
        .unwrap()
        .iter()
        .map(|s| s.parse().unwrap())
        .collect()
}

/// Connection `c` commits ids `c * 1000 + i`; returns the acknowledged ids of each connection.
fn commit_until_failure(db: &Database, connections: i64) -> Vec<Vec<i64>> {
    let acknowledged = Arc::new(Mutex::new(vec![Vec::new(); connections as usize]));
    std::thread::scope(|scope| {
        for c in 0..connections {
            let db = db.clone();
            let acknowledged = acknowledged.clone();
            scope.spawn(move || {
                let mut conn = db.connect();
                for i in 0..COMMITS_PER_CONNECTION {
                    let id = c * 1000 + i;
                    if conn.query(&format!("CREATE (:T {{id: {id}}})")).is_err() {
                        return;
                    }
                    acknowledged.lock().unwrap()[c as usize].push(id);
                }
            });
        }
    });
    Arc::try_unwrap(acknowledged).unwrap().into_inner().unwrap()
}

fn check_recovered(recovered: &[i64], acknowledged: &[Vec<i64>]) {
    for (c, acked) in acknowledged.iter().enumerate() {
        let mine: Vec<i64> = recovered
            .iter()
            .copied()
            .filter(|id| id / 1000 == c as i64)
            .collect();
        let expected_prefix: Vec<i64> = (0..mine.len() as i64)
            .map(|i| c as i64 * 1000 + i)
            .collect();
        assert_eq!(
            mine, expected_prefix,
            "connection {c}: not a prefix of its commits"
        );
        assert!(
            mine.len() >= acked.len(),
            "connection {c}: {} acknowledged, {} recovered",
            acked.len(),
            mine.len()
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn a_crash_keeps_every_acknowledged_commit(
        seed in any::<u64>(),
        crash_after in 1u64..400,
        connections in 1i64..5,
        short_writes in proptest::bool::ANY,
        sync_fails in proptest::bool::ANY,
    ) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("db");
        let sim = SimulatedFileSystem::new(FaultPlan::default());
        let fs: Arc<dyn FileSystem> = Arc::new(sim.clone());
        let db = Database::open_with_file_system(&path, options(), fs.clone()).unwrap();
        db.connect().query("CREATE NODE TABLE T(id INT64, PRIMARY KEY(id))").unwrap();
        let stats = sim.stats();
        sim.set_faults(FaultPlan {
            seed,
            crash_at_operation: Some(stats.operations + crash_after),
            // Sync failures are counted in syncs.
            sync_failure_at: sync_fails.then_some(stats.syncs + 1 + crash_after % 16),
            short_writes,
            ..FaultPlan::default()
        });
        let acknowledged = commit_until_failure(&db, connections);
        sim.crash();
        drop(db);
        sim.set_faults(FaultPlan::default());
        let db = Database::open_with_file_system(&path, options(), fs.clone()).unwrap();
        let recovered = ids(&db);
        check_recovered(&recovered, &acknowledged);
        // Recovery is repeatable, and the database takes writes again.
        drop(db);
        let db = Database::open_with_file_system(&path, options(), fs).unwrap();
        prop_assert_eq!(ids(&db), recovered.clone());
        db.connect().query("CREATE (:T {id: 999999})").unwrap();
    }
}

#[test]
fn a_failed_sync_makes_the_database_refuse_writes() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("db");
    let sim = SimulatedFileSystem::new(FaultPlan::default());
    let fs: Arc<dyn FileSystem> = Arc::new(sim.clone());
    let db = Database::open_with_file_system(&path, options(), fs.clone()).unwrap();
    let mut conn = db.connect();
    conn.query("CREATE NODE TABLE T(id INT64, PRIMARY KEY(id))")
        .unwrap();
    conn.query("CREATE (:T {id: 0})").unwrap();
    let syncs = sim.stats().syncs;
    sim.set_faults(FaultPlan {
        sync_failure_at: Some(syncs + 2),
        ..FaultPlan::default()
    });
    let mut failed = None;
    for id in 1..10 {
        if let Err(error) = conn.query(&format!("CREATE (:T {{id: {id}}})")) {
            failed = Some((id, error.to_string()));
            break;
        }
    }
    let (failed_id, error) = failed.expect("the planned sync failure surfaced");
    assert!(error.contains("could not be made durable"), "{error}");
    let later = conn.query("CREATE (:T {id: 100})").unwrap_err().to_string();
    assert!(
        later.contains("read-only after a failed write to its files"),
        "{later}"
    );
    // Readers go on, seeing only what was acknowledged.
    assert_eq!(ids(&db), (0..failed_id).collect::<Vec<_>>());
    sim.crash();
    drop(conn);
    drop(db);
    sim.set_faults(FaultPlan::default());
    let db = Database::open_with_file_system(&path, options(), fs).unwrap();
    let recovered = ids(&db);
    assert!(recovered.len() as i64 >= failed_id, "{recovered:?}");
}

//! Durability of the whole database directory under injected faults. Every file (log, segment
//! files, manifest, lock) lives on a simulated file system. A random sequence of transactions
//! (single-row inserts, updates, deletes and rel creations; DDL followed by rows in the new
//! tables, ALTER TABLE ADD on a table with rows, DROP TABLE, an explicit transaction mixing
//! DDL and rows; COPY of small node and rel CSV files, and an append COPY; a reorder of T's rows by `reorder_nodes`) and CHECKPOINTs (in half of the cases also background checkpoints every few
//! commits, racing the statements) runs once without faults, recording the database after each
//! transaction, then again with a crash (keeping a random subset of the unsynced writes, torn
//! at 512-byte sectors, and a prefix of the unsynced directory changes) or an `EIO` injected at
//! a random one of the run's I/O operations: a log write or sync, a segment write or sync, a
//! manifest write, sync or rename, a directory sync, a removal. After the fault the database
//! reopens, twice, and must equal the database after some prefix of the transactions that
//! contains every acknowledged one; after an `EIO` every later write must be refused with the
//! failed state's error. In most cases the first reopen also meets a read fault (`EIO` on a
//! read, or a bit flipped in the bytes of a read or a map, at a random one of the reads the
//! reopen makes, with short reads or not): it must either fail with a clear error (an I/O
//! error, a storage exception or a checksum mismatch) or open exactly the database a
//! fault-free reopen opens, and it must leave the files so that the next reopen still keeps
//! every acknowledged transaction.
//!
//! Each database opens on a process's view of the simulated disk
//! (`SimulatedFileSystem::process`): when the machine crashes, the process dies with it, and a
//! background checkpoint thread of it still running cannot write to the disk the machine
//! reboots with (it did, before: a checkpoint that went on after the crash wrote a manifest
//! naming a segment file the crash had lost, and about one run in seven of the 256 cases
//! failed to reopen).
//!
//! Every random choice of a case (its statements, the faulted operation and read, the kind of
//! fault, short writes and reads, background checkpoints, and the simulated file system's own
//! random numbers: which unsynced sectors a crash keeps, short-write lengths, the flipped bit)
//! derives from one case seed, which a failing case prints. Replay it alone with
//!
//! ```text
//! WARREN_FAULT_SEED=<seed> cargo test --profile ci -p warren --test database_faults -- a_fault_anywhere
//! ```
//!
//! (decimal or `0x` hex). A case with background checkpoints replays the same choices, but the
//! checkpoint thread's timing, and so the exact operation faulted, can differ between runs.
//! Without `WARREN_FAULT_SEED` the case seeds derive from a random run seed, printed first;
//! `WARREN_FAULT_RUN_SEED` replays a whole run, and `WARREN_FAULT_CASES` sets the number of
//! cases (256 by default) for long runs.

use std::collections::BTreeMap;
use std::hash::{BuildHasher, Hasher};
use std::path::Path;
use std::sync::Arc;

use warren::{Database, DatabaseOptions};
use warren_storage::io::{FaultPlan, FileSystem, SeededRng, SimulatedFileSystem};

const COPY_NODES: i64 = 40;

/// What one step of a run does; the numbers pick among the rows that exist.
#[derive(Clone, Debug)]
enum Step {
    Insert,
    Update(u32),
    Delete(u32),
    Rel(u32, u32),
    CreateTable,
    DropTable,
    AddColumn,
    DdlTransaction,
    Copy,
    /// `CALL reorder_nodes('T', ...)`: BFS order when true, degree order when false.
    Reorder(bool),
    Checkpoint,
}

/// A random step, with weights: inserts most often, DDL and COPY now and then.
fn random_step(rng: &mut SeededRng) -> Step {
    // The weights of the kinds below, in their order.
    const WEIGHTS: [u64; 11] = [6, 2, 1, 3, 1, 1, 1, 1, 1, 1, 2];
    let mut pick = rng.range_inclusive(0, WEIGHTS.iter().sum::<u64>() - 1);
    let mut kind = 0;
    while pick >= WEIGHTS[kind] {
        pick -= WEIGHTS[kind];
        kind += 1;
    }
    let mut number = || rng.next_u64() as u32;
    match kind {
        0 => Step::Insert,
        1 => Step::Update(number()),
        2 => Step::Delete(number()),
        3 => Step::Rel(number(), number()),
        4 => Step::CreateTable,
        5 => Step::DropTable,
        6 => Step::AddColumn,
        7 => Step::DdlTransaction,
        8 => Step::Copy,
        9 => Step::Reorder(number() % 2 == 0),
        _ => Step::Checkpoint,
    }
}

/// A statement of a run and whether it commits a transaction (CHECKPOINT does not).
struct Statement {
    text: String,
    transaction: bool,
}

/// Turns steps into statements, tracking which rows of T exist so that every statement
/// changes something.
fn statements(steps: &[Step], csv_dir: &Path) -> Vec<Statement> {
    let nodes = csv_dir.join("nodes.csv").display().to_string();
    let more_nodes = csv_dir.join("more_nodes.csv").display().to_string();
    let rels = csv_dir.join("rels.csv").display().to_string();
    let mut live: Vec<i64> = Vec::new();
    let mut next_id = 0i64;
    let mut tables = 0u32;
    let mut droppable: Vec<String> = Vec::new();
    let mut out = Vec::new();
    let mut push = |text: String, transaction: bool| out.push(Statement { text, transaction });
    for step in steps {
        let pick = |r: u32, live: &[i64]| live[r as usize % live.len()];
        match step {
            Step::Update(r) if !live.is_empty() => {
                let id = pick(*r, &live);
                push(
                    format!("MATCH (t:T {{id: {id}}}) SET t.name = 'u{r}'"),
                    true,
                );
            }
            Step::Delete(r) if !live.is_empty() => {
                let id = pick(*r, &live);
                live.retain(|&x| x != id);
                push(format!("MATCH (t:T {{id: {id}}}) DETACH DELETE t"), true);
            }
            Step::Rel(a, b) if !live.is_empty() => {
                let (a, b) = (pick(*a, &live), pick(*b, &live));
                push(
                    format!("MATCH (a:T {{id: {a}}}), (b:T {{id: {b}}}) CREATE (a)-[:R]->(b)"),
                    true,
                );
            }
            Step::CreateTable => {
                tables += 1;
                push(
                    format!("CREATE NODE TABLE D{tables}(id INT64, PRIMARY KEY(id))"),
                    true,
                );
                // A row after the DDL, logged against the catalog the DDL made.
                push(format!("CREATE (:D{tables} {{id: {tables}}})"), true);
                droppable.push(format!("D{tables}"));
            }
            Step::DropTable if !droppable.is_empty() => {
                let name = droppable.remove(0);
                push(format!("DROP TABLE {name}"), true);
            }
            Step::AddColumn => {
                tables += 1;
                push(
                    format!("ALTER TABLE T ADD a{tables} INT64 DEFAULT {tables}"),
                    true,
                );
            }
            Step::DdlTransaction => {
                tables += 1;
                let id = next_id;
                next_id += 1;
                live.push(id);
                push("BEGIN TRANSACTION".into(), false);
                push(format!("CREATE (:T {{id: {id}, name: 'n{id}'}})"), false);
                push(
                    format!("CREATE NODE TABLE E{tables}(id INT64, PRIMARY KEY(id))"),
                    false,
                );
                push(format!("CREATE (:E{tables} {{id: {id}}})"), false);
                push("COMMIT".into(), true);
            }
            Step::Copy => {
                tables += 1;
                let n = tables;
                push(
                    format!("CREATE NODE TABLE C{n}(id INT64, PRIMARY KEY(id))"),
                    true,
                );
                push(format!("COPY C{n} FROM '{nodes}'"), true);
                push(format!("CREATE REL TABLE Q{n}(FROM C{n} TO C{n})"), true);
                push(format!("COPY Q{n} FROM '{rels}'"), true);
                // An append COPY: onto a table that has rows.
                push(format!("COPY C{n} FROM '{more_nodes}'"), true);
            }
            Step::Reorder(bfs) => {
                let order = if *bfs { "bfs" } else { "degree" };
                push(format!("CALL reorder_nodes('T', order := '{order}')"), true);
            }
            Step::Checkpoint => push("CHECKPOINT".into(), false),
            Step::Insert | Step::Update(_) | Step::Delete(_) | Step::Rel(..) | Step::DropTable => {
                let id = next_id;
                next_id += 1;
                live.push(id);
                push(format!("CREATE (:T {{id: {id}, name: 'n{id}'}})"), true);
            }
        }
    }
    out
}

/// Checkpoints happen where the steps say, and with `background` also in a background thread
/// whenever the log passes a few hundred bytes (every few commits).
fn options(background: bool) -> DatabaseOptions {
    DatabaseOptions {
        auto_checkpoint: background,
        checkpoint_threshold_bytes: 512,
        checkpoint_on_close: false,
        ..DatabaseOptions::default()
    }
}

fn rows(db: &Database, query: &str) -> Vec<String> {
    try_rows(db, query).unwrap_or_else(|e| panic!("{e}"))
}

fn try_rows(db: &Database, query: &str) -> Result<Vec<String>, String> {
    db.connect()
        .query(query)
        .and_then(|mut result| result.to_strings())
        .map_err(|e| format!("{query}: {e}"))
}

/// Everything a user can see of the database, as text.
fn state(db: &Database) -> Vec<String> {
    try_state(db).unwrap_or_else(|e| panic!("{e}"))
}

fn try_state(db: &Database) -> Result<Vec<String>, String> {
    // Whole nodes: the columns ALTER TABLE added, with their values, too.
    let mut out = try_rows(db, "MATCH (t:T) RETURN t ORDER BY t.id")?;
    out.extend(try_rows(
        db,
        "MATCH (a:T)-[r:R]->(b:T) RETURN a.id, b.id, count(*) ORDER BY a.id, b.id",
    )?);
    for table in try_rows(db, "CALL show_tables() RETURN name, type")? {
        let (name, kind) = table.split_once('|').unwrap();
        let count = if kind == "NODE" {
            try_rows(db, &format!("MATCH (x:{name}) RETURN count(*)"))?
        } else {
            try_rows(db, &format!("MATCH ()-[x:{name}]->() RETURN count(*)"))?
        };
        out.push(format!("{name} {}", count[0]));
    }
    Ok(out)
}

/// A simulated file system holding a new database with tables T and R.
fn set_up(path: &Path, background: bool) -> (SimulatedFileSystem, Database) {
    // The set-up injects no faults and draws no random numbers; `set_faults` reseeds the
    // generator with the case's seed.
    let sim = SimulatedFileSystem::new(FaultPlan::default());
    let fs: Arc<dyn FileSystem> = Arc::new(sim.process());
    let db = Database::open_with_file_system(path, options(false), fs).unwrap();
    let mut conn = db.connect();
    conn.query("CREATE NODE TABLE T(id INT64, name STRING, PRIMARY KEY(id))")
        .unwrap();
    conn.query("CREATE REL TABLE R(FROM T TO T)").unwrap();
    // The set-up's DDL is logged; checkpointed here, and background checkpoints started only
    // afterwards, the set-up makes the same I/O operations in every run.
    conn.query("CHECKPOINT").unwrap();
    if background {
        conn.query("CALL auto_checkpoint=true").unwrap();
    }
    (sim, db)
}

fn open(sim: &SimulatedFileSystem, path: &Path) -> Database {
    let fs: Arc<dyn FileSystem> = Arc::new(sim.process());
    Database::open_with_file_system(path, options(false), fs)
        .unwrap_or_else(|e| panic!("the database does not open after the fault: {e}"))
}

/// The fault-free run: the database after each transaction (index 0: before the first), and
/// the number of I/O operations the whole run makes after the set-up.
/// With background checkpoints the count varies a little from run to run.
fn fault_free_run(
    path: &Path,
    statements: &[Statement],
    background: bool,
) -> (Vec<Vec<String>>, u64, u64) {
    let (sim, db) = set_up(path, background);
    let set_up_operations = sim.stats().operations;
    let mut states = vec![state(&db)];
    let mut conn = db.connect();
    for statement in statements {
        conn.query(&statement.text)
            .unwrap_or_else(|e| panic!("{}: {e}", statement.text));
        if statement.transaction {
            states.push(state(&db));
        }
    }
    (states, set_up_operations, sim.stats().operations)
}

/// A fault in the reads of the first reopen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ReadFault {
    None,
    Eio,
    BitFlip,
}

#[derive(Clone, Copy, Debug)]
enum Fault {
    /// The machine crashes at the operation.
    Crash,
    /// The operation fails with EIO; the process then ends, and the machine crashes or not.
    Eio { crash_after: bool },
}

struct Outcome {
    acknowledged: usize,
    attempted: usize,
}

/// Runs `statements` until the first failure (or the crash) stops the run. After a failure
/// without a crash, the database must refuse every write with the failed state's error.
fn run_with_fault(db: &Database, sim: &SimulatedFileSystem, statements: &[Statement]) -> Outcome {
    let mut conn = db.connect();
    let (mut acknowledged, mut attempted) = (0, 0);
    for statement in statements {
        if sim.stats().crashes > 0 {
            // The process died with the machine.
            break;
        }
        attempted += usize::from(statement.transaction);
        if let Err(error) = conn.query(&statement.text) {
            let error = error.to_string();
            let error_is_io = error.contains("Input/output error") || error.contains("crashed");
            assert!(
                error_is_io,
                "{}: an unexpected error: {error}",
                statement.text
            );
            if sim.stats().crashes == 0 {
                for write in ["CREATE (:T {id: 2000000, name: 'x'})", "CHECKPOINT"] {
                    let refused = conn.query(write).unwrap_err().to_string();
                    assert!(
                        refused.contains("read-only after a failed write to its files"),
                        "{write} after {error}: {refused}"
                    );
                }
            }
            break;
        }
        acknowledged += usize::from(statement.transaction);
    }
    Outcome {
        acknowledged,
        attempted,
    }
}

fn cases() -> u32 {
    std::env::var("WARREN_FAULT_CASES")
        .ok()
        .and_then(|text| text.parse().ok())
        .unwrap_or(256)
}

/// A seed from the environment variable `name` (decimal or `0x` hex), if set.
fn seed_from_env(name: &str) -> Option<u64> {
    let text = std::env::var(name).ok()?;
    let text = text.trim();
    let parsed = match text.strip_prefix("0x") {
        Some(hex) => u64::from_str_radix(hex, 16),
        None => text.parse(),
    };
    Some(parsed.unwrap_or_else(|e| panic!("{name}={text} is not a seed: {e}")))
}

/// One case's random choices, all derived from `seed`.
#[derive(Clone, Debug)]
struct Case {
    steps: Vec<Step>,
    /// Seeds the simulated file system's random numbers (torn sectors, short writes, the
    /// flipped bit).
    fs_seed: u64,
    /// Picks the faulted operation among those of the fault-free run.
    at: u64,
    fault: Fault,
    short_writes: bool,
    /// Background checkpoints run beside the statements.
    background: bool,
    read_fault: ReadFault,
    /// Picks the faulted read among those of a fault-free reopen.
    read_at: u64,
    short_reads: bool,
}

impl Case {
    fn from_seed(seed: u64) -> Case {
        let mut rng = SeededRng::new(seed);
        let step_count = rng.range_inclusive(4, 23);
        let steps = (0..step_count).map(|_| random_step(&mut rng)).collect();
        let fault = match rng.range_inclusive(0, 2) {
            0 => Fault::Crash,
            1 => Fault::Eio { crash_after: true },
            _ => Fault::Eio { crash_after: false },
        };
        Case {
            steps,
            fs_seed: rng.next_u64(),
            at: rng.next_u64(),
            fault,
            short_writes: rng.coin(),
            background: rng.coin(),
            read_fault: match rng.range_inclusive(0, 3) {
                0 => ReadFault::None,
                1 => ReadFault::Eio,
                _ => ReadFault::BitFlip,
            },
            read_at: rng.next_u64(),
            short_reads: rng.coin(),
        }
    }
}

/// The seeds of the cases to run: the one of `WARREN_FAULT_SEED`, or `cases()` seeds drawn
/// from a run seed (`WARREN_FAULT_RUN_SEED`, or a random one), which is printed.
fn case_seeds() -> Vec<u64> {
    if let Some(seed) = seed_from_env("WARREN_FAULT_SEED") {
        eprintln!("database faults: replaying the case of seed {seed:#x}");
        return vec![seed];
    }
    let run_seed = seed_from_env("WARREN_FAULT_RUN_SEED").unwrap_or_else(|| {
        std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish()
    });
    eprintln!("database faults: run seed {run_seed:#x} (WARREN_FAULT_RUN_SEED replays the run)");
    let mut rng = SeededRng::new(run_seed);
    (0..cases()).map(|_| rng.next_u64()).collect()
}

/// Which file an injected fault hit, for the summary.
fn fault_place(path: &Path, db: &Path) -> &'static str {
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    match name.as_deref() {
        _ if path == db || path == db.join("data") => "directory sync",
        Some(name) if name.starts_with("warren.wal") => "log",
        Some(name) if name.starts_with("warren.manifest") => "manifest",
        Some(name) if name.ends_with(".seg") => "segment",
        _ => "other",
    }
}

/// What one case found: where its fault landed (`None`: the run ended before it) and what its
/// read fault led to; `None` when the fault-free run makes no I/O to fault.
type CaseOutcome = Option<(Option<&'static str>, &'static str)>;

/// Runs one case; panics (with what went wrong) when recovery breaks a promise.
fn check_case(case: &Case) -> CaseOutcome {
    let temp = tempfile::tempdir().unwrap();
    let nodes: String = (0..COPY_NODES).map(|i| format!("{i}\n")).collect();
    let rels: String = (1..COPY_NODES)
        .map(|i| format!("{},{i}\n", i - 1))
        .collect();
    std::fs::write(temp.path().join("nodes.csv"), nodes).unwrap();
    let more_nodes: String = (COPY_NODES..2 * COPY_NODES)
        .map(|i| format!("{i}\n"))
        .collect();
    std::fs::write(temp.path().join("more_nodes.csv"), more_nodes).unwrap();
    std::fs::write(temp.path().join("rels.csv"), rels).unwrap();
    let statements = statements(&case.steps, temp.path());
    let path = temp.path().join("db");
    let (states, first, last) = fault_free_run(&path, &statements, case.background);
    if last == first {
        return None;
    }
    let operation = first + 1 + case.at % (last - first);
    let (sim, db) = set_up(&path, case.background);
    assert_eq!(sim.stats().operations, first);
    sim.set_faults(FaultPlan {
        seed: case.fs_seed,
        crash_at_operation: matches!(case.fault, Fault::Crash).then_some(operation),
        eio_at_operation: matches!(case.fault, Fault::Eio { .. }).then_some(operation),
        short_writes: case.short_writes,
        ..FaultPlan::default()
    });
    let outcome = run_with_fault(&db, &sim, &statements);
    let place = sim.fault_path().map(|faulted| fault_place(&faulted, &path));
    let crash = !matches!(case.fault, Fault::Eio { crash_after: false });
    if crash && sim.stats().crashes == 0 {
        sim.crash();
    }
    drop(db);
    sim.set_faults(FaultPlan::default());
    let (expected, read_outcome) = reopen_with_read_fault(&sim, &path, case);
    let db = open(&sim, &path);
    let recovered = state(&db);
    assert_eq!(
        &recovered, &expected,
        "a read fault changed what recovery finds"
    );
    let prefix =
        (outcome.acknowledged..=outcome.attempted).find(|&count| states[count] == recovered);
    assert!(
        prefix.is_some(),
        "{:?} at operation {operation}: {} acknowledged, {} attempted, recovered {recovered:?}",
        case.fault,
        outcome.acknowledged,
        outcome.attempted
    );
    drop(db);
    // Recovery is repeatable, and the database takes writes again.
    let db = open(&sim, &path);
    assert_eq!(state(&db), recovered);
    db.connect()
        .query("CREATE (:T {id: 1000000, name: 'after'})")
        .unwrap();
    drop(db);
    let db = open(&sim, &path);
    let after = rows(&db, "MATCH (t:T {id: 1000000}) RETURN t.name");
    assert_eq!(after, vec!["after".to_string()]);
    Some((place, read_outcome))
}

/// Whether `error` (of an open or a query) names a read fault clearly.
fn is_clear_read_error(error: &str) -> bool {
    [
        "Input/output error",
        "Storage exception",
        "read differently twice",
        "checksum mismatch",
    ]
    .iter()
    .any(|clear| error.contains(clear))
}

/// The first reopen after the fault, with the case's read fault: learns on a copy of the disk
/// how many reads a fault-free reopen (and the reading of the state) makes and what it opens,
/// then reopens with the fault at one of those reads. The open must fail clearly or open that
/// same state. Returns the fault-free state and what the read fault led to.
fn reopen_with_read_fault(
    sim: &SimulatedFileSystem,
    path: &Path,
    case: &Case,
) -> (Vec<String>, &'static str) {
    let copy = sim.fork();
    let reads_before = copy.stats().reads;
    let expected = {
        let db = open(&copy, path);
        state(&db)
    };
    let reads = copy.stats().reads - reads_before;
    if case.read_fault == ReadFault::None || reads == 0 {
        return (expected, "no read fault");
    }
    let at = sim.stats().reads + 1 + case.read_at % reads;
    sim.set_faults(FaultPlan {
        seed: case.fs_seed,
        read_failure_at: (case.read_fault == ReadFault::Eio).then_some(at),
        bit_flip_at_read: (case.read_fault == ReadFault::BitFlip).then_some(at),
        short_reads: case.short_reads,
        ..FaultPlan::default()
    });
    let fs: Arc<dyn FileSystem> = Arc::new(sim.process());
    // A checksum mismatch in a block read during the open's replay of the log fails the
    // open; one read by a query fails that query: both are errors naming the block.
    let outcome = match Database::open_with_file_system(path, options(false), fs) {
        Err(error) => Err(error.to_string()),
        Ok(db) => try_state(&db),
    };
    sim.set_faults(FaultPlan::default());
    let led_to = match (&outcome, case.read_fault) {
        (Ok(_), ReadFault::Eio) => "read EIO: same database",
        (Ok(_), _) => "bit flip: same database",
        (Err(_), ReadFault::Eio) => "read EIO: clear error",
        (Err(error), _) if error.contains("checksum mismatch") => "bit flip: checksum mismatch",
        (Err(_), _) => "bit flip: clear error",
    };
    match outcome {
        Ok(state) => assert_eq!(
            &state, &expected,
            "{:?} at read {at} opened another database",
            case.read_fault
        ),
        Err(error) => assert!(
            is_clear_read_error(&error),
            "{:?} at read {at}: an unclear error: {error}",
            case.read_fault
        ),
    }
    (expected, led_to)
}

#[test]
fn a_fault_anywhere_keeps_a_prefix_with_every_acknowledged_transaction() {
    let seeds = case_seeds();
    let mut places = BTreeMap::<&str, u32>::new();
    let mut read_outcomes = BTreeMap::<&str, u32>::new();
    let mut without_io = 0;
    for &seed in &seeds {
        let case = Case::from_seed(seed);
        let checked = std::panic::catch_unwind(|| check_case(&case));
        let outcome = checked.unwrap_or_else(|panic| {
            eprintln!(
                "database faults: the case of seed {seed:#x} failed ({case:?}); replay it with \
                 WARREN_FAULT_SEED={seed:#x}"
            );
            std::panic::resume_unwind(panic)
        });
        let Some((place, read_outcome)) = outcome else {
            without_io += 1;
            continue;
        };
        *places.entry(place.unwrap_or("not reached")).or_default() += 1;
        *read_outcomes.entry(read_outcome).or_default() += 1;
    }
    eprintln!(
        "database faults: {} cases passed ({without_io} without I/O to fault); faults landed in \
         {places:?}; read faults at the first reopen: {read_outcomes:?}",
        seeds.len()
    );
    if seeds.len() >= 128 {
        for place in ["log", "segment", "manifest", "directory sync"] {
            assert!(
                places.contains_key(place),
                "no fault landed in the {place}: {places:?}"
            );
        }
    }
}

#[test]
fn a_copy_whose_segment_sync_fails_leaves_the_old_database_and_refuses_writes() {
    let temp = tempfile::tempdir().unwrap();
    let csv = temp.path().join("nodes.csv");
    std::fs::write(&csv, "1\n2\n3\n").unwrap();
    let path = temp.path().join("db");
    let (sim, db) = set_up(&path, false);
    let mut conn = db.connect();
    conn.query("CREATE (:T {id: 7, name: 'seven'})").unwrap();
    conn.query("CREATE NODE TABLE C(id INT64, PRIMARY KEY(id))")
        .unwrap();
    // The COPY's first sync is that of its first new segment file.
    sim.set_faults(FaultPlan {
        sync_failure_at: Some(sim.stats().syncs + 1),
        ..FaultPlan::default()
    });
    let error = conn
        .query(&format!("COPY C FROM '{}'", csv.display()))
        .unwrap_err()
        .to_string();
    assert!(
        error.contains(".seg") && error.contains("Input/output error"),
        "{error}"
    );
    let refused = conn
        .query("CREATE (:T {id: 8, name: 'eight'})")
        .unwrap_err()
        .to_string();
    assert!(
        refused.contains("read-only after a failed write to its files")
            && refused.contains("Input/output error"),
        "{refused}"
    );
    // Readers go on with what was committed.
    assert_eq!(rows(&db, "MATCH (c:C) RETURN count(*)"), vec!["0"]);
    sim.crash();
    drop(conn);
    drop(db);
    sim.set_faults(FaultPlan::default());
    let db = open(&sim, &path);
    assert_eq!(rows(&db, "MATCH (c:C) RETURN count(*)"), vec!["0"]);
    assert_eq!(rows(&db, "MATCH (t:T) RETURN t.name"), vec!["seven"]);
    db.connect()
        .query(&format!("COPY C FROM '{}'", csv.display()))
        .unwrap();
    assert_eq!(rows(&db, "MATCH (c:C) RETURN count(*)"), vec!["3"]);
}

//! The `writes` workload: durable writes on a copy of `--db` (a Graph500 database), scenario
//! by scenario, each repeated `--repeat` times:
//!
//! * `commit-1`, `commit-8`, `commit-64`: single-edge `CREATE` commits from 1, 8 and 64
//!   connections at once; commits per second and commit latency percentiles (HDR histograms).
//! * `batch`: `UNWIND` of 10,000 edges per statement; edges per second.
//! * `mixed`: one connection commits single edges while another counts two-hop neighbourhoods
//!   of random nodes; operations per second and read latency.
//! * `checkpoint`: a `CHECKPOINT` of 1% of the edges in the delta while single-edge commits go
//!   on; its time and the commits' latency meanwhile.
//! * `recovery`: the time to open a database whose log holds 64 MiB of
//!   single-row commits (replayed on open).
//! * `slowdown-1pct`, `slowdown-5pct`: the seed queries (sp64, sp1, walks 1..3) with 1% and 5%
//!   of the edges in the delta, over the same queries after a checkpoint; the first run after
//!   the inserts (which builds the delta's patched node groups once) is reported separately.
//! * `read-after-commit`: with 1% of the edges in the delta, a one-source SHORTEST (sp1) right
//!   after each single-edge commit, over the same query without a commit in between: what the
//!   first traversal of a new table version costs (O(touched node groups), not O(edges)).
//!
//! Every scenario checks what it wrote: the edge count grows by exactly the commits made.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hdrhistogram::Histogram;
use warren::{Connection, Database, DatabaseOptions, Value};

use crate::bench::{new_report, settings_info, Header};
use crate::dataset::{count, NODE_TABLE, REL_TABLE};
use crate::error::{BenchError, BenchResult};
use crate::machine;
use crate::report::{Figures, KSetting, Report, Run};
use crate::stats::Summary;
use crate::workload::BenchOptions;

/// How much each scenario does: the full sizes for `warren bench writes`, small ones (`--quick`)
/// for the test that runs every scenario inside `cargo test`.
#[derive(Clone, Copy, Debug)]
struct Sizes {
    /// How long each repeat of a `commit-*` scenario commits (every connection commits single
    /// edges until then): long enough that a round's rate does not hang on a few slow syncs.
    commit_time: Duration,
    /// Edges per statement and statements per repeat of `batch`.
    batch_edges: usize,
    batch_statements: usize,
    /// How long `mixed` runs per repeat.
    mixed: Duration,
    /// The log size `recovery` replays (Kùzu's default checkpoint threshold is 16 MiB; the
    /// goal is stated for 64 MiB).
    recovery_log_bytes: u64,
}

const FULL: Sizes = Sizes {
    commit_time: Duration::from_millis(1_500),
    batch_edges: 10_000,
    batch_statements: 5,
    mixed: Duration::from_secs(2),
    recovery_log_bytes: 64 << 20,
};

const QUICK: Sizes = Sizes {
    commit_time: Duration::from_millis(100),
    batch_edges: 500,
    batch_statements: 2,
    mixed: Duration::from_millis(200),
    recovery_log_bytes: 256 << 10,
};

fn sizes(options: &BenchOptions) -> Sizes {
    if options.quick {
        QUICK
    } else {
        FULL
    }
}
/// The bytes of text each `recovery` commit carries.
const RECOVERY_ROW_BYTES: usize = 1_000;

const EDGE_STATEMENT: &str =
    "MATCH (a:Person {ID: $a}), (b:Person {ID: $b}) CREATE (a)-[:Knows]->(b)";
const BATCH_STATEMENT: &str = "UNWIND $pairs AS p MATCH (a:Person {ID: p[1]}), (b:Person {ID: p[2]}) CREATE (a)-[:Knows]->(b)";
const TWO_HOPS: &str = "MATCH (a:Person {ID: $a})-[:Knows]->()-[:Knows]->(c) RETURN count(*)";

const SEED_QUERIES: [(&str, &str); 3] = [
    ("sp64", "MATCH p=(a:Person)-[r:Knows* SHORTEST 1..30]->(b:Person) WHERE a.ID < 64 RETURN a.ID, count(*), sum(length(p))"),
    ("sp1", "MATCH p=(a:Person)-[r:Knows* SHORTEST 1..30]->(b:Person) WHERE a.ID = 0 RETURN count(*), sum(length(p))"),
    ("walks3", "MATCH (a:Person)-[r:Knows*1..3]->(b:Person) WHERE a.ID < 5 AND b.ID < 500 RETURN count(*)"),
];

/// A deterministic generator of node ids (xorshift64*).
struct Ids {
    state: u64,
    nodes: u64,
}

impl Ids {
    fn new(seed: u64, nodes: u64) -> Self {
        assert!(nodes > 0, "the dataset has no nodes");
        Self {
            state: seed | 1,
            nodes,
        }
    }

    fn next(&mut self) -> i64 {
        self.state ^= self.state >> 12;
        self.state ^= self.state << 25;
        self.state ^= self.state >> 27;
        (self.state.wrapping_mul(0x2545_f491_4f6c_dd1d) % self.nodes) as i64
    }
}

fn edge_parameters(ids: &mut Ids) -> HashMap<String, Value> {
    HashMap::from([
        ("a".to_string(), Value::Int64(ids.next())),
        ("b".to_string(), Value::Int64(ids.next())),
    ])
}

/// The measured outcome of one repeat of a scenario.
#[derive(Default)]
struct Sample {
    ops_per_s: f64,
    latency: Option<Histogram<u64>>,
    /// Scenario-specific seconds (a checkpoint's or an open's time).
    time_s: Option<f64>,
    /// The delta scenarios' time ratio over the checkpointed database.
    slowdown: Option<f64>,
}

fn histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 60_000_000, 3).expect("valid histogram bounds")
}

fn record(histogram: &mut Histogram<u64>, elapsed: Duration) {
    let micros = u64::try_from(elapsed.as_micros())
        .unwrap_or(u64::MAX)
        .max(1);
    histogram.saturating_record(micros);
}

pub fn run(options: &BenchOptions, header: &Header) -> BenchResult<(Report, Option<String>)> {
    if let Some(unknown) = options
        .scenarios
        .iter()
        .find(|name| !Scenario::ALL.iter().any(|s| &s.name() == *name))
    {
        let known: Vec<String> = Scenario::ALL.iter().map(|s| s.name()).collect();
        return Err(BenchError::Result(format!(
            "writes: unknown scenario {unknown} (known: {})",
            known.join(", ")
        )));
    }
    let source = &options.databases[0];
    // Loaded in place first when it is new (as the other workloads do), then copied.
    let dataset = crate::dataset::open(source, options.dataset_dirs.first().map(PathBuf::as_path))?;
    let info = dataset.info.clone();
    drop(dataset);
    let work = WorkCopy::new(source)?;
    machine::reset_peak_rss();
    let mut runs = Vec::new();
    let mut problems = Vec::new();
    for scenario in Scenario::ALL {
        if !options.scenarios.is_empty() && !options.scenarios.contains(&scenario.name()) {
            continue;
        }
        let mut samples = Vec::with_capacity(options.repeat);
        for repeat in 0..options.repeat {
            let sample = scenario.run(&work, options, info.nodes, repeat as u64)?;
            samples.push(sample);
        }
        match samples_run(scenario, &samples) {
            Ok(run) => runs.push(run),
            Err(problem) => problems.push(problem),
        }
    }
    let threads = options.threads.unwrap_or(2);
    let mut report = new_report(
        options,
        header,
        EDGE_STATEMENT,
        info,
        settings_info(options, threads, KSetting::Auto),
    );
    report.answer = serde_json::json!({ "scenarios": runs.len() });
    report.answer_checked = problems.is_empty();
    report.check = "every scenario's edge and row counts grew by exactly the commits it made; \
                    the delta scenarios' answers equal the checkpointed database's"
        .into();
    report.runs = runs;
    Ok((report, (!problems.is_empty()).then(|| problems.join("; "))))
}

fn samples_run(scenario: Scenario, samples: &[Sample]) -> Result<Run, String> {
    let summary = |values: Vec<f64>| (!values.is_empty()).then(|| Summary::of(&values));
    let percentile = |q: f64| {
        summary(
            samples
                .iter()
                .filter_map(|s| s.latency.as_ref())
                .map(|h| h.value_at_quantile(q) as f64)
                .collect(),
        )
    };
    let figures = Figures {
        time_s: summary(samples.iter().filter_map(|s| s.time_s).collect()),
        ops_per_s: summary(
            samples
                .iter()
                .map(|s| s.ops_per_s)
                .filter(|&v| v > 0.0)
                .collect(),
        ),
        latency_us_p50: percentile(0.50),
        latency_us_p99: percentile(0.99),
        latency_us_p999: percentile(0.999),
        latency_us_max: summary(
            samples
                .iter()
                .filter_map(|s| s.latency.as_ref())
                .map(|h| h.max() as f64)
                .collect(),
        ),
        slowdown: summary(samples.iter().filter_map(|s| s.slowdown).collect()),
        ..Figures::default()
    };
    Ok(Run {
        dataset: scenario.name().to_string(),
        k: KSetting::Auto,
        k_chosen: None,
        answer: serde_json::json!(scenario.describe()),
        answer_checked: true,
        figures,
        traversal: None,
        hardware_counts: None,
    })
}

/// A copy of the source database that the scenarios write to (the source is left as it was).
struct WorkCopy {
    _dir: tempfile::TempDir,
    db: PathBuf,
}

impl WorkCopy {
    fn new(source: &Path) -> BenchResult<Self> {
        let absolute = std::path::absolute(source).unwrap_or_else(|_| source.to_path_buf());
        let parent = absolute
            .parent()
            .map_or_else(std::env::temp_dir, Path::to_path_buf);
        let dir = tempfile::Builder::new()
            .prefix(".warren-bench-writes-")
            .tempdir_in(&parent)
            .map_err(|e| BenchError::io(&parent, &e))?;
        let db = dir.path().join("db");
        if source.exists() {
            copy_dir(source, &db)?;
        }
        Ok(Self { _dir: dir, db })
    }

    fn open(&self, options: DatabaseOptions) -> BenchResult<Database> {
        Ok(Database::open_with(&self.db, options)?)
    }
}

fn copy_dir(from: &Path, to: &Path) -> BenchResult<()> {
    std::fs::create_dir_all(to).map_err(|e| BenchError::io(to, &e))?;
    for entry in std::fs::read_dir(from).map_err(|e| BenchError::io(from, &e))? {
        let entry = entry.map_err(|e| BenchError::io(from, &e))?;
        let target = to.join(entry.file_name());
        if entry.path().is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else if entry.file_name() != "warren.lock" {
            std::fs::copy(entry.path(), &target).map_err(|e| BenchError::io(&target, &e))?;
        }
    }
    Ok(())
}

fn edges(conn: &mut Connection) -> BenchResult<u64> {
    count(
        conn,
        &format!("MATCH (a:{NODE_TABLE})-[r:{REL_TABLE}]->(b:{NODE_TABLE}) RETURN count(*)"),
    )
}

fn configure(conn: &mut Connection, options: &BenchOptions) -> BenchResult<()> {
    options.configure(conn, KSetting::Auto)
}

fn expect_growth(what: &str, before: u64, after: u64, made: u64) -> BenchResult<()> {
    if after != before + made {
        return Err(BenchError::Result(format!(
            "{what}: {made} commits acknowledged but the count went from {before} to {after}"
        )));
    }
    Ok(())
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scenario {
    Commit(usize),
    Batch,
    Mixed,
    Checkpoint,
    Recovery,
    Slowdown(u32),
    ReadAfterCommit,
}

impl Scenario {
    const ALL: [Scenario; 10] = [
        Scenario::Commit(1),
        Scenario::Commit(8),
        Scenario::Commit(64),
        Scenario::Batch,
        Scenario::Mixed,
        Scenario::Checkpoint,
        Scenario::Recovery,
        Scenario::Slowdown(1),
        Scenario::Slowdown(5),
        Scenario::ReadAfterCommit,
    ];

    fn name(self) -> String {
        match self {
            Scenario::Commit(n) => format!("commit-{n}"),
            Scenario::Batch => "batch".into(),
            Scenario::Mixed => "mixed".into(),
            Scenario::Checkpoint => "checkpoint".into(),
            Scenario::Recovery => "recovery".into(),
            Scenario::Slowdown(p) => format!("slowdown-{p}pct"),
            Scenario::ReadAfterCommit => "read-after-commit".into(),
        }
    }

    fn describe(self) -> String {
        match self {
            Scenario::Commit(n) => format!(
                "single-edge CREATE commits from {n} connections; ops_per_s = commits/s, latency per commit"
            ),
            Scenario::Batch => {
                "statements of many edges each (UNWIND); ops_per_s = edges/s".into()
            }
            Scenario::Mixed => "one connection committing single edges, one counting two-hop neighbourhoods; ops_per_s = reads + writes per s, latency per read".into(),
            Scenario::Checkpoint => "CHECKPOINT of 1% of the edges while single-edge commits go on; time_s = the checkpoint, latency per commit meanwhile".into(),
            Scenario::Recovery => {
                "open of a database whose log holds 64 MiB (--quick: 256 KiB) of single-row commits; time_s = the open (replay)".into()
            }
            Scenario::Slowdown(p) => format!(
                "seed queries (sp64, sp1, walks 1..3) with {p}% of the edges in the delta; slowdown = time over the checkpointed database's (first run after the inserts excluded; its ratio in time_s)"
            ),
            Scenario::ReadAfterCommit => "sp1 right after each single-edge commit, 1% of the edges in the delta; time_s = its median, slowdown = over sp1 without a commit in between".into(),
        }
    }

    fn run(
        self,
        work: &WorkCopy,
        options: &BenchOptions,
        nodes: u64,
        repeat: u64,
    ) -> BenchResult<Sample> {
        let seed = 0x9e37_79b9 ^ (repeat << 32) ^ self.name().len() as u64;
        match self {
            Scenario::Commit(connections) => commits(work, options, nodes, connections, seed),
            Scenario::Batch => batch(work, options, nodes, seed),
            Scenario::Mixed => mixed(work, options, nodes, seed),
            Scenario::Checkpoint => checkpoint_under_load(work, options, nodes, seed),
            Scenario::Recovery => recovery(work, sizes(options), repeat),
            Scenario::Slowdown(percent) => slowdown(work, options, nodes, percent, seed),
            Scenario::ReadAfterCommit => read_after_commit(work, options, nodes, seed),
        }
    }
}

fn commits(
    work: &WorkCopy,
    options: &BenchOptions,
    nodes: u64,
    connections: usize,
    seed: u64,
) -> BenchResult<Sample> {
    let db = work.open(DatabaseOptions::default())?;
    let before = edges(&mut db.connect())?;
    let duration = sizes(options).commit_time;
    let started = Instant::now();
    let results: Vec<BenchResult<(u64, Histogram<u64>)>> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..connections)
            .map(|c| {
                let db = db.clone();
                scope.spawn(move || -> BenchResult<(u64, Histogram<u64>)> {
                    let mut conn = db.connect();
                    configure(&mut conn, options)?;
                    let mut ids = Ids::new(seed + c as u64 * 7919, nodes);
                    let mut latency = histogram();
                    let mut made = 0u64;
                    while started.elapsed() < duration {
                        let parameters = edge_parameters(&mut ids);
                        let begun = Instant::now();
                        conn.query_with(EDGE_STATEMENT, &parameters)?;
                        record(&mut latency, begun.elapsed());
                        made += 1;
                    }
                    Ok((made, latency))
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("writer thread"))
            .collect()
    });
    let elapsed = started.elapsed().as_secs_f64();
    let mut latency = histogram();
    let mut made = 0u64;
    for result in results {
        let (count, histogram) = result?;
        made += count;
        latency.add(histogram).expect("same bounds");
    }
    expect_growth("commits", before, edges(&mut db.connect())?, made)?;
    Ok(Sample {
        ops_per_s: made as f64 / elapsed,
        latency: Some(latency),
        ..Sample::default()
    })
}

fn pairs(ids: &mut Ids, count: usize) -> Value {
    let rows: Vec<Value> = (0..count)
        .map(|_| Value::List(vec![Value::Int64(ids.next()), Value::Int64(ids.next())].into()))
        .collect();
    Value::List(rows.into())
}

/// Inserts `count` edges in batches through `conn` (untimed helper of the delta scenarios).
fn insert_edges(conn: &mut Connection, ids: &mut Ids, count: usize) -> BenchResult<()> {
    let mut left = count;
    while left > 0 {
        let batch = left.min(FULL.batch_edges);
        let parameters = HashMap::from([("pairs".to_string(), pairs(ids, batch))]);
        conn.query_with(BATCH_STATEMENT, &parameters)?;
        left -= batch;
    }
    Ok(())
}

fn batch(work: &WorkCopy, options: &BenchOptions, nodes: u64, seed: u64) -> BenchResult<Sample> {
    let db = work.open(DatabaseOptions::default())?;
    let mut conn = db.connect();
    configure(&mut conn, options)?;
    let before = edges(&mut conn)?;
    let mut ids = Ids::new(seed, nodes);
    let sizes = sizes(options);
    let statements: Vec<HashMap<String, Value>> = (0..sizes.batch_statements)
        .map(|_| HashMap::from([("pairs".to_string(), pairs(&mut ids, sizes.batch_edges))]))
        .collect();
    let mut latency = histogram();
    let started = Instant::now();
    for parameters in &statements {
        let begun = Instant::now();
        conn.query_with(BATCH_STATEMENT, parameters)?;
        record(&mut latency, begun.elapsed());
    }
    let elapsed = started.elapsed().as_secs_f64();
    let made = (sizes.batch_edges * sizes.batch_statements) as u64;
    expect_growth("batch", before, edges(&mut conn)?, made)?;
    Ok(Sample {
        ops_per_s: made as f64 / elapsed,
        latency: Some(latency),
        ..Sample::default()
    })
}

fn mixed(work: &WorkCopy, options: &BenchOptions, nodes: u64, seed: u64) -> BenchResult<Sample> {
    let db = work.open(DatabaseOptions::default())?;
    let before = edges(&mut db.connect())?;
    let stop = AtomicBool::new(false);
    let (writes, reads) = std::thread::scope(|scope| {
        let writer = scope.spawn(|| -> BenchResult<u64> {
            let mut conn = db.connect();
            configure(&mut conn, options)?;
            let mut ids = Ids::new(seed, nodes);
            let mut made = 0;
            while !stop.load(Ordering::Relaxed) {
                conn.query_with(EDGE_STATEMENT, &edge_parameters(&mut ids))?;
                made += 1;
            }
            Ok(made)
        });
        let reader = scope.spawn(|| -> BenchResult<(u64, Histogram<u64>)> {
            let mut conn = db.connect();
            configure(&mut conn, options)?;
            let mut ids = Ids::new(seed ^ 0xabcd, nodes);
            let mut latency = histogram();
            let mut done = 0;
            while !stop.load(Ordering::Relaxed) {
                let parameters = HashMap::from([("a".to_string(), Value::Int64(ids.next()))]);
                let begun = Instant::now();
                let mut result = conn.query_with(TWO_HOPS, &parameters)?;
                while result.next_row()?.is_some() {}
                record(&mut latency, begun.elapsed());
                done += 1;
            }
            Ok((done, latency))
        });
        std::thread::sleep(sizes(options).mixed);
        stop.store(true, Ordering::Relaxed);
        (
            writer.join().expect("writer thread"),
            reader.join().expect("reader thread"),
        )
    });
    let writes = writes?;
    let (reads, latency) = reads?;
    expect_growth("mixed", before, edges(&mut db.connect())?, writes)?;
    Ok(Sample {
        ops_per_s: (writes + reads) as f64 / sizes(options).mixed.as_secs_f64(),
        latency: Some(latency),
        ..Sample::default()
    })
}

fn manual_checkpoints() -> DatabaseOptions {
    DatabaseOptions {
        auto_checkpoint: false,
        ..DatabaseOptions::default()
    }
}

/// No checkpoint at all, not even at close: the log stays for the next open to replay.
fn no_checkpoints() -> DatabaseOptions {
    DatabaseOptions {
        checkpoint_on_close: false,
        ..manual_checkpoints()
    }
}

fn checkpoint_under_load(
    work: &WorkCopy,
    options: &BenchOptions,
    nodes: u64,
    seed: u64,
) -> BenchResult<Sample> {
    let db = work.open(manual_checkpoints())?;
    let mut conn = db.connect();
    configure(&mut conn, options)?;
    let before = edges(&mut conn)?;
    let mut ids = Ids::new(seed, nodes);
    insert_edges(&mut conn, &mut ids, (before / 100) as usize)?;
    let base = edges(&mut conn)?;
    let done = Arc::new(AtomicBool::new(false));
    let (checkpoint_s, written) = std::thread::scope(|scope| {
        let writer = {
            let db = db.clone();
            let done = done.clone();
            scope.spawn(move || -> BenchResult<(u64, Histogram<u64>)> {
                let mut conn = db.connect();
                let mut ids = Ids::new(seed ^ 0x5555, nodes);
                let mut latency = histogram();
                let mut made = 0;
                while !done.load(Ordering::Relaxed) {
                    let begun = Instant::now();
                    conn.query_with(EDGE_STATEMENT, &edge_parameters(&mut ids))?;
                    record(&mut latency, begun.elapsed());
                    made += 1;
                }
                Ok((made, latency))
            })
        };
        let started = Instant::now();
        let result = db.checkpoint();
        let checkpoint_s = started.elapsed().as_secs_f64();
        done.store(true, Ordering::Relaxed);
        let written = writer.join().expect("writer thread");
        (result.map(|()| checkpoint_s), written)
    });
    let checkpoint_s = checkpoint_s?;
    let (made, latency) = written?;
    expect_growth("checkpoint", base, edges(&mut conn)?, made)?;
    Ok(Sample {
        ops_per_s: made as f64 / checkpoint_s.max(1e-9),
        latency: Some(latency),
        time_s: Some(checkpoint_s),
        ..Sample::default()
    })
}

fn recovery(work: &WorkCopy, sizes: Sizes, repeat: u64) -> BenchResult<Sample> {
    let table = format!("BenchNote{repeat}");
    let text = "x".repeat(RECOVERY_ROW_BYTES);
    let rows = {
        let db = work.open(no_checkpoints())?;
        let mut conn = db.connect();
        conn.query(&format!(
            "CREATE NODE TABLE {table}(id INT64, text STRING, PRIMARY KEY(id))"
        ))?;
        let statement = format!("CREATE (:{table} {{id: $id, text: $text}})");
        let mut rows = 0i64;
        while db.wal_bytes() < sizes.recovery_log_bytes {
            let parameters = HashMap::from([
                ("id".to_string(), Value::Int64(rows)),
                ("text".to_string(), Value::string(text.as_str())),
            ]);
            conn.query_with(&statement, &parameters)?;
            rows += 1;
        }
        rows as u64
    };
    let started = Instant::now();
    let db = work.open(DatabaseOptions::default())?;
    let open_s = started.elapsed().as_secs_f64();
    if db.wal_bytes() < sizes.recovery_log_bytes {
        return Err(BenchError::Result(
            "recovery: the reopened log is smaller than the one written (it was checkpointed)"
                .into(),
        ));
    }
    let mut conn = db.connect();
    let found = count(&mut conn, &format!("MATCH (n:{table}) RETURN count(*)"))?;
    expect_growth("recovery", 0, found, rows)?;
    conn.query("CHECKPOINT")?;
    Ok(Sample {
        ops_per_s: rows as f64 / open_s.max(1e-9),
        time_s: Some(open_s),
        ..Sample::default()
    })
}

/// Runs `query`, reading every row.
fn drain(conn: &mut Connection, query: &str) -> BenchResult<()> {
    let mut result = conn.query(query)?;
    while result.next_row()?.is_some() {}
    Ok(())
}

/// The median of `runs` timed runs of `query` (after one untimed run).
fn query_time(conn: &mut Connection, query: &str, runs: usize) -> BenchResult<(f64, Vec<String>)> {
    let mut answer = conn.query(query)?.to_strings()?;
    answer.sort();
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let started = Instant::now();
        drain(conn, query)?;
        times.push(started.elapsed().as_secs_f64());
    }
    Ok((Summary::of(&times).median, answer))
}

fn slowdown(
    work: &WorkCopy,
    options: &BenchOptions,
    nodes: u64,
    percent: u32,
    seed: u64,
) -> BenchResult<Sample> {
    const RUNS: usize = 5;
    let db = work.open(manual_checkpoints())?;
    let mut conn = db.connect();
    configure(&mut conn, options)?;
    conn.query("CHECKPOINT")?;
    let total = edges(&mut conn)?;
    let mut ids = Ids::new(seed, nodes);
    // The stored data warm (mapped pages touched, checksums verified) before the inserts, so
    // that the first run after them measures the delta's merge.
    for (_, query) in SEED_QUERIES {
        drain(&mut conn, query)?;
    }
    insert_edges(
        &mut conn,
        &mut ids,
        (total * u64::from(percent) / 100) as usize,
    )?;
    let mut first = 0.0;
    let mut with_delta = 0.0;
    let mut answers_delta = Vec::new();
    for (_, query) in SEED_QUERIES {
        let started = Instant::now();
        drain(&mut conn, query)?;
        first += started.elapsed().as_secs_f64();
        let (time, answer) = query_time(&mut conn, query, RUNS)?;
        with_delta += time;
        answers_delta.push(answer);
    }
    // The same data folded: the answers must not change.
    conn.query("CHECKPOINT")?;
    let mut after = 0.0;
    for ((_, query), answer) in SEED_QUERIES.iter().zip(&answers_delta) {
        let (time, folded) = query_time(&mut conn, query, RUNS)?;
        after += time;
        if &folded != answer {
            return Err(BenchError::Result(format!(
                "{query}: answers differ between the delta and the checkpointed database"
            )));
        }
    }
    // The same data after a checkpoint is the baseline.
    let baseline = after.max(1e-9);
    Ok(Sample {
        ops_per_s: 0.0,
        time_s: Some(first / baseline),
        slowdown: Some(with_delta / baseline),
        ..Sample::default()
    })
}

/// sp1 right after each of a series of single-edge commits, against sp1 with no commit in
/// between, with 1% of the edges already in the delta (and its patches built).
fn read_after_commit(
    work: &WorkCopy,
    options: &BenchOptions,
    nodes: u64,
    seed: u64,
) -> BenchResult<Sample> {
    const ROUNDS: usize = 15;
    let sp1 = SEED_QUERIES[1].1;
    let db = work.open(manual_checkpoints())?;
    let mut conn = db.connect();
    configure(&mut conn, options)?;
    conn.query("CHECKPOINT")?;
    let mut ids = Ids::new(seed, nodes);
    let total = edges(&mut conn)?;
    insert_edges(&mut conn, &mut ids, (total / 100) as usize)?;
    let (steady, _) = query_time(&mut conn, sp1, ROUNDS)?;
    let mut after_commit = Vec::with_capacity(ROUNDS);
    for _ in 0..ROUNDS {
        conn.query_with(EDGE_STATEMENT, &edge_parameters(&mut ids))?;
        let started = Instant::now();
        drain(&mut conn, sp1)?;
        after_commit.push(started.elapsed().as_secs_f64());
    }
    let median = Summary::of(&after_commit).median;
    Ok(Sample {
        ops_per_s: 0.0,
        time_s: Some(median),
        slowdown: Some(median / steady.max(1e-9)),
        ..Sample::default()
    })
}

/// The writes table as `warren bench writes` prints it: one row per scenario, with the goal
/// of the durable-writes issue where there is one.
pub fn table(report: &Report) -> String {
    let header = [
        "scenario", "ops/s", "p50 us", "p99 us", "p99.9 us", "max us", "time_s", "slowdown",
        "goal", "met",
    ];
    let mut rows = vec![header.map(String::from)];
    let median = |s: &Option<Summary>| s.as_ref().map(|s| s.median);
    let cell = |v: Option<f64>| v.map_or("-".to_string(), crate::compare::format_number);
    for run in &report.runs {
        let f = &run.figures;
        let (goal, met) = goal(&run.dataset, f);
        rows.push([
            run.dataset.clone(),
            cell(median(&f.ops_per_s)),
            cell(median(&f.latency_us_p50)),
            cell(median(&f.latency_us_p99)),
            cell(median(&f.latency_us_p999)),
            cell(median(&f.latency_us_max)),
            cell(median(&f.time_s)),
            cell(median(&f.slowdown)),
            goal.to_string(),
            met.map_or("-", |m| if m { "yes" } else { "NO" })
                .to_string(),
        ]);
    }
    crate::print::aligned(&rows)
}

/// The goal for a scenario and whether the medians meet it.
fn goal(scenario: &str, f: &Figures) -> (&'static str, Option<bool>) {
    let median = |s: &Option<Summary>| s.as_ref().map(|s| s.median);
    match scenario {
        "commit-1" => (
            "P50 < 500 us, P99 < 3 ms",
            median(&f.latency_us_p50)
                .zip(median(&f.latency_us_p99))
                .map(|(p50, p99)| p50 < 500.0 && p99 < 3_000.0),
        ),
        "commit-8" | "commit-64" => (
            ">= 20,000 commits/s",
            median(&f.ops_per_s).map(|v| v >= 20_000.0),
        ),
        "batch" => (
            ">= 500,000 edges/s",
            median(&f.ops_per_s).map(|v| v >= 500_000.0),
        ),
        "recovery" => ("64 MiB log < 0.5 s", median(&f.time_s).map(|t| t < 0.5)),
        "slowdown-1pct" => ("<= 1.10x", median(&f.slowdown).map(|s| s <= 1.10)),
        "slowdown-5pct" => ("<= 1.25x", median(&f.slowdown).map(|s| s <= 1.25)),
        _ => ("", None),
    }
}

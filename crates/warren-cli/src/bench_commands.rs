//! `warren bench` and `warren compare`: flags in, calls into `warren_bench`, text out. The
//! workloads, checks, statistics, reports and plots live in the warren-bench crate.

use std::path::PathBuf;

use warren_bench::compare::{compare, render};
use warren_bench::report::{KSetting, Report};
use warren_bench::workload::{parse_setting, REPEAT_DEFAULT};
use warren_bench::{BenchError, BenchOptions, VarlenOptions, Workload};

/// The flags of `warren bench`.
#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// sp64, sp1, allsp, varlen, spread, ksweep, load, writes, wire, serve or vectors.
    pub workload: Workload,
    /// The database directory (ksweep: repeat the flag, one per dataset; load: temporary
    /// databases are made beside it; wire: none).
    #[arg(long = "db", value_name = "DB")]
    pub db: Vec<PathBuf>,
    /// A `warren generate` folder, loaded into DB first when DB has no Person table (one per
    /// --db, in the same order).
    #[arg(long = "dataset", value_name = "DIR")]
    pub dataset: Vec<PathBuf>,
    #[arg(long)]
    pub threads: Option<usize>,
    /// Sources traversed at once: `auto` (the default) or a positive integer.
    #[arg(long)]
    pub k: Option<String>,
    /// Timed runs, after one untimed warm-up run (load: no warm-up).
    #[arg(long, default_value_t = REPEAT_DEFAULT)]
    pub repeat: usize,
    /// An engine setting `name=value` applied with `CALL name=value` and recorded in the
    /// report, e.g. `--set prefetch_distance=8` (repeatable).
    #[arg(long = "set", value_name = "NAME=VALUE")]
    pub set: Vec<String>,
    /// Where to write the JSON report.
    #[arg(long)]
    pub output: PathBuf,
    /// Skip the reference implementation (for huge graphs); the report says `answer_checked:
    /// false`.
    #[arg(long)]
    pub no_check: bool,
    /// varlen: the hop upper bound H of `*1..H` (default 3).
    #[arg(long)]
    pub hops: Option<u32>,
    /// varlen: sources `a.ID < S` (default 5).
    #[arg(long)]
    pub sources: Option<i64>,
    /// varlen: destinations `b.ID < D` (default 500).
    #[arg(long)]
    pub destinations: Option<i64>,
    /// varlen: `RETURN r` with every path streamed, instead of `RETURN count(*)`.
    #[arg(long)]
    pub paths: bool,
    /// ksweep: the fixed k values, comma-separated (default 1,2,4,8,16,32,64); `auto` runs too.
    #[arg(long = "k-values", value_delimiter = ',', value_name = "K,K,...")]
    pub k_values: Option<Vec<usize>>,
    /// ksweep: draw the figure as SVG at this path (and a PNG beside it when fonts allow).
    #[arg(long)]
    pub plot: Option<PathBuf>,
    /// writes, wire, serve, vectors: small sizes, for a quick check that every scenario runs.
    #[arg(long)]
    pub quick: bool,
    /// serve: requests per second sent to every workload (default 1000).
    #[arg(long)]
    pub rate: Option<f64>,
    /// serve: the server's heavy-lane threads (`warren serve --heavy-threads`; 0: one lane).
    #[arg(long = "heavy-threads")]
    pub heavy_threads: Option<usize>,
    /// serve: the server's I/O threads' polling window after an answer (`warren serve
    /// --io-spin-us`; 0: none).
    #[arg(long = "io-spin-us")]
    pub io_spin_us: Option<u64>,
    /// serve: the overhead loop's client polls its socket up to this long (microseconds, at
    /// most 1000) before blocking for an answer (default: `warren-client`'s, 200; 0: it blocks
    /// at once). The load generator's clients never poll.
    #[arg(long = "client-poll-us")]
    pub client_poll_us: Option<u64>,
    /// serve: increasing rates (500 ... 40,000/s, 5 s each) until the knee.
    #[arg(long)]
    pub sweep: bool,
    /// serve: the overload run: the mix at half the knee, at twice it for 30 s, and at half it
    /// again, with 503s, latency and memory per phase (the knee: --rate, else a sweep of the mix).
    #[arg(long)]
    pub overload: bool,
    /// writes: run only these scenarios (comma-separated, e.g. commit-1,commit-8); serve: only
    /// these workloads (point, neighbours, twohop, shortest, mix).
    #[arg(long, value_delimiter = ',', value_name = "SCENARIO,...")]
    pub scenarios: Option<Vec<String>>,
    /// vectors: rows of the generated dataset (default 1,000,000; --quick: 3,000).
    #[arg(long)]
    pub rows: Option<usize>,
    /// vectors: the vector length (default 128; --quick: 16).
    #[arg(long)]
    pub dim: Option<usize>,
    /// vectors: queries, each answered by brute force and by the index (default 200).
    #[arg(long)]
    pub queries: Option<usize>,
    /// vectors: the search beams, comma-separated (default 16,32,64,128,200).
    #[arg(long = "efs", value_delimiter = ',', value_name = "EFS,EFS,...")]
    pub efs: Option<Vec<usize>>,
    /// vectors: write base.npy, queries.npy, truth.npy and meta.json here for
    /// bench/peers/vectors.py.
    #[arg(long = "vectors-out", value_name = "DIR")]
    pub vectors_out: Option<PathBuf>,
    /// vectors: also time each query round without prefetching neighbour vectors, alternating.
    #[arg(long = "ab-prefetch")]
    pub ab_prefetch: bool,
    /// vectors: build the index this many times, each from nothing, and report the median
    /// build (default 1).
    #[arg(long = "build-repeat")]
    pub build_repeat: Option<usize>,
    /// vectors: skip the hybrid part (vector search then spreading activation, in Cypher).
    #[arg(long = "no-hybrid")]
    pub no_hybrid: bool,
    /// vectors: skip the index (build, queries and the hybrid part): the bandwidth and the
    /// brute-force rows only.
    #[arg(long = "no-index")]
    pub no_index: bool,
}

/// The flags of `warren compare`.
#[derive(clap::Args, Debug)]
pub struct CompareArgs {
    pub baseline: PathBuf,
    pub after: PathBuf,
    /// Exit with status 1 when a figure got significantly slower.
    #[arg(long)]
    pub fail_on_slower: bool,
}

fn to_warren_error(error: BenchError) -> warren::Error {
    match error {
        BenchError::Engine(error) => error,
        BenchError::Io { .. } => warren::Error::Io(error.to_string()),
        BenchError::Result(_) => warren::Error::Internal(error.to_string()),
        BenchError::Usage(_) | BenchError::Dataset(_) | BenchError::Plot(_) => {
            warren::Error::Runtime(format!("bench: {error}"))
        }
    }
}

fn options(args: BenchArgs) -> warren::Result<BenchOptions> {
    let usage = |message: String| warren::Error::Runtime(format!("bench: {message}"));
    // Every workload but wire needs --db; `validate` says so when it is missing.
    let db = args.db.first().cloned().unwrap_or_default();
    let mut options = BenchOptions::new(args.workload, db, args.output);
    if !args.db.is_empty() {
        options.databases = args.db;
    }
    options.dataset_dirs = args.dataset;
    options.threads = args.threads;
    if let Some(k) = args.k {
        options.k = KSetting::parse(&k).map_err(usage)?;
    }
    options.repeat = args.repeat;
    options.engine_settings = args
        .set
        .iter()
        .map(|text| parse_setting(text))
        .collect::<Result<_, _>>()
        .map_err(usage)?;
    options.check = !args.no_check;
    let defaults = VarlenOptions::default();
    options.varlen = VarlenOptions {
        hops: args.hops.unwrap_or(defaults.hops),
        sources: args.sources.unwrap_or(defaults.sources),
        destinations: args.destinations.unwrap_or(defaults.destinations),
        paths: args.paths,
    };
    if let Some(k_values) = args.k_values {
        options.k_values = k_values;
    }
    options.plot = args.plot;
    options.quick = args.quick;
    options.rate = args.rate;
    options.sweep = args.sweep;
    options.overload = args.overload;
    options.scenarios = args.scenarios.unwrap_or_default();
    options.heavy_threads = args.heavy_threads;
    options.io_spin_us = args.io_spin_us;
    options.client_poll_us = args.client_poll_us;
    let mut vectors = if args.quick {
        warren_bench::vectors::VectorOptions::quick()
    } else {
        warren_bench::vectors::VectorOptions::default()
    };
    vectors.rows = args.rows.unwrap_or(vectors.rows);
    vectors.dim = args.dim.unwrap_or(vectors.dim);
    vectors.queries = args.queries.unwrap_or(vectors.queries);
    vectors.efs_values = args.efs.unwrap_or(vectors.efs_values);
    vectors.dataset_out = args.vectors_out;
    vectors.ab_prefetch = args.ab_prefetch;
    vectors.build_repeat = args.build_repeat.unwrap_or(vectors.build_repeat);
    vectors.hybrid = !args.no_hybrid;
    vectors.index = !args.no_index;
    options.vectors = vectors;
    if options
        .rate
        .is_some_and(|rate| !(rate > 0.0 && rate.is_finite()))
    {
        return Err(usage("--rate must be a positive number".into()));
    }
    Ok(options)
}

/// `warren bench`: runs the workload, prints the report, and fails (after writing the JSON)
/// when the answer is wrong or unstable.
pub fn run_bench(args: BenchArgs) -> warren::Result<()> {
    let options = options(args)?;
    let outcome = warren_bench::run(&options).map_err(to_warren_error)?;
    print!("{}", warren_bench::print::report_text(&outcome.report));
    for note in &outcome.notes {
        println!("{note}");
    }
    match outcome.mismatch {
        None => Ok(()),
        Some(mismatch) => Err(warren::Error::Runtime(format!(
            "bench: answer check failed: {mismatch} (report written to {})",
            options.output.display()
        ))),
    }
}

/// `warren compare`: prints the comparison; with `--fail-on-slower`, a significant slowdown
/// is an error.
pub fn run_compare(args: &CompareArgs) -> warren::Result<()> {
    let baseline = Report::read(&args.baseline).map_err(to_warren_error)?;
    let after = Report::read(&args.after).map_err(to_warren_error)?;
    let comparison = compare(&baseline, &after);
    print!("{}", render(&comparison));
    if args.fail_on_slower && comparison.any_slower() {
        let slower: Vec<String> = comparison
            .rows
            .iter()
            .filter(|row| row.verdict == warren_bench::compare::Verdict::Slower)
            .map(|row| {
                if row.scope.is_empty() {
                    row.figure.to_string()
                } else {
                    format!("{} {}", row.scope, row.figure)
                }
            })
            .collect();
        return Err(warren::Error::Runtime(format!(
            "compare: significantly slower: {}",
            slower.join(", ")
        )));
    }
    Ok(())
}

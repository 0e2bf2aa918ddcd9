//! The `vectors` workload (issue 7, part 5): a seeded clustered dataset of `FLOAT[dim]` rows,
//! and in one run, on the same threads:
//!
//! * `memory read`: the machine's read bandwidth, a parallel sum over the whole vector block;
//! * `brute force`: exact top-10 cosine per query, a parallel scan with a bounded heap over the
//!   contiguous block, as GB/s and as a share of the read bandwidth;
//! * `index build`: the HNSW index over every row (Kùzu's default parameters);
//! * `index query efs=N`: queries per second (the threads take queries from a shared counter;
//!   one untimed round, then `--repeat` timed ones) and recall@10 against the brute-force
//!   answers, at each `efs`;
//! * `hybrid ...` (unless `--no-hybrid`): vector search then spreading activation over a
//!   Graph500 graph on the same nodes, through Cypher (`crate::vectors_hybrid`): the index
//!   build by `CREATE_VECTOR_INDEX`, and per query the spread seeded by the index's top-10 and
//!   by the exact top-10, timed, with the recall of the first's activation ranking.
//!
//! The first four are measured through `warren_vector`'s API. `--vectors-out DIR` writes the rows, queries and brute-force answers
//! as `.npy` files for `bench/peers/vectors.py`, which runs hnswlib, faiss and Kùzu on them.
//!
//! The answer check: the parallel scan's top-10 equals a single-threaded scan's on the first
//! queries (the ground truth is itself checked), and every index answer is 10 distinct rows.

use std::hint::black_box;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Instant;

use warren_vector::distance::Metric;
use warren_vector::hnsw::{
    exact_top_k, exact_top_k_parallel, HnswIndex, HnswParams, SearchScratch,
};
use warren_vector::quantized::{self, Int8Block};
use warren_vector::sample::clustered;

use crate::bench::{new_report, settings_info, Header};
use crate::error::{BenchError, BenchResult};
use crate::report::{DatasetInfo, Figures, KSetting, Report, Run};
use crate::stats::Summary;
use crate::workload::BenchOptions;

/// The neighbours every query asks for.
pub const TOP_K: usize = 10;
/// Queries whose parallel brute-force answer is checked against a single-threaded scan.
const CHECKED_QUERIES: usize = 5;
/// The most builds `--build-repeat` asks for (each is a whole index build).
const BUILD_REPEAT_MAX: usize = 20;

/// The data's seed (queries are drawn after the rows from the same generator and centres).
const SEED: u64 = 42;

/// The workload's sizes and search beams.
#[derive(Clone, Debug, PartialEq)]
pub struct VectorOptions {
    pub rows: usize,
    pub dim: usize,
    pub queries: usize,
    pub efs_values: Vec<usize>,
    /// Where to write the dataset for the peers.
    pub dataset_out: Option<PathBuf>,
    /// Also time every query round without the prefetch of neighbour vectors, alternating
    /// with the prefetching rounds (an A/B in one run).
    pub ab_prefetch: bool,
    /// Build the index and run its queries (and the hybrid part); without it, only the
    /// bandwidth and the brute-force rows.
    pub index: bool,
    /// How many times the index is built (each from nothing; the last one answers the
    /// queries): the report's build time is their median.
    pub build_repeat: usize,
    /// Run the hybrid part (vector search then spreading activation, through Cypher).
    pub hybrid: bool,
    /// Queries of the hybrid part (the first ones of the workload's).
    pub hybrid_queries: usize,
}

impl Default for VectorOptions {
    fn default() -> Self {
        VectorOptions {
            rows: 1_000_000,
            dim: 128,
            queries: 200,
            efs_values: vec![16, 32, 64, 128, 200],
            dataset_out: None,
            ab_prefetch: false,
            index: true,
            build_repeat: 1,
            hybrid: true,
            hybrid_queries: 50,
        }
    }
}

impl VectorOptions {
    /// `--quick`: a dataset small enough for `cargo test`.
    pub fn quick() -> Self {
        VectorOptions {
            rows: 3_000,
            dim: 16,
            queries: 20,
            efs_values: vec![16, 64],
            dataset_out: None,
            ab_prefetch: false,
            index: true,
            build_repeat: 1,
            hybrid: true,
            hybrid_queries: 10,
        }
    }

    pub fn validate(&self) -> BenchResult<()> {
        let usage = |message: &str| Err(BenchError::Usage(message.to_string()));
        if self.rows < TOP_K || self.rows > warren_vector::hnsw::ROWS_MAX {
            return usage("--rows must be at least 10 and fit in 32 bits");
        }
        if self.dim == 0 || self.dim > warren_vector::hnsw::DIMENSION_MAX {
            return usage("--dim must be between 1 and 65536");
        }
        if self.queries == 0 || self.queries > 100_000 {
            return usage("--queries must be between 1 and 100000");
        }
        if self.efs_values.is_empty() || self.efs_values.iter().any(|&efs| efs < TOP_K) {
            return usage("--efs takes beams of at least 10");
        }
        if self.build_repeat == 0 || self.build_repeat > BUILD_REPEAT_MAX {
            return usage(&format!(
                "--build-repeat must be between 1 and {BUILD_REPEAT_MAX}"
            ));
        }
        Ok(())
    }
}

/// Sums `words` (wrapping integer adds vectorize; float sums do not): the read-bandwidth probe.
fn sum_words(words: &[u32]) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            // SAFETY: the CPU has AVX-512F (checked above).
            return unsafe { sum_words_avx512(words) };
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: the CPU has AVX2 (checked above).
            return unsafe { sum_words_avx2(words) };
        }
    }
    sum_words_with(words)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
fn sum_words_avx512(words: &[u32]) -> u32 {
    sum_words_with(words)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn sum_words_avx2(words: &[u32]) -> u32 {
    sum_words_with(words)
}

/// The wrapping sum of `words` in 64 independent lanes (four 512-bit registers), compiled for
/// the widest vector unit the CPU has and prefetching the scans' distance ahead, so that the
/// probe reads as fast as the scans it is compared with (a baseline SSE2 loop read 15-20%
/// slower on the Intel guest; without the prefetch the probe read 36.7 GB/s on the AMD guest
/// where the prefetching cosine scan read 68; docs/OPTIMIZATION_LOG.md 173, 275).
#[inline(always)]
fn sum_words_with(words: &[u32]) -> u32 {
    let mut lanes = [0u32; 64];
    let chunks = words.chunks_exact(64);
    let tail: u32 = chunks
        .remainder()
        .iter()
        .fold(0, |sum, &w| sum.wrapping_add(w));
    for chunk in chunks {
        warren_vector::prefetch::scan_ahead(chunk);
        for (lane, &word) in lanes.iter_mut().zip(chunk) {
            *lane = lane.wrapping_add(word);
        }
    }
    lanes.iter().fold(tail, |sum, &lane| sum.wrapping_add(lane))
}

/// Seconds for `threads` threads to read all of `block` once, `repeat` times.
fn read_times(block: &[f32], threads: usize, repeat: usize) -> Vec<f64> {
    let words: &[u32] = bytemuck::cast_slice(block);
    let chunk = words.len().div_ceil(threads).max(1);
    (0..repeat + 1)
        .map(|_| {
            let started = Instant::now();
            std::thread::scope(|scope| {
                for part in words.chunks(chunk) {
                    scope.spawn(move || black_box(sum_words(part)));
                }
            });
            started.elapsed().as_secs_f64()
        })
        .skip(1)
        .collect()
}

/// One figure row of the report.
fn run_of(name: &str, answer: serde_json::Value, figures: Figures) -> Run {
    Run {
        dataset: name.to_string(),
        k: KSetting::Auto,
        k_chosen: None,
        answer,
        answer_checked: true,
        figures,
        traversal: None,
        hardware_counts: None,
    }
}

/// The exact answers, the per-query times, and whether the parallel scan matched a serial one.
struct BruteForce {
    answers: Vec<Vec<u32>>,
    times_s: Vec<f64>,
    checked: bool,
}

fn brute_force(vectors: &[f32], queries: &[f32], dim: usize, threads: usize) -> BruteForce {
    let rows = (vectors.len() / dim) as u32;
    let mut answers = Vec::new();
    let mut times_s = Vec::new();
    let mut checked = true;
    for (index, query) in queries.chunks_exact(dim).enumerate() {
        let started = Instant::now();
        let found = exact_top_k_parallel(vectors, dim, query, TOP_K, Metric::Cosine, threads);
        times_s.push(started.elapsed().as_secs_f64());
        if index < CHECKED_QUERIES {
            let serial = exact_top_k(vectors, dim, 0..rows, query, TOP_K, Metric::Cosine, |_| {
                true
            });
            checked &= serial == found;
        }
        answers.push(found.iter().map(|hit| hit.row).collect());
    }
    BruteForce {
        answers,
        times_s,
        checked,
    }
}

/// Builds the index `plan.build_repeat` times, each from nothing; the last index and every
/// build's seconds, in run order.
fn timed_builds(
    vectors: &[f32],
    plan: &VectorOptions,
    params: HnswParams,
    threads: usize,
) -> BenchResult<(HnswIndex, Vec<f64>)> {
    let mut seconds = Vec::with_capacity(plan.build_repeat);
    let mut last = None;
    for _ in 0..plan.build_repeat.max(1) {
        // The previous index is dropped first, so that each build starts with the same memory.
        drop(last.take());
        let started = Instant::now();
        let index = HnswIndex::build(vectors, plan.dim, params, threads)
            .map_err(|error| BenchError::Result(error.to_string()))?;
        seconds.push(started.elapsed().as_secs_f64());
        last = Some(index);
    }
    let index = last.expect("at least one build");
    Ok((index, seconds))
}

/// The index's rows: the build, each beam's queries (recall against `exact`), and the hybrid
/// part; whether every index answer was 10 distinct rows.
fn index_runs(
    vectors: &[f32],
    queries: &[f32],
    plan: &VectorOptions,
    threads: usize,
    repeat: usize,
    exact: &[Vec<u32>],
    runs: &mut Vec<Run>,
) -> BenchResult<bool> {
    let index_rows = vectors.len() / plan.dim;
    let params = HnswParams::default();
    let (index, build_s) = timed_builds(vectors, plan, params, threads)?;
    runs.push(run_of(
        "index build",
        serde_json::json!({
            "mu": params.mu, "ml": params.ml, "pu": params.pu, "efc": params.efc,
            "upper_rows": index.upper_rows(), "bytes": index.to_bytes().len(),
        }),
        Figures {
            time_s: Some(Summary::of(&build_s)),
            ops_per_s: Some(Summary::of(
                &build_s
                    .iter()
                    .map(|&seconds| index_rows as f64 / seconds)
                    .collect::<Vec<_>>(),
            )),
            ..Figures::default()
        },
    ));

    let mut well_formed = true;
    let variants: &[bool] = if plan.ab_prefetch {
        &[true, false]
    } else {
        &[true]
    };
    for &efs in &plan.efs_values {
        let mut times = vec![Vec::new(); variants.len()];
        let mut found = vec![Vec::new(); variants.len()];
        // One untimed round first, as every workload's `--repeat` runs follow a warm-up.
        for &prefetch in variants {
            query_round(&index, vectors, queries, efs, threads, prefetch);
        }
        for _ in 0..repeat.max(1) {
            for (variant, &prefetch) in variants.iter().enumerate() {
                let (seconds, answers) =
                    query_round(&index, vectors, queries, efs, threads, prefetch);
                times[variant].push(seconds);
                found[variant] = answers;
            }
        }
        for (variant, &prefetch) in variants.iter().enumerate() {
            let found = &found[variant];
            well_formed &= found.iter().all(|rows| distinct_rows(rows));
            let times = &times[variant];
            let qps: Vec<f64> = times.iter().map(|s| plan.queries as f64 / s).collect();
            let suffix = if prefetch { "" } else { " no-prefetch" };
            runs.push(run_of(
                &format!("index query efs={efs}{suffix}"),
                serde_json::json!({ "efs": efs, "recall_at_10": recall(found, exact) }),
                Figures {
                    time_s: Some(Summary::of(times)),
                    ops_per_s: Some(Summary::of(&qps)),
                    ..Figures::default()
                },
            ));
        }
    }
    if plan.hybrid {
        runs.extend(hybrid_runs(vectors, queries, plan, threads)?);
    }
    Ok(well_formed)
}

/// The brute force in Cypher on the first `queries` of the workload (best of `repeat` per
/// query), its rate over the FLOAT block and its recall against the kernel's `exact` answers.
fn cypher_brute_run(
    vectors: &[f32],
    queries: &[f32],
    dim: usize,
    threads: usize,
    repeat: usize,
    exact: &[Vec<u32>],
) -> BenchResult<Run> {
    let brute = crate::vectors_hybrid::cypher_brute_force(vectors, queries, dim, threads, repeat)?;
    let times_s = brute.times_s;
    let answers: Vec<Vec<u32>> = brute
        .answers
        .iter()
        .map(|ids| ids.iter().map(|&id| id as u32).collect())
        .collect();
    let block_bytes = (vectors.len() * 4) as f64;
    let gb: Vec<f64> = times_s.iter().map(|s| block_bytes / s / 1e9).collect();
    Ok(run_of(
        "brute force top-10 (Cypher)",
        serde_json::json!({
            "queries": times_s.len(), "best_of": repeat.max(1),
            "recall_at_10": recall(&answers, &exact[..answers.len()]),
            "first_query_runs_s": brute.first_query_runs_s,
            "int8_copies_built": brute.copies_built,
            "scans_through_int8_copy": brute.scans_through_copy,
            "int8_copy_build_s": brute.copy_build_s,
            "int8_copy_bytes": brute.copy_bytes,
        }),
        Figures {
            gb_per_s: Some(Summary::of(&gb)),
            ..crate::vectors_hybrid::figures(&times_s)
        },
    ))
}

/// The exact brute force through the int8 copy (`warren_vector::quantized`): the copy's build
/// time and size, per query the time, the bytes read (the 4-bit copy, the int8 rows its bound
/// kept, and the rows scored in FLOAT),
/// their rate and share of the `bandwidth`, the FLOAT block's bytes over the time (the rate a
/// FLOAT scan would need to match it), and whether every answer equals the plain scan's.
fn int8_filter_run(
    vectors: &[f32],
    queries: &[f32],
    dim: usize,
    threads: usize,
    bandwidth: f64,
    exact: &[Vec<u32>],
) -> Run {
    let started = Instant::now();
    let block = Int8Block::build(vectors, dim);
    let build_s = started.elapsed().as_secs_f64();
    let float_bytes = (vectors.len() * 4) as f64;
    let (mut times_s, mut read_gb, mut effective_gb) = (Vec::new(), Vec::new(), Vec::new());
    let (mut bytes, mut refined, mut rescored, mut same) = (0u64, 0u64, 0u64, 0usize);
    for (query, expected) in queries.chunks_exact(dim).zip(exact) {
        let started = Instant::now();
        let (found, counts) = quantized::cosine_top_k(&block, vectors, query, TOP_K, threads);
        let seconds = started.elapsed().as_secs_f64();
        times_s.push(seconds);
        read_gb.push(counts.bytes(dim) as f64 / seconds / 1e9);
        effective_gb.push(float_bytes / seconds / 1e9);
        bytes += counts.bytes(dim);
        refined += counts.refined;
        rescored += counts.rescored;
        same += usize::from(found.iter().map(|hit| hit.row).eq(expected.iter().copied()));
    }
    let count = times_s.len().max(1) as f64;
    let read_median = Summary::of(&read_gb).median;
    run_of(
        "brute force top-10 int8 filter",
        serde_json::json!({
            "copy_build_s": build_s, "copy_bytes": block.bytes(),
            "bytes_per_query": bytes as f64 / count, "refined_per_query": refined as f64 / count,
            "rescored_per_query": rescored as f64 / count,
            "read_percent_of_bandwidth": 100.0 * read_median / bandwidth,
            "effective_gb_per_s": Summary::of(&effective_gb).median,
            "same_as_plain_scan": same, "queries": times_s.len(),
        }),
        Figures {
            time_s: Some(Summary::of(&times_s)),
            gb_per_s: Some(Summary::of(&read_gb)),
            ops_per_s: Some(Summary::of(
                &times_s.iter().map(|s| 1.0 / s).collect::<Vec<_>>(),
            )),
            ..Figures::default()
        },
    )
}

/// Seconds to answer every query with `threads` threads, and the answers in query order. The
/// threads take the next query from a shared counter (as hnswlib's `knn_query` and faiss do),
/// so a thread the machine preempts for a while does not hold the round up with a fixed share
/// of the queries.
fn query_round(
    index: &HnswIndex,
    vectors: &[f32],
    queries: &[f32],
    efs: usize,
    threads: usize,
    prefetch: bool,
) -> (f64, Vec<Vec<u32>>) {
    let dim = index.dim();
    let count = queries.len() / dim;
    let next = AtomicUsize::new(0);
    let started = Instant::now();
    let parts: Vec<Vec<(usize, Vec<u32>)>> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut scratch = SearchScratch::new();
                    scratch.set_prefetch(prefetch);
                    let mut answers = Vec::new();
                    loop {
                        let at = next.fetch_add(1, Ordering::Relaxed);
                        if at >= count {
                            break answers;
                        }
                        let query = &queries[at * dim..(at + 1) * dim];
                        let found = index
                            .search(vectors, query, TOP_K, efs, &mut scratch)
                            .expect("the workload's queries are valid");
                        answers.push((at, found.iter().map(|hit| hit.row).collect()));
                    }
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|worker| worker.join().expect("query thread panicked"))
            .collect()
    });
    let seconds = started.elapsed().as_secs_f64();
    let mut answers = vec![Vec::new(); count];
    for (at, rows) in parts.into_iter().flatten() {
        answers[at] = rows;
    }
    (seconds, answers)
}

/// Mean fraction of the exact top-k that an answer holds.
pub fn recall(answers: &[Vec<u32>], truth: &[Vec<u32>]) -> f64 {
    let hits: usize = answers
        .iter()
        .zip(truth)
        .map(|(found, exact)| found.iter().filter(|row| exact.contains(row)).count())
        .sum();
    let wanted: usize = truth.iter().map(Vec::len).sum();
    hits as f64 / wanted.max(1) as f64
}

/// Runs the workload; see the module's documentation.
pub fn run(options: &BenchOptions, header: &Header) -> BenchResult<(Report, Option<String>)> {
    let plan = &options.vectors;
    plan.validate()?;
    let threads = options.threads.unwrap_or(2).max(1);
    let repeat = options.repeat;
    let (vectors, queries) = clustered(plan.rows, plan.queries, plan.dim, SEED);
    let block_bytes = (vectors.len() * 4) as f64;
    let mut runs = Vec::new();

    let read_s = read_times(&vectors, threads, repeat.max(3));
    let read_gb: Vec<f64> = read_s.iter().map(|s| block_bytes / s / 1e9).collect();
    let bandwidth = Summary::of(&read_gb).median;
    runs.push(run_of(
        "memory read",
        serde_json::json!({ "bytes": block_bytes }),
        Figures {
            time_s: Some(Summary::of(&read_s)),
            gb_per_s: Some(Summary::of(&read_gb)),
            ..Figures::default()
        },
    ));

    let exact = brute_force(&vectors, &queries, plan.dim, threads);
    let scan_gb: Vec<f64> = exact
        .times_s
        .iter()
        .map(|s| block_bytes / s / 1e9)
        .collect();
    let scan_median = Summary::of(&scan_gb).median;
    runs.push(run_of(
        "brute force top-10",
        serde_json::json!({ "percent_of_bandwidth": 100.0 * scan_median / bandwidth }),
        Figures {
            time_s: Some(Summary::of(&exact.times_s)),
            gb_per_s: Some(Summary::of(&scan_gb)),
            ops_per_s: Some(Summary::of(
                &exact.times_s.iter().map(|s| 1.0 / s).collect::<Vec<_>>(),
            )),
            ..Figures::default()
        },
    ));

    runs.push(int8_filter_run(
        &vectors,
        &queries,
        plan.dim,
        threads,
        bandwidth,
        &exact.answers,
    ));
    let cypher_queries = plan.hybrid_queries.min(plan.queries) * plan.dim;
    runs.push(cypher_brute_run(
        &vectors,
        &queries[..cypher_queries],
        plan.dim,
        threads,
        repeat,
        &exact.answers,
    )?);
    let mut well_formed = true;
    if plan.index {
        well_formed = index_runs(
            &vectors,
            &queries,
            plan,
            threads,
            repeat,
            &exact.answers,
            &mut runs,
        )?;
    }

    if let Some(dir) = &plan.dataset_out {
        write_dataset(dir, &vectors, &queries, &exact.answers, plan, threads)?;
    }

    let mismatch = match (exact.checked, well_formed) {
        (false, _) => Some("the parallel brute force differs from a serial scan".to_string()),
        (_, false) => Some("an index answer is not 10 distinct rows".to_string()),
        _ => None,
    };
    let dataset = DatasetInfo {
        db: String::new(),
        dir: plan
            .dataset_out
            .as_ref()
            .map(|dir| dir.display().to_string()),
        name: format!(
            "clustered {} x FLOAT[{}], {} queries, seed {SEED}",
            plan.rows, plan.dim, plan.queries
        ),
        nodes: plan.rows as u64,
        edges: 0,
    };
    let query = "top-10 cosine: brute force and the HNSW index (warren_vector API)";
    let mut report = new_report(
        options,
        header,
        query,
        dataset,
        settings_info(options, threads, KSetting::Auto),
    );
    report.answer = serde_json::json!({
        "rows": plan.rows, "dim": plan.dim, "queries": plan.queries, "threads": threads,
    });
    report.answer_checked = mismatch.is_none();
    report.check = format!(
        "parallel brute force equals a serial scan on the first {CHECKED_QUERIES} queries; \
         recall@10 against it"
    );
    report.runs = runs;
    Ok((report, mismatch))
}

/// The hybrid part's rows: the Cypher index build, then the spread seeded by the index (at the
/// widest beam) and by the exact top-10.
fn hybrid_runs(
    vectors: &[f32],
    queries: &[f32],
    plan: &VectorOptions,
    threads: usize,
) -> BenchResult<Vec<Run>> {
    let count = plan.hybrid_queries.min(plan.queries);
    let efs = plan.efs_values.iter().copied().max().unwrap_or(TOP_K);
    let hybrid = crate::vectors_hybrid::measure(
        vectors,
        &queries[..count * plan.dim],
        plan.dim,
        threads,
        efs,
        SEED,
    )?;
    let graph = serde_json::json!({
        "graph500_scale": hybrid.scale, "edges": hybrid.edges,
        "edge_factor": crate::vectors_hybrid::EDGE_FACTOR, "hops": crate::vectors_hybrid::HOPS,
    });
    Ok(vec![
        run_of(
            "hybrid index build (Cypher)",
            graph,
            Figures {
                time_s: Some(Summary::of(&[hybrid.build_s])),
                ops_per_s: Some(Summary::of(&[plan.rows as f64 / hybrid.build_s])),
                ..Figures::default()
            },
        ),
        run_of(
            &format!("hybrid index+spread efs={efs}"),
            serde_json::json!({
                "efs": efs, "queries": count,
                "recall_at_10": hybrid.recall_at_10, "recall_at_100": hybrid.recall_at_100,
            }),
            crate::vectors_hybrid::figures(&hybrid.index_times_s),
        ),
        run_of(
            "hybrid exact+spread",
            serde_json::json!({ "queries": count, "ranked_nodes": hybrid.activated }),
            crate::vectors_hybrid::figures(&hybrid.exact_times_s),
        ),
    ])
}

fn distinct_rows(rows: &[u32]) -> bool {
    let mut sorted = rows.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    sorted.len() == rows.len() && rows.len() == TOP_K
}

/// Writes `base.npy` (rows x dim f32), `queries.npy`, `truth.npy` (queries x 10 int32, the
/// brute-force answers) and `meta.json` into `dir`.
fn write_dataset(
    dir: &Path,
    vectors: &[f32],
    queries: &[f32],
    truth: &[Vec<u32>],
    plan: &VectorOptions,
    threads: usize,
) -> BenchResult<()> {
    let io = |path: &Path, error: std::io::Error| BenchError::Io {
        path: path.display().to_string(),
        message: error.to_string(),
    };
    std::fs::create_dir_all(dir).map_err(|error| io(dir, error))?;
    let truth_flat: Vec<i32> = truth.iter().flatten().map(|&row| row as i32).collect();
    let files: [(&str, &[u8], &str, [usize; 2]); 3] = [
        (
            "base.npy",
            bytemuck::cast_slice(vectors),
            "<f4",
            [plan.rows, plan.dim],
        ),
        (
            "queries.npy",
            bytemuck::cast_slice(queries),
            "<f4",
            [plan.queries, plan.dim],
        ),
        (
            "truth.npy",
            bytemuck::cast_slice(&truth_flat),
            "<i4",
            [plan.queries, TOP_K],
        ),
    ];
    for (name, bytes, descr, shape) in files {
        let path = dir.join(name);
        let mut file = std::fs::File::create(&path).map_err(|error| io(&path, error))?;
        file.write_all(&npy_header(descr, shape))
            .and_then(|()| file.write_all(bytes))
            .map_err(|error| io(&path, error))?;
    }
    let params = HnswParams::default();
    let meta = serde_json::json!({
        "rows": plan.rows, "dim": plan.dim, "queries": plan.queries, "k": TOP_K,
        "metric": "cosine", "seed": SEED, "threads": threads, "efs_values": plan.efs_values,
        "mu": params.mu, "ml": params.ml, "pu": params.pu, "efc": params.efc,
    });
    let path = dir.join("meta.json");
    std::fs::write(&path, meta.to_string()).map_err(|error| io(&path, error))
}

/// A `.npy` version 1.0 header for a C-order 2-D array, padded to 64 bytes.
pub(crate) fn npy_header(descr: &str, shape: [usize; 2]) -> Vec<u8> {
    npy_header_of(descr, &format!("({}, {})", shape[0], shape[1]))
}

/// A `.npy` version 1.0 header for a 1-D array, padded to 64 bytes.
pub(crate) fn npy_header_1d(descr: &str, len: usize) -> Vec<u8> {
    npy_header_of(descr, &format!("({len},)"))
}

fn npy_header_of(descr: &str, shape: &str) -> Vec<u8> {
    let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    let unpadded = 10 + dict.len() + 1;
    let padding = unpadded.next_multiple_of(64) - unpadded;
    let header_len = (dict.len() + padding + 1) as u16;
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&header_len.to_le_bytes());
    out.extend_from_slice(dict.as_bytes());
    out.extend(std::iter::repeat_n(b' ', padding));
    out.push(b'\n');
    assert_eq!(out.len() % 64, 0);
    out
}

/// `; median of N builds: a, b, c s` when the index was built more than once.
fn build_samples_text(time_s: &Option<Summary>) -> String {
    match time_s {
        Some(summary) if summary.samples.len() > 1 => format!(
            "; median of {} builds: {} s",
            summary.samples.len(),
            summary
                .samples
                .iter()
                .map(|seconds| format!("{seconds:.2}"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        _ => String::new(),
    }
}

/// The printed table.
pub fn table(report: &Report) -> String {
    let mut text = String::new();
    let median = |summary: &Option<Summary>| summary.as_ref().map_or(f64::NAN, |s| s.median);
    for run in &report.runs {
        let figures = &run.figures;
        let line = match run.dataset.as_str() {
            "memory read" => format!(
                "memory read                {:>9.2} GB/s  (parallel sum over the vector block)",
                median(&figures.gb_per_s)
            ),
            "brute force top-10" => format!(
                "brute force top-10 cosine  {:>9.3} ms/query  {:>7.2} GB/s  {:>5.1}% of read bandwidth",
                median(&figures.time_s) * 1e3,
                median(&figures.gb_per_s),
                run.answer["percent_of_bandwidth"].as_f64().unwrap_or(f64::NAN)
            ),
            "brute force top-10 int8 filter" => format!(
                "brute force int8 filter    {:>9.3} ms/query  {:>7.2} GB/s read  {:.1} MB/query, \
                 {:.0} rows refined from int8, {:.0} rescored, {}/{} answers equal the plain scan's",
                median(&figures.time_s) * 1e3,
                median(&figures.gb_per_s),
                run.answer["bytes_per_query"].as_f64().unwrap_or(f64::NAN) / 1e6,
                run.answer["refined_per_query"].as_f64().unwrap_or(f64::NAN),
                run.answer["rescored_per_query"].as_f64().unwrap_or(f64::NAN),
                run.answer["same_as_plain_scan"],
                run.answer["queries"]
            ),
            "brute force top-10 (Cypher)" => format!(
                "brute force top-10 (Cypher){:>9.3} ms/query  {:>7.2} GB/s  recall@10 {:.4} (best of {}; \
                 {} of {} scans through the int8 copy, built in {:.1} ms; first query's runs {} ms)",
                median(&figures.time_s) * 1e3,
                median(&figures.gb_per_s),
                run.answer["recall_at_10"].as_f64().unwrap_or(f64::NAN),
                run.answer["best_of"],
                run.answer["scans_through_int8_copy"],
                run.answer["queries"].as_u64().unwrap_or(0)
                    * run.answer["best_of"].as_u64().unwrap_or(0),
                run.answer["int8_copy_build_s"].as_f64().unwrap_or(f64::NAN) * 1e3,
                run.answer["first_query_runs_s"]
                    .as_array()
                    .map(|runs| runs
                        .iter()
                        .map(|s| format!("{:.1}", s.as_f64().unwrap_or(f64::NAN) * 1e3))
                        .collect::<Vec<_>>()
                        .join(", "))
                    .unwrap_or_default()
            ),
            "index build" => format!(
                "index build                {:>9.2} s  {:>9.0} rows/s  (mu {} ml {} pu {} efc {}){}",
                median(&figures.time_s),
                median(&figures.ops_per_s),
                run.answer["mu"],
                run.answer["ml"],
                run.answer["pu"],
                run.answer["efc"],
                build_samples_text(&figures.time_s)
            ),
            "hybrid index build (Cypher)" => format!(
                "hybrid index build (Cypher) {:>8.2} s  (Graph500 scale {}, {} edges)",
                median(&figures.time_s),
                run.answer["graph500_scale"],
                run.answer["edges"]
            ),
            name if name.starts_with("hybrid index+spread") => format!(
                "{name:<26} {:>9.3} ms/query  recall@10 {:.4}  recall@100 {:.4}  ({} queries, {} hops)",
                median(&figures.time_s) * 1e3,
                run.answer["recall_at_10"].as_f64().unwrap_or(f64::NAN),
                run.answer["recall_at_100"].as_f64().unwrap_or(f64::NAN),
                run.answer["queries"],
                crate::vectors_hybrid::HOPS
            ),
            "hybrid exact+spread" => format!(
                "hybrid exact+spread        {:>9.3} ms/query  (seeds: exact top-10 by a Cypher scan)",
                median(&figures.time_s) * 1e3
            ),
            name => format!(
                "{name:<26} {:>9.0} queries/s  recall@10 {:.4}",
                median(&figures.ops_per_s),
                run.answer["recall_at_10"].as_f64().unwrap_or(f64::NAN)
            ),
        };
        text.push_str(&line);
        text.push('\n');
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The workload runs small inside `cargo test`, checks itself and writes the peers' files.
    #[test]
    fn quick_run_checks_prints_and_writes_the_dataset() {
        let dir = tempfile::tempdir().unwrap();
        let mut options = BenchOptions::new(
            crate::Workload::Vectors,
            PathBuf::new(),
            dir.path().join("vectors.json"),
        );
        options.quick = true;
        options.repeat = 1;
        options.vectors = VectorOptions {
            dataset_out: Some(dir.path().join("data")),
            build_repeat: 2,
            ..VectorOptions::quick()
        };
        let outcome = crate::run(&options).unwrap();
        assert!(outcome.mismatch.is_none());
        let text = crate::print::report_text(&outcome.report);
        assert!(text.contains("index query efs=64"), "{text}");
        // Two builds, their median reported with both samples.
        let build = outcome
            .report
            .runs
            .iter()
            .find(|run| run.dataset == "index build")
            .unwrap();
        assert_eq!(build.figures.time_s.as_ref().unwrap().samples.len(), 2);
        assert!(text.contains("median of 2 builds"), "{text}");
        assert!(text.contains("hybrid index+spread efs=64"), "{text}");
        let hybrid = &outcome.report.runs[outcome.report.runs.len() - 2];
        assert!(
            hybrid.answer["recall_at_10"].as_f64().unwrap() >= 0.9,
            "{text}"
        );
        let best = outcome
            .report
            .runs
            .iter()
            .rfind(|run| run.dataset.starts_with("index query"))
            .unwrap();
        assert!(
            best.answer["recall_at_10"].as_f64().unwrap() >= 0.9,
            "{text}"
        );
        let base = std::fs::read(dir.path().join("data/base.npy")).unwrap();
        let header = npy_header("<f4", [3_000, 16]);
        assert_eq!(base.len(), header.len() + 3_000 * 16 * 4);
        assert_eq!(&base[..header.len()], &header[..]);
        assert!(dir.path().join("data/meta.json").exists());
    }

    #[test]
    fn build_repeats_are_bounded() {
        for (build_repeat, valid) in [(0, false), (1, true), (BUILD_REPEAT_MAX, true), (21, false)]
        {
            let options = VectorOptions {
                build_repeat,
                ..VectorOptions::quick()
            };
            assert_eq!(options.validate().is_ok(), valid, "{build_repeat}");
        }
    }

    #[test]
    fn the_bandwidth_sum_counts_every_word() {
        let words: Vec<u32> = (0..1_000).collect();
        assert_eq!(sum_words(&words), 999 * 1_000 / 2);
        let header = npy_header("<f4", [3, 4]);
        assert_eq!(header.len() % 64, 0);
        assert!(header.starts_with(b"\x93NUMPY") && header.ends_with(b"\n"));
    }
}

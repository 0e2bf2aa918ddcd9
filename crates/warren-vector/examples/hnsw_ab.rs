//! Query speed of one saved HNSW graph, for A/B runs of two builds of this crate on the very same
//! graph (a rebuild differs with the thread interleaving, and at 1M rows takes minutes). The
//! first run builds the index on the clustered data of `warren bench vectors` (seed 42) and
//! saves it with the brute-force answers under CACHE_DIR; later runs load both. Each run then
//! measures queries/s (best of `ROUNDS` rounds, 1000 queries over 2 threads) and recall@10 per
//! efs, both by the wall clock and per second of CPU time the query threads got (the steadier
//! figure on a shared machine), the distances computed per query in each layer, and recall@10
//! per efs. Alternate the binaries: A, B, A, B. The rows and queries are also written under
//! CACHE_DIR (`base.f32`, `queries.f32`, with `truth.u32`) for `bench/peers/hnsw_ab_peer.py`,
//! which runs hnswlib on the same data, so it can alternate with this one.
//!
//!     cargo build --profile ci -p warren-vector --example hnsw_ab
//!     [HNSW_EFS=32,64] target/ci/examples/hnsw_ab ROWS DIM CACHE_DIR [ROUNDS]

use std::path::Path;
use std::time::Instant;

use warren_vector::distance::Metric;
use warren_vector::hnsw::{
    exact_top_k_parallel, DistanceCounts, HnswIndex, HnswParams, SearchScratch,
};
use warren_vector::sample::clustered;

const QUERIES: usize = 1000;
const THREADS: usize = 2;
const K: usize = 10;
const EFS: [usize; 5] = [16, 32, 64, 128, 200];

/// The efs values to measure: `HNSW_EFS=32,64` or, by default, `EFS`.
fn efs_values() -> Vec<usize> {
    match std::env::var("HNSW_EFS") {
        Ok(spec) => spec
            .split(',')
            .map(|efs| efs.parse().expect("HNSW_EFS: comma-separated numbers"))
            .collect(),
        Err(_) => EFS.to_vec(),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    assert!(
        (3..=4).contains(&args.len()),
        "usage: hnsw_ab ROWS DIM CACHE_DIR [ROUNDS]"
    );
    let rows: usize = args[0].parse().expect("ROWS");
    let dim: usize = args[1].parse().expect("DIM");
    let cache = Path::new(&args[2]);
    let rounds: usize = args.get(3).map_or(3, |r| r.parse().expect("ROUNDS"));
    std::fs::create_dir_all(cache).expect("cache dir");
    let (vectors, queries) = clustered(rows, QUERIES, dim, 42);
    write_once(&cache.join("base.f32"), &vectors);
    write_once(&cache.join("queries.f32"), &queries);
    let truth = load_or_compute_truth(cache, &vectors, &queries, dim);
    let index = load_or_build_index(cache, &vectors, dim);
    measure_all(&index, &vectors, &queries, dim, &truth, rounds);
}

/// Writes `values` (little-endian `f32`s) to `path` unless it exists, so that a peer
/// (`bench/peers/hnsw_ab_peer.py`) can search the very same rows and queries.
fn write_once(path: &Path, values: &[f32]) {
    if !path.exists() {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(path, bytes).expect("write the dataset");
    }
}

fn load_or_compute_truth(cache: &Path, vectors: &[f32], queries: &[f32], dim: usize) -> Vec<u32> {
    let path = cache.join("truth.u32");
    if let Ok(bytes) = std::fs::read(&path) {
        return bytes
            .chunks_exact(4)
            .map(|b| u32::from_le_bytes(b.try_into().unwrap()))
            .collect();
    }
    let truth: Vec<u32> = queries
        .chunks_exact(dim)
        .flat_map(|q| exact_top_k_parallel(vectors, dim, q, K, Metric::Cosine, THREADS))
        .map(|hit| hit.row)
        .collect();
    let bytes: Vec<u8> = truth.iter().flat_map(|r| r.to_le_bytes()).collect();
    std::fs::write(&path, bytes).expect("write truth");
    truth
}

fn load_or_build_index(cache: &Path, vectors: &[f32], dim: usize) -> HnswIndex {
    let path = cache.join("index.bin");
    if let Ok(bytes) = std::fs::read(&path) {
        let start = Instant::now();
        let index = HnswIndex::from_bytes(&bytes, vectors).expect("saved index");
        println!("load {:.3} s", start.elapsed().as_secs_f64());
        return index;
    }
    let start = Instant::now();
    let index = HnswIndex::build(vectors, dim, HnswParams::default(), THREADS).expect("build");
    let seconds = start.elapsed().as_secs_f64();
    println!(
        "build {seconds:.2} s {:.0} rows/s",
        (vectors.len() / dim) as f64 / seconds
    );
    std::fs::write(&path, index.to_bytes()).expect("write index");
    index
}

/// A way to run the searches: with or without the prefetch of neighbour vectors.
#[derive(Clone)]
struct Mode {
    name: &'static str,
    prefetch: bool,
}

/// `HNSW_MODES=on,off` alternates both in each round; the default is `on` alone.
fn modes() -> Vec<Mode> {
    let spec = std::env::var("HNSW_MODES").unwrap_or_else(|_| "on".into());
    spec.split(',')
        .map(|name| match name {
            "on" => Mode {
                name: "on",
                prefetch: true,
            },
            "off" => Mode {
                name: "off",
                prefetch: false,
            },
            other => panic!("HNSW_MODES: unknown mode {other} (on, off)"),
        })
        .collect()
}

fn measure_all(
    index: &HnswIndex,
    vectors: &[f32],
    queries: &[f32],
    dim: usize,
    truth: &[u32],
    rounds: usize,
) {
    let modes = modes();
    for efs in efs_values() {
        let mut best = vec![0.0f64; modes.len()];
        let mut best_cpu = vec![0.0f64; modes.len()];
        let mut recall = vec![0.0f64; modes.len()];
        let mut counts = vec![DistanceCounts::default(); modes.len()];
        for round in 0..rounds {
            for (m, mode) in modes.iter().enumerate() {
                let run = measure(index, vectors, queries, dim, efs, truth, mode);
                best[m] = best[m].max(run.wall_qps);
                best_cpu[m] = best_cpu[m].max(run.cpu_qps);
                if round == 0 {
                    recall[m] = run.recall;
                    counts[m] = run.counts;
                }
            }
        }
        for (m, mode) in modes.iter().enumerate() {
            let per_query = |count: u64| count as f64 / QUERIES as f64;
            println!(
                "efs {efs:>3} {:>10} best-of-{rounds} QPS {:>8.0} per-CPU-second QPS {:>8.0} recall {:.4} distances/query upper {:.0} lower {:.0}",
                mode.name,
                best[m],
                best_cpu[m],
                recall[m],
                per_query(counts[m].upper),
                per_query(counts[m].lower)
            );
        }
    }
}

/// One round of the queries: queries/s by the wall clock and per CPU second, recall@10, and the
/// distances computed.
struct Run {
    wall_qps: f64,
    cpu_qps: f64,
    recall: f64,
    counts: DistanceCounts,
}

fn measure(
    index: &HnswIndex,
    vectors: &[f32],
    queries: &[f32],
    dim: usize,
    efs: usize,
    truth: &[u32],
    mode: &Mode,
) -> Run {
    let start = Instant::now();
    let mut cpu_ns = 0u64;
    let mut counts = DistanceCounts::default();
    let answers: Vec<(usize, Vec<u32>)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..THREADS)
            .map(|thread| {
                scope.spawn(move || {
                    let mut scratch = SearchScratch::new();
                    scratch.set_prefetch(mode.prefetch);
                    let cpu_start = thread_cpu_ns();
                    let answers = (thread..QUERIES)
                        .step_by(THREADS)
                        .map(|i| {
                            let query = &queries[i * dim..(i + 1) * dim];
                            let found = index
                                .search(vectors, query, K, efs, &mut scratch)
                                .expect("search");
                            (i, found.iter().map(|hit| hit.row).collect())
                        })
                        .collect::<Vec<_>>();
                    let cpu = thread_cpu_ns() - cpu_start;
                    (answers, cpu, scratch.distance_counts())
                })
            })
            .collect();
        let mut all = Vec::new();
        for worker in workers {
            let (answers, cpu, thread_counts) = worker.join().expect("worker");
            all.extend(answers);
            cpu_ns += cpu;
            counts.upper += thread_counts.upper;
            counts.lower += thread_counts.lower;
        }
        all
    });
    let wall_qps = QUERIES as f64 / start.elapsed().as_secs_f64();
    let cpu_qps = QUERIES as f64 / (cpu_ns as f64 / 1e9 / THREADS as f64);
    let mut hits = 0;
    for (i, rows) in answers {
        let expected = &truth[i * K..(i + 1) * K];
        hits += rows.iter().filter(|row| expected.contains(row)).count();
    }
    Run {
        wall_qps,
        cpu_qps,
        recall: hits as f64 / (QUERIES * K) as f64,
        counts,
    }
}

/// Nanoseconds this thread has run on a CPU (Linux: `/proc/thread-self/schedstat`), so that
/// time spent waiting for a core on a shared machine does not count.
fn thread_cpu_ns() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").expect("schedstat");
    stat.split_whitespace().next().unwrap().parse().unwrap()
}

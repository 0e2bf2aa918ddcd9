//! Query speed of one saved HNSW graph, for A/B runs of two builds of this crate on the very same
//! graph (a rebuild differs with the thread interleaving, and at 1M rows takes minutes). The
//! first run builds the index on the clustered data of `warren bench vectors` (seed 42) and
//! saves it with the brute-force answers under CACHE_DIR; later runs load both. Each run then
//! measures queries/s (best of `ROUNDS` rounds, 1000 queries over 2 threads) and recall@10 per
//! efs, both by the wall clock and per second of CPU time the query threads got (the steadier
//! figure on a shared machine). Alternate the binaries: A, B, A, B.
//!
//!     cargo build --profile ci -p warren-vector --example hnsw_ab
//!     target/ci/examples/hnsw_ab ROWS DIM CACHE_DIR [ROUNDS]

use std::path::Path;
use std::time::Instant;

use warren_vector::distance::Metric;
use warren_vector::hnsw::{exact_top_k_parallel, HnswIndex, HnswParams, SearchScratch};
use warren_vector::sample::clustered;

const QUERIES: usize = 1000;
const THREADS: usize = 2;
const K: usize = 10;
const EFS: [usize; 5] = [16, 32, 64, 128, 200];

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
    let truth = load_or_compute_truth(cache, &vectors, &queries, dim);
    let index = load_or_build_index(cache, &vectors, dim);
    measure_all(&index, &vectors, &queries, dim, &truth, rounds);
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
        let index = HnswIndex::from_bytes(&bytes).expect("saved index");
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
    for efs in EFS {
        let mut best = vec![0.0f64; modes.len()];
        let mut best_cpu = vec![0.0f64; modes.len()];
        let mut recall = vec![0.0f64; modes.len()];
        for round in 0..rounds {
            for (m, mode) in modes.iter().enumerate() {
                let (qps, cpu_qps, r) = measure(index, vectors, queries, dim, efs, truth, mode);
                best[m] = best[m].max(qps);
                best_cpu[m] = best_cpu[m].max(cpu_qps);
                if round == 0 {
                    recall[m] = r;
                }
            }
        }
        for (m, mode) in modes.iter().enumerate() {
            println!(
                "efs {efs:>3} {:>10} best-of-{rounds} QPS {:>8.0} per-CPU-second QPS {:>8.0} recall {:.4}",
                mode.name, best[m], best_cpu[m], recall[m]
            );
        }
    }
}

fn measure(
    index: &HnswIndex,
    vectors: &[f32],
    queries: &[f32],
    dim: usize,
    efs: usize,
    truth: &[u32],
    mode: &Mode,
) -> (f64, f64, f64) {
    let start = Instant::now();
    let mut cpu_ns = 0u64;
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
                    (answers, thread_cpu_ns() - cpu_start)
                })
            })
            .collect();
        let mut all = Vec::new();
        for worker in workers {
            let (answers, cpu) = worker.join().expect("worker");
            all.extend(answers);
            cpu_ns += cpu;
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
    (wall_qps, cpu_qps, hits as f64 / (QUERIES * K) as f64)
}

/// Nanoseconds this thread has run on a CPU (Linux: `/proc/thread-self/schedstat`), so that
/// time spent waiting for a core on a shared machine does not count.
fn thread_cpu_ns() -> u64 {
    let stat = std::fs::read_to_string("/proc/thread-self/schedstat").expect("schedstat");
    stat.split_whitespace().next().unwrap().parse().unwrap()
}

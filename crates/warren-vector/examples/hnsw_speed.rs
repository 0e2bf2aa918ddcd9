//! The HNSW index's speed in isolation, for A/B runs of two builds of this crate (the bench
//! harness needs the whole engine): brute force, build and queries/s with recall@10 per efs on
//! the clustered data of `warren bench vectors` (same generator, seed 42), 200 queries, 2 threads
//! unless THREADS says otherwise.
//!
//!     cargo build --profile ci -p warren-vector --example hnsw_speed
//!     target/ci/examples/hnsw_speed ROWS DIM [THREADS]

use std::time::Instant;
use warren_vector::distance::Metric;
use warren_vector::hnsw::{exact_top_k_parallel, HnswIndex, HnswParams, SearchScratch};
use warren_vector::sample::clustered;

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("usage: hnsw_speed ROWS DIM [THREADS]"))
        .collect();
    assert!(
        args.len() == 2 || args.len() == 3,
        "usage: hnsw_speed ROWS DIM [THREADS]"
    );
    let (rows, dim, nq) = (args[0], args[1], 200);
    let threads = args.get(2).copied().unwrap_or(2);
    let (vectors, queries) = clustered(rows, nq, dim, 42);
    let t = Instant::now();
    let truth: Vec<Vec<u32>> = queries
        .chunks_exact(dim)
        .map(|q| {
            exact_top_k_parallel(&vectors, dim, q, 10, Metric::Cosine, threads)
                .iter()
                .map(|h| h.row)
                .collect()
        })
        .collect();
    let brute = t.elapsed().as_secs_f64() / nq as f64;
    println!(
        "brute force {:.3} ms/query {:.2} GB/s",
        brute * 1e3,
        (vectors.len() * 4) as f64 / brute / 1e9
    );
    // HNSW_BUILD_ONLY=N: build N times, print each time, and stop (for profiles of the build).
    if let Some(times) = std::env::var("HNSW_BUILD_ONLY")
        .ok()
        .and_then(|v| v.parse::<usize>().ok())
    {
        for _ in 0..times {
            let t = Instant::now();
            let index = HnswIndex::build(&vectors, dim, HnswParams::default(), threads).unwrap();
            println!(
                "build {:.3} s ({} rows)",
                t.elapsed().as_secs_f64(),
                index.rows()
            );
        }
        return;
    }
    let t = Instant::now();
    let index = HnswIndex::build(&vectors, dim, HnswParams::default(), threads).unwrap();
    let build = t.elapsed().as_secs_f64();
    println!("build {:.2} s {:.0} rows/s", build, rows as f64 / build);
    for efs in [16, 32, 64, 128, 200] {
        let mut best = 0.0f64;
        let mut hits = 0;
        for round in 0..3 {
            let t = Instant::now();
            let results: Vec<Vec<(usize, Vec<u32>)>> = std::thread::scope(|s| {
                let ws: Vec<_> = (0..threads)
                    .map(|th| {
                        let index = &index;
                        let vectors = &vectors;
                        let queries = &queries;
                        s.spawn(move || {
                            let mut sc = SearchScratch::new();
                            (th..nq)
                                .step_by(threads)
                                .map(|i| {
                                    (
                                        i,
                                        index
                                            .search(
                                                vectors,
                                                &queries[i * dim..(i + 1) * dim],
                                                10,
                                                efs,
                                                &mut sc,
                                            )
                                            .unwrap()
                                            .iter()
                                            .map(|h| h.row)
                                            .collect(),
                                    )
                                })
                                .collect()
                        })
                    })
                    .collect();
                ws.into_iter().map(|w| w.join().unwrap()).collect()
            });
            best = best.max(nq as f64 / t.elapsed().as_secs_f64());
            if round == 0 {
                for (i, r) in results.into_iter().flatten() {
                    hits += r.iter().filter(|x| truth[i].contains(x)).count();
                }
            }
        }
        println!(
            "efs {efs} best-of-3 QPS {best:.0} recall {:.4}",
            hits as f64 / (nq * 10) as f64
        );
    }
}

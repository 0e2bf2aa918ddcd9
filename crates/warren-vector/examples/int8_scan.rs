//! The quantized copy's exact top-10 cosine scan in isolation (`quantized::cosine_top_k`), for
//! A/B runs of two builds of this crate: per thread count, the median time per query over the
//! clustered data of `warren bench vectors` (seed 42) and the bytes it read per query
//! (`ScanCounts::bytes`), beside a parallel read of as many bytes (the bandwidth the scan can
//! hope for), alternated query by query.
//!
//!     cargo build --profile ci -p warren-vector --example int8_scan
//!     target/ci/examples/int8_scan ROWS DIM [QUERIES]

use std::hint::black_box;
use std::time::Instant;

use warren_vector::quantized::{cosine_top_k, Int8Block};
use warren_vector::sample::clustered;

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

/// Seconds for `threads` threads to sum every byte of `bytes` once.
fn read_s(bytes: &[u8], threads: usize) -> f64 {
    let chunk = bytes.len().div_ceil(threads);
    let started = Instant::now();
    std::thread::scope(|scope| {
        for part in bytes.chunks(chunk) {
            scope.spawn(move || {
                let words = part
                    .chunks_exact(8)
                    .map(|w| u64::from_le_bytes(w.try_into().unwrap()));
                black_box(words.fold(0u64, u64::wrapping_add))
            });
        }
    });
    started.elapsed().as_secs_f64()
}

fn main() {
    let args: Vec<usize> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("usage: int8_scan ROWS DIM [QUERIES]"))
        .collect();
    assert!(
        (2..=3).contains(&args.len()),
        "usage: int8_scan ROWS DIM [QUERIES]"
    );
    let (rows, dim) = (args[0], args[1]);
    let queries = args.get(2).copied().unwrap_or(50);
    let (vectors, query_rows) = clustered(rows, queries, dim, 42);
    let started = Instant::now();
    let block = Int8Block::build_parallel(&vectors, dim, 2);
    println!(
        "copy of {rows} x {dim}: {:.1} MB, built in {:.1} ms on 2 threads",
        block.bytes() as f64 / 1e6,
        started.elapsed().as_secs_f64() * 1e3
    );
    let (_, counts) = cosine_top_k(&block, &vectors, &query_rows[..dim], 10, 2);
    let scratch = vec![1u8; counts.bytes(dim) as usize];
    for threads in [1, 2] {
        let (mut scan, mut read, mut bytes) = (Vec::new(), Vec::new(), 0);
        let (mut refined, mut rescored) = (0, 0);
        for query in query_rows.chunks_exact(dim) {
            read.push(read_s(&scratch, threads) / scratch.len() as f64);
            let started = Instant::now();
            let (top, counts) = cosine_top_k(&block, &vectors, query, 10, threads);
            scan.push(started.elapsed().as_secs_f64());
            black_box(top);
            bytes += counts.bytes(dim);
            rescored += counts.rescored;
            refined += counts.refined;
        }
        let bytes = bytes as f64 / queries as f64;
        let (scan, read) = (median(scan), median(read) * bytes);
        println!(
            "threads {threads}: scan {:.3} ms/query ({:.1} MB read, {:.2} GB/s), plain read \
             {:.2} GB/s, scan/read {:.0}%, {} rows refined and {} rescored per query",
            scan * 1e3,
            bytes / 1e6,
            bytes / scan / 1e9,
            bytes / read / 1e9,
            100.0 * read / scan,
            refined / queries as u64,
            rescored / queries as u64
        );
    }
}

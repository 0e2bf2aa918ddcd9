//! Developer tool: measures the vector top-k scan against this machine's memory read bandwidth,
//! alternating the two in one process.
//!
//! `vector_scan DB [ROWS DIM REPEAT THREADS]` (defaults 1000000 128 9 2): creates `DB` (a
//! directory) with `ROWS` clustered random FLOAT[DIM] vectors loaded by COPY from CSV, unless
//! it exists; then, `REPEAT` times, reads a 512 MiB f32 buffer with `THREADS` threads (a plain
//! sum: the bandwidth a scan can hope for) and runs the top-10 cosine query with `THREADS`
//! threads. Prints the medians, the scan's GB/s and its share of the bandwidth, and the
//! kernel level (`WARREN_SIMD` caps it). Set `VECTOR_SCAN_QUERY` to time another query, and
//! `VECTOR_SCAN_KEEP_CSV=path` to keep the generated CSV (for `bench/peers/vector_topk_kuzu.py`).
use std::collections::HashMap;
use std::io::Write;
use std::path::Path;
use std::time::Instant;

use warren::{Database, Value};

/// xorshift64*: deterministic data, no dependency.
struct Rng(u64);

impl Rng {
    fn next_f32(&mut self) -> f32 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let x = self.0.wrapping_mul(0x2545_f491_4f6c_dd1d);
        (x >> 40) as f32 / (1u64 << 24) as f32 * 2.0 - 1.0
    }
}

fn generate(db: &Path, rows: usize, dim: usize) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let centers: Vec<Vec<f32>> = (0..100)
        .map(|_| (0..dim).map(|_| rng.next_f32()).collect())
        .collect();
    let dir = tempfile::tempdir().unwrap();
    let csv = std::env::var_os("VECTOR_SCAN_KEEP_CSV")
        .map_or_else(|| dir.path().join("vectors.csv"), std::path::PathBuf::from);
    let mut out = std::io::BufWriter::new(std::fs::File::create(&csv).unwrap());
    for id in 0..rows {
        let center = &centers[id % centers.len()];
        write!(out, "{id},\"[").unwrap();
        for (i, c) in center.iter().enumerate() {
            let sep = if i == 0 { "" } else { "," };
            write!(out, "{sep}{:.4}", c + 0.2 * rng.next_f32()).unwrap();
        }
        writeln!(out, "]\"").unwrap();
    }
    out.flush().unwrap();
    drop(out);
    let database = Database::open(db).unwrap();
    let mut conn = database.connect();
    conn.query(&format!(
        "CREATE NODE TABLE V(id INT64, emb FLOAT[{dim}], PRIMARY KEY(id))"
    ))
    .unwrap();
    let started = Instant::now();
    conn.query(&format!("COPY V FROM '{}' (HEADER=false)", csv.display()))
        .unwrap();
    eprintln!(
        "loaded {rows} x {dim} in {:.1} s",
        started.elapsed().as_secs_f64()
    );
}

/// Seconds to sum `buffer` with `threads` threads (the result is printed so it is computed).
fn read_bandwidth(buffer: &[u64], threads: usize) -> f64 {
    let started = Instant::now();
    let chunk = buffer.len().div_ceil(threads);
    let total: u64 = std::thread::scope(|scope| {
        let parts: Vec<_> = buffer
            .chunks(chunk)
            .map(|part| scope.spawn(move || part.iter().fold(0u64, |a, &x| a.wrapping_add(x))))
            .collect();
        parts
            .into_iter()
            .map(|p| p.join().unwrap())
            .fold(0, u64::wrapping_add)
    });
    let seconds = started.elapsed().as_secs_f64();
    std::hint::black_box(total);
    seconds
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let db = Path::new(&args[1]);
    let number = |i: usize, default: usize| args.get(i).map_or(default, |a| a.parse().unwrap());
    let (rows, dim, repeat, threads) = (
        number(2, 1_000_000),
        number(3, 128),
        number(4, 9),
        number(5, 2),
    );
    if !db.exists() {
        generate(db, rows, dim);
    }
    let database = Database::open(db).unwrap();
    let mut conn = database.connect();
    conn.set("threads", Value::Int64(threads as i64)).unwrap();
    let mut rng = Rng(7);
    let query_vector: Vec<Value> = (0..dim)
        .map(|_| Value::Double(f64::from(rng.next_f32())))
        .collect();
    let parameters = HashMap::from([("q".to_string(), Value::List(query_vector.into()))]);
    let text = std::env::var("VECTOR_SCAN_QUERY").unwrap_or_else(|_| {
        "MATCH (n:V) RETURN n.id, array_cosine_similarity(n.emb, $q) AS s ORDER BY s DESC LIMIT 10"
            .to_string()
    });
    let buffer: Vec<u64> = (0..(512usize << 20) / 8).map(|i| i as u64).collect();
    let (mut scans, mut reads) = (Vec::new(), Vec::new());
    let mut first = None;
    for _ in 0..repeat {
        reads.push(read_bandwidth(&buffer, threads));
        let started = Instant::now();
        let rows = conn
            .query_with(&text, &parameters)
            .unwrap()
            .collect_rows()
            .unwrap();
        scans.push(started.elapsed().as_secs_f64());
        first.get_or_insert(rows);
    }
    let bandwidth = buffer.len() as f64 * 8.0 / median(reads) / 1e9;
    let scan_bytes = (rows * dim * 4) as f64;
    let scan = median(scans);
    println!(
        "kernels={} threads={threads} rows={rows} dim={dim}: scan {:.2} ms median of {repeat} = {:.2} GB/s; read bandwidth {:.2} GB/s; scan at {:.0}% of bandwidth",
        warren_vector_level(),
        scan * 1e3,
        scan_bytes / scan / 1e9,
        bandwidth,
        100.0 * scan_bytes / scan / 1e9 / bandwidth
    );
    println!("top rows: {:?}", &first.unwrap()[..3]);
}

fn warren_vector_level() -> &'static str {
    warren_vector::distance::kernels().level.name()
}

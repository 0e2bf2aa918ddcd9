//! Measures this machine's random-gather rate: independent 8-byte reads at random positions of
//! an array, the access a BFS makes for every edge it follows, as gathers per second over all
//! threads, for arrays from cache-sized to memory-sized. Used for the physical floor of the
//! many-source BFS in `docs/BENCHMARKS.md`.
//!
//! `cargo run --profile ci -p warren-bench --example gather_rate -- [THREADS] [MiB,MiB,...]`
//! (defaults: 2 threads; 1,4,16,32,64,128,256,512 MiB). Each thread reads its own list of
//! random positions (read sequentially, as a BFS reads its adjacency) and sums the words it
//! gathers; the best of three rounds is printed. `--huge` advises the array onto transparent
//! huge pages first.

use std::time::Instant;

/// Gathers per thread and round.
const GATHERS_PER_THREAD: usize = 1 << 24;
const ROUNDS: usize = 3;

fn main() {
    let arguments: Vec<String> = std::env::args().skip(1).collect();
    let huge = arguments.iter().any(|a| a == "--huge");
    let mut positional = arguments.iter().filter(|a| !a.starts_with("--"));
    let threads: usize = positional
        .next()
        .map(|t| t.parse().expect("THREADS is a positive integer"))
        .unwrap_or(2)
        .max(1);
    let sizes: Vec<usize> = positional
        .next()
        .map(|list| {
            list.split(',')
                .map(|m| m.parse().expect("sizes are MiB, comma-separated"))
                .collect()
        })
        .unwrap_or_else(|| vec![1, 4, 16, 32, 64, 128, 256, 512]);
    println!(
        "threads {threads}, {GATHERS_PER_THREAD} gathers per thread, huge pages advised: {huge}"
    );
    println!("{:>8} {:>14} {:>12}", "MiB", "gathers/s", "ns/gather");
    for mib in sizes {
        let rate = gather_rate(mib << 20, threads, huge);
        println!(
            "{mib:>8} {rate:>14.3e} {:>12.2}",
            1e9 * threads as f64 / rate
        );
    }
}

/// Gathers per second over `threads` threads from an array of `bytes` bytes.
fn gather_rate(bytes: usize, threads: usize, huge: bool) -> f64 {
    let words = (bytes / 8).max(1);
    let mut array: Vec<u64> = Vec::with_capacity(words);
    if huge {
        advise_huge(&array);
    }
    array.extend((0..words as u64).map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
    let positions: Vec<Vec<u32>> = (0..threads)
        .map(|t| random_positions(words, 0x5EED + t as u64))
        .collect();
    let mut best = 0.0f64;
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let sums: Vec<u64> = std::thread::scope(|scope| {
            let handles: Vec<_> = positions
                .iter()
                .map(|list| scope.spawn(|| gather(&array, list)))
                .collect();
            handles
                .into_iter()
                .map(|h| h.join().expect("gather thread"))
                .collect()
        });
        let seconds = started.elapsed().as_secs_f64();
        std::hint::black_box(sums);
        best = best.max((GATHERS_PER_THREAD * threads) as f64 / seconds);
    }
    best
}

fn gather(array: &[u64], positions: &[u32]) -> u64 {
    positions
        .iter()
        .fold(0u64, |sum, &p| sum.wrapping_add(array[p as usize]))
}

/// Uniform random positions below `words` (xorshift; the same list for the same seed).
fn random_positions(words: usize, seed: u64) -> Vec<u32> {
    assert!(words <= u32::MAX as usize, "positions are 32-bit");
    let mut state = seed | 1;
    (0..GATHERS_PER_THREAD)
        .map(|_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            ((state >> 11) % words as u64) as u32
        })
        .collect()
}

#[cfg(target_os = "linux")]
fn advise_huge(array: &Vec<u64>) {
    const HUGE: usize = 2 << 20;
    let start = array.as_ptr() as usize;
    let first = start.next_multiple_of(HUGE);
    let end = (start + array.capacity() * 8) / HUGE * HUGE;
    if end > first {
        // SAFETY: the range lies inside the vector's allocation; the advice changes only how
        // the kernel backs the pages, never their contents.
        unsafe {
            libc::madvise(first as *mut libc::c_void, end - first, libc::MADV_HUGEPAGE);
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge(_array: &Vec<u64>) {}

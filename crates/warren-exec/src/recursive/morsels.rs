//! A parallel loop over a range cut into morsels, for the engine's data-parallel sweeps (one
//! level of a walk-count vector over every node): threads claim morsels with one atomic add.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use warren_common::Result;

use crate::context::Interrupt;
use crate::workers::WorkerPool;

/// Calls `work` on consecutive morsels of `0..len` from `threads` threads: the calling thread
/// and `threads - 1` threads of `workers` (work starts at once on the caller, and the pool's
/// threads are already running when loops follow each other: OPTIMIZATION_LOG 219); `merge`
/// receives each morsel's result. Stops at the first error (or interruption) and returns it.
pub fn for_each_morsel<R: Send>(
    len: usize,
    morsel_size: usize,
    threads: usize,
    workers: &WorkerPool,
    interrupt: &Interrupt,
    work: impl Fn(Range<usize>) -> Result<R> + Sync,
    mut merge: impl FnMut(R),
) -> Result<()> {
    let morsel_size = morsel_size.max(1);
    let morsels = len.div_ceil(morsel_size);
    let threads = threads.clamp(1, morsels.max(1));
    let next = AtomicUsize::new(0);
    let failed = AtomicBool::new(false);
    let results: Mutex<Vec<Result<R>>> = Mutex::new(Vec::new());
    let run = || loop {
        let morsel = next.fetch_add(1, Ordering::Relaxed);
        if morsel >= morsels || failed.load(Ordering::Relaxed) {
            break;
        }
        let start = morsel * morsel_size;
        let result = interrupt
            .check()
            .and_then(|()| work(start..(start + morsel_size).min(len)));
        failed.fetch_or(result.is_err(), Ordering::Relaxed);
        results.lock().expect("results lock").push(result);
    };
    if threads == 1 {
        run();
    } else {
        workers.scope(|scope| {
            scope.start(threads - 1, &run);
            run();
        });
    }
    for result in results.into_inner().expect("results lock") {
        merge(result?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn covers_the_range_once_with_any_threads() {
        let pool = WorkerPool::new();
        for threads in [1, 2, 8] {
            for (len, size) in [(0, 4), (1, 4), (10, 3), (1000, 7)] {
                let mut seen = vec![0u32; len];
                for_each_morsel(len, size, threads, &pool, &Interrupt::none(), Ok, |range| {
                    range.for_each(|i| seen[i] += 1)
                })
                .unwrap();
                assert!(seen.iter().all(|&c| c == 1));
            }
        }
    }

    #[test]
    fn an_error_is_returned() {
        let result = for_each_morsel(
            100,
            10,
            2,
            &WorkerPool::new(),
            &Interrupt::none(),
            |range| {
                if range.start == 50 {
                    Err(warren_common::Error::internal("boom"))
                } else {
                    Ok(())
                }
            },
            |()| {},
        );
        assert!(result.is_err());
    }
}

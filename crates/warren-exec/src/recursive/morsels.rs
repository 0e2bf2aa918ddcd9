//! A parallel loop over a range cut into morsels, for the engine's data-parallel sweeps (one
//! level of a walk-count vector over every node): threads claim morsels with one atomic add.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Mutex;

use warren_common::Result;

use crate::context::Interrupt;

/// What the calling thread does while a parallel loop runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Caller {
    /// It waits for `threads` spawned threads.
    Waits,
    /// It takes morsels beside `threads - 1` spawned ones: work starts at once, which pays
    /// for large loops run phase after phase (the spread's hops), but made the tiny loops of
    /// walk counts at scale 12 slower in half of the processes (OPTIMIZATION_LOG 128).
    Works,
}

/// Calls `work` on consecutive morsels of `0..len` from `threads` threads; `merge` receives
/// each morsel's result. Stops at the first error (or interruption) and returns it.
pub fn for_each_morsel<R: Send>(
    len: usize,
    morsel_size: usize,
    threads: usize,
    caller: Caller,
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
        std::thread::scope(|scope| match caller {
            Caller::Waits => (0..threads).for_each(|_| {
                scope.spawn(run);
            }),
            Caller::Works => {
                (1..threads).for_each(|_| {
                    scope.spawn(run);
                });
                run();
            }
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
        for (threads, caller) in [1, 2, 8]
            .into_iter()
            .flat_map(|t| [(t, Caller::Waits), (t, Caller::Works)])
        {
            for (len, size) in [(0, 4), (1, 4), (10, 3), (1000, 7)] {
                let mut seen = vec![0u32; len];
                for_each_morsel(
                    len,
                    size,
                    threads,
                    caller,
                    &Interrupt::none(),
                    Ok,
                    |range| range.for_each(|i| seen[i] += 1),
                )
                .unwrap();
                assert!(seen.iter().all(|&c| c == 1));
            }
        }
    }

    #[test]
    fn an_error_is_returned() {
        for caller in [Caller::Waits, Caller::Works] {
            let result = for_each_morsel(
                100,
                10,
                2,
                caller,
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
}

//! Deterministic parallel map over numbered chunks.
//!
//! Each chunk's result depends only on its index, and results come back in index order, so the
//! output is the same whatever the number of threads or the order in which they ran.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

/// Runs `work(index)` for every index in `0..chunk_count` on all available cores and returns the
/// results in index order.
pub fn map_chunks<T, F>(chunk_count: usize, work: F) -> Vec<T>
where
    T: Send,
    F: Fn(usize) -> T + Sync,
{
    let thread_count = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .min(chunk_count);
    if thread_count <= 1 {
        return (0..chunk_count).map(work).collect();
    }
    let next_index = AtomicUsize::new(0);
    let slots: Mutex<Vec<Option<T>>> = Mutex::new((0..chunk_count).map(|_| None).collect());
    std::thread::scope(|scope| {
        for _ in 0..thread_count {
            scope.spawn(|| loop {
                let index = next_index.fetch_add(1, Ordering::Relaxed);
                if index >= chunk_count {
                    break;
                }
                let result = work(index);
                slots.lock().expect("a generator thread panicked")[index] = Some(result);
            });
        }
    });
    let slots = slots.into_inner().expect("a generator thread panicked");
    slots
        .into_iter()
        .map(|slot| slot.expect("every chunk was computed"))
        .collect()
}

/// The number of chunks of at most `chunk_size` items needed for `item_count` items.
pub fn chunk_count(item_count: u64, chunk_size: u64) -> usize {
    assert!(chunk_size > 0);
    usize::try_from(item_count.div_ceil(chunk_size)).expect("chunk count fits in usize")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_back_in_index_order() {
        let results = map_chunks(100, |index| index * 2);
        assert_eq!(results, (0..100).map(|index| index * 2).collect::<Vec<_>>());
        assert!(map_chunks(0, |index| index).is_empty());
    }

    #[test]
    fn chunk_count_rounds_up() {
        assert_eq!(chunk_count(0, 10), 0);
        assert_eq!(chunk_count(10, 10), 1);
        assert_eq!(chunk_count(11, 10), 2);
    }
}

//! Exact top-k by scanning: a bounded max-heap of the k nearest rows. The index falls back to
//! it for selective filters; tests and benchmarks use it as the ground truth.

use std::collections::BinaryHeap;

use super::measure::{distance, row_vector};
use super::search::Neighbour;
use crate::distance::Metric;

/// The `k` rows of `rows` nearest to `query` (nearest first) whose id `accept` passes.
pub fn exact_top_k(
    vectors: &[f32],
    dim: usize,
    rows: impl Iterator<Item = u32>,
    query: &[f32],
    k: usize,
    metric: Metric,
    accept: impl Fn(u32) -> bool,
) -> Vec<Neighbour> {
    assert_eq!(query.len(), dim, "query of the wrong length");
    let mut heap: BinaryHeap<Neighbour> = BinaryHeap::with_capacity(k + 1);
    if k == 0 {
        return Vec::new();
    }
    for row in rows.filter(|&row| accept(row)) {
        let values = row_vector(vectors, dim, row);
        crate::prefetch::scan_ahead(values);
        let found = Neighbour {
            row,
            distance: distance(metric, query, values),
        };
        if heap.len() < k {
            heap.push(found);
        } else if heap.peek().is_some_and(|worst| found < *worst) {
            heap.pop();
            heap.push(found);
        }
    }
    heap.into_sorted_vec()
}

/// `exact_top_k` over every row of the block, split across `threads` threads.
pub fn exact_top_k_parallel(
    vectors: &[f32],
    dim: usize,
    query: &[f32],
    k: usize,
    metric: Metric,
    threads: usize,
) -> Vec<Neighbour> {
    assert!(threads > 0 && dim > 0);
    let rows = (vectors.len() / dim) as u32;
    let chunk = rows.div_ceil(threads as u32).max(1);
    let mut merged: Vec<Neighbour> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..rows)
            .step_by(chunk as usize)
            .map(|start| {
                let end = (start + chunk).min(rows);
                scope.spawn(move || {
                    exact_top_k(vectors, dim, start..end, query, k, metric, |_| true)
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|worker| worker.join().expect("scan thread panicked"))
            .collect()
    });
    merged.sort_unstable();
    merged.truncate(k);
    merged
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_the_k_nearest_in_order() {
        let vectors: Vec<f32> = (0..20).map(|value| value as f32).collect();
        let found = exact_top_k(&vectors, 1, 0..20, &[7.2], 3, Metric::L2, |_| true);
        let rows: Vec<u32> = found.iter().map(|hit| hit.row).collect();
        assert_eq!(rows, [7, 8, 6]);
        let odd = exact_top_k(&vectors, 1, 0..20, &[7.2], 2, Metric::L2, |row| {
            row % 2 == 1
        });
        assert_eq!(odd.iter().map(|hit| hit.row).collect::<Vec<_>>(), [7, 9]);
        let parallel = exact_top_k_parallel(&vectors, 1, &[7.2], 3, Metric::L2, 3);
        assert_eq!(parallel, found);
    }
}

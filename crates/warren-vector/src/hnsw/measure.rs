//! The one place the index computes a distance, so that switching it to the run-time chosen
//! SIMD kernels is a one-line change. NaN (a zero vector under cosine) counts as farthest.

use crate::distance::Metric;

/// The distance of `a` to `b` under `metric` (smaller is closer), never NaN.
#[inline]
pub fn distance(metric: Metric, a: &[f32], b: &[f32]) -> f32 {
    let distance = metric.distance_f32(a, b);
    if distance.is_nan() {
        f32::INFINITY
    } else {
        distance
    }
}

/// Asks the CPU to start loading `vector` into cache (every 64-byte line of it), so that the
/// distances computed next over a neighbour list do not wait on memory one vector at a time.
#[inline]
pub fn prefetch_vector(vector: &[f32]) {
    #[cfg(target_arch = "x86_64")]
    for line in vector.chunks(16) {
        // SAFETY: a prefetch is a hint that never faults; the address lies inside `vector`.
        unsafe {
            std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(
                line.as_ptr().cast::<i8>(),
            );
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = vector;
}

/// Row `row` of a contiguous block of `dim`-long vectors.
#[inline]
pub fn row_vector(vectors: &[f32], dim: usize, row: u32) -> &[f32] {
    let start = row as usize * dim;
    &vectors[start..start + dim]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn never_nan() {
        // The scalar reference gives NaN for a zero vector under cosine (counted as farthest);
        // Kùzu's convention in the SIMD kernels gives similarity 0. Neither may reach a heap.
        let zero = distance(Metric::Cosine, &[0.0, 0.0], &[1.0, 0.0]);
        assert!(!zero.is_nan() && zero >= 1.0);
        assert_eq!(distance(Metric::L2Squared, &[0.0, 3.0], &[4.0, 0.0]), 25.0);
        assert_eq!(row_vector(&[1.0, 2.0, 3.0, 4.0], 2, 1), &[3.0, 4.0]);
    }
}

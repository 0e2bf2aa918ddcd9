//! The one place the index computes a distance, with the process's run-time chosen SIMD
//! kernels (`crate::distance::kernels`). NaN (a zero vector under cosine, on the graph path)
//! counts as farthest.
//!
//! Under cosine the index keeps each row's inverse norm, so a distance inside the graph is one
//! inner product (`1 - a·b / (|a| |b|)` with both inverse norms known) instead of three sums.
//! Both come from the index's own copy of the rows, kept in the lower layer's blocks (`layer`).

use super::layer::Layer;
use crate::distance::Metric;

/// The inner product the cosine path uses (the process's kernel).
#[inline]
fn inner_product(a: &[f32], b: &[f32]) -> f32 {
    crate::distance::inner_product_f32(a, b)
}

/// A distance kernel over two equal-length rows.
pub type KernelF32 = fn(&[f32], &[f32]) -> f32;

/// The process's inner-product kernel, looked up once per `Space` instead of once per distance.
pub fn inner_product_kernel() -> KernelF32 {
    crate::distance::kernels().inner_product_f32
}

/// `1 / |vector|`: infinite for a zero vector, which then measures NaN, counted as farthest.
pub fn inverse_norm(vector: &[f32]) -> f32 {
    1.0 / inner_product(vector, vector).sqrt()
}

#[inline]
fn not_nan(distance: f32) -> f32 {
    if distance.is_nan() {
        f32::INFINITY
    } else {
        distance
    }
}

/// The index's rows under a metric: the vectors (and, under cosine, inverse norms) that the
/// lower layer keeps, node = row.
#[derive(Clone, Copy)]
pub struct Space<'a> {
    pub metric: Metric,
    pub rows: &'a Layer,
    /// The inner-product kernel (`inner_product_kernel()`).
    pub dot: KernelF32,
}

/// A query vector with its inverse norm (under cosine).
#[derive(Clone, Copy)]
pub struct Query<'a> {
    vector: &'a [f32],
    inverse_norm: f32,
}

impl<'a> Space<'a> {
    fn uses_norms(&self) -> bool {
        self.rows.keeps_norms()
    }

    pub fn query(&self, vector: &'a [f32]) -> Query<'a> {
        let inverse_norm = if self.uses_norms() {
            inverse_norm(vector)
        } else {
            f32::NAN
        };
        Query {
            vector,
            inverse_norm,
        }
    }

    /// The distance of row `row` to `query`.
    #[inline]
    pub fn query_distance(&self, query: &Query<'_>, row: u32) -> f32 {
        let vector = self.rows.vector(row);
        if self.uses_norms() {
            let dot = (self.dot)(query.vector, vector);
            not_nan(1.0 - dot * query.inverse_norm * self.rows.inverse_norm(row))
        } else {
            distance(self.metric, query.vector, vector)
        }
    }

    /// The distance between rows `a` and `b`.
    #[inline]
    pub fn between(&self, a: u32, b: u32) -> f32 {
        let (left, right) = (self.rows.vector(a), self.rows.vector(b));
        if self.uses_norms() {
            let scale = self.rows.inverse_norm(a) * self.rows.inverse_norm(b);
            not_nan(1.0 - (self.dot)(left, right) * scale)
        } else {
            distance(self.metric, left, right)
        }
    }

    #[inline]
    pub fn prefetch(&self, row: u32) {
        self.rows.prefetch_vector(row);
    }
}

/// The distance of `a` to `b` under `metric` (smaller is closer), never NaN.
#[inline]
pub fn distance(metric: Metric, a: &[f32], b: &[f32]) -> f32 {
    use crate::distance as kernels;
    not_nan(match metric {
        Metric::Cosine => 1.0 - kernels::cosine_similarity_f32(a, b),
        Metric::L2 => kernels::squared_distance_f32(a, b).sqrt(),
        Metric::L2Squared => kernels::squared_distance_f32(a, b),
        Metric::DotProduct => -kernels::inner_product_f32(a, b),
    })
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

    #[test]
    fn cosine_through_norms_matches_the_metric() {
        let vectors = [1.0f32, 2.0, 3.0, -1.0, 0.5, 2.0, 0.0, 0.0, 0.0];
        let layer = |norms: bool| {
            let mut layer = Layer::with_vectors(4, 3, norms);
            layer.grow(3);
            for (row, vector) in vectors.chunks(3).enumerate() {
                layer.set_vector(row as u32, vector, inverse_norm(vector));
            }
            layer
        };
        let (with_norms, without) = (layer(true), layer(false));
        let space = Space {
            metric: Metric::Cosine,
            rows: &with_norms,
            dot: inner_product_kernel(),
        };
        let plain = Space {
            rows: &without,
            ..space
        };
        let query = [0.3f32, -0.2, 0.9];
        for row in 0..2 {
            let expected = distance(Metric::Cosine, &query, &vectors[row * 3..row * 3 + 3]);
            let fast = space.query_distance(&space.query(&query), row as u32);
            assert!((fast - expected).abs() < 1e-6, "{fast} vs {expected}");
            assert_eq!(
                plain.query_distance(&plain.query(&query), row as u32),
                expected
            );
        }
        assert!((space.between(0, 1) - plain.between(0, 1)).abs() < 1e-6);
        assert_eq!(space.query_distance(&space.query(&query), 2), f32::INFINITY);
    }
}

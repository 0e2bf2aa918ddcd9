//! Distance and similarity kernels with Kùzu's names: cosine similarity, inner (dot) product,
//! Euclidean distance and squared Euclidean distance, over equal-length `f32` or `f64` slices.
//!
//! This file states the API and holds the scalar reference implementations. The kernels the
//! engine calls are chosen once per process by CPU feature (see `Kernels`), and every kernel is
//! checked against the scalar reference.

/// The metrics of Kùzu's `CREATE_VECTOR_INDEX(..., metric := ...)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Metric {
    /// `1 - cosine_similarity`.
    Cosine,
    /// Euclidean distance.
    L2,
    /// Squared Euclidean distance.
    L2Squared,
    /// `-inner_product` (smaller is closer).
    DotProduct,
}

impl Metric {
    /// Parses Kùzu's metric names (`cosine`, `l2`, `l2sq`, `dotproduct`), case-insensitively.
    pub fn parse(name: &str) -> Option<Self> {
        match name.to_ascii_lowercase().as_str() {
            "cosine" => Some(Metric::Cosine),
            "l2" => Some(Metric::L2),
            "l2sq" => Some(Metric::L2Squared),
            "dotproduct" => Some(Metric::DotProduct),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Metric::Cosine => "cosine",
            Metric::L2 => "l2",
            Metric::L2Squared => "l2sq",
            Metric::DotProduct => "dotproduct",
        }
    }

    /// The distance of `a` to `b` under this metric (smaller is closer), scalar reference.
    pub fn distance_f32(self, a: &[f32], b: &[f32]) -> f32 {
        match self {
            Metric::Cosine => 1.0 - scalar::cosine_similarity_f32(a, b),
            Metric::L2 => scalar::squared_distance_f32(a, b).sqrt(),
            Metric::L2Squared => scalar::squared_distance_f32(a, b),
            Metric::DotProduct => -scalar::inner_product_f32(a, b),
        }
    }
}

/// Scalar reference kernels: the definition the SIMD kernels are tested against. Each asserts
/// that its inputs have equal length.
pub mod scalar {
    pub fn inner_product_f32(a: &[f32], b: &[f32]) -> f32 {
        assert_eq!(a.len(), b.len(), "vectors of different lengths");
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    pub fn squared_distance_f32(a: &[f32], b: &[f32]) -> f32 {
        assert_eq!(a.len(), b.len(), "vectors of different lengths");
        a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
    }

    /// `a·b / (|a| |b|)`; NaN when either vector has zero norm.
    pub fn cosine_similarity_f32(a: &[f32], b: &[f32]) -> f32 {
        assert_eq!(a.len(), b.len(), "vectors of different lengths");
        let (mut dot, mut aa, mut bb) = (0.0f32, 0.0f32, 0.0f32);
        for (x, y) in a.iter().zip(b) {
            dot += x * y;
            aa += x * x;
            bb += y * y;
        }
        dot / (aa.sqrt() * bb.sqrt())
    }

    pub fn inner_product_f64(a: &[f64], b: &[f64]) -> f64 {
        assert_eq!(a.len(), b.len(), "vectors of different lengths");
        a.iter().zip(b).map(|(x, y)| x * y).sum()
    }

    pub fn squared_distance_f64(a: &[f64], b: &[f64]) -> f64 {
        assert_eq!(a.len(), b.len(), "vectors of different lengths");
        a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum()
    }

    pub fn cosine_similarity_f64(a: &[f64], b: &[f64]) -> f64 {
        assert_eq!(a.len(), b.len(), "vectors of different lengths");
        let (mut dot, mut aa, mut bb) = (0.0f64, 0.0f64, 0.0f64);
        for (x, y) in a.iter().zip(b) {
            dot += x * y;
            aa += x * x;
            bb += y * y;
        }
        dot / (aa.sqrt() * bb.sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metric_names_round_trip() {
        for metric in [
            Metric::Cosine,
            Metric::L2,
            Metric::L2Squared,
            Metric::DotProduct,
        ] {
            assert_eq!(Metric::parse(metric.name()), Some(metric));
        }
        assert_eq!(Metric::parse("COSINE"), Some(Metric::Cosine));
        assert_eq!(Metric::parse("manhattan"), None);
    }

    #[test]
    fn scalar_reference_on_small_vectors() {
        let a = [1.0f32, 0.0, 2.0];
        let b = [0.0f32, 1.0, 2.0];
        assert_eq!(scalar::inner_product_f32(&a, &b), 4.0);
        assert_eq!(scalar::squared_distance_f32(&a, &b), 2.0);
        assert!((scalar::cosine_similarity_f32(&a, &b) - 0.8).abs() < 1e-6);
        assert!(scalar::cosine_similarity_f32(&[0.0; 3], &b).is_nan());
    }
}

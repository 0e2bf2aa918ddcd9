//! Distance and similarity kernels with Kùzu's names: cosine similarity, inner (dot) product,
//! Euclidean distance and squared Euclidean distance, over equal-length `f32` or `f64` slices.
//!
//! This file states the API and holds the scalar reference implementations. The kernels the
//! engine calls are chosen once per process by CPU feature ([`kernels()`]), and every kernel is
//! checked against the scalar reference (`distance/kernel_tests.rs`).
//!
//! Cosine similarity follows Kùzu where a norm is zero: two zero vectors have similarity 1, a
//! zero vector and a non-zero one have similarity 0 (never a division by zero).
//!
//! Tolerance: a kernel sums in a different order (lanes, fused multiply-add) than the scalar
//! reference, so results differ by rounding only: for a sum of n terms t_i, both are within
//! γ_n·Σ|t_i| of the exact sum (γ_n = nε/(1-nε), ε the unit roundoff), so they differ by at most
//! 2γ_n·Σ|t_i|; cosine similarity differs by at most about (2n+8)ε. NaN in, NaN out; infinities
//! give the same infinity or NaN as the reference.

#[cfg(test)]
mod kernel_tests;
mod kernels;
#[cfg(target_arch = "aarch64")]
mod neon;
mod portable;
#[cfg(target_arch = "x86_64")]
mod x86;

pub use kernels::{kernels, Kernels, SimdLevel, SIMD_ENV};

/// `a·b` with the process's kernels.
pub fn inner_product_f32(a: &[f32], b: &[f32]) -> f32 {
    (kernels().inner_product_f32)(a, b)
}

/// `Σ(a_i - b_i)²` with the process's kernels.
pub fn squared_distance_f32(a: &[f32], b: &[f32]) -> f32 {
    (kernels().squared_distance_f32)(a, b)
}

/// Cosine similarity with the process's kernels.
pub fn cosine_similarity_f32(a: &[f32], b: &[f32]) -> f32 {
    (kernels().cosine_similarity_f32)(a, b)
}

pub fn inner_product_f64(a: &[f64], b: &[f64]) -> f64 {
    (kernels().inner_product_f64)(a, b)
}

pub fn squared_distance_f64(a: &[f64], b: &[f64]) -> f64 {
    (kernels().squared_distance_f64)(a, b)
}

pub fn cosine_similarity_f64(a: &[f64], b: &[f64]) -> f64 {
    (kernels().cosine_similarity_f64)(a, b)
}

/// The floating-point types the kernels work on.
pub trait Element: Copy {
    /// Cosine similarity from `a·b`, `a·a` and `b·b`, with Kùzu's zero-norm convention.
    fn cosine_from_sums(dot: Self, aa: Self, bb: Self) -> Self;
}

macro_rules! element {
    ($float:ty) => {
        impl Element for $float {
            fn cosine_from_sums(dot: Self, aa: Self, bb: Self) -> Self {
                if aa == 0.0 && bb == 0.0 {
                    1.0
                } else if aa == 0.0 || bb == 0.0 {
                    0.0
                } else {
                    dot / (aa.sqrt() * bb.sqrt())
                }
            }
        }
    };
}
element!(f32);
element!(f64);

pub(crate) fn cosine_from_sums<T: Element>(dot: T, aa: T, bb: T) -> T {
    T::cosine_from_sums(dot, aa, bb)
}

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

    /// `a·b / (|a| |b|)`; 1 when both norms are zero, 0 when one is (Kùzu's convention).
    pub fn cosine_similarity_f32(a: &[f32], b: &[f32]) -> f32 {
        assert_eq!(a.len(), b.len(), "vectors of different lengths");
        let (mut dot, mut aa, mut bb) = (0.0f32, 0.0f32, 0.0f32);
        for (x, y) in a.iter().zip(b) {
            dot += x * y;
            aa += x * x;
            bb += y * y;
        }
        super::cosine_from_sums(dot, aa, bb)
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
        super::cosine_from_sums(dot, aa, bb)
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
        assert_eq!(scalar::cosine_similarity_f32(&[0.0; 3], &b), 0.0);
        assert_eq!(scalar::cosine_similarity_f32(&[0.0; 3], &[0.0; 3]), 1.0);
    }
}

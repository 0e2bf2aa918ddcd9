//! The kernel table: one set of distance functions per instruction-set level, and the choice
//! of the best level this CPU supports, made once per process. `WARREN_SIMD` (`avx512`,
//! `avx2`, `neon`, `portable`; `scalar` is an alias of `portable`) caps the level, for
//! measuring one width against another; a level the CPU lacks falls to the next one down.

use std::sync::OnceLock;

use super::portable;

/// An instruction-set level, widest first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SimdLevel {
    /// AVX-512F: 16 f32 lanes.
    Avx512,
    /// AVX2 with FMA: 8 f32 lanes.
    Avx2,
    /// AArch64 NEON: 4 f32 lanes.
    Neon,
    /// Plain Rust, vectorized by the compiler for the build target's baseline.
    Portable,
}

impl SimdLevel {
    pub const ALL: [SimdLevel; 4] = [
        SimdLevel::Avx512,
        SimdLevel::Avx2,
        SimdLevel::Neon,
        SimdLevel::Portable,
    ];

    pub fn parse(name: &str) -> Option<Self> {
        match name.trim().to_ascii_lowercase().as_str() {
            "avx512" | "avx-512" => Some(SimdLevel::Avx512),
            "avx2" => Some(SimdLevel::Avx2),
            "neon" => Some(SimdLevel::Neon),
            "portable" | "scalar" => Some(SimdLevel::Portable),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            SimdLevel::Avx512 => "avx512",
            SimdLevel::Avx2 => "avx2",
            SimdLevel::Neon => "neon",
            SimdLevel::Portable => "portable",
        }
    }

    /// Whether this CPU can run the level's kernels.
    pub fn is_supported(self) -> bool {
        match self {
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx512 => std::arch::is_x86_feature_detected!("avx512f"),
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx2 => {
                std::arch::is_x86_feature_detected!("avx2")
                    && std::arch::is_x86_feature_detected!("fma")
            }
            #[cfg(target_arch = "aarch64")]
            SimdLevel::Neon => true,
            SimdLevel::Portable => true,
            #[allow(unreachable_patterns)]
            _ => false,
        }
    }
}

type KernelF32 = fn(&[f32], &[f32]) -> f32;
type KernelF64 = fn(&[f64], &[f64]) -> f64;

/// The distance functions of one level. Each takes two slices of equal length (it panics
/// otherwise) and agrees with [`super::scalar`] within the documented tolerance.
#[derive(Clone, Copy, Debug)]
pub struct Kernels {
    pub level: SimdLevel,
    pub inner_product_f32: KernelF32,
    pub squared_distance_f32: KernelF32,
    pub cosine_similarity_f32: KernelF32,
    pub inner_product_f64: KernelF64,
    pub squared_distance_f64: KernelF64,
    pub cosine_similarity_f64: KernelF64,
}

impl Kernels {
    /// The kernels of `level`, or `None` if this CPU (or this build's architecture) lacks it.
    pub fn for_level(level: SimdLevel) -> Option<Kernels> {
        if !level.is_supported() {
            return None;
        }
        Some(match level {
            SimdLevel::Portable => PORTABLE,
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx512 => {
                use super::x86::*;
                Kernels {
                    level,
                    inner_product_f32: inner_product_f32_avx512,
                    squared_distance_f32: squared_distance_f32_avx512,
                    cosine_similarity_f32: cosine_similarity_f32_avx512,
                    inner_product_f64: inner_product_f64_avx512,
                    squared_distance_f64: squared_distance_f64_avx512,
                    cosine_similarity_f64: cosine_similarity_f64_avx512,
                }
            }
            #[cfg(target_arch = "x86_64")]
            SimdLevel::Avx2 => {
                use super::x86::*;
                Kernels {
                    level,
                    inner_product_f32: inner_product_f32_avx2,
                    squared_distance_f32: squared_distance_f32_avx2,
                    cosine_similarity_f32: cosine_similarity_f32_avx2,
                    inner_product_f64: inner_product_f64_avx2,
                    squared_distance_f64: squared_distance_f64_avx2,
                    cosine_similarity_f64: cosine_similarity_f64_avx2,
                }
            }
            #[cfg(target_arch = "aarch64")]
            SimdLevel::Neon => {
                use super::neon::*;
                Kernels {
                    level,
                    inner_product_f32: inner_product_f32_neon,
                    squared_distance_f32: squared_distance_f32_neon,
                    cosine_similarity_f32: cosine_similarity_f32_neon,
                    ..PORTABLE
                }
            }
            #[allow(unreachable_patterns)]
            _ => return None,
        })
    }

    /// The widest supported level at or below `cap` (`Portable` always qualifies).
    pub fn best_up_to(cap: SimdLevel) -> Kernels {
        let start = SimdLevel::ALL
            .iter()
            .position(|&l| l == cap)
            .expect("every level is listed");
        SimdLevel::ALL[start..]
            .iter()
            .find_map(|&level| Kernels::for_level(level))
            .expect("the portable level is always supported")
    }
}

const PORTABLE: Kernels = Kernels {
    level: SimdLevel::Portable,
    inner_product_f32: portable::inner_product_f32,
    squared_distance_f32: portable::squared_distance_f32,
    cosine_similarity_f32: portable::cosine_similarity_f32,
    inner_product_f64: portable::inner_product_f64,
    squared_distance_f64: portable::squared_distance_f64,
    cosine_similarity_f64: portable::cosine_similarity_f64,
};

/// The name of the environment variable that caps the kernel level.
pub const SIMD_ENV: &str = "WARREN_SIMD";

/// The process's kernels: the widest level the CPU supports, capped by `WARREN_SIMD`. Chosen
/// on first use and fixed for the life of the process.
pub fn kernels() -> &'static Kernels {
    static CHOSEN: OnceLock<Kernels> = OnceLock::new();
    CHOSEN.get_or_init(|| {
        let cap = std::env::var(SIMD_ENV)
            .ok()
            .and_then(|name| SimdLevel::parse(&name))
            .unwrap_or(SimdLevel::Avx512);
        Kernels::best_up_to(cap)
    })
}

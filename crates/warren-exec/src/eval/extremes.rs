//! The least and the greatest of a run of INT64s, for aggregates folded from a stored column
//! (`operators::fold_columns`): the baseline x86-64 target has no 64-bit compare in SIMD, so
//! a plain loop compiles to a slow emulation; these kernels are compiled for AVX-512F (which
//! has 64-bit min and max) and AVX2 (64-bit compares), chosen once at run time, with a
//! portable loop of four independent lanes for other CPUs.

use std::sync::OnceLock;

/// The least (`Least`) or greatest value of a non-empty run.
pub type ExtremeFn = fn(values: &[i64]) -> i64;

/// Which extreme a kernel finds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Extreme {
    Least,
    Greatest,
}

/// The fastest kernel this CPU runs for `extreme` (chosen once).
pub fn extreme_kernel(extreme: Extreme) -> ExtremeFn {
    static CHOSEN: OnceLock<[ExtremeFn; 2]> = OnceLock::new();
    let chosen = CHOSEN.get_or_init(|| {
        [
            extreme_kernels(Extreme::Least)[0],
            extreme_kernels(Extreme::Greatest)[0],
        ]
    });
    chosen[extreme as usize]
}

/// Every kernel this CPU runs for `extreme`, fastest first (the portable one last).
pub fn extreme_kernels(extreme: Extreme) -> Vec<ExtremeFn> {
    let mut kernels: Vec<ExtremeFn> = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            kernels.push(match extreme {
                Extreme::Least => x86::least_avx512,
                Extreme::Greatest => x86::greatest_avx512,
            });
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            kernels.push(match extreme {
                Extreme::Least => x86::least_avx2,
                Extreme::Greatest => x86::greatest_avx2,
            });
        }
    }
    kernels.push(match extreme {
        Extreme::Least => least_portable,
        Extreme::Greatest => greatest_portable,
    });
    kernels
}

/// The loop every kernel compiles: four lanes, each a chain of its own, then the lanes and
/// the tail folded together.
#[inline(always)]
fn fold_lanes(values: &[i64], start: i64, pick: impl Fn(i64, i64) -> i64 + Copy) -> i64 {
    assert!(!values.is_empty(), "an extreme of no value");
    let mut lanes = [start; 4];
    let mut quads = values.chunks_exact(4);
    for quad in &mut quads {
        for (lane, &value) in lanes.iter_mut().zip(quad) {
            *lane = pick(*lane, value);
        }
    }
    let tail = quads.remainder().iter().fold(start, |a, &b| pick(a, b));
    lanes.into_iter().fold(tail, pick)
}

fn least_portable(values: &[i64]) -> i64 {
    fold_lanes(values, i64::MAX, i64::min)
}

fn greatest_portable(values: &[i64]) -> i64 {
    fold_lanes(values, i64::MIN, i64::max)
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::fold_lanes;

    pub fn least_avx512(values: &[i64]) -> i64 {
        // SAFETY: handed out only when AVX-512F was detected.
        unsafe { least_avx512_body(values) }
    }

    #[target_feature(enable = "avx512f")]
    fn least_avx512_body(values: &[i64]) -> i64 {
        fold_lanes(values, i64::MAX, i64::min)
    }

    pub fn greatest_avx512(values: &[i64]) -> i64 {
        // SAFETY: handed out only when AVX-512F was detected.
        unsafe { greatest_avx512_body(values) }
    }

    #[target_feature(enable = "avx512f")]
    fn greatest_avx512_body(values: &[i64]) -> i64 {
        fold_lanes(values, i64::MIN, i64::max)
    }

    pub fn least_avx2(values: &[i64]) -> i64 {
        // SAFETY: handed out only when AVX2 was detected.
        unsafe { least_avx2_body(values) }
    }

    #[target_feature(enable = "avx2")]
    fn least_avx2_body(values: &[i64]) -> i64 {
        fold_lanes(values, i64::MAX, i64::min)
    }

    pub fn greatest_avx2(values: &[i64]) -> i64 {
        // SAFETY: handed out only when AVX2 was detected.
        unsafe { greatest_avx2_body(values) }
    }

    #[target_feature(enable = "avx2")]
    fn greatest_avx2_body(values: &[i64]) -> i64 {
        fold_lanes(values, i64::MIN, i64::max)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Every kernel finds what `Iterator::min` and `max` find, for runs of 1 to 300
        /// values, the extremes of `i64` included.
        #[test]
        fn every_kernel_finds_the_extremes(
            values in prop::collection::vec(
                prop_oneof![Just(i64::MIN), Just(i64::MAX), any::<i64>(), -3i64..3],
                1..300,
            ),
        ) {
            let least = *values.iter().min().unwrap();
            let greatest = *values.iter().max().unwrap();
            for kernel in extreme_kernels(Extreme::Least) {
                prop_assert_eq!(kernel(&values), least);
            }
            for kernel in extreme_kernels(Extreme::Greatest) {
                prop_assert_eq!(kernel(&values), greatest);
            }
            prop_assert_eq!(extreme_kernel(Extreme::Least)(&values), least);
            prop_assert_eq!(extreme_kernel(Extreme::Greatest)(&values), greatest);
        }
    }
}

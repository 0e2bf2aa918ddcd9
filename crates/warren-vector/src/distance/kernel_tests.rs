//! Every supported kernel level against the scalar reference on random vectors of lengths
//! 1..300, with NaNs and infinities mixed in, within the tolerance stated in `distance.rs`.

use proptest::prelude::*;

use super::{scalar, Kernels, SimdLevel};

/// A value that is usually finite and now and then NaN or infinite.
fn element_f32() -> impl Strategy<Value = f32> + Clone {
    prop_oneof![
        40 => -100.0f32..100.0,
        1 => Just(f32::NAN),
        1 => Just(f32::INFINITY),
        1 => Just(f32::NEG_INFINITY),
        1 => Just(0.0f32),
    ]
}

fn element_f64() -> impl Strategy<Value = f64> + Clone {
    prop_oneof![
        40 => -100.0f64..100.0,
        1 => Just(f64::NAN),
        1 => Just(f64::INFINITY),
        1 => Just(f64::NEG_INFINITY),
        1 => Just(0.0f64),
    ]
}

fn pair<T: std::fmt::Debug + Clone>(
    element: impl Strategy<Value = T> + Clone,
) -> impl Strategy<Value = (Vec<T>, Vec<T>)> {
    (1usize..300).prop_flat_map(move |n| {
        (
            prop::collection::vec(element.clone(), n),
            prop::collection::vec(element.clone(), n),
        )
    })
}

fn levels() -> Vec<Kernels> {
    SimdLevel::ALL
        .iter()
        .filter_map(|&level| Kernels::for_level(level))
        .collect()
}

/// `γ_n = nε / (1 - nε)`, the bound on the relative error of an n-term sum in any order.
fn gamma(n: usize, epsilon: f64) -> f64 {
    let ne = n as f64 * epsilon;
    ne / (1.0 - ne)
}

/// Whether a kernel's result agrees with the reference's: the same NaN-ness and infinity, or
/// a finite difference within `bound`.
fn agrees(kernel: f64, reference: f64, bound: f64) -> bool {
    if reference.is_nan() || kernel.is_nan() {
        return reference.is_nan() && kernel.is_nan();
    }
    if reference.is_infinite() || kernel.is_infinite() {
        return reference == kernel;
    }
    (kernel - reference).abs() <= bound
}

fn abs_sum<T: Copy + Into<f64>>(a: &[T], b: &[T], term: impl Fn(f64, f64) -> f64) -> f64 {
    a.iter()
        .zip(b)
        .map(|(&x, &y)| term(x.into(), y.into()).abs())
        .sum()
}

fn check_f32(a: &[f32], b: &[f32]) -> Result<(), TestCaseError> {
    let n = a.len();
    let eps = f64::from(f32::EPSILON) / 2.0;
    let bound_dot = 2.0 * gamma(n, eps) * abs_sum(a, b, |x, y| x * y) + 1e-30;
    let bound_sq = 2.0 * gamma(n, eps) * abs_sum(a, b, |x, y| (x - y) * (x - y)) + 1e-30;
    let bound_cos = (2 * n + 8) as f64 * eps * 2.0;
    for k in levels() {
        let level = k.level.name();
        let (got, want) = ((k.inner_product_f32)(a, b), scalar::inner_product_f32(a, b));
        prop_assert!(
            agrees(got.into(), want.into(), bound_dot),
            "{level} dot {got} vs {want}"
        );
        let (got, want) = (
            (k.squared_distance_f32)(a, b),
            scalar::squared_distance_f32(a, b),
        );
        prop_assert!(
            agrees(got.into(), want.into(), bound_sq),
            "{level} sq {got} vs {want}"
        );
        let (got, want) = (
            (k.cosine_similarity_f32)(a, b),
            scalar::cosine_similarity_f32(a, b),
        );
        prop_assert!(
            agrees(got.into(), want.into(), bound_cos),
            "{level} cos {got} vs {want}"
        );
    }
    Ok(())
}

fn check_f64(a: &[f64], b: &[f64]) -> Result<(), TestCaseError> {
    let n = a.len();
    let eps = f64::EPSILON / 2.0;
    let bound_dot = 2.0 * gamma(n, eps) * abs_sum(a, b, |x, y| x * y) + 1e-300;
    let bound_sq = 2.0 * gamma(n, eps) * abs_sum(a, b, |x, y| (x - y) * (x - y)) + 1e-300;
    let bound_cos = (2 * n + 8) as f64 * eps * 2.0;
    for k in levels() {
        let level = k.level.name();
        let (got, want) = ((k.inner_product_f64)(a, b), scalar::inner_product_f64(a, b));
        prop_assert!(agrees(got, want, bound_dot), "{level} dot {got} vs {want}");
        let (got, want) = (
            (k.squared_distance_f64)(a, b),
            scalar::squared_distance_f64(a, b),
        );
        prop_assert!(agrees(got, want, bound_sq), "{level} sq {got} vs {want}");
        let (got, want) = (
            (k.cosine_similarity_f64)(a, b),
            scalar::cosine_similarity_f64(a, b),
        );
        prop_assert!(agrees(got, want, bound_cos), "{level} cos {got} vs {want}");
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn f32_kernels_match_the_reference((a, b) in pair(element_f32())) {
        check_f32(&a, &b)?;
    }

    #[test]
    fn f64_kernels_match_the_reference((a, b) in pair(element_f64())) {
        check_f64(&a, &b)?;
    }

    #[test]
    fn finite_f32_kernels_match_the_reference((a, b) in pair(-1000.0f32..1000.0)) {
        check_f32(&a, &b)?;
    }
}

#[test]
fn the_process_kernels_are_the_widest_supported_level() {
    let chosen = super::kernels().level;
    assert!(chosen.is_supported());
    if std::env::var(super::SIMD_ENV).is_err() {
        let widest = SimdLevel::ALL.iter().find(|l| l.is_supported()).copied();
        assert_eq!(Some(chosen), widest);
    }
    assert_eq!(
        Kernels::best_up_to(SimdLevel::Portable).level,
        SimdLevel::Portable
    );
}

#[test]
fn zero_norms_follow_kuzu() {
    for k in levels() {
        assert_eq!((k.cosine_similarity_f32)(&[0.0; 17], &[0.0; 17]), 1.0);
        assert_eq!((k.cosine_similarity_f32)(&[0.0; 17], &[1.0; 17]), 0.0);
        assert_eq!((k.cosine_similarity_f64)(&[0.0; 9], &[2.0; 9]), 0.0);
    }
}

#[test]
#[should_panic(expected = "different lengths")]
fn different_lengths_are_refused() {
    let k = Kernels::best_up_to(SimdLevel::Avx512);
    (k.inner_product_f32)(&[1.0; 3], &[1.0; 4]);
}

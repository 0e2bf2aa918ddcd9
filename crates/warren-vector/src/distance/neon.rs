//! The AArch64 kernels (NEON, which every AArch64 CPU has): 4 f32 lanes with fused
//! multiply-add, two accumulators per sum, the tail summed by the portable code. f64 uses the
//! portable kernels (two lanes gain little over what the compiler emits).

use std::arch::aarch64::{
    float32x4_t, vaddq_f32, vaddvq_f32, vdupq_n_f32, vfmaq_f32, vld1q_f32, vsubq_f32,
};

use super::portable;

/// The sums over whole 4-lane blocks (`a·b` or `Σ(a-b)²` first, then `a·a`, `b·b`), with the
/// number of elements covered.
fn sums_neon_f32(a: &[f32], b: &[f32], want_norms: bool, difference: bool) -> ([f32; 3], usize) {
    const W: usize = 4;
    let n = a.len();
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let zero: float32x4_t = unsafe { vdupq_n_f32(0.0) };
    let (mut d0, mut d1, mut a0, mut a1, mut b0, mut b1) = (zero, zero, zero, zero, zero, zero);
    let mut i = 0;
    // SAFETY: NEON is part of the AArch64 baseline; every load reads lanes `i..i + W` with
    // `i + W <= n`, inside both slices.
    unsafe {
        while i + 2 * W <= n {
            let (x0, y0) = (vld1q_f32(pa.add(i)), vld1q_f32(pb.add(i)));
            let (x1, y1) = (vld1q_f32(pa.add(i + W)), vld1q_f32(pb.add(i + W)));
            if difference {
                let (e0, e1) = (vsubq_f32(x0, y0), vsubq_f32(x1, y1));
                d0 = vfmaq_f32(d0, e0, e0);
                d1 = vfmaq_f32(d1, e1, e1);
            } else {
                d0 = vfmaq_f32(d0, x0, y0);
                d1 = vfmaq_f32(d1, x1, y1);
                if want_norms {
                    a0 = vfmaq_f32(a0, x0, x0);
                    a1 = vfmaq_f32(a1, x1, x1);
                    b0 = vfmaq_f32(b0, y0, y0);
                    b1 = vfmaq_f32(b1, y1, y1);
                }
            }
            i += 2 * W;
        }
        let sums = [
            vaddvq_f32(vaddq_f32(d0, d1)),
            vaddvq_f32(vaddq_f32(a0, a1)),
            vaddvq_f32(vaddq_f32(b0, b1)),
        ];
        (sums, i)
    }
}

pub fn inner_product_f32_neon(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "vectors of different lengths");
    let ([dot, ..], done) = sums_neon_f32(a, b, false, false);
    dot + portable::inner_product_f32(&a[done..], &b[done..])
}

pub fn squared_distance_f32_neon(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "vectors of different lengths");
    let ([sum, ..], done) = sums_neon_f32(a, b, false, true);
    sum + portable::squared_distance_f32(&a[done..], &b[done..])
}

pub fn cosine_similarity_f32_neon(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "vectors of different lengths");
    let ([mut dot, mut aa, mut bb], done) = sums_neon_f32(a, b, true, false);
    for (x, y) in a[done..].iter().zip(&b[done..]) {
        dot += x * y;
        aa += x * x;
        bb += y * y;
    }
    super::cosine_from_sums(dot, aa, bb)
}

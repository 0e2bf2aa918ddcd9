//! The x86-64 kernels: AVX-512F (16 f32 or 8 f64 lanes, the tail read with a masked load) and
//! AVX2 with FMA (8 f32 or 4 f64 lanes, the tail summed by the portable code). Each loop keeps
//! two independent accumulators per sum so that consecutive fused multiply-adds do not wait on
//! each other.
//!
//! Every `*_avx512`/`*_avx2` function here is safe to call only on a CPU with those features;
//! [`super::Kernels::for_level`] hands them out only after `is_x86_feature_detected!`.

use std::arch::x86_64::{
    __m256, __m256d, __m512, __m512d, _mm256_add_pd, _mm256_add_ps, _mm256_castpd256_pd128,
    _mm256_castps256_ps128, _mm256_extractf128_pd, _mm256_extractf128_ps, _mm256_fmadd_pd,
    _mm256_fmadd_ps, _mm256_loadu_pd, _mm256_loadu_ps, _mm256_setzero_pd, _mm256_setzero_ps,
    _mm256_sub_pd, _mm256_sub_ps, _mm512_add_pd, _mm512_add_ps, _mm512_fmadd_pd, _mm512_fmadd_ps,
    _mm512_loadu_pd, _mm512_loadu_ps, _mm512_maskz_loadu_pd, _mm512_maskz_loadu_ps,
    _mm512_reduce_add_pd, _mm512_reduce_add_ps, _mm512_setzero_pd, _mm512_setzero_ps,
    _mm512_sub_pd, _mm512_sub_ps, _mm_add_pd, _mm_add_ps, _mm_cvtsd_f64, _mm_cvtss_f32,
    _mm_movehl_ps, _mm_shuffle_ps, _mm_unpackhi_pd,
};

use super::portable;

// ---- AVX-512F, f32 -------------------------------------------------------------------------

/// The three sums of one pass (`a·b`, `a·a`, `b·b`; the norms only when `NORMS`, zero
/// otherwise) or, when `DIFFERENCE`, the squared distance's one sum in `dot`. The flags are
/// constants so that each kernel compiles to its own loop and horizontal reductions. Loads
/// past the end are masked to zero, which adds nothing to any sum.
#[target_feature(enable = "avx512f")]
fn sums_avx512_f32<const NORMS: bool, const DIFFERENCE: bool>(a: &[f32], b: &[f32]) -> [f32; 3] {
    const W: usize = 16;
    let n = a.len();
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let (mut d0, mut d1) = (_mm512_setzero_ps(), _mm512_setzero_ps());
    let (mut a0, mut a1) = (_mm512_setzero_ps(), _mm512_setzero_ps());
    let (mut b0, mut b1) = (_mm512_setzero_ps(), _mm512_setzero_ps());
    let mut i = 0;
    // SAFETY: every load reads lanes `i..i + W` with `i + W <= n` (or masked to `< n`), inside
    // both slices, which have length `n`.
    unsafe {
        while i + 2 * W <= n {
            let (x0, y0) = (_mm512_loadu_ps(pa.add(i)), _mm512_loadu_ps(pb.add(i)));
            let (x1, y1) = (
                _mm512_loadu_ps(pa.add(i + W)),
                _mm512_loadu_ps(pb.add(i + W)),
            );
            if DIFFERENCE {
                let (e0, e1) = (_mm512_sub_ps(x0, y0), _mm512_sub_ps(x1, y1));
                d0 = _mm512_fmadd_ps(e0, e0, d0);
                d1 = _mm512_fmadd_ps(e1, e1, d1);
            } else {
                d0 = _mm512_fmadd_ps(x0, y0, d0);
                d1 = _mm512_fmadd_ps(x1, y1, d1);
                if NORMS {
                    a0 = _mm512_fmadd_ps(x0, x0, a0);
                    a1 = _mm512_fmadd_ps(x1, x1, a1);
                    b0 = _mm512_fmadd_ps(y0, y0, b0);
                    b1 = _mm512_fmadd_ps(y1, y1, b1);
                }
            }
            i += 2 * W;
        }
        while i < n {
            let left = n - i;
            let mask: u16 = if left >= W {
                u16::MAX
            } else {
                (1u16 << left) - 1
            };
            let x = _mm512_maskz_loadu_ps(mask, pa.add(i));
            let y = _mm512_maskz_loadu_ps(mask, pb.add(i));
            if DIFFERENCE {
                let e = _mm512_sub_ps(x, y);
                d0 = _mm512_fmadd_ps(e, e, d0);
            } else {
                d0 = _mm512_fmadd_ps(x, y, d0);
                if NORMS {
                    a0 = _mm512_fmadd_ps(x, x, a0);
                    b0 = _mm512_fmadd_ps(y, y, b0);
                }
            }
            i += W;
        }
    }
    [
        reduce_512_ps(_mm512_add_ps(d0, d1)),
        if NORMS {
            reduce_512_ps(_mm512_add_ps(a0, a1))
        } else {
            0.0
        },
        if NORMS {
            reduce_512_ps(_mm512_add_ps(b0, b1))
        } else {
            0.0
        },
    ]
}

#[target_feature(enable = "avx512f")]
fn reduce_512_ps(v: __m512) -> f32 {
    _mm512_reduce_add_ps(v)
}

pub fn inner_product_f32_avx512(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "vectors of different lengths");
    // SAFETY: handed out only when AVX-512F was detected (module comment).
    unsafe { sums_avx512_f32::<false, false>(a, b)[0] }
}

pub fn squared_distance_f32_avx512(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "vectors of different lengths");
    // SAFETY: as above.
    unsafe { sums_avx512_f32::<false, true>(a, b)[0] }
}

pub fn cosine_similarity_f32_avx512(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "vectors of different lengths");
    // SAFETY: as above.
    let [dot, aa, bb] = unsafe { sums_avx512_f32::<true, false>(a, b) };
    super::cosine_from_sums(dot, aa, bb)
}

// ---- AVX-512F, f64 -------------------------------------------------------------------------

#[target_feature(enable = "avx512f")]
fn sums_avx512_f64<const NORMS: bool, const DIFFERENCE: bool>(a: &[f64], b: &[f64]) -> [f64; 3] {
    const W: usize = 8;
    let n = a.len();
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let (mut d0, mut d1) = (_mm512_setzero_pd(), _mm512_setzero_pd());
    let (mut a0, mut a1) = (_mm512_setzero_pd(), _mm512_setzero_pd());
    let (mut b0, mut b1) = (_mm512_setzero_pd(), _mm512_setzero_pd());
    let mut i = 0;
    // SAFETY: as in `sums_avx512_f32`.
    unsafe {
        while i + 2 * W <= n {
            let (x0, y0) = (_mm512_loadu_pd(pa.add(i)), _mm512_loadu_pd(pb.add(i)));
            let (x1, y1) = (
                _mm512_loadu_pd(pa.add(i + W)),
                _mm512_loadu_pd(pb.add(i + W)),
            );
            if DIFFERENCE {
                let (e0, e1) = (_mm512_sub_pd(x0, y0), _mm512_sub_pd(x1, y1));
                d0 = _mm512_fmadd_pd(e0, e0, d0);
                d1 = _mm512_fmadd_pd(e1, e1, d1);
            } else {
                d0 = _mm512_fmadd_pd(x0, y0, d0);
                d1 = _mm512_fmadd_pd(x1, y1, d1);
                if NORMS {
                    a0 = _mm512_fmadd_pd(x0, x0, a0);
                    a1 = _mm512_fmadd_pd(x1, x1, a1);
                    b0 = _mm512_fmadd_pd(y0, y0, b0);
                    b1 = _mm512_fmadd_pd(y1, y1, b1);
                }
            }
            i += 2 * W;
        }
        while i < n {
            let left = n - i;
            let mask: u8 = if left >= W {
                u8::MAX
            } else {
                (1u8 << left) - 1
            };
            let x = _mm512_maskz_loadu_pd(mask, pa.add(i));
            let y = _mm512_maskz_loadu_pd(mask, pb.add(i));
            if DIFFERENCE {
                let e = _mm512_sub_pd(x, y);
                d0 = _mm512_fmadd_pd(e, e, d0);
            } else {
                d0 = _mm512_fmadd_pd(x, y, d0);
                if NORMS {
                    a0 = _mm512_fmadd_pd(x, x, a0);
                    b0 = _mm512_fmadd_pd(y, y, b0);
                }
            }
            i += W;
        }
    }
    [
        reduce_512_pd(_mm512_add_pd(d0, d1)),
        if NORMS {
            reduce_512_pd(_mm512_add_pd(a0, a1))
        } else {
            0.0
        },
        if NORMS {
            reduce_512_pd(_mm512_add_pd(b0, b1))
        } else {
            0.0
        },
    ]
}

#[target_feature(enable = "avx512f")]
fn reduce_512_pd(v: __m512d) -> f64 {
    _mm512_reduce_add_pd(v)
}

pub fn inner_product_f64_avx512(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "vectors of different lengths");
    // SAFETY: handed out only when AVX-512F was detected.
    unsafe { sums_avx512_f64::<false, false>(a, b)[0] }
}

pub fn squared_distance_f64_avx512(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "vectors of different lengths");
    // SAFETY: as above.
    unsafe { sums_avx512_f64::<false, true>(a, b)[0] }
}

pub fn cosine_similarity_f64_avx512(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "vectors of different lengths");
    // SAFETY: as above.
    let [dot, aa, bb] = unsafe { sums_avx512_f64::<true, false>(a, b) };
    super::cosine_from_sums(dot, aa, bb)
}

// ---- AVX2 + FMA, f32 -----------------------------------------------------------------------

/// The sums over the whole 8-lane blocks; returns them with the number of elements covered.
#[target_feature(enable = "avx2,fma")]
fn sums_avx2_f32<const NORMS: bool, const DIFFERENCE: bool>(
    a: &[f32],
    b: &[f32],
) -> ([f32; 3], usize) {
    const W: usize = 8;
    let n = a.len();
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let (mut d0, mut d1) = (_mm256_setzero_ps(), _mm256_setzero_ps());
    let (mut a0, mut a1) = (_mm256_setzero_ps(), _mm256_setzero_ps());
    let (mut b0, mut b1) = (_mm256_setzero_ps(), _mm256_setzero_ps());
    let mut i = 0;
    // SAFETY: every load reads lanes `i..i + W` with `i + W <= n`.
    unsafe {
        while i + 2 * W <= n {
            let (x0, y0) = (_mm256_loadu_ps(pa.add(i)), _mm256_loadu_ps(pb.add(i)));
            let (x1, y1) = (
                _mm256_loadu_ps(pa.add(i + W)),
                _mm256_loadu_ps(pb.add(i + W)),
            );
            if DIFFERENCE {
                let (e0, e1) = (_mm256_sub_ps(x0, y0), _mm256_sub_ps(x1, y1));
                d0 = _mm256_fmadd_ps(e0, e0, d0);
                d1 = _mm256_fmadd_ps(e1, e1, d1);
            } else {
                d0 = _mm256_fmadd_ps(x0, y0, d0);
                d1 = _mm256_fmadd_ps(x1, y1, d1);
                if NORMS {
                    a0 = _mm256_fmadd_ps(x0, x0, a0);
                    a1 = _mm256_fmadd_ps(x1, x1, a1);
                    b0 = _mm256_fmadd_ps(y0, y0, b0);
                    b1 = _mm256_fmadd_ps(y1, y1, b1);
                }
            }
            i += 2 * W;
        }
        if i + W <= n {
            let (x, y) = (_mm256_loadu_ps(pa.add(i)), _mm256_loadu_ps(pb.add(i)));
            if DIFFERENCE {
                let e = _mm256_sub_ps(x, y);
                d0 = _mm256_fmadd_ps(e, e, d0);
            } else {
                d0 = _mm256_fmadd_ps(x, y, d0);
                if NORMS {
                    a0 = _mm256_fmadd_ps(x, x, a0);
                    b0 = _mm256_fmadd_ps(y, y, b0);
                }
            }
            i += W;
        }
    }
    let sums = [
        reduce_256_ps(_mm256_add_ps(d0, d1)),
        if NORMS {
            reduce_256_ps(_mm256_add_ps(a0, a1))
        } else {
            0.0
        },
        if NORMS {
            reduce_256_ps(_mm256_add_ps(b0, b1))
        } else {
            0.0
        },
    ];
    (sums, i)
}

#[target_feature(enable = "avx2,fma")]
fn reduce_256_ps(v: __m256) -> f32 {
    let quad = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps::<1>(v));
    let pair = _mm_add_ps(quad, _mm_movehl_ps(quad, quad));
    let single = _mm_add_ps(pair, _mm_shuffle_ps::<0b01>(pair, pair));
    _mm_cvtss_f32(single)
}

pub fn inner_product_f32_avx2(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "vectors of different lengths");
    // SAFETY: handed out only when AVX2 and FMA were detected.
    let ([dot, ..], done) = unsafe { sums_avx2_f32::<false, false>(a, b) };
    dot + portable::inner_product_f32(&a[done..], &b[done..])
}

pub fn squared_distance_f32_avx2(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "vectors of different lengths");
    // SAFETY: as above.
    let ([sum, ..], done) = unsafe { sums_avx2_f32::<false, true>(a, b) };
    sum + portable::squared_distance_f32(&a[done..], &b[done..])
}

pub fn cosine_similarity_f32_avx2(a: &[f32], b: &[f32]) -> f32 {
    assert_eq!(a.len(), b.len(), "vectors of different lengths");
    // SAFETY: as above.
    let ([mut dot, mut aa, mut bb], done) = unsafe { sums_avx2_f32::<true, false>(a, b) };
    for (x, y) in a[done..].iter().zip(&b[done..]) {
        dot += x * y;
        aa += x * x;
        bb += y * y;
    }
    super::cosine_from_sums(dot, aa, bb)
}

// ---- AVX2 + FMA, f64 -----------------------------------------------------------------------

#[target_feature(enable = "avx2,fma")]
fn sums_avx2_f64<const NORMS: bool, const DIFFERENCE: bool>(
    a: &[f64],
    b: &[f64],
) -> ([f64; 3], usize) {
    const W: usize = 4;
    let n = a.len();
    let (pa, pb) = (a.as_ptr(), b.as_ptr());
    let (mut d0, mut d1) = (_mm256_setzero_pd(), _mm256_setzero_pd());
    let (mut a0, mut a1) = (_mm256_setzero_pd(), _mm256_setzero_pd());
    let (mut b0, mut b1) = (_mm256_setzero_pd(), _mm256_setzero_pd());
    let mut i = 0;
    // SAFETY: every load reads lanes `i..i + W` with `i + W <= n`.
    unsafe {
        while i + 2 * W <= n {
            let (x0, y0) = (_mm256_loadu_pd(pa.add(i)), _mm256_loadu_pd(pb.add(i)));
            let (x1, y1) = (
                _mm256_loadu_pd(pa.add(i + W)),
                _mm256_loadu_pd(pb.add(i + W)),
            );
            if DIFFERENCE {
                let (e0, e1) = (_mm256_sub_pd(x0, y0), _mm256_sub_pd(x1, y1));
                d0 = _mm256_fmadd_pd(e0, e0, d0);
                d1 = _mm256_fmadd_pd(e1, e1, d1);
            } else {
                d0 = _mm256_fmadd_pd(x0, y0, d0);
                d1 = _mm256_fmadd_pd(x1, y1, d1);
                if NORMS {
                    a0 = _mm256_fmadd_pd(x0, x0, a0);
                    a1 = _mm256_fmadd_pd(x1, x1, a1);
                    b0 = _mm256_fmadd_pd(y0, y0, b0);
                    b1 = _mm256_fmadd_pd(y1, y1, b1);
                }
            }
            i += 2 * W;
        }
    }
    let sums = [
        reduce_256_pd(_mm256_add_pd(d0, d1)),
        if NORMS {
            reduce_256_pd(_mm256_add_pd(a0, a1))
        } else {
            0.0
        },
        if NORMS {
            reduce_256_pd(_mm256_add_pd(b0, b1))
        } else {
            0.0
        },
    ];
    (sums, i)
}

#[target_feature(enable = "avx2,fma")]
fn reduce_256_pd(v: __m256d) -> f64 {
    let pair = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd::<1>(v));
    _mm_cvtsd_f64(_mm_add_pd(pair, _mm_unpackhi_pd(pair, pair)))
}

pub fn inner_product_f64_avx2(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "vectors of different lengths");
    // SAFETY: handed out only when AVX2 and FMA were detected.
    let ([dot, ..], done) = unsafe { sums_avx2_f64::<false, false>(a, b) };
    dot + portable::inner_product_f64(&a[done..], &b[done..])
}

pub fn squared_distance_f64_avx2(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "vectors of different lengths");
    // SAFETY: as above.
    let ([sum, ..], done) = unsafe { sums_avx2_f64::<false, true>(a, b) };
    sum + portable::squared_distance_f64(&a[done..], &b[done..])
}

pub fn cosine_similarity_f64_avx2(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len(), "vectors of different lengths");
    // SAFETY: as above.
    let ([mut dot, mut aa, mut bb], done) = unsafe { sums_avx2_f64::<true, false>(a, b) };
    for (x, y) in a[done..].iter().zip(&b[done..]) {
        dot += x * y;
        aa += x * x;
        bb += y * y;
    }
    super::cosine_from_sums(dot, aa, bb)
}

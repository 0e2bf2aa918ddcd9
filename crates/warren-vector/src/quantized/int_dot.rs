//! Exact integer dot products of one query's `i16` codes with many rows of `i8` codes: the
//! int8 stage of the copy's filter ([`super`]; the 4-bit stage's are in `nibble_blocks`), and
//! the vector index's distances between its int8 rows (`crate::hnsw`), one pair at a time
//! ([`DotCodes`]).
//! Every kernel returns the exact sum (no rounding: [`query_code_max`] keeps every partial
//! sum inside `i32`), so the kernels agree bit for bit and the filter's bound needs no
//! rounding term for them. Chosen at run time: AVX-512BW (32 codes per step, the row's tail
//! read with a masked load), AVX2 (16 codes per step) and a portable loop. A run of rows is
//! prefetched ahead (`crate::prefetch::scan_ahead`); a call for one row (the int8 stage after
//! the 4-bit one, rows far apart) is not, since it would fetch lines nobody reads.

use std::sync::OnceLock;

/// The copy's codes lie in `-CODE_LIMIT..=CODE_LIMIT` (`super::CODE_MAX`).
const CODE_LIMIT: i64 = 127;

/// The largest query code for `dim`-element rows: the `i16` range, less for rows long enough
/// that `dim` products of `i16::MAX` and [`CODE_LIMIT`] could overflow an `i32`; `None` when
/// not even codes of ±1 fit (rows of over 16 million values).
pub fn query_code_max(dim: usize) -> Option<i16> {
    let limit = i64::from(i32::MAX) / (CODE_LIMIT * dim.max(1) as i64);
    (limit >= 1).then(|| limit.min(i64::from(i16::MAX)) as i16)
}

/// `out[r] = Σ_i query[i] · codes[r · dim + i]` with `dim = query.len()` and
/// `codes.len() = out.len() · dim`. The caller keeps `|query[i]| <= query_code_max(dim)` and
/// the codes in `-127..=127`, so no partial sum overflows.
pub type DotRows = fn(codes: &[i8], query: &[i16], out: &mut [i32]);

/// The widest kernel this CPU runs (chosen on first use: the index looks it up per search).
pub fn dot_rows_kernel() -> DotRows {
    static CHOSEN: OnceLock<DotRows> = OnceLock::new();
    *CHOSEN.get_or_init(|| dot_rows_kernels()[0])
}

/// Every kernel this CPU runs, widest first (the portable one last; the tests compare them
/// all).
// Other targets list only the portable kernel: the pushes are behind `cfg`s.
#[cfg_attr(not(target_arch = "x86_64"), allow(clippy::vec_init_then_push))]
pub fn dot_rows_kernels() -> Vec<DotRows> {
    let mut kernels: Vec<DotRows> = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
        {
            kernels.push(x86::dot_rows_avx512);
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            kernels.push(x86::dot_rows_avx2);
        }
    }
    kernels.push(dot_rows_portable);
    kernels
}

/// `Σ_i a[i] · b[i]` over two rows of `i8` codes of one length, at most
/// [`CODES_DIM_MAX`] (so no partial sum of codes in `-127..=127` overflows an `i32`).
pub type DotCodes = fn(a: &[i8], b: &[i8]) -> i32;

/// The longest rows [`DotCodes`] takes: `dim · 127²` fits an `i32`.
pub const CODES_DIM_MAX: usize = (i32::MAX as usize) / (CODE_LIMIT * CODE_LIMIT) as usize;

/// The widest pair kernel this CPU runs (chosen on first use, as [`dot_rows_kernel`]).
pub fn dot_codes_kernel() -> DotCodes {
    static CHOSEN: OnceLock<DotCodes> = OnceLock::new();
    *CHOSEN.get_or_init(|| dot_codes_kernels()[0])
}

/// Every pair kernel this CPU runs, widest first (the portable one last).
// Other targets list only the portable kernel: the pushes are behind `cfg`s.
#[cfg_attr(not(target_arch = "x86_64"), allow(clippy::vec_init_then_push))]
pub fn dot_codes_kernels() -> Vec<DotCodes> {
    let mut kernels: Vec<DotCodes> = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
        {
            kernels.push(x86::dot_codes_avx512);
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            kernels.push(x86::dot_codes_avx2);
        }
    }
    kernels.push(dot_codes_portable);
    kernels
}

/// `out[j] = Σ_i query[i] · rows[j][i]` for four rows of `i8` codes, each of `query.len()`
/// codes (at most [`CODES_DIM_MAX`]), wherever they lie (the index's blocks): one call for four
/// rows measured against one row of codes (the build's insert).
pub type DotFourCodes = fn(query: &[i8], rows: [&[i8]; 4]) -> [i32; 4];

/// The widest four-row kernel this CPU runs (chosen on first use, as [`dot_rows_kernel`]).
pub fn dot_four_codes_kernel() -> DotFourCodes {
    static CHOSEN: OnceLock<DotFourCodes> = OnceLock::new();
    *CHOSEN.get_or_init(|| dot_four_codes_kernels()[0])
}

/// Every four-row kernel this CPU runs, widest first: AVX-512 VNNI, then four calls of the
/// widest pair kernel (which the tests compare with the portable one).
// Other targets list only the portable kernel: the pushes are behind `cfg`s.
#[cfg_attr(not(target_arch = "x86_64"), allow(clippy::vec_init_then_push))]
pub fn dot_four_codes_kernels() -> Vec<DotFourCodes> {
    let mut kernels: Vec<DotFourCodes> = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if x86::has_vnni() {
            kernels.push(x86::dot_four_codes_avx512vnni);
        }
    }
    kernels.push(dot_four_codes_by_pairs);
    kernels
}

/// Four rows by the widest pair kernel, one at a time.
pub fn dot_four_codes_by_pairs(query: &[i8], rows: [&[i8]; 4]) -> [i32; 4] {
    let pair = dot_codes_kernel();
    rows.map(|row| pair(query, row))
}

fn check_pair(a: &[i8], b: &[i8]) {
    assert_eq!(a.len(), b.len(), "rows of one length");
    assert!(
        a.len() <= CODES_DIM_MAX,
        "rows of at most {CODES_DIM_MAX} codes"
    );
}

/// The reference pair kernel.
pub fn dot_codes_portable(a: &[i8], b: &[i8]) -> i32 {
    check_pair(a, b);
    a.iter()
        .zip(b)
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum()
}

fn check_shapes(codes: &[i8], query: &[i16], out: &[i32]) {
    assert!(!query.is_empty(), "a query of at least one value");
    assert_eq!(codes.len(), out.len() * query.len(), "whole rows of codes");
}

/// The reference kernel.
pub fn dot_rows_portable(codes: &[i8], query: &[i16], out: &mut [i32]) {
    check_shapes(codes, query, out);
    for (row, sum) in codes.chunks_exact(query.len()).zip(out.iter_mut()) {
        *sum = row
            .iter()
            .zip(query)
            .map(|(&c, &q)| i32::from(c) * i32::from(q))
            .sum();
    }
}

#[cfg(target_arch = "x86_64")]
pub(crate) mod x86 {
    //! The x86-64 kernels; each is listed by [`super::dot_rows_kernels`] only after the
    //! features it is compiled for were detected.

    use std::arch::x86_64::{
        __m512i, _mm256_add_epi32, _mm256_castsi256_si128, _mm256_cvtepi8_epi16,
        _mm256_extracti128_si256, _mm256_hadd_epi32, _mm256_loadu_si256, _mm256_madd_epi16,
        _mm256_maskz_loadu_epi8, _mm256_setzero_si256, _mm512_abs_epi8, _mm512_add_epi32,
        _mm512_castsi512_si256, _mm512_cvtepi8_epi16, _mm512_dpbusd_epi32,
        _mm512_extracti64x4_epi64, _mm512_loadu_si512, _mm512_madd_epi16, _mm512_mask_sub_epi8,
        _mm512_maskz_loadu_epi16, _mm512_maskz_loadu_epi8, _mm512_movepi8_mask,
        _mm512_reduce_add_epi32, _mm512_setzero_si512, _mm_add_epi32, _mm_cvtsi128_si32,
        _mm_loadu_si128, _mm_shuffle_epi32, _mm_storeu_si128,
    };

    use super::{check_pair, check_shapes};
    use crate::prefetch;

    /// Whether the CPU runs the VNNI kernels (AVX-512 BW and VNNI).
    pub(crate) fn has_vnni() -> bool {
        std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vnni")
    }

    /// Bytes of codes per VNNI step.
    const VNNI_STEP: usize = 64;

    /// The mask that loads the 64 codes from `at` of a row of `dim` (all 64 but at the tail).
    #[inline(always)]
    fn step_mask(dim: usize, at: usize) -> u64 {
        let left = dim - at;
        if left >= VNNI_STEP {
            u64::MAX
        } else {
            (1u64 << left) - 1
        }
    }

    /// `vpdpbusd` multiplies unsigned bytes by signed ones: the query's signs move onto the row
    /// (`|q| · (sign(q) · x) = q · x`). Codes are in `-127..=127`, so no negation overflows.
    #[inline]
    #[target_feature(enable = "avx512bw,avx512vnni")]
    fn signed_step(sum: __m512i, magnitudes: __m512i, negative: u64, row: __m512i) -> __m512i {
        let signed = _mm512_mask_sub_epi8(row, negative, _mm512_setzero_si512(), row);
        _mm512_dpbusd_epi32(sum, magnitudes, signed)
    }

    pub fn dot_four_codes_avx512vnni(query: &[i8], rows: [&[i8]; 4]) -> [i32; 4] {
        for row in rows {
            check_pair(query, row);
        }
        // SAFETY: handed out only when AVX-512BW and VNNI were detected; each row holds
        // `query.len()` codes (checked above).
        unsafe { dot_four_codes_avx512vnni_body(query, rows.map(|row| row.as_ptr())) }
    }

    /// The four-row VNNI kernel over rows by address (the graph's distances call it directly,
    /// inlined; `measure::vnni`).
    ///
    /// # Safety
    /// The CPU has AVX-512BW and VNNI; each row addresses `query.len()` codes, at most
    /// `CODES_DIM_MAX`.
    #[inline]
    #[target_feature(enable = "avx512bw,avx512vnni")]
    pub unsafe fn dot_four_codes_avx512vnni_body(query: &[i8], rows: [*const i8; 4]) -> [i32; 4] {
        debug_assert!(query.len() <= super::CODES_DIM_MAX);
        let dim = query.len();
        let mut sums = [_mm512_setzero_si512(); 4];
        let mut at = 0;
        // SAFETY: the query and every row hold `dim` codes (checked by the caller); each load
        // is masked to the codes left.
        unsafe {
            while at < dim {
                let mask = step_mask(dim, at);
                let q = _mm512_maskz_loadu_epi8(mask, query.as_ptr().add(at));
                let (magnitudes, negative) = (_mm512_abs_epi8(q), _mm512_movepi8_mask(q));
                for (sum, row) in sums.iter_mut().zip(rows) {
                    let x = _mm512_maskz_loadu_epi8(mask, row.add(at));
                    *sum = signed_step(*sum, magnitudes, negative, x);
                }
                at += VNNI_STEP;
            }
            // Halves added down to 256 bits per row; three horizontal adds leave the four sums
            // in each 128-bit half, which added give [s0, s1, s2, s3].
            let half = sums.map(|sum| {
                _mm256_add_epi32(
                    _mm512_castsi512_si256(sum),
                    _mm512_extracti64x4_epi64::<1>(sum),
                )
            });
            let pairs = (
                _mm256_hadd_epi32(half[0], half[1]),
                _mm256_hadd_epi32(half[2], half[3]),
            );
            let all = _mm256_hadd_epi32(pairs.0, pairs.1);
            let four = _mm_add_epi32(
                _mm256_castsi256_si128(all),
                _mm256_extracti128_si256::<1>(all),
            );
            let mut out = [0i32; 4];
            _mm_storeu_si128(out.as_mut_ptr().cast(), four);
            out
        }
    }

    pub fn dot_codes_avx512(a: &[i8], b: &[i8]) -> i32 {
        check_pair(a, b);
        // SAFETY: handed out only when AVX-512BW and AVX-512VL were detected.
        unsafe { dot_codes_avx512_body(a, b) }
    }

    #[target_feature(enable = "avx512bw,avx512vl")]
    fn dot_codes_avx512_body(a: &[i8], b: &[i8]) -> i32 {
        const W: usize = 32;
        let dim = a.len();
        let body = dim - dim % W;
        let tail = dim - body;
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        // SAFETY: every full load reads `W` codes of each row below `body <= dim`; the tail's
        // loads are masked to the `tail` codes left (masked-out lanes are not read).
        unsafe {
            let (mut acc0, mut acc1) = (_mm512_setzero_si512(), _mm512_setzero_si512());
            let mut i = 0;
            while i + 2 * W <= body {
                let a0 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(pa.add(i).cast()));
                let b0 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(pb.add(i).cast()));
                let a1 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(pa.add(i + W).cast()));
                let b1 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(pb.add(i + W).cast()));
                acc0 = _mm512_add_epi32(acc0, _mm512_madd_epi16(a0, b0));
                acc1 = _mm512_add_epi32(acc1, _mm512_madd_epi16(a1, b1));
                i += 2 * W;
            }
            if i < body {
                let a0 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(pa.add(i).cast()));
                let b0 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(pb.add(i).cast()));
                acc0 = _mm512_add_epi32(acc0, _mm512_madd_epi16(a0, b0));
                i += W;
            }
            if tail > 0 {
                let mask: u32 = (1u32 << tail) - 1;
                let at = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(mask, pa.add(i)));
                let bt = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(mask, pb.add(i)));
                acc1 = _mm512_add_epi32(acc1, _mm512_madd_epi16(at, bt));
            }
            _mm512_reduce_add_epi32(_mm512_add_epi32(acc0, acc1))
        }
    }

    pub fn dot_codes_avx2(a: &[i8], b: &[i8]) -> i32 {
        check_pair(a, b);
        // SAFETY: handed out only when AVX2 was detected.
        unsafe { dot_codes_avx2_body(a, b) }
    }

    #[target_feature(enable = "avx2")]
    fn dot_codes_avx2_body(a: &[i8], b: &[i8]) -> i32 {
        const W: usize = 16;
        let dim = a.len();
        let body = dim - dim % W;
        let (pa, pb) = (a.as_ptr(), b.as_ptr());
        // SAFETY: every load reads `W` codes of each row below `body <= dim`.
        let body_sum = unsafe {
            let mut acc = _mm256_setzero_si256();
            let mut i = 0;
            while i < body {
                let a0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(pa.add(i).cast()));
                let b0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(pb.add(i).cast()));
                acc = _mm256_add_epi32(acc, _mm256_madd_epi16(a0, b0));
                i += W;
            }
            let half = _mm_add_epi32(
                _mm256_castsi256_si128(acc),
                _mm256_extracti128_si256::<1>(acc),
            );
            let quarter = _mm_add_epi32(half, _mm_shuffle_epi32::<0b01_00_11_10>(half));
            let last = _mm_add_epi32(quarter, _mm_shuffle_epi32::<0b10_11_00_01>(quarter));
            _mm_cvtsi128_si32(last)
        };
        let tail: i32 = a[body..]
            .iter()
            .zip(&b[body..])
            .map(|(&x, &y)| i32::from(x) * i32::from(y))
            .sum();
        body_sum + tail
    }

    pub fn dot_rows_avx512(codes: &[i8], query: &[i16], out: &mut [i32]) {
        check_shapes(codes, query, out);
        // SAFETY: handed out only when AVX-512BW and AVX-512VL were detected.
        unsafe { dot_rows_avx512_body(codes, query, out) }
    }

    #[target_feature(enable = "avx512bw,avx512vl")]
    fn dot_rows_avx512_body(codes: &[i8], query: &[i16], out: &mut [i32]) {
        const W: usize = 32;
        let out_len = out.len();
        let dim = query.len();
        let body = dim - dim % W;
        let tail = dim - body;
        let tail_mask: u32 = if tail == 0 { 0 } else { (1u32 << tail) - 1 };
        let q = query.as_ptr();
        for (r, sum) in out.iter_mut().enumerate() {
            // SAFETY: `check_shapes` proved row `r` lies inside `codes`; every full load reads
            // `W` codes and `W` query values below `body <= dim`, and the tail's loads are
            // masked to the `tail` values left (masked-out lanes are not read).
            unsafe {
                let row = codes.as_ptr().add(r * dim);
                if out_len > 1 {
                    prefetch::scan_ahead(&codes[r * dim..(r + 1) * dim]);
                }
                let (mut acc0, mut acc1) = (_mm512_setzero_si512(), _mm512_setzero_si512());
                let mut i = 0;
                while i + 2 * W <= body {
                    let c0 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(row.add(i).cast()));
                    let c1 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(row.add(i + W).cast()));
                    let q0 = _mm512_loadu_si512(q.add(i).cast());
                    let q1 = _mm512_loadu_si512(q.add(i + W).cast());
                    acc0 = _mm512_add_epi32(acc0, _mm512_madd_epi16(c0, q0));
                    acc1 = _mm512_add_epi32(acc1, _mm512_madd_epi16(c1, q1));
                    i += 2 * W;
                }
                if i < body {
                    let c0 = _mm512_cvtepi8_epi16(_mm256_loadu_si256(row.add(i).cast()));
                    let q0 = _mm512_loadu_si512(q.add(i).cast());
                    acc0 = _mm512_add_epi32(acc0, _mm512_madd_epi16(c0, q0));
                    i += W;
                }
                if tail > 0 {
                    let c = _mm512_cvtepi8_epi16(_mm256_maskz_loadu_epi8(tail_mask, row.add(i)));
                    let qt = _mm512_maskz_loadu_epi16(tail_mask, q.add(i));
                    acc1 = _mm512_add_epi32(acc1, _mm512_madd_epi16(c, qt));
                }
                *sum = _mm512_reduce_add_epi32(_mm512_add_epi32(acc0, acc1));
            }
        }
    }

    pub fn dot_rows_avx2(codes: &[i8], query: &[i16], out: &mut [i32]) {
        check_shapes(codes, query, out);
        // SAFETY: handed out only when AVX2 was detected.
        unsafe { dot_rows_avx2_body(codes, query, out) }
    }

    #[target_feature(enable = "avx2")]
    fn dot_rows_avx2_body(codes: &[i8], query: &[i16], out: &mut [i32]) {
        const W: usize = 16;
        let out_len = out.len();
        let dim = query.len();
        let body = dim - dim % W;
        let q = query.as_ptr();
        for (r, sum) in out.iter_mut().enumerate() {
            let row_codes = &codes[r * dim..(r + 1) * dim];
            // SAFETY: every load reads `W` codes of this row and `W` query values below
            // `body <= dim`.
            let body_sum = unsafe {
                let row = row_codes.as_ptr();
                if out_len > 1 {
                    prefetch::scan_ahead(row_codes);
                }
                let (mut acc0, mut acc1) = (_mm256_setzero_si256(), _mm256_setzero_si256());
                let mut i = 0;
                while i + 2 * W <= body {
                    let c0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(row.add(i).cast()));
                    let c1 = _mm256_cvtepi8_epi16(_mm_loadu_si128(row.add(i + W).cast()));
                    let q0 = _mm256_loadu_si256(q.add(i).cast());
                    let q1 = _mm256_loadu_si256(q.add(i + W).cast());
                    acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(c0, q0));
                    acc1 = _mm256_add_epi32(acc1, _mm256_madd_epi16(c1, q1));
                    i += 2 * W;
                }
                if i < body {
                    let c0 = _mm256_cvtepi8_epi16(_mm_loadu_si128(row.add(i).cast()));
                    let q0 = _mm256_loadu_si256(q.add(i).cast());
                    acc0 = _mm256_add_epi32(acc0, _mm256_madd_epi16(c0, q0));
                }
                let acc = _mm256_add_epi32(acc0, acc1);
                let half = _mm_add_epi32(
                    _mm256_castsi256_si128(acc),
                    _mm256_extracti128_si256::<1>(acc),
                );
                let quarter = _mm_add_epi32(half, _mm_shuffle_epi32::<0b01_00_11_10>(half));
                let last = _mm_add_epi32(quarter, _mm_shuffle_epi32::<0b10_11_00_01>(quarter));
                _mm_cvtsi128_si32(last)
            };
            let tail: i32 = row_codes[body..]
                .iter()
                .zip(&query[body..])
                .map(|(&c, &q)| i32::from(c) * i32::from(q))
                .sum();
            *sum = body_sum + tail;
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    #[test]
    fn the_query_code_limit_keeps_sums_in_i32() {
        assert_eq!(query_code_max(1), Some(i16::MAX));
        assert_eq!(query_code_max(128), Some(i16::MAX));
        assert_eq!(query_code_max(1536), Some(11_008));
        assert_eq!(query_code_max(20_000_000), None);
        for dim in [1usize, 100, 516, 517, 4096, 100_000, 16_909_320] {
            let limit = i64::from(query_code_max(dim).expect("fits"));
            assert!(limit * 127 * dim as i64 <= i64::from(i32::MAX), "{dim}");
        }
    }

    /// At the extreme codes (every product at its largest, both signs) no kernel overflows.
    #[test]
    fn extreme_codes_give_exact_sums() {
        for dim in [1usize, 31, 32, 33, 64, 95, 128, 515] {
            let limit = query_code_max(dim).unwrap();
            for sign in [1i16, -1] {
                let query = vec![limit * sign; dim];
                let codes = vec![127i8; dim * 3];
                let expected = i64::from(limit) * 127 * dim as i64 * i64::from(sign);
                for kernel in dot_rows_kernels() {
                    let mut out = [0i32; 3];
                    kernel(&codes, &query, &mut out);
                    assert!(
                        out.iter().all(|&s| i64::from(s) == expected),
                        "{dim}: {out:?}"
                    );
                }
            }
        }
    }

    /// Pairs at the longest rows and the extreme codes give exact sums.
    #[test]
    fn pair_kernels_are_exact_at_the_extremes() {
        assert!(CODES_DIM_MAX as i64 * 127 * 127 <= i64::from(i32::MAX));
        for dim in [
            1usize,
            15,
            16,
            17,
            31,
            32,
            33,
            64,
            95,
            128,
            515,
            CODES_DIM_MAX,
        ] {
            for (x, y) in [(127i8, 127i8), (-127, 127), (-127, -127)] {
                let expected = i64::from(x) * i64::from(y) * dim as i64;
                for kernel in dot_codes_kernels() {
                    let sum = kernel(&vec![x; dim], &vec![y; dim]);
                    assert_eq!(i64::from(sum), expected, "{dim}");
                }
            }
        }
    }

    fn case() -> impl Strategy<Value = (Vec<i16>, Vec<i8>, usize)> {
        (1usize..200, 0usize..9).prop_flat_map(|(dim, rows)| {
            let limit = query_code_max(dim).unwrap();
            (
                proptest::collection::vec(-limit..=limit, dim),
                proptest::collection::vec(-127i8..=127, dim * rows),
                Just(rows),
            )
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Every kernel equals an i64 scalar sum, for every length (odd tails included).
        #[test]
        fn every_kernel_equals_the_scalar_sum((query, codes, rows) in case()) {
            let dim = query.len();
            let expected: Vec<i32> = codes
                .chunks_exact(dim)
                .map(|row| {
                    let sum: i64 = row.iter().zip(&query)
                        .map(|(&c, &q)| i64::from(c) * i64::from(q)).sum();
                    i32::try_from(sum).expect("in range")
                })
                .collect();
            for kernel in dot_rows_kernels() {
                let mut out = vec![0i32; rows];
                kernel(&codes, &query, &mut out);
                prop_assert_eq!(&out, &expected);
            }
        }

        /// Every pair kernel equals the scalar sum, for every length.
        #[test]
        fn every_pair_kernel_equals_the_scalar_sum(
            pair in (1usize..300).prop_flat_map(|dim| (
                proptest::collection::vec(-127i8..=127, dim),
                proptest::collection::vec(-127i8..=127, dim),
            ))
        ) {
            let (a, b) = pair;
            let expected: i64 = a.iter().zip(&b).map(|(&x, &y)| i64::from(x) * i64::from(y)).sum();
            for kernel in dot_codes_kernels() {
                prop_assert_eq!(i64::from(kernel(&a, &b)), expected);
            }
        }

        /// Every four-row kernel equals the scalar sums, for every length, with rows that
        /// repeat (a short group is padded with its last row).
        #[test]
        fn every_four_row_kernel_equals_the_scalar_sums(
            rows in (1usize..300).prop_flat_map(|dim| proptest::collection::vec(
                proptest::collection::vec(-127i8..=127, dim),
                4,
            )),
            repeat in 0usize..4,
        ) {
            let (query, others) = rows.split_first().expect("four rows");
            let group: [&[i8]; 4] =
                std::array::from_fn(|lane| others[lane.min(others.len() - 1)].as_slice())
                    .map(|row| if repeat == 3 { query.as_slice() } else { row });
            let expected = group.map(|row| {
                query.iter().zip(row).map(|(&x, &y)| i32::from(x) * i32::from(y)).sum::<i32>()
            });
            for kernel in dot_four_codes_kernels() {
                prop_assert_eq!(kernel(query, group), expected);
            }
        }
    }
}

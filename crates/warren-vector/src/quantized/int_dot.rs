//! Exact integer dot products of one query's `i16` codes with many rows of `i8` codes, or of
//! 4-bit codes packed two to a byte: the inner loops of the copy's filter ([`super`]). Every kernel returns the exact sum (no
//! rounding: [`query_code_max`] keeps every partial sum inside `i32`), so the kernels agree
//! bit for bit and the filter's bound needs no rounding term for them. Chosen at run time:
//! AVX-512BW (32 codes per step, the row's tail read with a masked load), AVX2 (16 codes per
//! step) and a portable loop.

/// How far ahead of the row being summed the x86 kernels prefetch: software prefetching took
/// the 1M x 128 scan from about 64-70% to 85-95% of a plain parallel read of the same bytes
/// (2 threads; 2,048 bytes ahead 87%, 4,096 89-94%, 8,192 94-95%; `OPTIMIZATION_LOG` 165).
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]
const PREFETCH_BYTES: usize = 8192;

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

/// The widest kernel this CPU runs.
pub fn dot_rows_kernel() -> DotRows {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
        {
            return x86::dot_rows_avx512;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return x86::dot_rows_avx2;
        }
    }
    dot_rows_portable
}

/// Every kernel this CPU runs, widest first (for the tests that compare them).
#[cfg(test)]
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

/// The 4-bit codes lie in `-NIBBLE_CODE_MAX..=NIBBLE_CODE_MAX`; a nibble holds the code plus
/// [`NIBBLE_ZERO`] (1 to 15; padding holds 8, code 0).
pub const NIBBLE_CODE_MAX: i8 = 7;
pub const NIBBLE_ZERO: i8 = 8;

/// Values per group of packed nibbles: a group is 32 bytes.
const NIBBLE_GROUP: usize = 64;

/// Bytes of one row of `dim` 4-bit codes (whole groups, the last one padded).
pub fn nibble_row_bytes(dim: usize) -> usize {
    dim.div_ceil(NIBBLE_GROUP) * NIBBLE_GROUP / 2
}

/// Packs one row's 4-bit codes: byte `32g + j` holds value `64g + j` in its low nibble and
/// value `64g + 32 + j` in its high one (so a kernel splits a group's 32 bytes into two runs
/// of 32 consecutive values with a mask and a shift). `out` is [`nibble_row_bytes`] long.
pub fn pack_nibbles(codes: &[i8], out: &mut [u8]) {
    assert_eq!(
        out.len(),
        nibble_row_bytes(codes.len()),
        "a whole packed row"
    );
    assert!(
        codes.iter().all(|c| c.abs() <= NIBBLE_CODE_MAX),
        "4-bit codes"
    );
    let half = NIBBLE_GROUP / 2;
    let zero = NIBBLE_ZERO as u8;
    for (group, bytes) in out.chunks_exact_mut(half).enumerate() {
        let values = &codes[(group * NIBBLE_GROUP).min(codes.len())..];
        let nibble = |i: usize| values.get(i).map_or(zero, |&c| (c + NIBBLE_ZERO) as u8);
        for (j, byte) in bytes.iter_mut().enumerate() {
            *byte = nibble(j) | (nibble(half + j) << 4);
        }
    }
}

/// `out[r] = Σ_i query[i] · n_i` over row `r`'s nibbles `n` (the codes plus [`NIBBLE_ZERO`],
/// unsigned), with `query` padded with zeros to `2 · row_bytes` values and `nibbles.len() =
/// out.len() · row_bytes`; the caller subtracts `NIBBLE_ZERO · Σ query` for the codes' sum.
/// Under [`query_code_max`] no partial sum overflows (a nibble is at most 15).
pub type DotNibbleRows = fn(nibbles: &[u8], query: &[i16], out: &mut [i32]);

/// The widest nibble kernel this CPU runs.
pub fn dot_nibble_rows_kernel() -> DotNibbleRows {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
        {
            return x86::dot_nibble_rows_avx512;
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            return x86::dot_nibble_rows_avx2;
        }
    }
    dot_nibble_rows_portable
}

/// Every nibble kernel this CPU runs, widest first.
#[cfg(test)]
pub fn dot_nibble_rows_kernels() -> Vec<DotNibbleRows> {
    let mut kernels: Vec<DotNibbleRows> = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512bw")
            && std::arch::is_x86_feature_detected!("avx512vl")
        {
            kernels.push(x86::dot_nibble_rows_avx512);
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            kernels.push(x86::dot_nibble_rows_avx2);
        }
    }
    kernels.push(dot_nibble_rows_portable);
    kernels
}

fn check_nibble_shapes(nibbles: &[u8], query: &[i16], out: &[i32]) {
    assert!(
        !query.is_empty() && query.len().is_multiple_of(NIBBLE_GROUP),
        "a query padded to whole groups"
    );
    assert_eq!(
        nibbles.len(),
        out.len() * query.len() / 2,
        "whole packed rows"
    );
}

/// The reference nibble kernel.
pub fn dot_nibble_rows_portable(nibbles: &[u8], query: &[i16], out: &mut [i32]) {
    check_nibble_shapes(nibbles, query, out);
    let half = NIBBLE_GROUP / 2;
    for (row, sum) in nibbles.chunks_exact(query.len() / 2).zip(out.iter_mut()) {
        let mut total = 0i32;
        for (group, q) in row.chunks_exact(half).zip(query.chunks_exact(NIBBLE_GROUP)) {
            for (j, &byte) in group.iter().enumerate() {
                total += i32::from(q[j]) * i32::from(byte & 0x0F);
                total += i32::from(q[half + j]) * i32::from(byte >> 4);
            }
        }
        *sum = total;
    }
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
mod x86 {
    //! The x86-64 kernels; each is handed out by [`super::dot_rows_kernel`] only after the
    //! features it is compiled for were detected.

    use std::arch::x86_64::{
        __m128i, __m256i, __m512i, _mm256_and_si256, _mm256_cvtepu8_epi16, _mm256_set1_epi8,
        _mm256_srli_epi16, _mm512_cvtepu8_epi16, _mm512_shuffle_epi32, _mm512_shuffle_i64x2,
        _mm512_storeu_si512, _mm_and_si128, _mm_set1_epi8, _mm_srli_epi16,
    };
    use std::arch::x86_64::{
        _mm256_add_epi32, _mm256_castsi256_si128, _mm256_cvtepi8_epi16, _mm256_extracti128_si256,
        _mm256_loadu_si256, _mm256_madd_epi16, _mm256_maskz_loadu_epi8, _mm256_setzero_si256,
        _mm512_add_epi32, _mm512_cvtepi8_epi16, _mm512_loadu_si512, _mm512_madd_epi16,
        _mm512_maskz_loadu_epi16, _mm512_reduce_add_epi32, _mm512_setzero_si512, _mm_add_epi32,
        _mm_cvtsi128_si32, _mm_loadu_si128, _mm_prefetch, _mm_shuffle_epi32, _MM_HINT_T0,
    };

    /// The sum of a 256-bit vector's eight `i32` lanes.
    #[target_feature(enable = "avx2")]
    fn reduce_256(acc: __m256i) -> i32 {
        let half = _mm_add_epi32(
            _mm256_castsi256_si128(acc),
            _mm256_extracti128_si256::<1>(acc),
        );
        let quarter = _mm_add_epi32(half, _mm_shuffle_epi32::<0b01_00_11_10>(half));
        let last = _mm_add_epi32(quarter, _mm_shuffle_epi32::<0b10_11_00_01>(quarter));
        _mm_cvtsi128_si32(last)
    }

    pub fn dot_nibble_rows_avx512(nibbles: &[u8], query: &[i16], out: &mut [i32]) {
        check_nibble_shapes(nibbles, query, out);
        // SAFETY: handed out only when AVX-512BW and AVX-512VL were detected.
        unsafe { dot_nibble_rows_avx512_body(nibbles, query, out) }
    }

    #[target_feature(enable = "avx512bw,avx512vl")]
    fn dot_nibble_rows_avx512_body(nibbles: &[u8], query: &[i16], out: &mut [i32]) {
        let row_bytes = query.len() / 2;
        let rows = out.len();
        let whole_quads = rows - rows % 4;
        for (quad_index, quad) in out[..whole_quads].chunks_exact_mut(4).enumerate() {
            let first = 4 * quad_index;
            let sums = [0, 1, 2, 3].map(|i| nibble_row_avx512(nibbles, query, first + i));
            quad.copy_from_slice(&reduce_4x512(sums));
        }
        for (r, sum) in out.iter_mut().enumerate().skip(whole_quads) {
            *sum = _mm512_reduce_add_epi32(nibble_row_avx512(nibbles, query, r));
        }
        debug_assert_eq!(row_bytes * out.len(), nibbles.len());
    }

    /// Row `r`'s products summed into 16 `i32` lanes.
    #[target_feature(enable = "avx512bw,avx512vl")]
    #[inline]
    fn nibble_row_avx512(nibbles: &[u8], query: &[i16], r: usize) -> __m512i {
        let row_bytes = query.len() / 2;
        let q = query.as_ptr();
        let low_nibbles: __m256i = _mm256_set1_epi8(0x0F);
        // SAFETY: `check_nibble_shapes` proved row `r`'s `row_bytes` bytes lie inside
        // `nibbles` (the callers pass `r < out.len()`); group `g` reads bytes `32g..32g + 32`
        // of the row and query values `64g..64g + 64`, all below `row_bytes` and
        // `query.len()`.
        unsafe {
            let row = nibbles.as_ptr().add(r * row_bytes);
            prefetch_ahead(row, row_bytes);
            let (mut acc0, mut acc1) = (_mm512_setzero_si512(), _mm512_setzero_si512());
            for g in 0..row_bytes / 32 {
                let bytes = _mm256_loadu_si256(row.add(32 * g).cast());
                let low = _mm256_and_si256(bytes, low_nibbles);
                let high = _mm256_and_si256(_mm256_srli_epi16::<4>(bytes), low_nibbles);
                let q_low = _mm512_loadu_si512(q.add(64 * g).cast());
                let q_high = _mm512_loadu_si512(q.add(64 * g + 32).cast());
                acc0 = _mm512_add_epi32(acc0, _mm512_madd_epi16(_mm512_cvtepu8_epi16(low), q_low));
                acc1 =
                    _mm512_add_epi32(acc1, _mm512_madd_epi16(_mm512_cvtepu8_epi16(high), q_high));
            }
            _mm512_add_epi32(acc0, acc1)
        }
    }

    /// The lane sums of four vectors at once: about 4 operations a row instead of the 9 of a
    /// reduction per row (which took about half the kernel's time).
    #[target_feature(enable = "avx512f")]
    #[inline]
    fn reduce_4x512([a, b, c, d]: [__m512i; 4]) -> [i32; 4] {
        // 128-bit quarters: [a0+a2, a1+a3, b0+b2, b1+b3] and the same of c, d.
        let ab = _mm512_add_epi32(
            _mm512_shuffle_i64x2::<0x44>(a, b),
            _mm512_shuffle_i64x2::<0xEE>(a, b),
        );
        let cd = _mm512_add_epi32(
            _mm512_shuffle_i64x2::<0x44>(c, d),
            _mm512_shuffle_i64x2::<0xEE>(c, d),
        );
        // One quarter per vector: [a, b, c, d], four partial sums each.
        let quarters = _mm512_add_epi32(
            _mm512_shuffle_i64x2::<0x88>(ab, cd),
            _mm512_shuffle_i64x2::<0xDD>(ab, cd),
        );
        let pairs = _mm512_add_epi32(quarters, _mm512_shuffle_epi32::<0x4E>(quarters));
        let totals = _mm512_add_epi32(pairs, _mm512_shuffle_epi32::<0xB1>(pairs));
        let mut lanes = [0i32; 16];
        // SAFETY: `lanes` holds 16 i32 (64 bytes), the store's width.
        unsafe { _mm512_storeu_si512(lanes.as_mut_ptr().cast(), totals) };
        [lanes[0], lanes[4], lanes[8], lanes[12]]
    }

    pub fn dot_nibble_rows_avx2(nibbles: &[u8], query: &[i16], out: &mut [i32]) {
        check_nibble_shapes(nibbles, query, out);
        // SAFETY: handed out only when AVX2 was detected.
        unsafe { dot_nibble_rows_avx2_body(nibbles, query, out) }
    }

    #[target_feature(enable = "avx2")]
    fn dot_nibble_rows_avx2_body(nibbles: &[u8], query: &[i16], out: &mut [i32]) {
        let row_bytes = query.len() / 2;
        let q = query.as_ptr();
        let low_nibbles: __m128i = _mm_set1_epi8(0x0F);
        for (r, sum) in out.iter_mut().enumerate() {
            // SAFETY: as in the AVX-512 kernel, in halves of 16 bytes (values `64g + 16h ..
            // + 16` and `64g + 32 + 16h .. + 16`).
            unsafe {
                let row = nibbles.as_ptr().add(r * row_bytes);
                prefetch_ahead(row, row_bytes);
                let (mut acc0, mut acc1) = (_mm256_setzero_si256(), _mm256_setzero_si256());
                for g in 0..row_bytes / 32 {
                    for h in 0..2 {
                        let bytes = _mm_loadu_si128(row.add(32 * g + 16 * h).cast());
                        let low = _mm_and_si128(bytes, low_nibbles);
                        let high = _mm_and_si128(_mm_srli_epi16::<4>(bytes), low_nibbles);
                        let q_low = _mm256_loadu_si256(q.add(64 * g + 16 * h).cast());
                        let q_high = _mm256_loadu_si256(q.add(64 * g + 32 + 16 * h).cast());
                        acc0 = _mm256_add_epi32(
                            acc0,
                            _mm256_madd_epi16(_mm256_cvtepu8_epi16(low), q_low),
                        );
                        acc1 = _mm256_add_epi32(
                            acc1,
                            _mm256_madd_epi16(_mm256_cvtepu8_epi16(high), q_high),
                        );
                    }
                }
                *sum = reduce_256(_mm256_add_epi32(acc0, acc1));
            }
        }
    }

    use super::{check_nibble_shapes, check_shapes, PREFETCH_BYTES};

    /// Asks for the cache lines [`PREFETCH_BYTES`] past `row`'s `len` bytes (a hint: an
    /// address past the block is never read). Only for a run of rows: a call for one row
    /// (the int8 stage's, rows far apart) would fetch lines nobody reads.
    #[inline(always)]
    fn prefetch_ahead<T>(row: *const T, len: usize) {
        let ahead = row.cast::<u8>().wrapping_add(PREFETCH_BYTES);
        for offset in (0..len).step_by(64) {
            // SAFETY: a prefetch is a hint that does not fault, whatever the address.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(ahead.wrapping_add(offset).cast()) };
        }
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
                    prefetch_ahead(row, dim);
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
                    prefetch_ahead(row, dim);
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
                reduce_256(_mm256_add_epi32(acc0, acc1))
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

    fn nibble_case() -> impl Strategy<Value = (Vec<i16>, Vec<i8>, usize)> {
        (1usize..200, 0usize..9).prop_flat_map(|(dim, rows)| {
            let limit = query_code_max(dim).unwrap();
            (
                proptest::collection::vec(-limit..=limit, dim),
                proptest::collection::vec(-NIBBLE_CODE_MAX..=NIBBLE_CODE_MAX, dim * rows),
                Just(rows),
            )
        })
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

        /// Packed 4-bit codes: every nibble kernel, less the zero's share, equals the scalar
        /// sum of the codes (padding included, odd lengths included).
        #[test]
        fn every_nibble_kernel_equals_the_scalar_sum((query, codes, rows) in nibble_case()) {
            let dim = query.len();
            let row_bytes = nibble_row_bytes(dim);
            let mut packed = vec![0u8; rows * row_bytes];
            for (row, out) in codes.chunks_exact(dim).zip(packed.chunks_exact_mut(row_bytes)) {
                pack_nibbles(row, out);
            }
            let mut padded = query.clone();
            padded.resize(2 * row_bytes, 0);
            let zero_share = i32::from(NIBBLE_ZERO) * query.iter().map(|&q| i32::from(q)).sum::<i32>();
            let expected: Vec<i64> = codes
                .chunks_exact(dim)
                .map(|row| row.iter().zip(&query).map(|(&c, &q)| i64::from(c) * i64::from(q)).sum())
                .collect();
            for kernel in dot_nibble_rows_kernels() {
                let mut out = vec![0i32; rows];
                kernel(&packed, &padded, &mut out);
                let sums: Vec<i64> = out.iter().map(|&s| i64::from(s - zero_share)).collect();
                prop_assert_eq!(&sums, &expected);
            }
        }
    }
}

//! The copy's 4-bit codes laid out for vertical sums: blocks of [`BLOCK_ROWS`] rows, each
//! block a run of 64-byte groups, one per 8 values, in which row `j` owns bytes `4j..4j + 4`
//! and byte `k` of them holds value `8g + k` in its low nibble and value `8g + 4 + k` in its
//! high one. A nibble is the code (-7..=7) plus [`NIBBLE_ZERO`]; padding (values past the row,
//! rows past the block's end) holds code 0.
//!
//! So one 64-byte load holds four values of each of 16 rows, and a dot product instruction
//! that multiplies four bytes by four bytes and adds them to a 32-bit lane (`vpdpbusd`, or
//! `vpmaddubsw` then `vpmaddwd`) sums the same four values of every row into that row's lane:
//! the 16 rows' sums come out in the 16 lanes with no horizontal reduction.
//!
//! The query's `i16` codes `d` are split as `d = 256·hi + lo` with `hi` and `lo` signed bytes
//! ([`QUERY_CODE_LIMIT`] keeps `hi` in range), since the instructions multiply unsigned bytes
//! (the nibbles) by signed bytes. A kernel returns per row the two sums `Σ n·hi` and `Σ n·lo`;
//! the caller combines them as `256·hi_sum + lo_sum - NIBBLE_ZERO·Σ d` (in f64: exact).
//! Each sum's lanes stay within `i32` for rows of up to [`DIM_MAX`] values (`15 · 128` per
//! value at most).

/// Rows per block: one 32-bit lane each in a 512-bit register.
pub const BLOCK_ROWS: usize = 16;
/// Values per group; a group is `4 · BLOCK_ROWS` = 64 bytes.
const GROUP_VALUES: usize = 8;
const GROUP_BYTES: usize = 4 * BLOCK_ROWS;
/// The 4-bit codes lie in `-CODE_MAX..=CODE_MAX`; a nibble holds the code plus `NIBBLE_ZERO`.
pub const CODE_MAX: i8 = 7;
pub const NIBBLE_ZERO: i8 = 8;
/// The byte of two zero codes.
const ZERO_BYTE: u8 = (NIBBLE_ZERO as u8) * 0x11;
/// The largest query code the split into signed bytes allows (`hi <= 127`).
pub const QUERY_CODE_LIMIT: i16 = 32_512;
/// The longest rows whose lane sums cannot overflow an `i32` (`15 · 128 · DIM_MAX < 2^31`).
pub const DIM_MAX: usize = 1 << 20;

/// The groups of a `dim`-value row.
pub fn groups(dim: usize) -> usize {
    dim.div_ceil(GROUP_VALUES)
}

/// Bytes of one block of `dim`-value rows.
pub fn block_bytes(dim: usize) -> usize {
    groups(dim) * GROUP_BYTES
}

/// Bytes of the blocks that hold `rows` rows of `dim` values, every code zero.
pub fn zeroed(rows: usize, dim: usize) -> Vec<u8> {
    vec![ZERO_BYTE; rows.div_ceil(BLOCK_ROWS) * block_bytes(dim)]
}

/// Writes one row's codes (`-CODE_MAX..=CODE_MAX`) as row `lane` of `block`.
pub fn put_row(block: &mut [u8], lane: usize, codes: &[i8]) {
    assert_eq!(block.len(), block_bytes(codes.len()), "one whole block");
    assert!(lane < BLOCK_ROWS);
    assert!(codes.iter().all(|c| c.abs() <= CODE_MAX), "4-bit codes");
    let nibble = |i: usize| {
        codes
            .get(i)
            .map_or(NIBBLE_ZERO as u8, |&c| (c + NIBBLE_ZERO) as u8)
    };
    for (g, group) in block.chunks_exact_mut(GROUP_BYTES).enumerate() {
        for (k, byte) in group[4 * lane..4 * lane + 4].iter_mut().enumerate() {
            let low = GROUP_VALUES * g + k;
            *byte = nibble(low) | (nibble(low + 4) << 4);
        }
    }
}

/// A query's codes split for the kernels: per group `[hi of values 0-3, lo of values 0-3, hi
/// of values 4-7, lo of values 4-7]`, each four signed bytes in a little-endian `i32`.
#[derive(Clone, Debug)]
pub struct SplitQuery {
    pub words: Vec<[i32; 4]>,
    /// `NIBBLE_ZERO · Σ d`: what a kernel's combined sum holds beyond the codes' sum.
    pub zero_share: i64,
}

impl SplitQuery {
    pub fn of(codes: &[i16]) -> SplitQuery {
        assert!(
            codes.iter().all(|d| d.abs() <= QUERY_CODE_LIMIT),
            "query codes in range"
        );
        let split = |i: usize| {
            let d = i32::from(codes.get(i).copied().unwrap_or(0));
            let lo = ((d + 128) & 0xFF) - 128;
            let hi = (d - lo) / 256;
            debug_assert!((-128..=127).contains(&hi) && 256 * hi + lo == d);
            (hi as i8 as u8, lo as i8 as u8)
        };
        let word = |first: usize, high: bool| {
            let bytes = [0, 1, 2, 3].map(|k| {
                let (hi, lo) = split(first + k);
                if high {
                    hi
                } else {
                    lo
                }
            });
            i32::from_le_bytes(bytes)
        };
        let words = (0..groups(codes.len()))
            .map(|g| {
                let first = GROUP_VALUES * g;
                [
                    word(first, true),
                    word(first, false),
                    word(first + 4, true),
                    word(first + 4, false),
                ]
            })
            .collect();
        let sum: i64 = codes.iter().map(|&d| i64::from(d)).sum();
        SplitQuery {
            words,
            zero_share: i64::from(NIBBLE_ZERO) * sum,
        }
    }
}

/// A row's codes' dot product from a kernel's two sums, `256·hi + lo - zero_share`
/// ([`SplitQuery::zero_share`] as f64): exact in f64. Every bound of the 4-bit stage takes it
/// from here, so that they compute it alike.
#[inline(always)]
pub fn codes_dot(hi: i32, lo: i32, zero_share: f64) -> f64 {
    256.0 * f64::from(hi) + f64::from(lo) - zero_share
}

/// For each block of `blocks` (whole blocks of `query.words.len()` groups), the rows' sums
/// `Σ n·hi` into `hi` and `Σ n·lo` into `lo` (`BLOCK_ROWS` per block).
pub type DotBlocks = fn(blocks: &[u8], query: &SplitQuery, hi: &mut [i32], lo: &mut [i32]);

/// The widest kernel this CPU runs.
pub fn dot_blocks_kernel() -> DotBlocks {
    dot_blocks_kernels()[0]
}

/// Every kernel this CPU runs, widest first (the portable one last; the tests compare them
/// all).
// Other targets list only the portable kernel: the pushes are behind `cfg`s.
#[cfg_attr(not(target_arch = "x86_64"), allow(clippy::vec_init_then_push))]
pub fn dot_blocks_kernels() -> Vec<DotBlocks> {
    let mut kernels: Vec<DotBlocks> = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512vnni")
            && std::arch::is_x86_feature_detected!("avx512bw")
        {
            kernels.push(x86::dot_blocks_avx512vnni);
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            kernels.push(x86::dot_blocks_avx2);
        }
    }
    kernels.push(dot_blocks_portable);
    kernels
}

fn check_shapes(blocks: &[u8], query: &SplitQuery, hi: &[i32], lo: &[i32]) -> usize {
    let block = query.words.len() * GROUP_BYTES;
    assert!(
        block > 0 && blocks.len().is_multiple_of(block),
        "whole blocks"
    );
    let count = blocks.len() / block;
    assert!(
        hi.len() == count * BLOCK_ROWS && lo.len() == hi.len(),
        "a sum per row"
    );
    count
}

/// The reference kernel.
pub fn dot_blocks_portable(blocks: &[u8], query: &SplitQuery, hi: &mut [i32], lo: &mut [i32]) {
    check_shapes(blocks, query, hi, lo);
    let block_len = query.words.len() * GROUP_BYTES;
    let rows = hi
        .chunks_exact_mut(BLOCK_ROWS)
        .zip(lo.chunks_exact_mut(BLOCK_ROWS));
    for (block, (hi, lo)) in blocks.chunks_exact(block_len).zip(rows) {
        for lane in 0..BLOCK_ROWS {
            let (mut sum_hi, mut sum_lo) = (0i32, 0i32);
            for (group, words) in block.chunks_exact(GROUP_BYTES).zip(&query.words) {
                let [hi_low, lo_low, hi_high, lo_high] = words.map(i32::to_le_bytes);
                for (k, &byte) in group[4 * lane..4 * lane + 4].iter().enumerate() {
                    let (low, high) = (i32::from(byte & 0x0F), i32::from(byte >> 4));
                    sum_hi += low * i32::from(hi_low[k] as i8) + high * i32::from(hi_high[k] as i8);
                    sum_lo += low * i32::from(lo_low[k] as i8) + high * i32::from(lo_high[k] as i8);
                }
            }
            hi[lane] = sum_hi;
            lo[lane] = sum_lo;
        }
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! The x86-64 kernels; each is listed by [`super::dot_blocks_kernels`] only after the
    //! features it is compiled for were detected.

    use std::arch::x86_64::{
        __m256i, __m512i, _mm256_add_epi32, _mm256_and_si256, _mm256_loadu_si256,
        _mm256_madd_epi16, _mm256_maddubs_epi16, _mm256_set1_epi16, _mm256_set1_epi32,
        _mm256_set1_epi8, _mm256_setzero_si256, _mm256_srli_epi16, _mm256_storeu_si256,
        _mm512_add_epi32, _mm512_and_si512, _mm512_dpbusd_epi32, _mm512_loadu_si512,
        _mm512_set1_epi32, _mm512_set1_epi8, _mm512_setzero_si512, _mm512_srli_epi16,
        _mm512_storeu_si512,
    };

    use super::{check_shapes, SplitQuery, BLOCK_ROWS, GROUP_BYTES};
    use crate::prefetch;

    pub fn dot_blocks_avx512vnni(
        blocks: &[u8],
        query: &SplitQuery,
        hi: &mut [i32],
        lo: &mut [i32],
    ) {
        check_shapes(blocks, query, hi, lo);
        // SAFETY: handed out only when AVX-512 VNNI and AVX-512BW were detected.
        unsafe { dot_blocks_avx512vnni_body(blocks, query, hi, lo) }
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    fn dot_blocks_avx512vnni_body(
        blocks: &[u8],
        query: &SplitQuery,
        hi: &mut [i32],
        lo: &mut [i32],
    ) {
        let groups = query.words.len();
        let block_len = groups * GROUP_BYTES;
        let low_nibbles: __m512i = _mm512_set1_epi8(0x0F);
        for (b, (hi, lo)) in hi
            .chunks_exact_mut(BLOCK_ROWS)
            .zip(lo.chunks_exact_mut(BLOCK_ROWS))
            .enumerate()
        {
            // SAFETY: `check_shapes` proved block `b` lies inside `blocks`; group `g` reads
            // its 64 bytes at `g · 64 < block_len`; the stores write 16 i32 into the 16-row
            // chunks of `hi` and `lo`.
            unsafe {
                let block = blocks.as_ptr().add(b * block_len);
                prefetch::scan_ahead(&blocks[b * block_len..(b + 1) * block_len]);
                let (mut hi_low, mut lo_low) = (_mm512_setzero_si512(), _mm512_setzero_si512());
                let (mut hi_high, mut lo_high) = (_mm512_setzero_si512(), _mm512_setzero_si512());
                for (g, words) in query.words.iter().enumerate() {
                    let bytes = _mm512_loadu_si512(block.add(g * GROUP_BYTES).cast());
                    let low = _mm512_and_si512(bytes, low_nibbles);
                    let high = _mm512_and_si512(_mm512_srli_epi16::<4>(bytes), low_nibbles);
                    hi_low = _mm512_dpbusd_epi32(hi_low, low, _mm512_set1_epi32(words[0]));
                    lo_low = _mm512_dpbusd_epi32(lo_low, low, _mm512_set1_epi32(words[1]));
                    hi_high = _mm512_dpbusd_epi32(hi_high, high, _mm512_set1_epi32(words[2]));
                    lo_high = _mm512_dpbusd_epi32(lo_high, high, _mm512_set1_epi32(words[3]));
                }
                _mm512_storeu_si512(hi.as_mut_ptr().cast(), _mm512_add_epi32(hi_low, hi_high));
                _mm512_storeu_si512(lo.as_mut_ptr().cast(), _mm512_add_epi32(lo_low, lo_high));
            }
        }
    }

    pub fn dot_blocks_avx2(blocks: &[u8], query: &SplitQuery, hi: &mut [i32], lo: &mut [i32]) {
        check_shapes(blocks, query, hi, lo);
        // SAFETY: handed out only when AVX2 was detected.
        unsafe { dot_blocks_avx2_body(blocks, query, hi, lo) }
    }

    /// Four bytes times four signed bytes, summed into each 32-bit lane: `vpmaddubsw` (pairs
    /// into 16 bits: at most 2 · 15 · 128, no saturation) then `vpmaddwd` by ones.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn dot4(bytes: __m256i, word: i32, ones: __m256i) -> __m256i {
        _mm256_madd_epi16(_mm256_maddubs_epi16(bytes, _mm256_set1_epi32(word)), ones)
    }

    #[target_feature(enable = "avx2")]
    fn dot_blocks_avx2_body(blocks: &[u8], query: &SplitQuery, hi: &mut [i32], lo: &mut [i32]) {
        let groups = query.words.len();
        let block_len = groups * GROUP_BYTES;
        let low_nibbles: __m256i = _mm256_set1_epi8(0x0F);
        let ones: __m256i = _mm256_set1_epi16(1);
        let half_rows = BLOCK_ROWS / 2;
        for (b, (hi, lo)) in hi
            .chunks_exact_mut(BLOCK_ROWS)
            .zip(lo.chunks_exact_mut(BLOCK_ROWS))
            .enumerate()
        {
            // SAFETY: as in the AVX-512 kernel, each group read in two 32-byte halves (rows
            // 0-7 and 8-15), each half's sums stored as 8 i32.
            unsafe {
                let block = blocks.as_ptr().add(b * block_len);
                prefetch::scan_ahead(&blocks[b * block_len..(b + 1) * block_len]);
                for half in 0..2 {
                    let (mut sum_hi, mut sum_lo) = (_mm256_setzero_si256(), _mm256_setzero_si256());
                    for (g, words) in query.words.iter().enumerate() {
                        let at = block.add(g * GROUP_BYTES + 32 * half);
                        let bytes = _mm256_loadu_si256(at.cast());
                        let low = _mm256_and_si256(bytes, low_nibbles);
                        let high = _mm256_and_si256(_mm256_srli_epi16::<4>(bytes), low_nibbles);
                        sum_hi = _mm256_add_epi32(sum_hi, dot4(low, words[0], ones));
                        sum_lo = _mm256_add_epi32(sum_lo, dot4(low, words[1], ones));
                        sum_hi = _mm256_add_epi32(sum_hi, dot4(high, words[2], ones));
                        sum_lo = _mm256_add_epi32(sum_lo, dot4(high, words[3], ones));
                    }
                    let rows = half * half_rows;
                    _mm256_storeu_si256(hi.as_mut_ptr().add(rows).cast(), sum_hi);
                    _mm256_storeu_si256(lo.as_mut_ptr().add(rows).cast(), sum_lo);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The rows' exact sums `Σ c·d` from the kernels' two sums.
    fn combined(hi: &[i32], lo: &[i32], query: &SplitQuery) -> Vec<i64> {
        hi.iter()
            .zip(lo)
            .map(|(&h, &l)| 256 * i64::from(h) + i64::from(l) - query.zero_share)
            .collect()
    }

    fn case() -> impl Strategy<Value = (Vec<i16>, Vec<i8>, usize)> {
        (1usize..140, 0usize..40).prop_flat_map(|(dim, rows)| {
            (
                proptest::collection::vec(-QUERY_CODE_LIMIT..=QUERY_CODE_LIMIT, dim),
                proptest::collection::vec(-CODE_MAX..=CODE_MAX, dim * rows),
                Just(rows),
            )
        })
    }

    fn blocks_of(codes: &[i8], dim: usize, rows: usize) -> Vec<u8> {
        let mut blocks = zeroed(rows, dim);
        for (row, values) in codes.chunks_exact(dim).enumerate() {
            let block = row / BLOCK_ROWS;
            let bytes = &mut blocks[block * block_bytes(dim)..(block + 1) * block_bytes(dim)];
            put_row(bytes, row % BLOCK_ROWS, values);
        }
        blocks
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Every kernel's combined sums equal the scalar sums of the codes, for every length
        /// (padded groups) and row count (padded blocks, whose rows sum to zero codes).
        #[test]
        fn every_kernel_equals_the_scalar_sum((query, codes, rows) in case()) {
            let dim = query.len();
            let blocks = blocks_of(&codes, dim, rows);
            let split = SplitQuery::of(&query);
            let padded_rows = rows.div_ceil(BLOCK_ROWS) * BLOCK_ROWS;
            let mut expected: Vec<i64> = codes
                .chunks_exact(dim)
                .map(|row| row.iter().zip(&query).map(|(&c, &d)| i64::from(c) * i64::from(d)).sum())
                .collect();
            expected.resize(padded_rows, 0);
            for kernel in dot_blocks_kernels() {
                let (mut hi, mut lo) = (vec![0i32; padded_rows], vec![0i32; padded_rows]);
                kernel(&blocks, &split, &mut hi, &mut lo);
                prop_assert_eq!(&combined(&hi, &lo, &split), &expected);
            }
        }
    }

    /// The extreme codes (every product at its largest, both signs) come back exact.
    #[test]
    fn extreme_codes_give_exact_sums() {
        for dim in [1usize, 7, 8, 9, 64, 129, 1000] {
            for (sign, code) in [(1i16, CODE_MAX), (-1, CODE_MAX), (1, -CODE_MAX)] {
                let query = vec![QUERY_CODE_LIMIT * sign; dim];
                let codes = vec![code; dim * 17];
                let blocks = blocks_of(&codes, dim, 17);
                let split = SplitQuery::of(&query);
                let expected =
                    i64::from(QUERY_CODE_LIMIT) * i64::from(sign) * i64::from(code) * dim as i64;
                for kernel in dot_blocks_kernels() {
                    let (mut hi, mut lo) = (vec![0i32; 32], vec![0i32; 32]);
                    kernel(&blocks, &split, &mut hi, &mut lo);
                    let sums = combined(&hi, &lo, &split);
                    assert!(sums[..17].iter().all(|&s| s == expected), "{dim}: {sums:?}");
                    assert!(sums[17..].iter().all(|&s| s == 0), "padding rows: {sums:?}");
                }
            }
        }
    }

    #[test]
    fn the_split_recombines_every_code() {
        for d in -QUERY_CODE_LIMIT..=QUERY_CODE_LIMIT {
            let split = SplitQuery::of(&[d]);
            let [hi, lo, _, _] = split.words[0].map(|w| i32::from(w.to_le_bytes()[0] as i8));
            assert_eq!(256 * hi + lo, i32::from(d));
        }
    }
}

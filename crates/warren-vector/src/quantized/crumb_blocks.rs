//! The copy's 2-bit codes laid out for vertical sums, the first and coarsest stage of the
//! filter: blocks of [`BLOCK_ROWS`] rows, each block a run of 64-byte groups, one per 16
//! values, in which row `j` owns bytes `4j..4j + 4` and bits `2p..2p + 2` of byte `k` of them
//! hold value `16g + 4p + k`. A 2-bit field (a crumb) `m` stands for the odd code
//! `c = 2m - 3` (-3, -1, 1 or 3). Padding holds crumb 0: past a row's values the query's zero
//! codes cancel it; the sums of rows past the block's end mean nothing and are not read.
//!
//! So one 64-byte load holds sixteen values of each of 16 rows: four shifts and masks give four
//! registers of four values per row, and a dot product instruction that multiplies four bytes
//! by four signed bytes and adds them to a 32-bit lane (`vpdpbusd`, or `vpmaddubsw` then
//! `vpmaddwd`) sums them into the row's lane, with no horizontal reduction (as
//! [`super::nibble_blocks`], at half the bytes).
//!
//! The query comes as signed byte codes `d` (its own coarse quantization; the bound adds its
//! error). A kernel returns per row `Σ m·d`; the codes' dot product is
//! `Σ c·d = 2·Σ m·d - 3·Σ d` ([`CrumbQuery::offset_share`] is `3·Σ d`). A lane's sum stays within `i32` for rows of up to
//! [`DIM_MAX`] values (`3 · 128` per value at most).

/// Rows per block: one 32-bit lane each in a 512-bit register.
pub const BLOCK_ROWS: usize = 16;
/// Values per group; a group is `4 · BLOCK_ROWS` = 64 bytes.
const GROUP_VALUES: usize = 16;
const GROUP_BYTES: usize = 4 * BLOCK_ROWS;
/// The largest code's magnitude; codes are the odd numbers in `-CODE_MAX..=CODE_MAX`.
pub const CODE_MAX: i8 = 3;
/// The largest query code's magnitude (a signed byte, symmetric).
pub const QUERY_CODE_MAX: i8 = 127;
/// The longest rows whose lane sums cannot overflow an `i32` (`3 · 128 · DIM_MAX < 2^31`).
pub const DIM_MAX: usize = 1 << 20;

/// The groups of a `dim`-value row.
pub fn groups(dim: usize) -> usize {
    dim.div_ceil(GROUP_VALUES)
}

/// Bytes of one block of `dim`-value rows.
pub fn block_bytes(dim: usize) -> usize {
    groups(dim) * GROUP_BYTES
}

/// Bytes of the blocks that hold `rows` rows of `dim` values, every crumb 0.
pub fn zeroed(rows: usize, dim: usize) -> Vec<u8> {
    vec![0; rows.div_ceil(BLOCK_ROWS) * block_bytes(dim)]
}

/// Writes one row's odd codes (`-CODE_MAX..=CODE_MAX`) as row `lane` of `block`.
pub fn put_row(block: &mut [u8], lane: usize, codes: &[i8]) {
    assert_eq!(block.len(), block_bytes(codes.len()), "one whole block");
    assert!(lane < BLOCK_ROWS);
    assert!(
        codes.iter().all(|&c| c.abs() <= CODE_MAX && c % 2 != 0),
        "odd 2-bit codes"
    );
    let crumb = |i: usize| codes.get(i).map_or(0, |&c| ((c + CODE_MAX) / 2) as u8);
    for (g, group) in block.chunks_exact_mut(GROUP_BYTES).enumerate() {
        for (k, byte) in group[4 * lane..4 * lane + 4].iter_mut().enumerate() {
            *byte = (0..4).fold(0u8, |byte, p| {
                byte | (crumb(GROUP_VALUES * g + 4 * p + k) << (2 * p))
            });
        }
    }
}

/// A query's byte codes laid out for the kernels: per group, for each of the four crumb
/// positions `p`, the codes of values `16g + 4p .. 16g + 4p + 4` as four signed bytes in a
/// little-endian `i32`.
#[derive(Clone, Debug)]
pub struct CrumbQuery {
    pub words: Vec<[i32; 4]>,
    /// `3 · Σ d`: what the doubled kernel sum holds beyond the codes' sum.
    pub offset_share: i64,
}

impl CrumbQuery {
    pub fn of(codes: &[i8]) -> CrumbQuery {
        assert!(
            codes.iter().all(|&d| d >= -QUERY_CODE_MAX),
            "symmetric query codes"
        );
        let code = |i: usize| codes.get(i).copied().unwrap_or(0) as u8;
        let words = (0..groups(codes.len()))
            .map(|g| {
                [0, 1, 2, 3].map(|p| {
                    let first = GROUP_VALUES * g + 4 * p;
                    i32::from_le_bytes([0, 1, 2, 3].map(|k| code(first + k)))
                })
            })
            .collect();
        let sum: i64 = codes.iter().map(|&d| i64::from(d)).sum();
        CrumbQuery {
            words,
            offset_share: i64::from(CODE_MAX) * sum,
        }
    }
}

/// For each block of `blocks` (whole blocks of `query.words.len()` groups), the rows' sums
/// `Σ m·d` into `sums` (`BLOCK_ROWS` per block) and the largest of them, padding rows
/// included, into `largest` (one per block).
pub type DotBlocks = fn(blocks: &[u8], query: &CrumbQuery, sums: &mut [i32], largest: &mut [i32]);

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

fn check_shapes(blocks: &[u8], query: &CrumbQuery, sums: &[i32], largest: &[i32]) {
    let block = query.words.len() * GROUP_BYTES;
    assert!(
        block > 0 && blocks.len().is_multiple_of(block),
        "whole blocks"
    );
    assert_eq!(
        sums.len(),
        blocks.len() / block * BLOCK_ROWS,
        "a sum per row"
    );
    assert_eq!(
        largest.len(),
        blocks.len() / block,
        "a largest sum per block"
    );
}

/// The reference kernel.
pub fn dot_blocks_portable(
    blocks: &[u8],
    query: &CrumbQuery,
    sums: &mut [i32],
    largest: &mut [i32],
) {
    check_shapes(blocks, query, sums, largest);
    let block_len = query.words.len() * GROUP_BYTES;
    for (block, sums) in blocks
        .chunks_exact(block_len)
        .zip(sums.chunks_exact_mut(BLOCK_ROWS))
    {
        for (lane, sum) in sums.iter_mut().enumerate() {
            *sum = 0;
            for (group, words) in block.chunks_exact(GROUP_BYTES).zip(&query.words) {
                for (k, &byte) in group[4 * lane..4 * lane + 4].iter().enumerate() {
                    for (p, word) in words.iter().enumerate() {
                        let crumb = i32::from((byte >> (2 * p)) & 3);
                        *sum += crumb * i32::from(word.to_le_bytes()[k] as i8);
                    }
                }
            }
        }
    }
    for (largest, sums) in largest.iter_mut().zip(sums.chunks_exact(BLOCK_ROWS)) {
        *largest = sums.iter().copied().max().expect("a block has rows");
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
    use std::arch::x86_64::{
        _mm256_castsi256_si128, _mm256_extracti128_si256, _mm256_max_epi32,
        _mm512_reduce_max_epi32, _mm_cvtsi128_si32, _mm_max_epi32, _mm_shuffle_epi32,
    };

    use super::{check_shapes, CrumbQuery, BLOCK_ROWS, GROUP_BYTES};
    use crate::prefetch;

    pub fn dot_blocks_avx512vnni(
        blocks: &[u8],
        query: &CrumbQuery,
        sums: &mut [i32],
        largest: &mut [i32],
    ) {
        check_shapes(blocks, query, sums, largest);
        // SAFETY: handed out only when AVX-512 VNNI and AVX-512BW were detected.
        unsafe { dot_blocks_avx512vnni_body(blocks, query, sums, largest) }
    }

    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    fn dot_blocks_avx512vnni_body(
        blocks: &[u8],
        query: &CrumbQuery,
        sums: &mut [i32],
        largest: &mut [i32],
    ) {
        let block_len = query.words.len() * GROUP_BYTES;
        let crumbs: __m512i = _mm512_set1_epi8(3);
        let blocks_out = sums.chunks_exact_mut(BLOCK_ROWS).zip(largest.iter_mut());
        for (b, (sums, largest)) in blocks_out.enumerate() {
            // SAFETY: `check_shapes` proved block `b` lies inside `blocks`; group `g` reads
            // its 64 bytes at `g · 64 < block_len`; the store writes 16 i32 into the 16-row
            // chunk of `sums`.
            unsafe {
                let block = blocks.as_ptr().add(b * block_len);
                prefetch::scan_ahead(&blocks[b * block_len..(b + 1) * block_len]);
                // A sum per crumb position, so that the `vpdpbusd` of a group do not wait on
                // one another.
                let mut sum = [_mm512_setzero_si512(); 4];
                for (g, words) in query.words.iter().enumerate() {
                    let bytes = _mm512_loadu_si512(block.add(g * GROUP_BYTES).cast());
                    let c0 = _mm512_and_si512(bytes, crumbs);
                    let c1 = _mm512_and_si512(_mm512_srli_epi16::<2>(bytes), crumbs);
                    let c2 = _mm512_and_si512(_mm512_srli_epi16::<4>(bytes), crumbs);
                    let c3 = _mm512_and_si512(_mm512_srli_epi16::<6>(bytes), crumbs);
                    sum[0] = _mm512_dpbusd_epi32(sum[0], c0, _mm512_set1_epi32(words[0]));
                    sum[1] = _mm512_dpbusd_epi32(sum[1], c1, _mm512_set1_epi32(words[1]));
                    sum[2] = _mm512_dpbusd_epi32(sum[2], c2, _mm512_set1_epi32(words[2]));
                    sum[3] = _mm512_dpbusd_epi32(sum[3], c3, _mm512_set1_epi32(words[3]));
                }
                let total = _mm512_add_epi32(
                    _mm512_add_epi32(sum[0], sum[1]),
                    _mm512_add_epi32(sum[2], sum[3]),
                );
                _mm512_storeu_si512(sums.as_mut_ptr().cast(), total);
                *largest = _mm512_reduce_max_epi32(total);
            }
        }
    }

    pub fn dot_blocks_avx2(
        blocks: &[u8],
        query: &CrumbQuery,
        sums: &mut [i32],
        largest: &mut [i32],
    ) {
        check_shapes(blocks, query, sums, largest);
        // SAFETY: handed out only when AVX2 was detected.
        unsafe { dot_blocks_avx2_body(blocks, query, sums, largest) }
    }

    /// The largest of eight lanes.
    #[target_feature(enable = "avx2")]
    fn max_lane(values: __m256i) -> i32 {
        let half = _mm_max_epi32(
            _mm256_castsi256_si128(values),
            _mm256_extracti128_si256::<1>(values),
        );
        let quarter = _mm_max_epi32(half, _mm_shuffle_epi32::<0b01_00_11_10>(half));
        _mm_cvtsi128_si32(_mm_max_epi32(
            quarter,
            _mm_shuffle_epi32::<0b10_11_00_01>(quarter),
        ))
    }

    /// Four bytes times four signed bytes, summed into each 32-bit lane: `vpmaddubsw` (pairs
    /// into 16 bits: at most 2 · 3 · 128, no saturation) then `vpmaddwd` by ones.
    #[target_feature(enable = "avx2")]
    #[inline]
    fn dot4(bytes: __m256i, word: i32, ones: __m256i) -> __m256i {
        _mm256_madd_epi16(_mm256_maddubs_epi16(bytes, _mm256_set1_epi32(word)), ones)
    }

    #[target_feature(enable = "avx2")]
    fn dot_blocks_avx2_body(
        blocks: &[u8],
        query: &CrumbQuery,
        sums: &mut [i32],
        largest: &mut [i32],
    ) {
        let block_len = query.words.len() * GROUP_BYTES;
        let crumbs: __m256i = _mm256_set1_epi8(3);
        let ones: __m256i = _mm256_set1_epi16(1);
        let half_rows = BLOCK_ROWS / 2;
        let blocks_out = sums.chunks_exact_mut(BLOCK_ROWS).zip(largest.iter_mut());
        for (b, (sums, largest)) in blocks_out.enumerate() {
            // SAFETY: as in the AVX-512 kernel, each group read in two 32-byte halves (rows
            // 0-7 and 8-15), each half's sums stored as 8 i32.
            unsafe {
                let block = blocks.as_ptr().add(b * block_len);
                prefetch::scan_ahead(&blocks[b * block_len..(b + 1) * block_len]);
                let mut halves = [_mm256_setzero_si256(); 2];
                for (half, total) in halves.iter_mut().enumerate() {
                    let (mut even, mut odd) = (_mm256_setzero_si256(), _mm256_setzero_si256());
                    for (g, words) in query.words.iter().enumerate() {
                        let at = block.add(g * GROUP_BYTES + 32 * half);
                        let bytes = _mm256_loadu_si256(at.cast());
                        let c0 = _mm256_and_si256(bytes, crumbs);
                        let c1 = _mm256_and_si256(_mm256_srli_epi16::<2>(bytes), crumbs);
                        let c2 = _mm256_and_si256(_mm256_srli_epi16::<4>(bytes), crumbs);
                        let c3 = _mm256_and_si256(_mm256_srli_epi16::<6>(bytes), crumbs);
                        even = _mm256_add_epi32(even, dot4(c0, words[0], ones));
                        odd = _mm256_add_epi32(odd, dot4(c1, words[1], ones));
                        even = _mm256_add_epi32(even, dot4(c2, words[2], ones));
                        odd = _mm256_add_epi32(odd, dot4(c3, words[3], ones));
                    }
                    *total = _mm256_add_epi32(even, odd);
                    let at = sums.as_mut_ptr().add(half * half_rows);
                    _mm256_storeu_si256(at.cast(), *total);
                }
                *largest = max_lane(_mm256_max_epi32(halves[0], halves[1]));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn odd_code() -> impl Strategy<Value = i8> {
        prop_oneof![Just(-3i8), Just(-1), Just(1), Just(3)]
    }

    fn case() -> impl Strategy<Value = (Vec<i8>, Vec<i8>, usize)> {
        (1usize..140, 0usize..40).prop_flat_map(|(dim, rows)| {
            (
                proptest::collection::vec(-QUERY_CODE_MAX..=QUERY_CODE_MAX, dim),
                proptest::collection::vec(odd_code(), dim * rows),
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

    /// The codes' dot products from the kernel's sums: `2·sum - offset_share`.
    fn dots(sums: &[i32], query: &CrumbQuery) -> Vec<f64> {
        let share = query.offset_share as f64;
        sums.iter()
            .map(|&sum| 2.0 * f64::from(sum) - share)
            .collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]

        /// Every kernel's dot products equal the scalar sums of the codes, for every length
        /// (padded groups) and row count (padded blocks).
        #[test]
        fn every_kernel_equals_the_scalar_sum((query, codes, rows) in case()) {
            let dim = query.len();
            let blocks = blocks_of(&codes, dim, rows);
            let crumb_query = CrumbQuery::of(&query);
            let padded_rows = rows.div_ceil(BLOCK_ROWS) * BLOCK_ROWS;
            let expected: Vec<f64> = codes
                .chunks_exact(dim)
                .map(|row| row.iter().zip(&query).map(|(&c, &d)| i64::from(c) * i64::from(d)).sum::<i64>() as f64)
                .collect();
            for kernel in dot_blocks_kernels() {
                let mut sums = vec![0i32; padded_rows];
                let mut largest = vec![0i32; padded_rows / BLOCK_ROWS];
                kernel(&blocks, &crumb_query, &mut sums, &mut largest);
                prop_assert_eq!(&dots(&sums, &crumb_query)[..rows], &expected[..]);
                let block_largest: Vec<i32> = sums
                    .chunks_exact(BLOCK_ROWS)
                    .map(|block| *block.iter().max().unwrap())
                    .collect();
                prop_assert_eq!(largest, block_largest);
            }
        }
    }

    /// The extreme codes (every product at its largest, both signs) come back exact.
    #[test]
    fn extreme_codes_give_exact_sums() {
        for dim in [1usize, 15, 16, 17, 64, 129, 1000] {
            for (sign, code) in [(1i8, CODE_MAX), (-1, CODE_MAX), (1, -CODE_MAX), (1, -1)] {
                let query = vec![QUERY_CODE_MAX * sign; dim];
                let codes = vec![code; dim * 17];
                let blocks = blocks_of(&codes, dim, 17);
                let crumb_query = CrumbQuery::of(&query);
                let expected = f64::from(QUERY_CODE_MAX * sign) * f64::from(code) * dim as f64;
                for kernel in dot_blocks_kernels() {
                    let (mut sums, mut largest) = (vec![0i32; 32], vec![0i32; 2]);
                    kernel(&blocks, &crumb_query, &mut sums, &mut largest);
                    let found = dots(&sums, &crumb_query);
                    assert!(
                        found[..17].iter().all(|&s| s == expected),
                        "{dim}: {found:?}"
                    );
                }
            }
        }
    }

    #[test]
    #[should_panic(expected = "odd 2-bit codes")]
    fn an_even_code_is_refused() {
        let mut block = zeroed(1, 4);
        put_row(&mut block, 0, &[1, 0, 3, -1]);
    }
}

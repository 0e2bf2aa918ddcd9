//! The pass bits of an INT64 comparison with a constant over up to 64 values: bit `i` set
//! when `values[i] op constant` holds. Prefiltered scans build a chunk's pass words with it
//! (log 240). Kernels chosen once at run time: AVX-512F (eight compares into a mask register
//! per instruction), AVX2 (four per compare and move-mask), and a portable loop, each checked
//! against the portable one on random values.

use std::sync::OnceLock;

use warren_planner::expr::BinaryOp;

/// A comparison with a constant.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Compare {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl Compare {
    /// The comparison of a binary operator (`None`: not a comparison).
    pub fn of(op: BinaryOp) -> Option<Compare> {
        Some(match op {
            BinaryOp::Eq => Compare::Eq,
            BinaryOp::Ne => Compare::Ne,
            BinaryOp::Lt => Compare::Lt,
            BinaryOp::Le => Compare::Le,
            BinaryOp::Gt => Compare::Gt,
            BinaryOp::Ge => Compare::Ge,
            _ => return None,
        })
    }

    /// Whether `value compare constant` holds.
    #[inline(always)]
    pub fn holds(self, value: i64, constant: i64) -> bool {
        match self {
            Compare::Eq => value == constant,
            Compare::Ne => value != constant,
            Compare::Lt => value < constant,
            Compare::Le => value <= constant,
            Compare::Gt => value > constant,
            Compare::Ge => value >= constant,
        }
    }

    /// The comparison with its operands swapped: `constant compare value` is
    /// `value compare.swapped() constant`.
    pub fn swapped(self) -> Compare {
        match self {
            Compare::Eq | Compare::Ne => self,
            Compare::Lt => Compare::Gt,
            Compare::Le => Compare::Ge,
            Compare::Gt => Compare::Lt,
            Compare::Ge => Compare::Le,
        }
    }
}

/// A pass-word kernel: `values` holds at most 64 values.
pub type PassWord = fn(&[i64], Compare, i64) -> u64;

/// The widest kernel this CPU runs (chosen on the first call).
pub fn pass_word_kernel() -> PassWord {
    static CHOSEN: OnceLock<PassWord> = OnceLock::new();
    *CHOSEN.get_or_init(|| pass_word_kernels()[0])
}

/// Every kernel this CPU runs, widest first (the portable one last).
pub fn pass_word_kernels() -> Vec<PassWord> {
    let mut kernels: Vec<PassWord> = Vec::new();
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f") {
            kernels.push(x86::pass_word_avx512);
        }
        if std::arch::is_x86_feature_detected!("avx2") {
            kernels.push(x86::pass_word_avx2);
        }
    }
    kernels.push(pass_word_portable);
    kernels
}

/// The reference kernel: one comparison per value.
pub fn pass_word_portable(values: &[i64], compare: Compare, constant: i64) -> u64 {
    assert!(values.len() <= 64, "a word holds 64 values");
    values.iter().enumerate().fold(0, |bits, (i, &value)| {
        bits | (u64::from(compare.holds(value, constant)) << i)
    })
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    //! The x86-64 kernels; each is listed by [`super::pass_word_kernels`] only after the
    //! features it is compiled for were detected.

    use std::arch::x86_64::{
        __m256i, _mm256_castsi256_pd, _mm256_cmpeq_epi64, _mm256_cmpgt_epi64, _mm256_loadu_si256,
        _mm256_movemask_pd, _mm256_set1_epi64x, _mm512_cmpeq_epi64_mask, _mm512_cmpge_epi64_mask,
        _mm512_cmpgt_epi64_mask, _mm512_cmple_epi64_mask, _mm512_cmplt_epi64_mask,
        _mm512_cmpneq_epi64_mask, _mm512_loadu_epi64, _mm512_set1_epi64,
    };

    use super::{pass_word_portable, Compare};

    pub fn pass_word_avx512(values: &[i64], compare: Compare, constant: i64) -> u64 {
        assert!(values.len() <= 64, "a word holds 64 values");
        // SAFETY: handed out only when AVX-512F was detected.
        unsafe { pass_word_avx512_body(values, compare, constant) }
    }

    #[target_feature(enable = "avx512f")]
    fn pass_word_avx512_body(values: &[i64], compare: Compare, constant: i64) -> u64 {
        let splat = _mm512_set1_epi64(constant);
        let full = values.len() / 8;
        let mut bits = 0u64;
        for block in 0..full {
            // SAFETY: the block's eight values lie within `values`.
            let lanes = unsafe { _mm512_loadu_epi64(values.as_ptr().add(block * 8)) };
            let mask = match compare {
                Compare::Eq => _mm512_cmpeq_epi64_mask(lanes, splat),
                Compare::Ne => _mm512_cmpneq_epi64_mask(lanes, splat),
                Compare::Lt => _mm512_cmplt_epi64_mask(lanes, splat),
                Compare::Le => _mm512_cmple_epi64_mask(lanes, splat),
                Compare::Gt => _mm512_cmpgt_epi64_mask(lanes, splat),
                Compare::Ge => _mm512_cmpge_epi64_mask(lanes, splat),
            };
            bits |= u64::from(mask) << (block * 8);
        }
        let tail = pass_word_portable(&values[full * 8..], compare, constant);
        bits | tail.checked_shl(full as u32 * 8).unwrap_or(0)
    }

    pub fn pass_word_avx2(values: &[i64], compare: Compare, constant: i64) -> u64 {
        assert!(values.len() <= 64, "a word holds 64 values");
        // SAFETY: handed out only when AVX2 was detected.
        unsafe { pass_word_avx2_body(values, compare, constant) }
    }

    #[target_feature(enable = "avx2")]
    fn pass_word_avx2_body(values: &[i64], compare: Compare, constant: i64) -> u64 {
        let splat = _mm256_set1_epi64x(constant);
        let full = values.len() / 4;
        // `holds` is `base` or its complement: Lt is `constant > v`, Ge its complement, ...
        let (equal, swapped, negated) = match compare {
            Compare::Eq => (true, false, false),
            Compare::Ne => (true, false, true),
            Compare::Gt => (false, false, false),
            Compare::Le => (false, false, true),
            Compare::Lt => (false, true, false),
            Compare::Ge => (false, true, true),
        };
        let mut bits = 0u64;
        for block in 0..full {
            // SAFETY: the block's four values lie within `values`.
            let lanes =
                unsafe { _mm256_loadu_si256(values.as_ptr().add(block * 4) as *const __m256i) };
            let base = if equal {
                _mm256_cmpeq_epi64(lanes, splat)
            } else if swapped {
                _mm256_cmpgt_epi64(splat, lanes)
            } else {
                _mm256_cmpgt_epi64(lanes, splat)
            };
            let mut mask = _mm256_movemask_pd(_mm256_castsi256_pd(base)) as u64;
            if negated {
                mask ^= 0b1111;
            }
            bits |= mask << (block * 4);
        }
        let tail = pass_word_portable(&values[full * 4..], compare, constant);
        bits | tail.checked_shl(full as u32 * 4).unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    const COMPARES: [Compare; 6] = [
        Compare::Eq,
        Compare::Ne,
        Compare::Lt,
        Compare::Le,
        Compare::Gt,
        Compare::Ge,
    ];

    #[test]
    fn a_swapped_comparison_holds_with_its_operands_swapped() {
        for compare in COMPARES {
            for (a, b) in [(-1, 0), (0, 0), (0, -1), (i64::MIN, i64::MAX)] {
                assert_eq!(
                    compare.swapped().holds(a, b),
                    compare.holds(b, a),
                    "{compare:?}"
                );
            }
        }
    }

    #[test]
    fn extremes_and_lengths() {
        let values: Vec<i64> = (0..64)
            .map(|i| match i % 4 {
                0 => i64::MIN,
                1 => i64::MAX,
                2 => 0,
                _ => -1,
            })
            .collect();
        for kernel in pass_word_kernels() {
            for compare in COMPARES {
                for constant in [i64::MIN, -1, 0, i64::MAX] {
                    for len in 0..=64 {
                        let values = &values[..len];
                        assert_eq!(
                            kernel(values, compare, constant),
                            pass_word_portable(values, compare, constant),
                            "{compare:?} {constant} over {len} values"
                        );
                    }
                }
            }
        }
    }

    proptest! {
        #[test]
        fn every_kernel_matches_the_portable_one(
            values in proptest::collection::vec(-4i64..4, 0..=64),
            compare in 0usize..6,
            constant in -5i64..5,
        ) {
            let compare = COMPARES[compare];
            let expected = pass_word_portable(&values, compare, constant);
            // Each bit against the comparison itself.
            for (i, &value) in values.iter().enumerate() {
                prop_assert_eq!(expected >> i & 1 == 1, compare.holds(value, constant));
            }
            if values.len() < 64 {
                prop_assert_eq!(expected >> values.len(), 0, "no bit past the values");
            }
            for kernel in pass_word_kernels() {
                prop_assert_eq!(kernel(&values, compare, constant), expected);
            }
        }
    }
}

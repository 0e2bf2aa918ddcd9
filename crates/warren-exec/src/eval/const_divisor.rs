//! Division and remainder of INT64 values by one nonzero constant without a divide
//! instruction per value (Granlund and Montgomery's method: a multiply-high by a precomputed
//! magic number and shifts), for compiled filters and keys such as `a.x % 1000` over a whole
//! column, where a 64-bit `idiv` per row was most of the time (OPTIMIZATION_LOG 268). The
//! results are Rust's (and Cypher's) truncated `/` and `%` exactly.

/// A divisor `d` (neither 0 nor -1, so no quotient overflows) prepared for repeated use.
#[derive(Clone, Copy, Debug)]
pub struct ConstDivisor {
    divisor: i64,
    /// `|d|`.
    magnitude: u64,
    /// The magic multiplier of `|d|` (unused when it is a power of two).
    magic: u64,
    /// `ceil(log2 |d|)`: the shift after the multiply (or the power of two's exponent).
    shift: u32,
    power_of_two: bool,
}

impl ConstDivisor {
    /// `divisor` prepared, or `None` for 0 and -1 (a zero divisor fails, and `i64::MIN / -1`
    /// overflows: the caller's checked arithmetic keeps those).
    pub fn new(divisor: i64) -> Option<Self> {
        if divisor == 0 || divisor == -1 {
            return None;
        }
        let magnitude = divisor.unsigned_abs();
        let power_of_two = magnitude.is_power_of_two();
        let shift = if power_of_two {
            magnitude.trailing_zeros()
        } else {
            64 - (magnitude - 1).leading_zeros()
        };
        // m = floor(2^64 * (2^shift - d) / d) + 1, which fits 64 bits for 1 <= shift <= 64.
        let magic = if power_of_two {
            0
        } else {
            let numerator = ((1u128 << shift) - u128::from(magnitude)) << 64;
            (numerator / u128::from(magnitude)) as u64 + 1
        };
        Some(Self {
            divisor,
            magnitude,
            magic,
            shift,
            power_of_two,
        })
    }

    /// `x / |d|` for an unsigned `x`.
    #[inline(always)]
    fn unsigned_quotient(&self, x: u64) -> u64 {
        if self.power_of_two {
            return x >> self.shift;
        }
        let high = ((u128::from(x) * u128::from(self.magic)) >> 64) as u64;
        (high + ((x - high) >> 1)) >> (self.shift - 1)
    }

    /// `value / d`, truncated toward zero.
    #[inline(always)]
    pub fn quotient(&self, value: i64) -> i64 {
        let magnitude = self.unsigned_quotient(value.unsigned_abs()) as i64;
        if (value < 0) != (self.divisor < 0) {
            magnitude.wrapping_neg()
        } else {
            magnitude
        }
    }

    /// `value % d`, with the sign of `value`.
    #[inline(always)]
    pub fn remainder(&self, value: i64) -> i64 {
        let x = value.unsigned_abs();
        let remainder = (x - self.unsigned_quotient(x) * self.magnitude) as i64;
        if value < 0 {
            remainder.wrapping_neg()
        } else {
            remainder
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn int64s() -> impl Strategy<Value = i64> {
        prop_oneof![
            Just(i64::MIN),
            Just(i64::MIN + 1),
            Just(i64::MAX),
            Just(i64::MAX - 1),
            Just(0i64),
            Just(1i64),
            Just(-2i64),
            -3000i64..3000,
            (0u32..63).prop_map(|bits| 1i64 << bits),
            (0u32..63).prop_map(|bits| (1i64 << bits) - 1),
            (0u32..63).prop_map(|bits| -(1i64 << bits) + 1),
            any::<i64>(),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 4096, ..ProptestConfig::default() })]

        /// Every quotient and remainder is Rust's, for every divisor but 0 and -1.
        #[test]
        fn quotients_and_remainders_are_rusts(value in int64s(), divisor in int64s()) {
            match ConstDivisor::new(divisor) {
                None => prop_assert!(divisor == 0 || divisor == -1),
                Some(prepared) => {
                    prop_assert_eq!(prepared.quotient(value), value / divisor, "{} / {}", value, divisor);
                    prop_assert_eq!(prepared.remainder(value), value % divisor, "{} % {}", value, divisor);
                }
            }
        }
    }

    #[test]
    fn every_small_divisor_against_a_range() {
        for divisor in (-70i64..=70).chain([1000, 1 << 32, i64::MAX, i64::MIN, i64::MIN + 1]) {
            let Some(prepared) = ConstDivisor::new(divisor) else {
                assert!(divisor == 0 || divisor == -1);
                continue;
            };
            for value in (-5000i64..5000).chain([i64::MIN, i64::MAX, i64::MIN + 1]) {
                assert_eq!(
                    prepared.quotient(value),
                    value / divisor,
                    "{value} / {divisor}"
                );
                assert_eq!(
                    prepared.remainder(value),
                    value % divisor,
                    "{value} % {divisor}"
                );
            }
        }
    }
}

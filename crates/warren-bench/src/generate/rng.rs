//! Portable pseudo-random numbers: SplitMix64 seeds xoshiro256**.
//!
//! The generators must produce byte-identical files on every machine and with every Rust
//! toolchain, so they use this small, fully specified generator instead of the `rand` crate,
//! and only integer arithmetic to turn its output into bounded values.
//!
//! Work is split into numbered *streams* (one per purpose: "edges", "vertex permutation", ...)
//! and numbered *chunks* inside a stream; [`Rng::for_chunk`] derives an independent generator
//! for each, so that parallel generation gives the same result for any number of threads.

/// SplitMix64 (Steele, Lea and Flood): used to expand a 64-bit seed into generator state.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A SplitMix64 generator starting at `seed`.
    pub fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        mix64(self.state)
    }
}

/// The SplitMix64 output function: a bijective 64-bit mixer.
pub fn mix64(value: u64) -> u64 {
    let mut z = value;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// xoshiro256** 1.0 (Blackman and Vigna), the generator every dataset draws from.
#[derive(Debug, Clone)]
pub struct Rng {
    state: [u64; 4],
}

impl Rng {
    /// A generator whose state is expanded from `seed` with SplitMix64.
    pub fn from_seed(seed: u64) -> Self {
        let mut seeder = SplitMix64::new(seed);
        let state = [
            seeder.next_u64(),
            seeder.next_u64(),
            seeder.next_u64(),
            seeder.next_u64(),
        ];
        // SplitMix64 outputs are a bijection of distinct inputs, so four of them cannot all be
        // zero; xoshiro would be stuck on the all-zero state.
        debug_assert!(state.iter().any(|&word| word != 0));
        Self { state }
    }

    /// The generator for chunk `chunk` of stream `stream` under the user's `seed`.
    pub fn for_chunk(seed: u64, stream: u64, chunk: u64) -> Self {
        let stream_seed = mix64(seed ^ mix64(stream.wrapping_add(0x5EED)));
        Self::from_seed(mix64(stream_seed.wrapping_add(chunk)))
    }

    /// The next 64 random bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        let [s0, s1, s2, s3] = &mut self.state;
        let result = s1.wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = *s1 << 17;
        *s2 ^= *s0;
        *s3 ^= *s1;
        *s1 ^= *s2;
        *s0 ^= *s3;
        *s2 ^= t;
        *s3 = s3.rotate_left(45);
        result
    }

    /// A value in `0..bound` (multiply-shift; the bias is below `bound / 2^64`).
    #[inline]
    pub fn below(&mut self, bound: u64) -> u64 {
        scale_u64(self.next_u64(), bound)
    }
}

/// Maps 64 uniform bits onto `0..bound` by taking the high half of the 128-bit product.
#[inline]
pub fn scale_u64(bits: u64, bound: u64) -> u64 {
    ((u128::from(bits) * u128::from(bound)) >> 64) as u64
}

/// Maps 32 uniform bits onto `0..bound` by taking the high half of the 64-bit product.
#[inline]
pub fn scale_u32(bits: u32, bound: u32) -> u32 {
    ((u64::from(bits) * u64::from(bound)) >> 32) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xoshiro_matches_reference_output() {
        // State 1, 2, 3, 4 as in the reference implementation's test vectors.
        let mut rng = Rng {
            state: [1, 2, 3, 4],
        };
        let first: Vec<u64> = (0..3).map(|_| rng.next_u64()).collect();
        assert_eq!(first, vec![11520, 0, 1509978240]);
    }

    #[test]
    fn splitmix_matches_reference_output() {
        let mut seeder = SplitMix64::new(1234567);
        assert_eq!(seeder.next_u64(), 6457827717110365317);
        assert_eq!(seeder.next_u64(), 3203168211198807973);
    }

    #[test]
    fn chunks_and_streams_are_independent() {
        let a = Rng::for_chunk(7, 0, 0).next_u64();
        let b = Rng::for_chunk(7, 0, 1).next_u64();
        let c = Rng::for_chunk(7, 1, 0).next_u64();
        let d = Rng::for_chunk(8, 0, 0).next_u64();
        assert!(a != b && a != c && a != d && b != c);
        assert_eq!(a, Rng::for_chunk(7, 0, 0).next_u64());
    }

    #[test]
    fn below_stays_in_range() {
        let mut rng = Rng::from_seed(3);
        for bound in [1, 2, 3, 10, 1 << 40] {
            for _ in 0..1000 {
                assert!(rng.below(bound) < bound);
            }
        }
        assert_eq!(scale_u32(u32::MAX, 10), 9);
        assert_eq!(scale_u64(0, 10), 0);
    }
}

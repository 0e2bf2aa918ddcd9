//! Per-lane counters of a bit-parallel sweep kept bit-sliced: slice `i` holds bit `i` of every
//! lane's count, so adding a word of lanes is a ripple-carry add across the slices instead of
//! one step per set lane. Words are added in pairs: a full adder per pair into the lowest
//! slice, and one ripple of the pair's carries from the next slice (a ripple runs until no
//! lane carries, about as many steps as the longest carry chain of the lanes set, so pairing
//! halves the ripples). The counts are read out once, at the end of a morsel.

/// Slices kept: counts up to 2^32 - 1 per lane, more than a morsel's nodes (node ids are `u32`).
const SLICES: usize = 32;

/// Up to 64 lane counts, bit-sliced.
#[derive(Clone, Debug, Default)]
pub struct LaneCounter {
    slices: [u64; SLICES],
    /// Slices that may hold a set bit.
    depth: usize,
    /// A word added but not yet paired (0: none).
    pending: u64,
}

impl LaneCounter {
    /// Adds one to the count of each lane set in `lanes`.
    #[inline]
    pub fn add(&mut self, lanes: u64) {
        if self.pending == 0 {
            self.pending = lanes;
            return;
        }
        let (a, b) = (std::mem::take(&mut self.pending), lanes);
        // A full adder: slice 0 + a + b = (slice 0 ^ a ^ b) + 2 * majority.
        let low = self.slices[0];
        let partial = low ^ a;
        self.slices[0] = partial ^ b;
        self.ripple((low & a) | (partial & b));
    }

    /// Adds `carry` at slice 1, carrying upwards.
    #[inline]
    fn ripple(&mut self, mut carry: u64) {
        let mut slice = 1;
        while carry != 0 {
            // Indexing panics past the last slice: a count over 2^32 - 1 is not representable.
            let bits = self.slices[slice];
            self.slices[slice] = bits ^ carry;
            carry &= bits;
            slice += 1;
        }
        self.depth = self.depth.max(slice);
    }

    /// Adds the counts to `totals` (indexed by lane).
    pub fn add_to(&self, totals: &mut [u64; 64]) {
        for (weight, &slice) in self.slices[..self.depth].iter().enumerate() {
            add_weighted(slice, 1 << weight, totals);
        }
        add_weighted(self.pending, 1, totals);
    }
}

/// Adds `weight` to the total of each lane set in `bits`.
fn add_weighted(mut bits: u64, weight: u64, totals: &mut [u64; 64]) {
    while bits != 0 {
        totals[bits.trailing_zeros() as usize] += weight;
        bits &= bits - 1;
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// One step per set lane (the reference).
    fn naive(words: &[u64]) -> [u64; 64] {
        let mut totals = [0u64; 64];
        for &word in words {
            for (lane, total) in totals.iter_mut().enumerate() {
                *total += word >> lane & 1;
            }
        }
        totals
    }

    fn counted(words: &[u64]) -> [u64; 64] {
        let mut counter = LaneCounter::default();
        words.iter().for_each(|&w| counter.add(w));
        let mut totals = [0u64; 64];
        counter.add_to(&mut totals);
        totals
    }

    #[test]
    fn counts_carry_across_slices() {
        let words = vec![u64::MAX; 1000];
        assert_eq!(counted(&words), [1000; 64]);
        assert_eq!(counted(&[1, 3, 7, 1 << 63]), naive(&[1, 3, 7, 1 << 63]));
        assert_eq!(counted(&[]), [0; 64]);
    }

    #[test]
    fn an_unpaired_word_is_counted() {
        assert_eq!(counted(&[0b110]), naive(&[0b110]));
        assert_eq!(counted(&[1, 2, 4]), naive(&[1, 2, 4]));
        assert_eq!(counted(&[0, 5, 0, 5, 5]), naive(&[0, 5, 0, 5, 5]));
    }

    #[test]
    fn counts_add_to_existing_totals() {
        let mut counter = LaneCounter::default();
        counter.add(0b101);
        let mut totals = [1u64; 64];
        counter.add_to(&mut totals);
        assert_eq!(&totals[..4], &[2, 1, 2, 1]);
    }

    proptest! {
        #[test]
        fn matches_one_step_per_lane(
            words in proptest::collection::vec(
                prop_oneof![any::<u64>(), 0u64..16, Just(u64::MAX)],
                0..600,
            ),
        ) {
            prop_assert_eq!(counted(&words), naive(&words));
        }
    }
}

//! Bounded top-k selection: keeps the `k` smallest `(key, row)` entries seen, in O(log k) per
//! entry and O(k) memory, never sorting everything. Ties on the key are broken by the row
//! (smaller row first), so the answer does not depend on the order rows arrive in: selectors
//! filled by different threads over different rows merge into the same answer one thread
//! would give. For "largest first", use a key whose order is reversed.

use std::collections::BinaryHeap;

/// The `k` smallest `(key, row)` entries pushed so far.
#[derive(Clone, Debug)]
pub struct TopK<K: Ord> {
    k: usize,
    /// A max-heap: its top is the worst entry kept, the one a better entry replaces.
    heap: BinaryHeap<(K, u64)>,
}

impl<K: Ord> TopK<K> {
    pub fn new(k: usize) -> Self {
        Self {
            k,
            heap: BinaryHeap::with_capacity(k.min(1 << 20) + 1),
        }
    }

    pub fn k(&self) -> usize {
        self.k
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }

    /// Whether an entry with this key and row would be kept (cheap test before building it).
    #[inline]
    pub fn admits(&self, key: &K, row: u64) -> bool {
        if self.heap.len() < self.k {
            return true;
        }
        self.heap
            .peek()
            .is_some_and(|(worst, worst_row)| (key, row) < (worst, *worst_row))
    }

    /// Offers an entry; it is kept if it is among the `k` smallest so far.
    #[inline]
    pub fn push(&mut self, key: K, row: u64) {
        if self.k == 0 {
            return;
        }
        if self.heap.len() < self.k {
            self.heap.push((key, row));
        } else if self.admits(&key, row) {
            let mut worst = self.heap.peek_mut().expect("a full heap has a top");
            *worst = (key, row);
        }
        debug_assert!(self.heap.len() <= self.k);
    }

    /// Adds every entry of `other` (a selector over other rows, with the same `k`).
    pub fn merge(&mut self, other: TopK<K>) {
        assert_eq!(self.k, other.k, "merging selectors of different sizes");
        for (key, row) in other.heap {
            self.push(key, row);
        }
    }

    /// The kept entries, smallest first.
    pub fn into_sorted(self) -> Vec<(K, u64)> {
        self.heap.into_sorted_vec()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        #[test]
        fn equals_a_full_sort(keys in prop::collection::vec(0u8..20, 0..300), k in 0usize..40,
                              split in 0usize..300) {
            let mut sorted: Vec<(u8, u64)> =
                keys.iter().enumerate().map(|(row, &key)| (key, row as u64)).collect();
            sorted.sort();
            sorted.truncate(k);

            let mut one = TopK::new(k);
            for (row, &key) in keys.iter().enumerate() {
                one.push(key, row as u64);
            }
            prop_assert_eq!(one.clone().into_sorted(), sorted.clone());

            // Two selectors over two halves, filled in reverse, merged.
            let split = split.min(keys.len());
            let (mut left, mut right) = (TopK::new(k), TopK::new(k));
            for (row, &key) in keys.iter().enumerate().rev() {
                if row < split { left.push(key, row as u64) } else { right.push(key, row as u64) }
            }
            left.merge(right);
            prop_assert_eq!(left.into_sorted(), sorted);
        }
    }

    #[test]
    fn reversed_keys_give_the_largest_with_ties_by_row() {
        let mut top = TopK::new(2);
        for (row, key) in [5, 9, 9, 1].into_iter().enumerate() {
            top.push(std::cmp::Reverse(key), row as u64);
        }
        let rows: Vec<u64> = top.into_sorted().into_iter().map(|(_, row)| row).collect();
        assert_eq!(rows, vec![1, 2]);
    }
}

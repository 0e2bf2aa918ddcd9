//! The inner loop of a counting pull: over one node's in-neighbours, the sum of the path counts
//! of those in the frontier bitmap, and how many are. Every in-edge is read (a count needs
//! every parent), so the loop has no branch on the frontier test (a third of the edges of
//! scale 22's hub level come from the frontier, and a branch there is mispredicted often).
//! A node outside the frontier reads the first count instead of its own and masks it away
//! (OPTIMIZATION_LOG 227).

use std::sync::atomic::{AtomicU64, Ordering};

/// The summed counts of one node's parents.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ParentSum {
    /// The sum, wrapped at `u64` when `overflow`.
    pub total: u64,
    /// In-neighbours in the frontier.
    pub parents: u64,
    /// Whether the sum passed `u64::MAX`.
    pub overflow: bool,
}

/// The counts (`counts[u]`) of the `u` in `sources` whose bit is set in `frontier` (bit
/// `u % 64` of word `u / 64`). Panics on an in-neighbour outside `counts`.
#[inline(always)]
pub fn sum_parents(sources: &[u32], frontier: &[AtomicU64], counts: &[AtomicU64]) -> ParentSum {
    let mut parents = 0u64;
    let mut total: u128 = 0;
    for &u in sources {
        let bit = frontier[(u / 64) as usize].load(Ordering::Relaxed) >> (u % 64) & 1;
        let keep = bit.wrapping_neg();
        // A node outside the frontier reads the first count (a line that stays cached) and
        // masks it away: no branch, and no load of a count that is not wanted.
        let read = u & keep as u32;
        total += u128::from(counts[read as usize].load(Ordering::Relaxed) & keep);
        parents += bit;
    }
    ParentSum {
        total: total as u64,
        parents,
        overflow: total > u128::from(u64::MAX),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn bitmap(nodes: usize, members: &[u32]) -> Vec<AtomicU64> {
        let mut words = vec![0u64; nodes.div_ceil(64)];
        for &u in members {
            words[(u / 64) as usize] |= 1 << (u % 64);
        }
        words.into_iter().map(AtomicU64::new).collect()
    }

    fn reference(sources: &[u32], members: &[u32], counts: &[u64]) -> ParentSum {
        let mut total: u128 = 0;
        let mut parents = 0;
        for u in sources {
            if members.contains(u) {
                total += u128::from(counts[*u as usize]);
                parents += 1;
            }
        }
        ParentSum {
            total: total as u64,
            parents,
            overflow: total > u128::from(u64::MAX),
        }
    }

    proptest! {
        #[test]
        fn every_kernel_sums_the_frontier_parents(
            nodes in 1usize..300,
            picks in proptest::collection::vec((0usize..300, any::<bool>(), 0u64..1000), 0..40),
        ) {
            let sources: Vec<u32> = picks.iter().map(|&(u, _, _)| (u % nodes) as u32).collect();
            let members: Vec<u32> = picks.iter().filter(|p| p.1).map(|&(u, _, _)| (u % nodes) as u32).collect();
            let counts: Vec<u64> = (0..nodes as u64).map(|v| v * 7 + picks.len() as u64).collect();
            let frontier = bitmap(nodes, &members);
            let atomic: Vec<AtomicU64> = counts.iter().map(|&c| AtomicU64::new(c)).collect();
            let expected = reference(&sources, &members, &counts);
            prop_assert_eq!(sum_parents(&sources, &frontier, &atomic), expected);
        }
    }

    #[test]
    fn a_sum_past_u64_is_reported() {
        let counts: Vec<AtomicU64> = [u64::MAX - 1, 5, 0]
            .into_iter()
            .map(AtomicU64::new)
            .collect();
        let frontier = bitmap(3, &[0, 1]);
        for sources in [&[0u32, 1][..], &[1, 2, 0, 2, 2, 2, 2, 2, 2, 1][..]] {
            assert!(
                sum_parents(sources, &frontier, &counts).overflow,
                "{sources:?}"
            );
        }
        let sum = sum_parents(&[0, 2, 2], &frontier, &counts);
        assert_eq!(
            sum,
            ParentSum {
                total: u64::MAX - 1,
                parents: 1,
                overflow: false
            }
        );
    }

    #[test]
    #[should_panic]
    fn an_in_neighbour_past_the_nodes_panics() {
        let counts: Vec<AtomicU64> = (0..10).map(AtomicU64::new).collect();
        let frontier = bitmap(10, &[1]);
        println!("{:?}", sum_parents(&[1, 2, 64], &frontier, &counts));
    }
}

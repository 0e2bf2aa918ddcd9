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

/// The running sums of a flat pass over many nodes' in-lists laid end to end (`sources`):
/// afterwards `running[i]` is the sum, wrapping at `u64`, of the counts of the frontier members
/// among `sources[..i]` for `i` up to `sources.len()` (`running` is grown to hold them, and
/// entries past them are left as they were). A node whose list is `sources[a..b]` has
/// `running[b] - running[a]` (wrapping) as its parents' sum, exact when the caller has ruled
/// out a sum past `u64::MAX` within one list. One loop over all the lists, so no loop starts
/// or ends per node, eight in-edges at a time with AVX-512 gathers where the CPU has them, else
/// four with AVX2's (OPTIMIZATION_LOG 259, 262, 267). Panics on an in-neighbour outside
/// `counts`.
pub fn running_sums(
    sources: &[u32],
    frontier: &[AtomicU64],
    counts: &[AtomicU64],
    running: &mut Vec<u64>,
) {
    if running.len() <= sources.len() {
        running.resize(sources.len() + 1, 0);
    }
    let out = &mut running[..=sources.len()];
    out[0] = 0;
    let mut done = 0;
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512vl")
    {
        // SAFETY: the CPU has the features; `out` holds `sources.len() + 1` sums.
        done = unsafe { x86::running_sums_avx512(sources, frontier, counts, out) };
    } else if std::arch::is_x86_feature_detected!("avx2") {
        // SAFETY: as above.
        done = unsafe { x86::running_sums_avx2(sources, frontier, counts, out) };
    }
    running_sums_from(sources, frontier, counts, out, done);
}

/// [`running_sums`] one in-edge at a time from `sources[done]` on (`out[done]` holds the sum so
/// far).
#[inline]
fn running_sums_from(
    sources: &[u32],
    frontier: &[AtomicU64],
    counts: &[AtomicU64],
    out: &mut [u64],
    done: usize,
) {
    let mut total = out[done];
    for (i, &u) in sources.iter().enumerate().skip(done) {
        let bit = frontier[(u / 64) as usize].load(Ordering::Relaxed) >> (u % 64) & 1;
        let keep = bit.wrapping_neg();
        let read = u & keep as u32;
        total = total.wrapping_add(counts[read as usize].load(Ordering::Relaxed) & keep);
        out[i + 1] = total;
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;
    use std::sync::atomic::AtomicU64;

    /// The kernels' contract: a running sum per in-edge and one before them, and a frontier
    /// word for every node of `counts` (the gathers read them without bounds checks).
    fn check_shapes(sources: &[u32], frontier: &[AtomicU64], counts: &[AtomicU64], out: &[u64]) {
        assert_eq!(out.len(), sources.len() + 1);
        assert!(frontier.len() * 64 >= counts.len(), "a word for every node");
    }

    /// [`super::running_sums`] for whole groups of eight in-edges: each group's frontier words
    /// and its members' counts gathered, summed across the lanes in three steps and added to the
    /// sum so far. Returns how many in-edges it summed: all but the last `len % 8`, or fewer
    /// when a group holds an in-neighbour outside `counts` (the caller's checked loop then
    /// meets it). Lanes outside the frontier read no count (masked gather), so the loads touch
    /// only frontier words and frontier nodes' counts, which no thread writes during a level.
    ///
    /// The gathers take signed 32-bit indices, so more than `i32::MAX` nodes leave every edge
    /// to the caller's loop.
    ///
    /// # Safety
    /// The CPU has AVX-512F and AVX-512VL; `out.len() == sources.len() + 1`; `frontier` has a
    /// word for every node of `counts`.
    #[target_feature(enable = "avx512f,avx512vl")]
    pub(super) unsafe fn running_sums_avx512(
        sources: &[u32],
        frontier: &[AtomicU64],
        counts: &[AtomicU64],
        out: &mut [u64],
    ) -> usize {
        check_shapes(sources, frontier, counts, out);
        let Ok(nodes) = i32::try_from(counts.len()) else {
            return 0;
        };
        let limit = _mm256_set1_epi32(nodes);
        let low_six = _mm256_set1_epi32(63);
        let one = _mm512_set1_epi64(1);
        let zero = _mm512_setzero_si512();
        let last_lane = _mm512_set1_epi64(7);
        let words = frontier.as_ptr().cast::<i64>();
        let values = counts.as_ptr().cast::<i64>();
        let mut carry = _mm512_set1_epi64(out[0] as i64);
        let groups = sources.len() / 8;
        for group in 0..groups {
            // SAFETY: `group * 8 + 8 <= sources.len()`.
            let u = unsafe { _mm256_loadu_si256(sources.as_ptr().add(group * 8).cast()) };
            _mm_prefetch::<_MM_HINT_T0>(sources.as_ptr().wrapping_add(group * 8 + 256).cast());
            if _mm256_cmpge_epu32_mask(u, limit) != 0 {
                return group * 8;
            }
            // SAFETY: every lane's node is below `nodes`, so its word and count exist.
            let lane_counts = unsafe {
                let word = _mm512_i32gather_epi64::<8>(_mm256_srli_epi32::<6>(u), words);
                let shift = _mm512_cvtepu32_epi64(_mm256_and_si256(u, low_six));
                let bits = _mm512_and_si512(_mm512_srlv_epi64(word, shift), one);
                let member = _mm512_test_epi64_mask(bits, bits);
                _mm512_mask_i32gather_epi64::<8>(zero, member, u, values)
            };
            let mut sums = lane_counts;
            sums = _mm512_add_epi64(sums, _mm512_alignr_epi64::<7>(sums, zero));
            sums = _mm512_add_epi64(sums, _mm512_alignr_epi64::<6>(sums, zero));
            sums = _mm512_add_epi64(sums, _mm512_alignr_epi64::<4>(sums, zero));
            sums = _mm512_add_epi64(sums, carry);
            // SAFETY: `1 + group * 8 + 8 <= out.len()`.
            unsafe { _mm512_storeu_si512(out.as_mut_ptr().add(1 + group * 8).cast(), sums) };
            carry = _mm512_permutexvar_epi64(last_lane, sums);
        }
        groups * 8
    }

    /// [`running_sums_avx512`] for CPUs with AVX2 alone: groups of four in-edges, the lanes'
    /// running sums in two steps (a lane's left neighbour, then the pair two lanes left).
    ///
    /// # Safety
    /// The CPU has AVX2; `out.len() == sources.len() + 1`; `frontier` has a word for every node
    /// of `counts`.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn running_sums_avx2(
        sources: &[u32],
        frontier: &[AtomicU64],
        counts: &[AtomicU64],
        out: &mut [u64],
    ) -> usize {
        check_shapes(sources, frontier, counts, out);
        let Some(last) = i32::try_from(counts.len())
            .ok()
            .and_then(|n| n.checked_sub(1))
        else {
            return 0;
        };
        let last = _mm_set1_epi32(last);
        let low_six = _mm_set1_epi32(63);
        let one = _mm256_set1_epi64x(1);
        let zero = _mm256_setzero_si256();
        let words = frontier.as_ptr().cast::<i64>();
        let values = counts.as_ptr().cast::<i64>();
        let mut carry = _mm256_set1_epi64x(out[0] as i64);
        let groups = sources.len() / 4;
        for group in 0..groups {
            // SAFETY: `group * 4 + 4 <= sources.len()`.
            let u = unsafe { _mm_loadu_si128(sources.as_ptr().add(group * 4).cast()) };
            _mm_prefetch::<_MM_HINT_T0>(sources.as_ptr().wrapping_add(group * 4 + 256).cast());
            // Every lane at most `last` exactly when the unsigned maximum leaves `last`.
            if _mm_movemask_epi8(_mm_cmpeq_epi32(_mm_max_epu32(u, last), last)) != 0xffff {
                return group * 4;
            }
            // SAFETY: every lane's node is below the count of nodes, so its word and count
            // exist, and it is at most `i32::MAX`, so its signed index is the node.
            let lane_counts = unsafe {
                let word = _mm256_i32gather_epi64::<8>(words, _mm_srli_epi32::<6>(u));
                let shift = _mm256_cvtepu32_epi64(_mm_and_si128(u, low_six));
                let bits = _mm256_and_si256(_mm256_srlv_epi64(word, shift), one);
                let member = _mm256_cmpeq_epi64(bits, one);
                _mm256_mask_i32gather_epi64::<8>(zero, values, u, member)
            };
            // [0, x0, x1, x2], then [0, 0, s0, s1].
            let left = _mm256_permute4x64_epi64::<0b10_01_00_00>(lane_counts);
            let mut sums = _mm256_add_epi64(lane_counts, _mm256_blend_epi32::<0b11>(left, zero));
            sums = _mm256_add_epi64(sums, _mm256_permute2x128_si256::<0x08>(sums, sums));
            sums = _mm256_add_epi64(sums, carry);
            // SAFETY: `1 + group * 4 + 4 <= out.len()`.
            unsafe { _mm256_storeu_si256(out.as_mut_ptr().add(1 + group * 4).cast(), sums) };
            carry = _mm256_permute4x64_epi64::<0b11_11_11_11>(sums);
        }
        groups * 4
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

    proptest! {
        #[test]
        fn running_sums_give_each_lists_parent_sum(
            nodes in 1usize..300,
            lists in proptest::collection::vec(proptest::collection::vec((0usize..300, any::<bool>()), 0..12), 0..20),
            scale in 0u64..3,
        ) {
            let mut sources = Vec::new();
            let mut bounds = vec![0];
            let mut members = Vec::new();
            for list in &lists {
                for &(u, member) in list {
                    sources.push((u % nodes) as u32);
                    if member {
                        members.push((u % nodes) as u32);
                    }
                }
                bounds.push(sources.len());
            }
            // Counts up to 2^62 (scale 2): a list's sum may pass u64 only past 4 members.
            let counts: Vec<u64> = (0..nodes as u64).map(|v| (v * 7 + 1) << (scale * 31)).collect();
            let frontier = bitmap(nodes, &members);
            let atomic: Vec<AtomicU64> = counts.iter().map(|&c| AtomicU64::new(c)).collect();
            let mut running = vec![9; 3];
            running_sums(&sources, &frontier, &atomic, &mut running);
            prop_assert!(running.len() > sources.len());
            let mut scalar = vec![0; sources.len() + 1];
            running_sums_from(&sources, &frontier, &atomic, &mut scalar, 0);
            prop_assert_eq!(&running[..=sources.len()], &scalar[..]);
            #[cfg(target_arch = "x86_64")]
            if std::arch::is_x86_feature_detected!("avx2") {
                // The AVX2 kernel on its own (the dispatch above takes AVX-512 where it can).
                let mut avx2 = vec![0; sources.len() + 1];
                // SAFETY: the CPU has AVX2; `avx2` holds `sources.len() + 1` sums.
                let done = unsafe { x86::running_sums_avx2(&sources, &frontier, &atomic, &mut avx2) };
                prop_assert_eq!(done, sources.len() / 4 * 4);
                running_sums_from(&sources, &frontier, &atomic, &mut avx2, done);
                prop_assert_eq!(&avx2, &scalar);
            }
            for pair in bounds.windows(2) {
                let list = &sources[pair[0]..pair[1]];
                let expected = sum_parents(list, &frontier, &atomic);
                prop_assert_eq!(running[pair[1]].wrapping_sub(running[pair[0]]), expected.total);
            }
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

    /// The vector kernels stop at the group holding an in-neighbour past the nodes, and the
    /// checked loop after them panics there.
    #[test]
    fn the_kernels_stop_before_an_in_neighbour_past_the_nodes() {
        let counts: Vec<AtomicU64> = (0..10).map(AtomicU64::new).collect();
        let frontier = bitmap(10, &[1, 2]);
        let sources = [1u32, 2, 3, 4, 5, 6, 7, 8, 1, 2, 3, 4, 5, 6, 70, 8];
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") {
            let mut out = vec![0; sources.len() + 1];
            // SAFETY: the CPU has AVX2; `out` holds `sources.len() + 1` sums.
            let done = unsafe { x86::running_sums_avx2(&sources, &frontier, &counts, &mut out) };
            assert_eq!(done, 12);
            assert_eq!(&out[..=12], &[0, 1, 3, 3, 3, 3, 3, 3, 3, 4, 6, 6, 6]);
        }
        let checked = std::panic::catch_unwind(|| {
            running_sums(&sources, &frontier, &counts, &mut Vec::new());
        });
        assert!(checked.is_err(), "node 70 is past the 10 nodes");
    }

    #[test]
    #[should_panic]
    fn an_in_neighbour_past_the_nodes_panics() {
        let counts: Vec<AtomicU64> = (0..10).map(AtomicU64::new).collect();
        let frontier = bitmap(10, &[1]);
        println!("{:?}", sum_parents(&[1, 2, 64], &frontier, &counts));
    }
}

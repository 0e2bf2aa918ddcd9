//! Top-down levels pushed through destination bins (propagation blocking). A top-down level
//! with many out-edges ORs each frontier node's word into its out-neighbours' `next` words: a
//! random read of `seen` and `next` per edge and an atomic `fetch_or` per edge that adds
//! bits, over arrays that outgrow a core's cache. Binned, the level runs in two phases:
//! *scatter* writes each edge as one `u32` (the destination's offset in its bin, the source's
//! frontier position) into the bin of the destination's id range, bins laid out one after the
//! other in one list per morsel (counted first, then written: sequential reads and writes),
//! and copies its frontier words into a list by frontier position; then *apply* gives each bin
//! to one thread, which alone writes the `next` words of its range: plain loads and stores
//! into a range small enough to stay in the core's cache, the frontier words read from the
//! short list, and no locked instruction. A one-source search claims the same way: in
//! `Lengths` mode `claim_unreached` sets a bin's unreached distances to the level, in
//! `PathCounts` mode `claim_counting` also adds each source's path count (recorded by frontier
//! position) to the destinations at the level.
//!
//! Limits: a level is binned only when its out-edges reach the engine's threshold
//! ([`BINNED_EDGES_MIN`]; below it the extra phase costs more than it saves) and its frontier's
//! positions fit in the bits the bin offset leaves. The pairs of one round hold at most
//! [`BINNED_PAIRS_PER_NODE`] times the nodes, 4 bytes each (reserved with the search's state):
//! a many-source sweep bins only levels within one round; a one-source search runs a larger
//! level in several rounds of scatter and apply.

use std::ops::Range;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use warren_storage::adjacency::AdjacencyView;

use super::frontier_morsels::{FrontierMorsel, MorselBudget};
use super::lanes::LaneWord;

/// Out-edges below which a top-down level pushes directly (the engine's threshold; tests
/// lower it to bin small graphs).
pub const BINNED_EDGES_MIN: u64 = 32_768;
/// A binned level holds at most this many pairs per node of the graph.
pub const BINNED_PAIRS_PER_NODE: u64 = 2;
/// Bytes of per-node state (two words per node: `seen` and `next`) one bin covers at most.
const BIN_STATE_BYTES: usize = 256 * 1024;
/// Bins a large graph is cut into at least, so every thread gets many to apply.
const BINS_MIN: usize = 64;
/// Scatter morsels a binned level is cut into, about (fewer, longer lists read back faster).
const SCATTER_MORSELS: u64 = 16;

/// `budget` for the scatter morsels of a binned level with `out_edges` out-edges: about
/// [`SCATTER_MORSELS`] of them (fewer, longer lists for the apply to read back), never smaller
/// than the engine's morsels.
pub fn scatter_budget(budget: MorselBudget, out_edges: u64) -> MorselBudget {
    MorselBudget {
        edges_max: budget.edges_max.max(out_edges / SCATTER_MORSELS),
        ..budget
    }
}

/// Bytes a search's binned levels hold at most for a graph of `nodes` nodes.
pub fn pair_bytes(nodes: u32) -> u64 {
    round_pairs_max(nodes) * 4
}

/// The pairs one round of a binned level holds at most (a level binned in one round has no
/// more out-edges); a morsel larger than this (a tiny graph's) is a round of its own.
pub fn round_pairs_max(nodes: u32) -> u64 {
    BINNED_PAIRS_PER_NODE * u64::from(nodes)
}

/// What a search whose levels may be binned (`binned`) is configured with: the out-edges from
/// which a top-down level is binned (`None`: never), and the bytes to reserve for its pairs
/// beside its state for a graph of `nodes` nodes.
pub fn engine_limits(binned: bool, nodes: u32) -> (Option<u64>, u64) {
    if binned {
        (Some(BINNED_EDGES_MIN), pair_bytes(nodes))
    } else {
        (None, 0)
    }
}

/// How destinations map to bins: consecutive id ranges of `1 << shift` nodes; a pair keeps
/// the destination's offset in its range in its high `shift` bits and the source's frontier
/// position in the others.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BinPlan {
    shift: u32,
    bins: usize,
}

impl BinPlan {
    /// Bins of at most [`BIN_STATE_BYTES`] of two `word_bytes` words per node (a sweep's
    /// `seen` and `next`), and at least [`BINS_MIN`] bins where the graph has enough nodes
    /// (ranges of at least 64 nodes).
    pub fn for_graph(nodes: u32, word_bytes: usize) -> Self {
        Self::for_node_bytes(nodes, 2 * word_bytes)
    }

    /// [`BinPlan::for_graph`] for `bytes_per_node` bytes of state per node (a one-source
    /// search's distance: 4).
    pub fn for_node_bytes(nodes: u32, bytes_per_node: usize) -> Self {
        assert!(bytes_per_node > 0, "a node's state has bytes");
        let cache_nodes = (BIN_STATE_BYTES / bytes_per_node).max(64);
        let mut shift = cache_nodes.ilog2();
        while shift > 6 && (nodes as usize).div_ceil(1 << shift) < BINS_MIN {
            shift -= 1;
        }
        let bins = (nodes as usize).div_ceil(1 << shift).max(1);
        Self { shift, bins }
    }

    pub fn bins(&self) -> usize {
        self.bins
    }

    /// The most frontier positions a pair can hold.
    pub fn positions_max(&self) -> usize {
        1 << (32 - self.shift)
    }

    /// Whether a top-down level with `out_edges` out-edges from `frontier` nodes over `nodes`
    /// nodes is binned in one round, where levels from `edges_min` out-edges on are.
    pub fn binned(&self, out_edges: u64, frontier: usize, nodes: u32, edges_min: u64) -> bool {
        out_edges <= round_pairs_max(nodes) && self.binned_in_rounds(out_edges, frontier, edges_min)
    }

    /// Whether a top-down level with `out_edges` out-edges from `frontier` nodes is binned by
    /// a search that scatters and applies a large level in rounds of at most
    /// [`round_pairs_max`] pairs each.
    pub fn binned_in_rounds(&self, out_edges: u64, frontier: usize, edges_min: u64) -> bool {
        out_edges >= edges_min && frontier <= self.positions_max()
    }

    #[inline(always)]
    fn bin_of(&self, v: u32) -> usize {
        (v >> self.shift) as usize
    }

    /// A pair's destination offset within its bin.
    #[inline(always)]
    fn offset_of(&self, pair: u32) -> usize {
        (pair >> (32 - self.shift)) as usize
    }

    /// A pair's source frontier position.
    #[inline(always)]
    fn position_of(&self, pair: u32) -> usize {
        (pair & ((1 << (32 - self.shift)) - 1)) as usize
    }

    #[inline(always)]
    fn pair(&self, v: u32, position: usize) -> u32 {
        let offset = v & ((1 << self.shift) - 1);
        (offset << (32 - self.shift)) | position as u32
    }

    /// The destinations of `bin`.
    pub fn range(&self, bin: usize, nodes: u32) -> Range<u32> {
        assert!(bin < self.bins, "a bin of the plan");
        let start = (bin as u32) << self.shift;
        start..start.saturating_add(1 << self.shift).min(nodes)
    }
}

/// One scatter morsel's pairs, bin after bin: bin `b`'s are `pairs[starts[b]..starts[b + 1]]`.
#[derive(Debug, Default)]
pub struct Bins {
    pairs: Vec<u32>,
    starts: Vec<usize>,
}

impl Bins {
    /// The pairs of `bin` (none when this piece scattered nothing).
    pub fn pairs(&self, bin: usize) -> &[u32] {
        match self.starts.get(bin..bin + 2) {
            Some(&[start, end]) => &self.pairs[start..end],
            _ => &[],
        }
    }

    /// Forgets the pairs (keeping the lists' capacity).
    pub fn clear(&mut self) {
        self.pairs.clear();
        self.starts.clear();
    }

    pub fn held_bytes(&self) -> u64 {
        (self.pairs.capacity() * 4 + self.starts.capacity() * 8) as u64
    }

    /// [`Bins::scatter`] for one top-down morsel of `frontier`, reading out-neighbours from
    /// `adjacency` (its flat arrays once the morsel's nodes are verified); returns the edges
    /// scattered.
    pub fn scatter_morsel(
        &mut self,
        plan: &BinPlan,
        adjacency: &AdjacencyView<'_>,
        (frontier, work): (&[u32], &FrontierMorsel),
    ) -> u64 {
        let sources = &frontier[work.nodes.clone()];
        let at = (sources, work.nodes.start);
        match adjacency.plain_neighbours_for(sources.iter().copied()) {
            Some(plain) => self.scatter(plan, at, |u| work.slice(plain.of(u), &[]).0),
            None => self.scatter(plan, at, |u| work.slice(adjacency.neighbours(u), &[]).0),
        }
    }

    /// Writes the pair of every edge from the frontier nodes `sources`, at frontier positions
    /// from `first_position` on, into its destination's bin (`neighbours` gives a node's
    /// out-neighbours, already sliced to the morsel's part); returns the edges scattered.
    pub fn scatter<'n>(
        &mut self,
        plan: &BinPlan,
        (sources, first_position): (&[u32], usize),
        neighbours: impl Fn(u32) -> &'n [u32],
    ) -> u64 {
        assert!(
            first_position + sources.len() <= plan.positions_max(),
            "frontier positions fit in a pair"
        );
        self.starts.clear();
        self.starts.resize(plan.bins + 1, 0);
        for &u in sources {
            for &v in neighbours(u) {
                self.starts[plan.bin_of(v) + 1] += 1;
            }
        }
        for bin in 0..plan.bins {
            self.starts[bin + 1] += self.starts[bin];
        }
        let scattered = self.starts[plan.bins];
        self.pairs.clear();
        self.pairs.resize(scattered, 0);
        // Each bin's write cursor, in the same list, moved back to the bins' starts below.
        let mut cursor: Vec<usize> = self.starts[..plan.bins].to_vec();
        for (position, &u) in (first_position..).zip(sources) {
            for &v in neighbours(u) {
                let at = &mut cursor[plan.bin_of(v)];
                self.pairs[*at] = plan.pair(v, position);
                *at += 1;
            }
        }
        debug_assert!(cursor.iter().zip(&self.starts[1..]).all(|(c, s)| c == s));
        scattered as u64
    }
}

/// The frontier's words by frontier position, written by the scatter morsels (each its own
/// positions; a node cut into slices writes its one word from each) and read by apply.
#[derive(Debug, Default)]
pub struct FrontierWords {
    words: Vec<AtomicU64>,
}

impl FrontierWords {
    /// Sizes the list to a frontier of `len` nodes (the values are written by scatter).
    pub fn resize(&mut self, len: usize) {
        self.words.resize_with(len, AtomicU64::default);
    }

    /// Records the words of the frontier nodes `sources` at positions from `first` on.
    pub fn record<W: LaneWord>(&self, (sources, first): (&[u32], usize), current: &[W]) {
        for (slot, &u) in self.words[first..first + sources.len()].iter().zip(sources) {
            slot.store(current[u as usize].get(), Ordering::Relaxed);
        }
    }

    pub fn held_bytes(&self) -> u64 {
        self.words.capacity() as u64 * 8
    }

    /// The value recorded at `position`.
    #[inline(always)]
    fn at(&self, position: usize) -> u64 {
        self.words[position].load(Ordering::Relaxed)
    }
}

/// Applies the pairs of bin `bin` (from every scatter piece): each source's frontier word, less
/// the lanes that have seen the destination, is ORed into the destination's `next` word with
/// a plain load and store (the caller is the only writer of this bin's range during the
/// phase). Pushes each destination whose `next` word was zero before onto `found`.
pub fn apply<'p, W: LaneWord>(
    (plan, bin): (&BinPlan, usize),
    pairs: impl IntoIterator<Item = &'p [u32]>,
    frontier: &FrontierWords,
    (seen, next): (&[W], &[W]),
    found: &mut Vec<u32>,
) {
    let range = plan.range(bin, seen.len() as u32);
    let seen = &seen[range.start as usize..range.end as usize];
    let next = &next[range.start as usize..range.end as usize];
    collect_reached(found, range, |slots| {
        let mut kept = 0usize;
        for &pair in pairs.into_iter().flatten() {
            let offset = plan.offset_of(pair);
            let word = frontier.at(plan.position_of(pair));
            let bits = word & !seen[offset].get();
            let before = next[offset].get();
            let after = before | bits;
            next[offset].set(after);
            slots[kept] = offset as u32;
            kept += usize::from(before == 0 && after != 0);
        }
        kept
    });
}

/// Runs `fill` over slots for the nodes a bin newly reaches, without a branch per pair: `fill`
/// writes every pair's destination offset into the next free slot and advances past it only
/// for a newly reached node, returning the slots kept. A node is newly reached once, so the
/// range's width plus one slot always suffices. The kept offsets join `found` as node ids.
fn collect_reached(
    found: &mut Vec<u32>,
    range: Range<u32>,
    fill: impl FnOnce(&mut [u32]) -> usize,
) {
    let first = found.len();
    found.resize(first + range.len() + 1, 0);
    let kept = fill(&mut found[first..]);
    assert!(kept <= range.len(), "each node of the bin is reached once");
    found.truncate(first + kept);
    for v in &mut found[first..] {
        *v += range.start;
    }
}

/// A one-source search's claims for bin `bin` (from every scatter piece): each destination
/// still `unreached` gets distance `level` with a plain load and store (the caller is the only
/// writer of this bin's range during the phase) and is pushed onto `found` once, without a
/// branch per pair. The pairs' source positions are not read.
pub fn claim_unreached<'p>(
    (plan, bin): (&BinPlan, usize),
    pairs: impl IntoIterator<Item = &'p [u32]>,
    dist: &[AtomicU32],
    (level, unreached): (u32, u32),
    found: &mut Vec<u32>,
) {
    assert_ne!(level, unreached, "a level is a distance");
    let range = plan.range(bin, dist.len() as u32);
    let dist = &dist[range.start as usize..range.end as usize];
    collect_reached(found, range, |slots| {
        let mut kept = 0usize;
        for &pair in pairs.into_iter().flatten() {
            let offset = plan.offset_of(pair);
            let (new, _) = claim_distance(&dist[offset], level, unreached);
            slots[kept] = offset as u32;
            kept += usize::from(new);
        }
        kept
    });
}

/// Gives `slot` distance `level` if it is still `unreached`, with a plain load and store (the
/// caller is the slot's only writer in this phase): whether it was, and the distance after.
#[inline(always)]
fn claim_distance(slot: &AtomicU32, level: u32, unreached: u32) -> (bool, u32) {
    let before = slot.load(Ordering::Relaxed);
    let new = before == unreached;
    let after = if new { level } else { before };
    slot.store(after, Ordering::Relaxed);
    (new, after)
}

/// A one-source search's claims with path counts (`PathCounts` mode) for bin `bin` (from every
/// scatter piece): each destination still `unreached` gets distance `level` and is pushed onto
/// `found` once, and every destination at distance `level` (newly or in an earlier round of
/// the level) adds the path count its source's frontier position recorded in `counts`. Plain
/// loads and stores (the caller is the only writer of this bin's range), no branch per pair.
/// Returns whether a count overflowed `u64`, and the paths added to the level's nodes.
pub fn claim_counting<'p>(
    (plan, bin): (&BinPlan, usize),
    pairs: impl IntoIterator<Item = &'p [u32]>,
    counts: &FrontierWords,
    (dist, paths): (&[AtomicU32], &[AtomicU64]),
    (level, unreached): (u32, u32),
    found: &mut Vec<u32>,
) -> (bool, u128) {
    assert_ne!(level, unreached, "a level is a distance");
    assert_eq!(dist.len(), paths.len(), "a count per node");
    let range = plan.range(bin, dist.len() as u32);
    let dist = &dist[range.start as usize..range.end as usize];
    let paths = &paths[range.start as usize..range.end as usize];
    let mut overflow = false;
    let mut added = 0u128;
    collect_reached(found, range, |slots| {
        let mut kept = 0usize;
        for &pair in pairs.into_iter().flatten() {
            let offset = plan.offset_of(pair);
            let (new, after) = claim_distance(&dist[offset], level, unreached);
            // All ones when the destination is at this level, else zero.
            let at_level = u64::from(after == level).wrapping_neg();
            let add = counts.at(plan.position_of(pair)) & at_level;
            let (sum, carried) = paths[offset].load(Ordering::Relaxed).overflowing_add(add);
            paths[offset].store(sum, Ordering::Relaxed);
            overflow |= carried;
            added += u128::from(add);
            slots[kept] = offset as u32;
            kept += usize::from(new);
        }
        kept
    });
    (overflow, added)
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU64;

    use proptest::prelude::*;

    use super::*;
    use crate::recursive::lanes::words;

    #[test]
    fn bins_cover_the_nodes_in_cache_sized_ranges() {
        for (nodes, word_bytes) in [
            (1u32, 8usize),
            (63, 8),
            (5_000, 2),
            (262_144, 8),
            (2_097_152, 8),
            (2_097_152, 1),
        ] {
            let plan = BinPlan::for_graph(nodes, word_bytes);
            let covered: usize = (0..plan.bins()).map(|b| plan.range(b, nodes).len()).sum();
            assert_eq!(covered, nodes as usize, "{nodes} nodes");
            assert_eq!(plan.range(plan.bins() - 1, nodes).end, nodes);
            let width = plan.range(0, nodes).len();
            assert!(
                width * 2 * word_bytes <= BIN_STATE_BYTES,
                "{nodes}: {width}"
            );
            assert!(
                plan.bins() >= BINS_MIN || nodes <= 64 * BINS_MIN as u32,
                "{nodes}"
            );
        }
        assert_eq!(BinPlan::for_graph(262_144, 8).bins(), 64);
        assert_eq!(BinPlan::for_graph(2_097_152, 8).bins(), 128);
        assert_eq!(BinPlan::for_graph(2_097_152, 8).positions_max(), 1 << 18);
    }

    #[test]
    fn a_level_is_binned_within_its_limits() {
        let plan = BinPlan::for_graph(1_000_000, 8);
        let min = BINNED_EDGES_MIN;
        assert!(!plan.binned(min - 1, 10, 1_000_000, min));
        assert!(plan.binned(min, 10, 1_000_000, min));
        assert!(plan.binned(2_000_000, 10, 1_000_000, min));
        assert!(!plan.binned(2_000_001, 10, 1_000_000, min));
        assert!(!plan.binned(min, plan.positions_max() + 1, 1_000_000, min));
        assert!(plan.binned(3, 1, 10, 0));
        assert_eq!(pair_bytes(1_000_000), 8_000_000);
    }

    #[test]
    fn counting_claims_add_counts_across_rounds_and_flag_an_overflow() {
        // Frontier: positions 0 and 1 (nodes 7 and 8) with 2 and 3 paths; node 9 was reached
        // at an earlier level. Round one: 7 -> 1, 7 -> 9; round two: 8 -> 1, 8 -> 2.
        let nodes = 10u32;
        let plan = BinPlan::for_node_bytes(nodes, 12);
        let dist: Vec<AtomicU32> = (0..nodes).map(|_| AtomicU32::new(u32::MAX)).collect();
        let paths: Vec<AtomicU64> = (0..nodes).map(|_| AtomicU64::new(0)).collect();
        dist[9].store(1, Ordering::Relaxed);
        paths[9].store(5, Ordering::Relaxed);
        let frontier = [7u32, 8];
        let mut counts = FrontierWords::default();
        counts.resize(2);
        let recorded: Vec<AtomicU64> = (0..nodes).map(|_| AtomicU64::new(0)).collect();
        recorded[7].store(2, Ordering::Relaxed);
        recorded[8].store(3, Ordering::Relaxed);
        counts.record((&frontier[..], 0), &recorded[..]);
        let lists = |u: u32| -> &'static [u32] {
            match u {
                7 => &[1, 9],
                _ => &[1, 2],
            }
        };
        let mut found = Vec::new();
        // Scatters `sources` (from frontier position `first`) and claims every bin: whether a
        // count overflowed, and the paths added to nodes at the level.
        let round = |sources: &[u32], first: usize, found: &mut Vec<u32>| {
            let mut bins = Bins::default();
            bins.scatter(&plan, (sources, first), lists);
            let state = (&dist[..], &paths[..]);
            let level = (2, u32::MAX);
            let claim = |bin| {
                claim_counting(
                    (&plan, bin),
                    [bins.pairs(bin)],
                    &counts,
                    state,
                    level,
                    found,
                )
            };
            let fold = |(a, x): (bool, u128), (b, y): (bool, u128)| (a | b, x + y);
            (0..plan.bins()).map(claim).fold((false, 0), fold)
        };
        // Round one adds 2 to node 1 (node 9 is at an earlier level); round two 3 to 1 and 2.
        assert_eq!(round(&frontier[..1], 0, &mut found), (false, 2));
        assert_eq!(round(&frontier[1..], 1, &mut found), (false, 6));
        found.sort_unstable();
        assert_eq!(
            found,
            [1, 2],
            "each node found once, in the round that reached it"
        );
        let got: Vec<u64> = paths.iter().map(|p| p.load(Ordering::Relaxed)).collect();
        let expected = [0, 5, 3, 0, 0, 0, 0, 0, 0, 5];
        assert_eq!(got, expected, "node 9's count is an earlier level's");
        assert_eq!(dist[1].load(Ordering::Relaxed), 2);
        // A count past u64 is reported.
        recorded[8].store(u64::MAX, Ordering::Relaxed);
        counts.record((&frontier[1..], 1), &recorded[..]);
        assert!(round(&frontier[1..], 1, &mut found).0);
    }

    proptest! {
        /// Scattering (the frontier cut into morsels, a node's list possibly split) then
        /// applying bin by bin gives every `next` word the direct push's value, and finds each
        /// newly reached node once.
        #[test]
        fn binned_push_matches_the_direct_push(
            nodes in 1u32..5000,
            edges in proptest::collection::vec((0u32..5000, 0u32..5000), 0..1500),
            words_seed in proptest::collection::vec(any::<u64>(), 64),
            morsels in 1usize..5,
        ) {
            let edges: Vec<(u32, u32)> = edges.iter().map(|&(a, b)| (a % nodes, b % nodes)).collect();
            let n = nodes as usize;
            let seen = words::<AtomicU64>(n);
            let current = words::<AtomicU64>(n);
            for v in 0..n {
                seen[v].set(words_seed[v % 64] & 0xF0F0_F0F0);
                current[v].set(words_seed[(v * 7 + 3) % 64] & 0xFF00_FF00);
            }
            let mut frontier: Vec<u32> = edges.iter().map(|&(u, _)| u).collect();
            frontier.sort_unstable();
            frontier.dedup();
            let mut lists: Vec<Vec<u32>> = vec![Vec::new(); n];
            for &(u, v) in &edges {
                lists[u as usize].push(v);
            }
            // The direct push.
            let mut expected = vec![0u64; n];
            for &u in &frontier {
                for &v in &lists[u as usize] {
                    expected[v as usize] |= current[u as usize].get() & !seen[v as usize].get();
                }
            }
            // The binned push, the frontier cut into morsels.
            let plan = BinPlan::for_graph(nodes, 8);
            let mut recorded = FrontierWords::default();
            recorded.resize(frontier.len());
            let chunk = frontier.len().div_ceil(morsels).max(1);
            let mut pieces: Vec<Bins> = Vec::new();
            let mut scattered = 0;
            for (i, part) in frontier.chunks(chunk).enumerate() {
                let first = i * chunk;
                recorded.record((part, first), &current[..]);
                let mut bins = Bins::default();
                scattered += bins.scatter(&plan, (part, first), |u| &lists[u as usize][..]);
                pieces.push(bins);
            }
            prop_assert_eq!(scattered as usize, edges.len());
            let next = words::<AtomicU64>(n);
            let mut found = Vec::new();
            for bin in 0..plan.bins() {
                let range = plan.range(bin, nodes);
                let before = found.len();
                apply((&plan, bin), pieces.iter().map(|p| p.pairs(bin)), &recorded, (&seen[..], &next[..]), &mut found);
                prop_assert!(found[before..].iter().all(|v| range.contains(v)));
            }
            let got: Vec<u64> = next.iter().map(LaneWord::get).collect();
            prop_assert_eq!(&got, &expected);
            let mut found_sorted = found.clone();
            found_sorted.sort_unstable();
            found_sorted.dedup();
            prop_assert_eq!(found_sorted.len(), found.len(), "each node found once");
            let reached: Vec<u32> = (0..nodes).filter(|&v| expected[v as usize] != 0).collect();
            prop_assert_eq!(found_sorted, reached);
        }
    }
}

//! Compressed sparse row adjacency of one rel table in one direction: for node `v`, its
//! neighbours are `neighbours[offsets[v]..offsets[v+1]]` and the rel ids alongside them. Within a
//! node, entries are in rel-id order (CSV row order), which makes traversal order deterministic.

use std::sync::{Arc, OnceLock};

use crate::adjacency::AdjacencyView;
use crate::buffer::{Bytes, U32Words};
use crate::section_check::{ChecksumMismatch, SectionCheck};

#[derive(Clone, Debug)]
pub struct Csr {
    /// `num_nodes + 1` u64 offsets.
    offsets: Bytes,
    /// u32 neighbour offsets in the other endpoint's node table.
    neighbours: Bytes,
    /// u32 rel offsets in the rel table, parallel to `neighbours`.
    rel_ids: Bytes,
    /// A bit per node with an entry, computed on first use and shared by the clones (the
    /// arrays never change once built).
    nonempty_bits: Arc<OnceLock<Vec<u64>>>,
}

impl Csr {
    pub fn empty(num_nodes: usize) -> Self {
        Self {
            offsets: Bytes::from_vec(vec![0u64; num_nodes + 1]),
            neighbours: Bytes::empty(),
            rel_ids: Bytes::empty(),
            nonempty_bits: Arc::default(),
        }
    }

    /// Builds the adjacency of `num_nodes` nodes from rels given as parallel `sources` and
    /// `targets` arrays (index = rel id). Rels for which `is_live` is false are left out.
    pub fn build(
        num_nodes: usize,
        sources: &[u32],
        targets: &[u32],
        is_live: impl Fn(usize) -> bool,
    ) -> Self {
        let shift =
            (sources.len() >= PARTITIONED_BUILD_MIN_RELS).then(|| partition_shift(num_nodes));
        Self::build_with(num_nodes, sources, targets, is_live, shift)
    }

    /// [`Csr::build`], placing the entries directly (`partition_shift` `None`) or in two passes
    /// over partitions of `1 << partition_shift` nodes (see [`place_partitioned`]).
    fn build_with(
        num_nodes: usize,
        sources: &[u32],
        targets: &[u32],
        is_live: impl Fn(usize) -> bool,
        partition_shift: Option<u32>,
    ) -> Self {
        assert_eq!(sources.len(), targets.len());
        let mut offsets = vec![0u64; num_nodes + 1];
        let (neighbour_words, rel_words) = match partition_shift {
            Some(shift) if num_nodes > 0 => {
                place_partitioned(&mut offsets, sources, targets, &is_live, shift)
            }
            _ => place_directly(&mut offsets, sources, targets, &is_live),
        };
        Self {
            offsets: Bytes::from_vec(offsets),
            neighbours: neighbour_words.into_bytes(),
            rel_ids: rel_words.into_bytes(),
            nonempty_bits: Arc::default(),
        }
    }

    /// Reassembles a CSR from parts read from disk; [`Csr::validate`] must be called after.
    pub fn from_parts(offsets: Bytes, neighbours: Bytes, rel_ids: Bytes) -> Self {
        Self {
            offsets,
            neighbours,
            rel_ids,
            nonempty_bits: Arc::default(),
        }
    }

    pub fn parts(&self) -> (Bytes, Bytes, Bytes) {
        (
            self.offsets.clone(),
            self.neighbours.clone(),
            self.rel_ids.clone(),
        )
    }

    /// Checks the sizes of the parts without reading them: one more offset than nodes is not
    /// knowable here, but the neighbour and rel arrays must have the same length and at most
    /// one entry per rel in each direction.
    pub fn check_sizes(&self, num_rels: u64) -> Result<(), String> {
        let edges = self.neighbours.len() / 4;
        if self.rel_ids.len() != self.neighbours.len() || edges as u64 > num_rels {
            return Err("CSR arrays do not match the rel count".into());
        }
        if self.offsets.len() < 8 || !self.offsets.len().is_multiple_of(8) {
            return Err("CSR offsets are malformed".into());
        }
        Ok(())
    }

    /// Verifies the mapped parts' checksums, naming every damaged block (`warren check`).
    pub fn verify(&self) -> Result<(), String> {
        self.offsets.verify()?;
        self.neighbours.verify()?;
        self.rel_ids.verify()
    }

    /// Verifies every block of the mapped parts: the first mismatch.
    pub fn try_verify(&self) -> Result<(), ChecksumMismatch> {
        self.offsets.try_bytes()?;
        self.neighbours.try_bytes()?;
        self.rel_ids.try_bytes()?;
        Ok(())
    }

    /// The arrays without verifying their checksums, for a reader that verifies the blocks it
    /// touches ([`crate::adjacency::AdjacencyView::stored`]).
    pub(crate) fn unverified_arrays(&self) -> (&[u64], &[u32], &[u32]) {
        (
            self.offsets.cast_unverified(),
            self.neighbours.cast_unverified(),
            self.rel_ids.cast_unverified(),
        )
    }

    /// The checks of the parts that still have unverified blocks (offsets, neighbours, rels).
    pub(crate) fn pending_checks(&self) -> [Option<&SectionCheck>; 3] {
        fn pending(bytes: &Bytes) -> Option<&SectionCheck> {
            bytes.check().filter(|check| !check.is_verified())
        }
        [
            pending(&self.offsets),
            pending(&self.neighbours),
            pending(&self.rel_ids),
        ]
    }

    /// Checks every structural invariant: offsets start at 0, never decrease and end at the
    /// edge count; neighbours are valid offsets of the target table; rel ids are in range.
    pub fn validate(&self, num_targets: u64, num_rels: u64) -> Result<(), String> {
        let offsets = self.offsets();
        if offsets.first() != Some(&0) {
            return Err("CSR offsets do not start at 0".into());
        }
        if offsets.windows(2).any(|w| w[0] > w[1]) {
            return Err("CSR offsets decrease".into());
        }
        let edges = self.neighbours().len();
        if offsets.last().copied() != Some(edges as u64) || self.rel_ids().len() != edges {
            return Err("CSR offsets do not match the edge count".into());
        }
        if self
            .neighbours()
            .iter()
            .any(|&n| u64::from(n) >= num_targets)
        {
            return Err("CSR neighbour out of range".into());
        }
        if self.rel_ids().iter().any(|&r| u64::from(r) >= num_rels) {
            return Err("CSR rel id out of range".into());
        }
        Ok(())
    }

    /// Nodes covered by this CSR (nodes added to the table later have no entries yet); from
    /// the arrays' lengths, reading none of them.
    pub fn num_nodes(&self) -> usize {
        self.offsets.len() / 8 - 1
    }

    pub fn num_edges(&self) -> usize {
        self.neighbours.len() / 4
    }

    pub fn offsets(&self) -> &[u64] {
        self.offsets.cast()
    }

    /// A bit per node (64 nodes a word, node `v` at bit `v % 64` of word `v / 64`), set when
    /// the node has an entry: from the offsets as stored, not verified against their checksum
    /// (a hint for loops whose own reads are verified). Computed on the first call and kept
    /// with the arrays, so that each query's traversal graph does not pass over every offset
    /// again (7 ms at Graph500 scale 22; OPTIMIZATION_LOG 226).
    pub fn nonempty_bits(&self) -> &[u64] {
        self.nonempty_bits.get_or_init(|| {
            let view = AdjacencyView::csr(self.offsets(), self.neighbours(), self.rel_ids());
            let nodes = u32::try_from(self.num_nodes()).expect("node ids fit in u32");
            view.unverified_nonempty_words(nodes)
        })
    }

    pub fn neighbours(&self) -> &[u32] {
        self.neighbours.cast()
    }

    pub fn rel_ids(&self) -> &[u32] {
        self.rel_ids.cast()
    }

    /// The range of `node`'s entries in `neighbours()` / `rel_ids()`.
    #[inline]
    pub fn range(&self, node: u32) -> std::ops::Range<usize> {
        let offsets = self.offsets();
        let node = node as usize;
        if node + 1 >= offsets.len() {
            return 0..0;
        }
        offsets[node] as usize..offsets[node + 1] as usize
    }

    pub fn degree(&self, node: u32) -> usize {
        self.range(node).len()
    }
}

/// Builds with at least this many rels place their entries in two passes ([`place_partitioned`]):
/// below it the arrays fit in the cache and one pass is faster.
const PARTITIONED_BUILD_MIN_RELS: usize = 1 << 22;
/// The number of partitions the two-pass placement aims for: few enough that each has a write
/// stream that stays in the cache in the first pass, many enough that a partition's entries
/// stay in the cache in the second.
const PARTITIONS_TARGET: usize = 256;
/// The largest partition: a node's offset within it is kept in a u16 between the passes.
const PARTITION_SHIFT_MAX: u32 = 16;

/// The partition size (as a shift) for `num_nodes` nodes.
fn partition_shift(num_nodes: usize) -> u32 {
    let nodes_per_partition = num_nodes.div_ceil(PARTITIONS_TARGET).max(1);
    nodes_per_partition
        .next_power_of_two()
        .trailing_zeros()
        .min(PARTITION_SHIFT_MAX)
}

/// The arrays a build fills.
struct Placed<'a> {
    neighbours: &'a mut [u32],
    rel_ids: &'a mut [u32],
}

/// Counts each live rel's source into `offsets` (all zero, one more than the nodes) and turns
/// the counts into offsets, then places every live rel at its source's next free slot, in rel
/// order: one random write per rel, which misses the cache once the arrays outgrow it.
fn place_directly(
    offsets: &mut [u64],
    sources: &[u32],
    targets: &[u32],
    is_live: &impl Fn(usize) -> bool,
) -> (U32Words, U32Words) {
    for (rel, &source) in sources.iter().enumerate() {
        if is_live(rel) {
            offsets[source as usize + 1] += 1;
        }
    }
    for i in 1..offsets.len() {
        offsets[i] += offsets[i - 1];
    }
    let edges = offsets[offsets.len() - 1] as usize;
    let (mut neighbour_words, mut rel_words) = (U32Words::zeroed(edges), U32Words::zeroed(edges));
    let placed = Placed {
        neighbours: neighbour_words.as_mut_slice(),
        rel_ids: rel_words.as_mut_slice(),
    };
    let mut cursor: Vec<u64> = offsets[..offsets.len() - 1].to_vec();
    for (rel, (&source, &target)) in sources.iter().zip(targets).enumerate() {
        if !is_live(rel) {
            continue;
        }
        let slot = &mut cursor[source as usize];
        placed.neighbours[*slot as usize] = target;
        placed.rel_ids[*slot as usize] = rel as u32;
        *slot += 1;
    }
    (neighbour_words, rel_words)
}

/// Places the live rels in two passes over partitions of `1 << shift` consecutive source
/// nodes, after counting the rels of each partition (a count array that stays in the cache).
/// The first pass appends each rel, in rel order, to its partition's range of the arrays (one
/// sequential write stream per partition), keeping its source's offset within the partition;
/// the second, partition by partition, counts the partition's nodes' degrees into `offsets`
/// (all zero, one more than the nodes) and moves the entries to their nodes' slots within that
/// range, which stays in the cache. No pass writes at random into the whole offset array. Both
/// passes keep rel order, so the result is [`place_directly`]'s.
fn place_partitioned(
    offsets: &mut [u64],
    sources: &[u32],
    targets: &[u32],
    is_live: &impl Fn(usize) -> bool,
    shift: u32,
) -> (U32Words, U32Words) {
    assert!(shift <= PARTITION_SHIFT_MAX, "partition offsets are u16");
    let num_nodes = offsets.len() - 1;
    let partitions = ((num_nodes - 1) >> shift) + 1;
    let mut starts = vec![0usize; partitions + 1];
    for (rel, &source) in sources.iter().enumerate() {
        if is_live(rel) {
            starts[(source >> shift) as usize + 1] += 1;
        }
    }
    for i in 1..starts.len() {
        starts[i] += starts[i - 1];
    }
    let edges = starts[partitions];
    let (mut neighbour_words, mut rel_words) = (U32Words::zeroed(edges), U32Words::zeroed(edges));
    let placed = Placed {
        neighbours: neighbour_words.as_mut_slice(),
        rel_ids: rel_words.as_mut_slice(),
    };
    let mut local_sources = vec![0u16; edges];
    let mut fill: Vec<usize> = starts[..partitions].to_vec();
    let low_bits = (1u32 << shift) - 1;
    for (rel, (&source, &target)) in sources.iter().zip(targets).enumerate() {
        if !is_live(rel) {
            continue;
        }
        let at = &mut fill[(source >> shift) as usize];
        placed.neighbours[*at] = target;
        placed.rel_ids[*at] = rel as u32;
        local_sources[*at] = (source & low_bits) as u16;
        *at += 1;
    }
    let (mut staged_targets, mut staged_rels) = (Vec::new(), Vec::new());
    let mut cursor = Vec::new();
    for partition in 0..partitions {
        let range = starts[partition]..starts[partition + 1];
        let first_node = partition << shift;
        let end_node = ((partition + 1) << shift).min(num_nodes);
        let local_offsets = &mut offsets[first_node..=end_node];
        for &local in &local_sources[range.clone()] {
            local_offsets[usize::from(local) + 1] += 1;
        }
        local_offsets[0] = range.start as u64;
        for i in 1..local_offsets.len() {
            local_offsets[i] += local_offsets[i - 1];
        }
        assert_eq!(local_offsets[local_offsets.len() - 1], range.end as u64);
        staged_targets.clear();
        staged_targets.extend_from_slice(&placed.neighbours[range.clone()]);
        staged_rels.clear();
        staged_rels.extend_from_slice(&placed.rel_ids[range.clone()]);
        cursor.clear();
        cursor.extend_from_slice(&offsets[first_node..end_node]);
        let entries = staged_targets.iter().zip(&staged_rels);
        for ((&target, &rel), &local) in entries.zip(&local_sources[range]) {
            let slot = &mut cursor[usize::from(local)];
            placed.neighbours[*slot as usize] = target;
            placed.rel_ids[*slot as usize] = rel;
            *slot += 1;
        }
    }
    (neighbour_words, rel_words)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nonempty_bits_mark_the_nodes_with_entries_and_are_kept() {
        // 130 nodes (three words): node v has entries when some rel starts at v.
        let sources: Vec<u32> = (0..130u32)
            .filter(|v| v % 3 == 0)
            .chain([64, 129])
            .collect();
        let targets: Vec<u32> = sources.iter().map(|v| (v * 7 + 1) % 130).collect();
        let csr = Csr::build(130, &sources, &targets, |_| true);
        let bits = csr.nonempty_bits();
        assert_eq!(bits.len(), 3);
        for v in 0..130u32 {
            let got = bits[(v / 64) as usize] >> (v % 64) & 1 == 1;
            assert_eq!(got, sources.contains(&v), "node {v}");
        }
        assert_eq!(bits[2] >> 2, 0, "no bits past the last node");
        // Computed once: a clone shares them.
        let clone = csr.clone();
        assert!(std::ptr::eq(clone.nonempty_bits(), bits));
    }

    #[test]
    fn builds_in_rel_order_and_skips_dead_rels() {
        // rels: 0: 0->1, 1: 1->2, 2: 0->2, 3: 0->1 (deleted)
        let csr = Csr::build(3, &[0, 1, 0, 0], &[1, 2, 2, 1], |rel| rel != 3);
        assert_eq!(csr.offsets(), &[0, 2, 3, 3]);
        assert_eq!(&csr.neighbours()[csr.range(0)], &[1, 2]);
        assert_eq!(&csr.rel_ids()[csr.range(0)], &[0, 2]);
        assert_eq!(csr.range(7), 0..0);
        csr.validate(3, 4).unwrap();
        assert!(csr.validate(2, 4).is_err());
    }

    #[test]
    fn partition_shift_aims_for_256_partitions_of_at_most_65536_nodes() {
        assert_eq!(partition_shift(1), 0);
        assert_eq!(partition_shift(1 << 23), 15);
        assert_eq!(partition_shift(1 << 30), 16);
    }

    proptest::proptest! {
        /// The two-pass placement gives the one-pass placement's CSR for any partition size.
        #[test]
        fn partitioned_placement_equals_direct_placement(
            num_nodes in 1usize..300,
            rels in proptest::collection::vec((0u32..300, 0u32..300, proptest::bool::weighted(0.9)), 0..2000),
            shift in 0u32..10,
        ) {
            let sources: Vec<u32> = rels.iter().map(|r| r.0 % num_nodes as u32).collect();
            let targets: Vec<u32> = rels.iter().map(|r| r.1).collect();
            let live = |rel: usize| rels[rel].2;
            let direct = Csr::build_with(num_nodes, &sources, &targets, live, None);
            let partitioned = Csr::build_with(num_nodes, &sources, &targets, live, Some(shift));
            proptest::prop_assert_eq!(direct.offsets(), partitioned.offsets());
            proptest::prop_assert_eq!(direct.neighbours(), partitioned.neighbours());
            proptest::prop_assert_eq!(direct.rel_ids(), partitioned.rel_ids());
        }
    }
}

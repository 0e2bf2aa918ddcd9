//! The adjacency a traversal reads when a rel table has a delta: a base CSR (the stored one, or
//! the stored one merged with the delta of some earlier version) and, for each node group
//! (2^[`GROUP_SHIFT`] consecutive nodes) whose entries differ from the base, a patch holding
//! that group's merged entries (stored entries minus deleted rels, then appended rels, per node
//! in rel order). Groups without a patch are read from the base in place.
//!
//! A table version's patches are derived from its parent version's, when the parent built
//! them: only the groups the commit between them touched are rebuilt, and the others are
//! shared. So the first traversal after a commit costs O(touched groups), not O(edges). When
//! patches cover more than [`PATCHED_SHARE_MAX`] of the groups (a large delta), the caller
//! merges the whole delta into a new base instead, so that reads go back to the flat arrays.
//! [`AdjacencyView`] is what the recursive engine's loops read: one predictable branch per
//! node, taken only when there are patches or blocks of the stored arrays not yet verified
//! against their checksums (a view over a mapped CSR verifies the blocks each node's entries
//! lie in when it first reads them, and records a mismatch in the query's
//! [`CorruptionSlot`]).

use std::sync::Arc;

use imbl::{OrdMap, OrdSet};

use crate::csr::Csr;
use crate::section_check::{CorruptionSlot, SectionCheck};

/// Nodes per group: 2^GROUP_SHIFT.
pub const GROUP_SHIFT: u32 = 8;
const GROUP_NODES: usize = 1 << GROUP_SHIFT;
const GROUP_MASK: u32 = (1 << GROUP_SHIFT) - 1;
/// The share of patched groups above which a merged base pays (reads through patches take an
/// extra indirection; see docs/OPTIMIZATION_LOG.md).
pub const PATCHED_SHARE_MAX: f64 = 0.25;

/// The merged entries of one node group.
#[derive(Debug, Default)]
pub struct Patch {
    /// `GROUP_NODES + 1` offsets into `neighbours` and `rel_ids`, relative to the group.
    offsets: Vec<u32>,
    neighbours: Vec<u32>,
    rel_ids: Vec<u32>,
}

impl Patch {
    #[inline]
    fn entries(&self, local: u32) -> (&[u32], &[u32]) {
        let local = local as usize;
        let range = self.offsets[local] as usize..self.offsets[local + 1] as usize;
        (&self.neighbours[range.clone()], &self.rel_ids[range])
    }

    fn num_entries(&self) -> u64 {
        self.neighbours.len() as u64
    }
}

/// What a delta's traversal needs, in one direction: appended entries (owner, rel) ->
/// neighbour and the deleted rels.
pub struct DeltaEntries<'a> {
    pub appended: &'a OrdMap<(u32, u32), u32>,
    pub deleted: &'a OrdSet<u64>,
}

/// One direction's adjacency with a delta: the stored CSR, the base and the patched groups.
#[derive(Clone, Debug)]
pub struct PatchedCsr {
    /// The segment's CSR: patches are built from it and the whole delta.
    stored: Csr,
    /// What unpatched groups read: `stored`, or a merged CSR of an earlier version.
    base: Csr,
    /// One slot per group covering `num_nodes`; `None` where the base is right.
    patches: Arc<[Option<Arc<Patch>>]>,
    /// How many slots of `patches` hold a patch.
    patched_groups: usize,
    num_nodes: usize,
    num_entries: u64,
}

fn group_count(num_nodes: usize) -> usize {
    num_nodes.div_ceil(GROUP_NODES)
}

impl PatchedCsr {
    /// Builds the patches of every group the delta touches (and of every group holding nodes
    /// the stored CSR does not cover). `touched_owners` lists the owner nodes of appended
    /// entries and of deleted rels in this direction.
    pub fn build(
        stored: &Csr,
        delta: &DeltaEntries<'_>,
        touched_owners: impl Iterator<Item = u32>,
        num_nodes: usize,
    ) -> Self {
        let mut groups: Vec<usize> = touched_owners
            .map(|v| (v >> GROUP_SHIFT) as usize)
            .collect();
        groups.extend(uncovered_groups(stored.num_nodes(), num_nodes));
        let empty = Self {
            stored: stored.clone(),
            base: stored.clone(),
            patches: vec![None; group_count(num_nodes)].into(),
            patched_groups: 0,
            num_nodes,
            num_entries: stored.num_edges() as u64,
        };
        empty.rebuilt(delta, groups, num_nodes)
    }

    /// The adjacency of `merged`, the stored CSR merged with the whole delta (no patches).
    pub fn merged(stored: &Csr, merged: Csr) -> Self {
        let num_nodes = merged.num_nodes();
        Self {
            stored: stored.clone(),
            num_entries: merged.num_edges() as u64,
            base: merged,
            patches: vec![None; group_count(num_nodes)].into(),
            patched_groups: 0,
            num_nodes,
        }
    }

    /// Whether so many groups are patched that a merged base would read faster.
    pub fn mostly_patched(&self) -> bool {
        self.patched_groups() as f64 > PATCHED_SHARE_MAX * self.patches.len() as f64
    }

    /// Whether patches for `groups` (distinct) would cover too much of `num_nodes` nodes' groups.
    pub fn too_many_groups(groups: usize, num_nodes: usize) -> bool {
        groups as f64 > PATCHED_SHARE_MAX * group_count(num_nodes) as f64
    }

    /// This adjacency after a commit that touched `touched_owners` (owners of appended entries
    /// and of deleted rels) and grew the node table to `num_nodes`: those groups are rebuilt
    /// from `delta` (the new version's whole delta) and the others shared.
    pub fn derive(
        &self,
        delta: &DeltaEntries<'_>,
        touched_owners: &[u32],
        num_nodes: usize,
    ) -> Self {
        assert!(num_nodes >= self.num_nodes, "node tables only grow");
        let mut groups: Vec<usize> = touched_owners
            .iter()
            .map(|&v| (v >> GROUP_SHIFT) as usize)
            .collect();
        // Groups of nodes the base does not cover need a patch; those this version's parent
        // already patched stay right unless touched (their new nodes have no entries).
        let unpatched = |&group: &usize| !matches!(self.patches.get(group), Some(Some(_)));
        groups.extend(uncovered_groups(self.base.num_nodes(), num_nodes).filter(unpatched));
        self.rebuilt(delta, groups, num_nodes)
    }

    /// A copy with `groups` rebuilt from `delta`, covering `num_nodes`.
    fn rebuilt(&self, delta: &DeltaEntries<'_>, mut groups: Vec<usize>, num_nodes: usize) -> Self {
        groups.sort_unstable();
        groups.dedup();
        let mut patches = self.patches.to_vec();
        patches.resize(group_count(num_nodes), None);
        let mut num_entries = self.num_entries;
        for group in groups {
            assert!(group < patches.len(), "touched node beyond the node table");
            num_entries -= self.group_entries(group);
            let patch = build_patch(&self.stored, delta, group, num_nodes);
            num_entries += patch.num_entries();
            patches[group] = Some(Arc::new(patch));
        }
        let patched_groups = patches.iter().filter(|p| p.is_some()).count();
        Self {
            stored: self.stored.clone(),
            base: self.base.clone(),
            patches: patches.into(),
            patched_groups,
            num_nodes,
            num_entries,
        }
    }

    /// Entries this adjacency holds for `group` now.
    fn group_entries(&self, group: usize) -> u64 {
        match self.patches.get(group) {
            Some(Some(patch)) => patch.num_entries(),
            Some(None) => {
                let first = group * GROUP_NODES;
                let end = ((group + 1) * GROUP_NODES).min(self.base.num_nodes());
                let offsets = self.base.offsets();
                if first >= end {
                    0
                } else {
                    offsets[end] - offsets[first]
                }
            }
            None => 0,
        }
    }

    pub fn view(&self) -> AdjacencyView<'_> {
        // Without a patch, the view is a plain CSR: its loops skip the group lookup.
        let patches: &[Option<Arc<Patch>>] = if self.patched_groups == 0 {
            &[]
        } else {
            &self.patches
        };
        AdjacencyView {
            offsets: self.base.offsets(),
            neighbours: self.base.neighbours(),
            rel_ids: self.base.rel_ids(),
            patches,
            num_nodes: self.num_nodes,
            num_entries: self.num_entries,
            guarded: !patches.is_empty(),
            neighbours_guarded: !patches.is_empty(),
            checks: [None; 3],
            slot: None,
        }
    }

    /// Groups with a patch.
    pub fn patched_groups(&self) -> usize {
        self.patched_groups
    }
}

/// The groups holding nodes `covered..num_nodes`, which a stored CSR of `covered` nodes does
/// not describe.
fn uncovered_groups(covered: usize, num_nodes: usize) -> impl Iterator<Item = usize> {
    let first = covered / GROUP_NODES;
    let end = if covered >= num_nodes {
        first
    } else {
        group_count(num_nodes)
    };
    first..end
}

/// The merged entries of `group`: per node, its live stored entries, then its live appended
/// entries, in rel order.
fn build_patch(stored: &Csr, delta: &DeltaEntries<'_>, group: usize, num_nodes: usize) -> Patch {
    let first = (group * GROUP_NODES) as u32;
    let end = ((group + 1) * GROUP_NODES).min(num_nodes) as u32;
    let live = |rel: u32| delta.deleted.is_empty() || !delta.deleted.contains(&u64::from(rel));
    let mut patch = Patch {
        offsets: Vec::with_capacity(GROUP_NODES + 1),
        ..Patch::default()
    };
    patch.offsets.push(0);
    let mut appended = delta.appended.range((first, 0)..(end, 0)).peekable();
    let (stored_neighbours, stored_rels) = (stored.neighbours(), stored.rel_ids());
    for node in first..end {
        for i in stored.range(node) {
            if live(stored_rels[i]) {
                patch.neighbours.push(stored_neighbours[i]);
                patch.rel_ids.push(stored_rels[i]);
            }
        }
        while let Some((&(owner, rel), &neighbour)) = appended.peek() {
            if owner != node {
                break;
            }
            if live(rel) {
                patch.neighbours.push(neighbour);
                patch.rel_ids.push(rel);
            }
            appended.next();
        }
        patch.offsets.push(
            u32::try_from(patch.neighbours.len()).expect("a node group's entries fit in u32"),
        );
    }
    // A last group may be partly beyond the node table: its nodes there have no entries.
    let last = *patch.offsets.last().expect("offsets start with 0");
    patch.offsets.resize(GROUP_NODES + 1, last);
    patch
}

/// The entries of `v` in its group's patch (kept out of line: the stored path is the hot one).
#[inline(never)]
fn patched_entries(patch: &Patch, v: u32) -> (&[u32], &[u32]) {
    patch.entries(v & GROUP_MASK)
}

/// The offsets and neighbours of a CSR whose blocks need no further checks: what a hot
/// traversal loop keeps in registers (two slices) instead of a whole [`AdjacencyView`].
#[derive(Clone, Copy, Debug)]
pub struct PlainNeighbours<'a> {
    offsets: &'a [u64],
    neighbours: &'a [u32],
}

impl<'a> PlainNeighbours<'a> {
    /// Node `v`'s neighbours: one bounds check on the offsets pair, one on the slice.
    #[inline(always)]
    pub fn of(&self, v: u32) -> &'a [u32] {
        let v = v as usize;
        let pair = &self.offsets[v..v + 2];
        &self.neighbours[pair[0] as usize..pair[1] as usize]
    }

    /// Every node's offset into the neighbour array (node `v`'s list is `offsets[v]..
    /// offsets[v + 1]`), for callers that prefetch them.
    #[inline]
    pub fn offsets(&self) -> &'a [u64] {
        self.offsets
    }

    /// The nodes `first..end`'s lists laid end to end: their `end - first + 1` offsets (into
    /// the whole neighbour array) and the neighbours from the first's list to the last's.
    #[inline]
    pub fn span(&self, first: u32, end: u32) -> (&'a [u64], &'a [u32]) {
        assert!(first <= end, "a node range");
        let offsets = &self.offsets[first as usize..=end as usize];
        let neighbours = &self.neighbours[offsets[0] as usize..offsets[offsets.len() - 1] as usize];
        (offsets, neighbours)
    }

    /// Bit `i` set exactly when node `first + i` has entries, for the nodes `first..end`
    /// (at most 64): one pass over consecutive offsets, without a branch per node.
    #[inline]
    pub fn nonempty_bits(&self, first: u32, end: u32) -> u64 {
        assert!(
            first <= end && end - first <= 64,
            "at most one word of nodes"
        );
        let offsets = &self.offsets[first as usize..=end as usize];
        let mut bits = 0u64;
        for (i, pair) in offsets.windows(2).enumerate() {
            bits |= u64::from(pair[0] != pair[1]) << i;
        }
        bits
    }
}

/// A read-only view of one direction's adjacency: node `v`'s (neighbours, rel ids).
#[derive(Clone, Copy, Debug)]
pub struct AdjacencyView<'a> {
    offsets: &'a [u64],
    neighbours: &'a [u32],
    rel_ids: &'a [u32],
    /// Empty when nothing is patched.
    patches: &'a [Option<Arc<Patch>>],
    num_nodes: usize,
    num_entries: u64,
    /// Whether reads take the slow path: there are patches or `checks` to make.
    guarded: bool,
    /// Whether reads of neighbours alone take the slow path: there are patches or checks of
    /// the offsets or neighbours to make (pending rel-id checks leave it on the fast path).
    neighbours_guarded: bool,
    /// The checks of `offsets`, `neighbours` and `rel_ids` while they have unverified blocks.
    checks: [Option<&'a SectionCheck>; 3],
    /// Where a checksum mismatch is recorded; `None` only when `checks` is empty.
    slot: Option<&'a CorruptionSlot>,
}

impl<'a> AdjacencyView<'a> {
    /// A plain CSR given as its arrays (`offsets` has one more entry than nodes).
    pub fn csr(offsets: &'a [u64], neighbours: &'a [u32], rel_ids: &'a [u32]) -> Self {
        assert!(!offsets.is_empty() && neighbours.len() == rel_ids.len());
        Self {
            offsets,
            neighbours,
            rel_ids,
            patches: &[],
            num_nodes: offsets.len() - 1,
            num_entries: neighbours.len() as u64,
            guarded: false,
            neighbours_guarded: false,
            checks: [None; 3],
            slot: None,
        }
    }

    /// A stored CSR read in place, verifying the blocks of each node's entries when it first
    /// reads them: a damaged block is recorded in `slot` and its nodes read as having no
    /// entries. Once every block is verified, views are plain CSRs.
    pub fn stored(csr: &'a Csr, slot: &'a CorruptionSlot) -> Self {
        let (offsets, neighbours, rel_ids) = csr.unverified_arrays();
        let mut view = Self::csr(offsets, neighbours, rel_ids);
        view.checks = csr.pending_checks();
        view.guarded = view.checks.iter().any(Option::is_some);
        view.neighbours_guarded = view.checks[..2].iter().any(Option::is_some);
        view.slot = Some(slot);
        view
    }

    /// The patch of `v`'s group, if it has one.
    #[inline(always)]
    fn patch(&self, v: u32) -> Option<&'a Patch> {
        if self.patches.is_empty() {
            return None;
        }
        self.patches[(v >> GROUP_SHIFT) as usize].as_deref()
    }

    /// Node `v`'s neighbours and the rels (or edges) that reach them.
    #[inline(always)]
    pub fn entries(&self, v: u32) -> (&'a [u32], &'a [u32]) {
        if self.guarded {
            return self.guarded_entries(v);
        }
        self.stored_entries(v)
    }

    /// Node `v`'s neighbours alone, for readers that skip the rel ids: in a checked view only
    /// the offsets' and neighbours' blocks are verified, never the rel ids'.
    #[inline(always)]
    pub fn neighbours(&self, v: u32) -> &'a [u32] {
        if self.neighbours_guarded {
            return self.guarded_neighbours(v);
        }
        self.stored_neighbours(v)
    }

    /// The flat neighbour arrays for a traversal loop that never reads rel ids, when no read
    /// of neighbours takes the slow path (no patches, the offsets' and neighbours' blocks all
    /// verified); `None` otherwise, and the loop reads through [`AdjacencyView::neighbours`].
    #[inline]
    pub fn plain_neighbours(&self) -> Option<PlainNeighbours<'a>> {
        (!self.neighbours_guarded).then(|| self.unchecked_plain())
    }

    /// [`AdjacencyView::plain_neighbours`] for a loop that reads the neighbours of `nodes`
    /// alone. In a view whose only guard is its pending checks, the blocks holding those nodes'
    /// offsets and neighbours are verified here, once per loop instead of once per read, so the
    /// loop runs on the flat arrays long before every block of the section has been read (a
    /// top-down level reads the lists of its frontier only, and may never get there). `None`
    /// when the view has patches or one of the nodes' blocks is damaged: the loop then reads
    /// through [`AdjacencyView::neighbours`], which records the damage and reads that node as
    /// having no entries.
    pub fn plain_neighbours_for(
        &self,
        nodes: impl IntoIterator<Item = u32>,
    ) -> Option<PlainNeighbours<'a>> {
        self.plain_once(|| nodes.into_iter().all(|v| self.verify_node(v, false)))
    }

    /// [`AdjacencyView::plain_neighbours_for`] the nodes of `range`, verified as two byte
    /// ranges (their offsets, then their neighbours) instead of node by node.
    pub fn plain_neighbours_in(&self, range: std::ops::Range<u32>) -> Option<PlainNeighbours<'a>> {
        assert!(
            range.start <= range.end && range.end as usize <= self.num_nodes,
            "a node range within the view"
        );
        self.plain_once(|| self.verify_nodes(range.start as usize..range.end as usize, false))
    }

    /// The flat arrays when `verified` (run only on a view whose one guard is its pending
    /// checks) says the loop's reads are verified; at once on a plain view; never on a
    /// patched one.
    fn plain_once(&self, verified: impl FnOnce() -> bool) -> Option<PlainNeighbours<'a>> {
        if !self.neighbours_guarded {
            return self.plain_neighbours();
        }
        if !self.patches.is_empty() {
            return None;
        }
        verified().then(|| self.unchecked_plain())
    }

    /// [`PlainNeighbours::nonempty_bits`] from the stored offsets, whether or not their blocks
    /// are verified yet, and ignoring patches: a hint for a loop that reads through
    /// [`AdjacencyView::plain_neighbours_in`], whose verification covers the same offsets'
    /// bytes for the nodes it reads (a damaged block fails there, never here), and which a
    /// patched view never gets.
    pub fn unverified_nonempty_bits(&self, first: u32, end: u32) -> u64 {
        self.unchecked_plain().nonempty_bits(first, end)
    }

    /// [`AdjacencyView::unverified_nonempty_bits`] of nodes `0..nodes`, a word per 64 nodes.
    pub fn unverified_nonempty_words(&self, nodes: u32) -> Vec<u64> {
        (0..nodes.div_ceil(64))
            .map(|word| {
                let first = word * 64;
                self.unverified_nonempty_bits(first, (first + 64).min(nodes))
            })
            .collect()
    }

    /// The flat arrays, whatever remains to be checked: only for reads already verified.
    #[inline(always)]
    fn unchecked_plain(&self) -> PlainNeighbours<'a> {
        PlainNeighbours {
            offsets: self.offsets,
            neighbours: self.neighbours,
        }
    }

    /// `v`'s neighbours from the stored arrays, leaving the rel ids untouched.
    #[inline(always)]
    fn stored_neighbours(&self, v: u32) -> &'a [u32] {
        self.unchecked_plain().of(v)
    }

    #[inline(always)]
    fn stored_entries(&self, v: u32) -> (&'a [u32], &'a [u32]) {
        let v = v as usize;
        let (start, end) = (self.offsets[v] as usize, self.offsets[v + 1] as usize);
        (&self.neighbours[start..end], &self.rel_ids[start..end])
    }

    /// [`AdjacencyView::entries`] through a patch or checks (kept out of line: the plain path
    /// is the hot one).
    #[inline(never)]
    fn guarded_entries(&self, v: u32) -> (&'a [u32], &'a [u32]) {
        if let Some(patch) = self.patch(v) {
            return patched_entries(patch, v);
        }
        if !self.verify_node(v, true) {
            return (&[], &[]);
        }
        self.stored_entries(v)
    }

    /// [`AdjacencyView::neighbours`] through a patch or checks.
    #[inline(never)]
    fn guarded_neighbours(&self, v: u32) -> &'a [u32] {
        if let Some(patch) = self.patch(v) {
            return patched_entries(patch, v).0;
        }
        if !self.verify_node(v, false) {
            return &[];
        }
        self.stored_entries(v).0
    }

    /// Verifies the blocks holding `v`'s offsets and neighbours, and its rel ids when
    /// `rel_ids`: false (and the mismatch recorded) if one is damaged.
    fn verify_node(&self, v: u32, with_rel_ids: bool) -> bool {
        self.verify_nodes(v as usize..v as usize + 1, with_rel_ids)
    }

    /// [`AdjacencyView::verify_node`] for every node of `nodes`, as one byte range per array.
    fn verify_nodes(&self, nodes: std::ops::Range<usize>, with_rel_ids: bool) -> bool {
        if nodes.is_empty() {
            return true;
        }
        let [offsets, neighbours, rel_ids] = self.checks;
        let (first, end) = (nodes.start, nodes.end);
        let result = (|| {
            if let Some(check) = offsets {
                check.verify_range(bytemuck::cast_slice(self.offsets), first * 8..end * 8 + 8)?;
            }
            let range = self.offsets[first] as usize * 4..self.offsets[end] as usize * 4;
            if let Some(check) = neighbours {
                check.verify_range(bytemuck::cast_slice(self.neighbours), range.clone())?;
            }
            if let Some(check) = rel_ids.filter(|_| with_rel_ids) {
                check.verify_range(bytemuck::cast_slice(self.rel_ids), range)?;
            }
            Ok(())
        })();
        match result {
            Ok(()) => true,
            Err(mismatch) => {
                self.slot
                    .expect("a checked view has a slot")
                    .record(mismatch);
                false
            }
        }
    }

    #[inline(always)]
    pub fn degree(&self, v: u32) -> u64 {
        if self.neighbours_guarded {
            return self.guarded_neighbours(v).len() as u64;
        }
        let v = v as usize;
        self.offsets[v + 1] - self.offsets[v]
    }

    pub fn num_nodes(&self) -> usize {
        self.num_nodes
    }

    /// Entries over all nodes.
    pub fn num_entries(&self) -> u64 {
        self.num_entries
    }

    /// The first prefetch stage for node `v`: the stored offset telling where its entries
    /// are (`None` when its group is patched).
    #[inline]
    pub fn offset_address(&self, v: u32) -> Option<&'a u64> {
        match self.patch(v) {
            Some(_) => None,
            None => self.offsets.get(v as usize),
        }
    }

    /// The second prefetch stage for node `v`: its first neighbour (read from offsets not
    /// necessarily verified yet: a prefetch address only, bounds-checked).
    #[inline(always)]
    pub fn first_neighbour(&self, v: u32) -> Option<&'a u32> {
        match self.patch(v) {
            Some(patch) => patched_entries(patch, v).0.first(),
            None => self.neighbours.get(self.offsets[v as usize] as usize),
        }
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// A fresh CSR of `nodes` nodes from live rels (source, target, alive).
    fn fresh(nodes: usize, rels: &[(u32, u32, bool)]) -> Csr {
        let sources: Vec<u32> = rels.iter().map(|r| r.0).collect();
        let targets: Vec<u32> = rels.iter().map(|r| r.1).collect();
        Csr::build(nodes, &sources, &targets, |rel| rels[rel].2)
    }

    fn rows(view: &AdjacencyView<'_>) -> Vec<Vec<(u32, u32)>> {
        (0..view.num_nodes() as u32)
            .map(|v| {
                let (n, r) = view.entries(v);
                n.iter().copied().zip(r.iter().copied()).collect()
            })
            .collect()
    }

    /// One commit: appended rels (source, target) and deleted rel ids.
    type Commit = (Vec<(u32, u32)>, Vec<usize>);

    /// Applies commits of (appended rels, deleted rel ids) one by one, deriving each version's
    /// patches from the last, and compares every version with a fresh CSR.
    fn check(stored_nodes: usize, stored: &[(u32, u32)], commits: &[Commit], final_nodes: usize) {
        let mut rels: Vec<(u32, u32, bool)> = stored.iter().map(|&(s, t)| (s, t, true)).collect();
        let base = fresh(stored_nodes, &rels);
        let mut appended = OrdMap::new();
        let mut deleted = OrdSet::new();
        let mut current: Option<PatchedCsr> = None;
        for (index, (added, removed)) in commits.iter().enumerate() {
            let nodes = stored_nodes + (final_nodes - stored_nodes) * (index + 1) / commits.len();
            let mut touched = Vec::new();
            for &(s, t) in added {
                let (s, t) = (s % nodes as u32, t % nodes as u32);
                let rel = rels.len() as u32;
                rels.push((s, t, true));
                appended.insert((s, rel), t);
                touched.push(s);
            }
            for &r in removed {
                if rels.is_empty() {
                    continue;
                }
                let r = r % rels.len();
                rels[r].2 = false;
                deleted.insert(r as u64);
                touched.push(rels[r].0);
            }
            let delta = DeltaEntries {
                appended: &appended,
                deleted: &deleted,
            };
            let next = match &current {
                // Every third version starts again from a merged base, as a large delta does.
                Some(_) if index % 3 == 2 => PatchedCsr::merged(&base, fresh(nodes, &rels)),
                Some(previous) => previous.derive(&delta, &touched, nodes),
                None => PatchedCsr::build(&base, &delta, touched.iter().copied(), nodes),
            };
            let expected = fresh(nodes, &rels);
            let view = next.view();
            assert_eq!(
                rows(&view),
                rows(&AdjacencyView::csr(
                    expected.offsets(),
                    expected.neighbours(),
                    expected.rel_ids()
                ))
            );
            assert_eq!(view.num_entries(), expected.num_edges() as u64);
            current = Some(next);
        }
    }

    #[test]
    fn an_untouched_group_is_read_in_place() {
        let stored = fresh(1000, &[(1, 2, true), (700, 3, true)]);
        let appended = OrdMap::unit((5, 2), 9);
        let deleted = OrdSet::new();
        let delta = DeltaEntries {
            appended: &appended,
            deleted: &deleted,
        };
        let patched = PatchedCsr::build(&stored, &delta, [5].into_iter(), 1000);
        assert_eq!(patched.patched_groups(), 1);
        let view = patched.view();
        assert_eq!(view.entries(5), (&[9][..], &[2][..]));
        assert_eq!(view.entries(700), (&[3][..], &[1][..]));
        assert_eq!(view.num_entries(), 3);
        assert!(
            view.plain_neighbours().is_none(),
            "a patched view reads through its patches"
        );
    }

    #[test]
    fn plain_neighbours_read_the_flat_arrays() {
        let rels: Vec<(u32, u32, bool)> = (0..200u32)
            .filter(|v| v % 3 != 0)
            .map(|v| (v, (v * 7) % 200, true))
            .chain([(4, 9, true), (4, 11, false), (199, 0, true)])
            .collect();
        let stored = fresh(200, &rels);
        let empty = (OrdMap::new(), OrdSet::new());
        let delta = DeltaEntries {
            appended: &empty.0,
            deleted: &empty.1,
        };
        let patched = PatchedCsr::build(&stored, &delta, std::iter::empty(), 200);
        let view = patched.view();
        let plain = view
            .plain_neighbours()
            .expect("an unpatched, unchecked view is plain");
        for v in 0..200u32 {
            assert_eq!(plain.of(v), view.entries(v).0, "node {v}");
        }
        for (first, end) in [(0, 64), (64, 128), (128, 192), (192, 200), (7, 7)] {
            let expected = (first..end).fold(0u64, |bits, v| {
                bits | u64::from(view.degree(v) > 0) << (v - first)
            });
            assert_eq!(plain.nonempty_bits(first, end), expected, "{first}..{end}");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(64))]
        #[test]
        fn derived_patches_equal_a_fresh_build(
            stored_nodes in 1usize..700,
            extra_nodes in 0usize..600,
            stored in prop::collection::vec((0u32..700, 0u32..1300), 0..400),
            commits in prop::collection::vec(
                (prop::collection::vec((0u32..1300, 0u32..1300), 0..20), prop::collection::vec(0usize..500, 0..8)),
                1..12,
            ),
        ) {
            let stored: Vec<(u32, u32)> = stored
                .into_iter()
                .map(|(s, t)| (s % stored_nodes as u32, t % (stored_nodes + extra_nodes) as u32))
                .collect();
            check(stored_nodes, &stored, &commits, stored_nodes + extra_nodes);
        }
    }
}

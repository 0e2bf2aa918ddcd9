//! The rels of one FROM/TO pair of a rel table: the stored part (source and destination
//! offsets in rel order, one column per property, CSR adjacency in both directions, a deletion
//! bitmap) and the committed [`RelDelta`] over it. Traversals read [`RelTable::adjacency`]:
//! the stored CSR, with the node groups the delta touches patched (`adjacency.rs`); point
//! lookups ([`RelTable::entries`]) read both parts in place without building anything.

use std::sync::{Arc, OnceLock};
use std::time::Instant;

use warren_common::value::Value;

use crate::adjacency::{AdjacencyView, DeltaEntries, PatchedCsr, GROUP_SHIFT};
use crate::buffer::{Bitmap, Bytes, U32Words};
use crate::column::{Column, ColumnBuilder};
use crate::csr::Csr;
use crate::delta::{deleted_rows, fold_tombstones, AppendedRel, RelDelta};
use crate::import::phases::CopyPhases;
use crate::section_check::CorruptionSlot;
use imbl::OrdMap;

/// The traversal direction of an adjacency lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From FROM nodes to TO nodes.
    Forward,
    /// From TO nodes to FROM nodes.
    Backward,
}

/// The version a rel table version was derived from, and the owners (per direction) of the
/// rels the commit between them appended or deleted.
#[derive(Debug)]
struct Parent {
    patched: Arc<OnceLock<Arc<(PatchedCsr, PatchedCsr)>>>,
    forward: Vec<u32>,
    backward: Vec<u32>,
}

#[derive(Clone, Debug)]
pub struct RelTable {
    num_rows: u64,
    sources: Bytes,
    targets: Bytes,
    columns: Vec<Column>,
    forward: Csr,
    backward: Csr,
    deleted: Option<Bitmap>,
    delta: RelDelta,
    /// Both directions' patched adjacency, built on the first traversal of this version.
    patched: Arc<OnceLock<Arc<(PatchedCsr, PatchedCsr)>>>,
    /// The version this one was derived from by one commit, and what that commit touched.
    parent: Option<Arc<Parent>>,
    /// Rows of the FROM and TO node tables this version covers.
    from_rows: u64,
    to_rows: u64,
}

impl RelTable {
    pub fn empty(
        property_types: &[warren_common::LogicalType],
        from_rows: u64,
        to_rows: u64,
    ) -> Self {
        Self {
            num_rows: 0,
            sources: Bytes::empty(),
            targets: Bytes::empty(),
            columns: property_types
                .iter()
                .map(|t| Column::empty(t.clone()))
                .collect(),
            forward: Csr::empty(from_rows as usize),
            backward: Csr::empty(to_rows as usize),
            deleted: None,
            delta: RelDelta::default(),
            patched: Arc::default(),
            parent: None,
            from_rows,
            to_rows,
        }
    }

    /// Builds a rel table from endpoint arrays and property columns, constructing both CSRs.
    pub fn build(
        sources: Vec<u32>,
        targets: Vec<u32>,
        columns: Vec<Column>,
        deleted: Option<Bitmap>,
        from_rows: u64,
        to_rows: u64,
    ) -> Result<Self, String> {
        let source_words = U32Words::from(&sources[..]);
        drop(sources);
        let target_words = U32Words::from(&targets[..]);
        drop(targets);
        Self::build_from_words(
            source_words,
            target_words,
            columns,
            deleted,
            from_rows,
            to_rows,
        )
    }

    /// [`RelTable::build`] from endpoint arrays that become the table's sections as they are
    /// (no copy): COPY builds them so.
    pub fn build_from_words(
        sources: U32Words,
        targets: U32Words,
        columns: Vec<Column>,
        deleted: Option<Bitmap>,
        from_rows: u64,
        to_rows: u64,
    ) -> Result<Self, String> {
        let ends = (sources, targets);
        let mut phases = CopyPhases::default();
        Self::build_from_words_timed(ends, columns, deleted, (from_rows, to_rows), &mut phases)
    }

    /// [`RelTable::build_from_words`], recording the wall time of the range check and of each
    /// direction's CSR build (built on two threads at once) in `phases`.
    pub(crate) fn build_from_words_timed(
        (sources, targets): (U32Words, U32Words),
        columns: Vec<Column>,
        deleted: Option<Bitmap>,
        (from_rows, to_rows): (u64, u64),
        phases: &mut CopyPhases,
    ) -> Result<Self, String> {
        let num_rows = sources.len();
        if targets.len() != num_rows || columns.iter().any(|c| c.len() != num_rows) {
            return Err("rel table arrays have different lengths".into());
        }
        let out_of_range = phases.time("endpoint range check", || {
            sources
                .as_slice()
                .iter()
                .any(|&s| u64::from(s) >= from_rows)
                || targets.as_slice().iter().any(|&t| u64::from(t) >= to_rows)
        });
        if out_of_range {
            return Err("rel endpoint out of range".into());
        }
        let (sources, targets) = (sources.into_bytes(), targets.into_bytes());
        let live = |rel: usize| !deleted.as_ref().is_some_and(|d| d.get(rel));
        let timed = |build: &dyn Fn() -> Csr| {
            let started = Instant::now();
            (build(), started.elapsed())
        };
        // The two directions are independent: build them on two threads.
        let both = phases.time("both CSRs, on two threads", || {
            std::thread::scope(|scope| {
                let (sources, targets) = (sources.cast::<u32>(), targets.cast::<u32>());
                let backward =
                    scope.spawn(|| timed(&|| Csr::build(to_rows as usize, targets, sources, live)));
                let forward = timed(&|| Csr::build(from_rows as usize, sources, targets, live));
                (
                    forward,
                    backward.join().expect("the backward CSR build panicked"),
                )
            })
        });
        let ((forward, forward_time), (backward, backward_time)) = both;
        phases.record_wall("  forward CSR (its thread)", forward_time);
        phases.record_wall("  backward CSR (its thread)", backward_time);
        Ok(Self {
            num_rows: num_rows as u64,
            sources,
            targets,
            columns,
            forward,
            backward,
            deleted,
            delta: RelDelta::default(),
            patched: Arc::default(),
            parent: None,
            from_rows,
            to_rows,
        })
    }

    /// Assembles a rel table from parts read from disk, checking sizes only (O(1): nothing is
    /// read); [`RelTable::validate`] checks every entry.
    #[allow(clippy::too_many_arguments)]
    pub fn from_parts(
        sources: Bytes,
        targets: Bytes,
        columns: Vec<Column>,
        forward: Csr,
        backward: Csr,
        deleted: Option<Bitmap>,
        from_rows: u64,
        to_rows: u64,
    ) -> Result<Self, String> {
        let num_rows = (sources.len() / 4) as u64;
        if targets.len() != sources.len() || columns.iter().any(|c| c.len() as u64 != num_rows) {
            return Err("rel table arrays have different lengths".into());
        }
        for csr in [&forward, &backward] {
            csr.check_sizes(num_rows)?;
        }
        Ok(Self {
            num_rows,
            sources,
            targets,
            columns,
            forward,
            backward,
            deleted,
            delta: RelDelta::default(),
            patched: Arc::default(),
            parent: None,
            from_rows,
            to_rows,
        })
    }

    /// Verifies every stored block of the table (for readers of whole arrays): the first
    /// mismatch.
    pub fn try_verify(&self) -> Result<(), crate::section_check::ChecksumMismatch> {
        self.sources.try_bytes()?;
        self.targets.try_bytes()?;
        self.forward.try_verify()?;
        self.backward.try_verify()?;
        for column in &self.columns {
            column.try_verify()?;
        }
        self.try_verify_deleted()
    }

    /// Verifies every block of both CSRs and the deletion bitmap (read whole by expansions).
    pub fn try_verify_adjacency(&self) -> Result<(), crate::section_check::ChecksumMismatch> {
        self.forward.try_verify()?;
        self.backward.try_verify()?;
        self.try_verify_deleted()
    }

    /// Verifies every block of the deletion bitmap (read whole by counts and expansions).
    fn try_verify_deleted(&self) -> Result<(), crate::section_check::ChecksumMismatch> {
        self.deleted
            .as_ref()
            .map_or(Ok(()), |deleted| deleted.bytes().try_bytes().map(|_| ()))
    }

    /// Checks every stored entry: endpoints within their tables and both CSRs' invariants
    /// (`warren check`; O(table)).
    pub fn validate(&self) -> Result<(), String> {
        let (from_rows, to_rows) = (self.from_rows, self.to_rows);
        self.sources.verify()?;
        self.targets.verify()?;
        self.forward.verify()?;
        self.backward.verify()?;
        if self.sources().iter().any(|&s| u64::from(s) >= from_rows)
            || self.targets().iter().any(|&t| u64::from(t) >= to_rows)
        {
            return Err("rel endpoint out of range".into());
        }
        self.forward.validate(to_rows, self.num_rows)?;
        self.backward.validate(from_rows, self.num_rows)?;
        for column in &self.columns {
            column.validate()?;
        }
        if let Some(deleted) = &self.deleted {
            deleted.bytes().verify()?;
        }
        Ok(())
    }

    /// The same rels with other property columns (ALTER TABLE). The table must have no delta.
    pub fn with_columns(&self, columns: Vec<Column>) -> Result<Self, String> {
        assert!(
            self.delta.is_empty(),
            "with_columns on a table with a delta"
        );
        if columns.iter().any(|c| c.len() as u64 != self.num_rows) {
            return Err("property columns must have one value per rel".into());
        }
        Ok(Self {
            columns,
            ..self.clone()
        })
    }

    /// Rels ever appended, deleted ones included.
    pub fn num_rows(&self) -> u64 {
        self.num_rows + self.delta.appended.len() as u64
    }

    /// Rels in the segment.
    pub fn num_stored_rows(&self) -> u64 {
        self.num_rows
    }

    /// FROM-node offsets of the stored rels (see [`RelTable::endpoints`] for every rel).
    pub fn sources(&self) -> &[u32] {
        self.sources.cast()
    }

    /// TO-node offsets of the stored rels.
    pub fn targets(&self) -> &[u32] {
        self.targets.cast()
    }

    pub fn source_bytes(&self) -> &Bytes {
        &self.sources
    }

    pub fn target_bytes(&self) -> &Bytes {
        &self.targets
    }

    /// The FROM and TO node offsets of any rel.
    /// Panics on a checksum mismatch of their blocks (see [`RelTable::try_endpoints`]).
    pub fn endpoints(&self, rel: u64) -> (u32, u32) {
        self.try_endpoints(rel)
            .unwrap_or_else(|mismatch| panic!("{mismatch}"))
    }

    /// [`RelTable::endpoints`], verifying only the blocks of the two stored entries it reads.
    pub fn try_endpoints(
        &self,
        rel: u64,
    ) -> Result<(u32, u32), crate::section_check::ChecksumMismatch> {
        if rel >= self.num_rows {
            let appended = &self.delta.appended[(rel - self.num_rows) as usize];
            return Ok((appended.source, appended.target));
        }
        let at = rel as usize * 4;
        let word = |bytes: &[u8]| u32::from_le_bytes(bytes.try_into().expect("4 bytes"));
        Ok((
            word(self.sources.try_range(at..at + 4)?),
            word(self.targets.try_range(at..at + 4)?),
        ))
    }

    /// The stored property columns (see [`RelTable::has_delta`]).
    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    /// The CSR of the segment alone.
    pub fn stored_csr(&self, direction: Direction) -> &Csr {
        match direction {
            Direction::Forward => &self.forward,
            Direction::Backward => &self.backward,
        }
    }

    /// [`Csr::nonempty_bits`] of the stored CSR in `direction` when the adjacency a traversal
    /// reads ([`RelTable::adjacency_checked`]) is that CSR as stored (no delta, every node
    /// covered); `None` otherwise.
    pub fn stored_nonempty_bits(&self, direction: Direction) -> Option<&[u64]> {
        self.reads_as_stored(direction)
            .then(|| self.stored_csr(direction).nonempty_bits())
    }

    /// Whether `direction`'s adjacency is the stored CSR as it is: no rel appended or
    /// deleted since, and every node of the endpoint table covered.
    fn reads_as_stored(&self, direction: Direction) -> bool {
        let rows = match direction {
            Direction::Forward => self.from_rows,
            Direction::Backward => self.to_rows,
        };
        let rels_unchanged = self.delta.appended.is_empty() && self.delta.deleted.is_empty();
        rels_unchanged && self.stored_csr(direction).num_nodes() as u64 == rows
    }

    /// The live entries of `node` in `direction`, (neighbour, rel) in rel order, read from the
    /// segment and the delta in place.
    /// Panics on a checksum mismatch (see [`RelTable::try_entries`]).
    pub fn entries(&self, node: u32, direction: Direction) -> Vec<(u32, u32)> {
        self.try_entries(node, direction)
            .unwrap_or_else(|mismatch| panic!("{mismatch}"))
    }

    /// [`RelTable::entries`], verifying only the blocks of `node`'s stored entries.
    pub fn try_entries(
        &self,
        node: u32,
        direction: Direction,
    ) -> Result<Vec<(u32, u32)>, crate::section_check::ChecksumMismatch> {
        let mut out: Vec<(u32, u32)> =
            self.with_stored_entries(node, direction, |neighbours, rels| {
                neighbours
                    .iter()
                    .copied()
                    .zip(rels.iter().copied())
                    .filter(|&(_, rel)| !self.delta_deleted(u64::from(rel)))
                    .collect()
            })?;
        out.extend(self.live_appended_entries(node, direction));
        Ok(out)
    }

    /// How many live entries `node` has in `direction` (what [`RelTable::try_entries`] would
    /// list), without listing them: O(1) without deletions in the delta, verifying only the
    /// blocks of `node`'s stored entries.
    pub fn try_degree(
        &self,
        node: u32,
        direction: Direction,
    ) -> Result<u64, crate::section_check::ChecksumMismatch> {
        let stored = if self.delta.deleted.is_empty() {
            // Every stored entry is live: the degree is the offsets' difference, and neither
            // the neighbours nor the rel ids need reading.
            self.stored_degree(node, direction)?
        } else {
            self.with_stored_entries(node, direction, |_, rels| {
                rels.iter()
                    .filter(|&&rel| !self.delta_deleted(u64::from(rel)))
                    .count() as u64
            })?
        };
        let appended = if self.delta.appended.is_empty() {
            0
        } else {
            self.live_appended_entries(node, direction).count() as u64
        };
        Ok(stored + appended)
    }

    /// `node`'s stored entries in `direction`, counted from the offsets (their blocks, and the
    /// neighbours' while unverified, checked as a read of the neighbours would check them).
    fn stored_degree(
        &self,
        node: u32,
        direction: Direction,
    ) -> Result<u64, crate::section_check::ChecksumMismatch> {
        self.read_stored(direction, |view| {
            if (node as usize) < view.num_nodes() {
                view.degree(node)
            } else {
                0
            }
        })
    }

    /// Calls `read` with `node`'s stored (neighbours, rel ids) in `direction`, after verifying
    /// the blocks they lie in.
    fn with_stored_entries<R>(
        &self,
        node: u32,
        direction: Direction,
        read: impl FnOnce(&[u32], &[u32]) -> R,
    ) -> Result<R, crate::section_check::ChecksumMismatch> {
        self.read_stored(direction, |view| {
            let (neighbours, rels) = if (node as usize) < view.num_nodes() {
                view.entries(node)
            } else {
                (&[][..], &[][..])
            };
            read(neighbours, rels)
        })
    }

    /// What `read` finds in the stored CSR of `direction` through a checking view; the first
    /// damaged block the reads met is the error instead.
    fn read_stored<R>(
        &self,
        direction: Direction,
        read: impl FnOnce(&AdjacencyView<'_>) -> R,
    ) -> Result<R, crate::section_check::ChecksumMismatch> {
        let slot = CorruptionSlot::default();
        let view = AdjacencyView::stored(self.stored_csr(direction), &slot);
        let found = read(&view);
        match slot.first() {
            Some(mismatch) => Err(mismatch),
            None => Ok(found),
        }
    }

    /// The delta's appended entries of `node` in `direction` that are not deleted again.
    fn live_appended_entries(
        &self,
        node: u32,
        direction: Direction,
    ) -> impl Iterator<Item = (u32, u32)> + '_ {
        self.delta
            .appended_entries(node, direction == Direction::Forward)
            .filter(|&(_, rel)| !self.delta_deleted(u64::from(rel)))
    }

    fn delta_deleted(&self, rel: u64) -> bool {
        !self.delta.deleted.is_empty() && self.delta.deleted.contains(&rel)
    }

    pub fn delta(&self) -> &RelDelta {
        &self.delta
    }

    /// Whether committed changes are not yet folded into the segment.
    pub fn has_delta(&self) -> bool {
        !self.delta.is_empty()
    }

    /// The stored deletion bitmap (the segment's tombstones only).
    pub fn deleted(&self) -> Option<&Bitmap> {
        self.deleted.as_ref()
    }

    #[inline]
    pub fn is_deleted(&self, rel: u64) -> bool {
        self.deleted.as_ref().is_some_and(|d| d.get(rel as usize)) || self.delta_deleted(rel)
    }

    /// [`RelTable::is_deleted`], verifying only the block of the bitmap holding the rel.
    pub fn try_is_deleted(&self, rel: u64) -> Result<bool, crate::section_check::ChecksumMismatch> {
        let stored = match &self.deleted {
            Some(deleted) => deleted.try_get(rel as usize)?,
            None => false,
        };
        Ok(stored || self.delta_deleted(rel))
    }

    /// Panics on a checksum mismatch (see [`RelTable::try_value`]).
    pub fn value(&self, rel: u64, property: usize) -> Value {
        self.try_value(rel, property)
            .unwrap_or_else(|mismatch| panic!("{mismatch}"))
    }

    /// The value of `property` of `rel`, verifying only the blocks it is read from.
    pub fn try_value(
        &self,
        rel: u64,
        property: usize,
    ) -> Result<Value, crate::section_check::ChecksumMismatch> {
        if rel >= self.num_rows {
            let appended = &self.delta.appended[(rel - self.num_rows) as usize];
            return Ok(appended.values[property].clone());
        }
        if !self.delta.updates.is_empty() {
            if let Some(value) = self.delta.updates.get(&(rel, property as u32)) {
                return Ok(value.clone());
            }
        }
        self.columns[property].try_get(rel as usize)
    }

    /// Live rels (not deleted). Counting reads the whole deletion bitmap, verified first.
    pub fn num_live_rows(&self) -> Result<u64, crate::section_check::ChecksumMismatch> {
        self.try_verify_deleted()?;
        Ok(self.num_rows() - deleted_rows(self.deleted.as_ref(), &self.delta.deleted))
    }

    /// A new version with `change` applied to the delta; `from_rows` and `to_rows` are the
    /// endpoint tables' row counts after the change (O(change · log n)).
    pub fn with_delta(
        &self,
        from_rows: u64,
        to_rows: u64,
        change: impl FnOnce(&mut RelDelta, u64),
    ) -> Self {
        assert!(from_rows >= self.from_rows && to_rows >= self.to_rows);
        let mut next = Self {
            delta: self.delta.clone(),
            patched: Arc::default(),
            parent: None,
            from_rows,
            to_rows,
            ..self.clone()
        };
        change(&mut next.delta, self.num_rows);
        next.parent = Some(Arc::new(next.touched_since(self)));
        next
    }

    /// What the commit from `parent` to this version touched: the owners, per direction, of
    /// the rels it appended and deleted.
    fn touched_since(&self, parent: &RelTable) -> Parent {
        let mut forward = Vec::new();
        let mut backward = Vec::new();
        // By index: `Vector::skip` would build a new vector (a copy of a chunk per commit).
        for index in parent.delta.appended.len()..self.delta.appended.len() {
            let appended = &self.delta.appended[index];
            forward.push(appended.source);
            backward.push(appended.target);
        }
        for item in self.delta.deleted.diff(&parent.delta.deleted) {
            let (imbl::ordset::DiffItem::Add(&rel) | imbl::ordset::DiffItem::Remove(&rel)) = item;
            let (source, target) = self.endpoints(rel);
            forward.push(source);
            backward.push(target);
        }
        Parent {
            patched: parent.patched.clone(),
            forward,
            backward,
        }
    }

    /// Both directions' adjacency as traversals read it: the stored CSR in place, with the
    /// node groups the delta touches patched (built once per version, derived from the parent
    /// version's when it has them).
    /// Every stored block is verified first (a mismatch stops the process: engine paths use
    /// [`RelTable::adjacency_checked`]).
    pub fn adjacency(&self, direction: Direction) -> AdjacencyView<'_> {
        let csr = self.stored_csr(direction);
        if self.reads_as_stored(direction) {
            return AdjacencyView::csr(csr.offsets(), csr.neighbours(), csr.rel_ids());
        }
        self.patched_view(direction)
    }

    /// [`RelTable::adjacency`] for a traversal: a stored CSR read in place has its blocks
    /// verified as they are first read, and a checksum mismatch is recorded in `slot` (the
    /// query returns it) instead of stopping the process. Patching a delta reads the whole
    /// stored CSR, so it is verified as a whole first.
    pub fn adjacency_checked<'a>(
        &'a self,
        direction: Direction,
        slot: &'a CorruptionSlot,
    ) -> AdjacencyView<'a> {
        let csr = self.stored_csr(direction);
        if self.reads_as_stored(direction) {
            return AdjacencyView::stored(csr, slot);
        }
        let both = [&self.forward, &self.backward];
        let verified = both
            .iter()
            .try_for_each(|csr| csr.try_verify())
            .and_then(|()| self.try_verify_deleted_endpoints());
        if let Err(mismatch) = verified {
            slot.record(mismatch);
            return AdjacencyView::stored(csr, slot);
        }
        self.patched_view(direction)
    }

    /// Verifies the endpoints of the delta's deleted rels (patching reads them).
    fn try_verify_deleted_endpoints(&self) -> Result<(), crate::section_check::ChecksumMismatch> {
        self.delta
            .deleted
            .iter()
            .try_for_each(|&rel| self.try_endpoints(rel).map(drop))
    }

    fn patched_view(&self, direction: Direction) -> AdjacencyView<'_> {
        let patched = self.patched.get_or_init(|| Arc::new(self.build_patched()));
        match direction {
            Direction::Forward => patched.0.view(),
            Direction::Backward => patched.1.view(),
        }
    }

    fn build_patched(&self) -> (PatchedCsr, PatchedCsr) {
        let forward_delta = DeltaEntries {
            appended: &self.delta.forward,
            deleted: &self.delta.deleted,
        };
        let backward_delta = DeltaEntries {
            appended: &self.delta.backward,
            deleted: &self.delta.deleted,
        };
        let (from_rows, to_rows) = (self.from_rows as usize, self.to_rows as usize);
        if let Some(parent) = &self.parent {
            if let Some(built) = parent.patched.get() {
                let derived = (
                    built.0.derive(&forward_delta, &parent.forward, from_rows),
                    built.1.derive(&backward_delta, &parent.backward, to_rows),
                );
                if !derived.0.mostly_patched() && !derived.1.mostly_patched() {
                    return derived;
                }
                return self.merged_base();
            }
        }
        let deleted: Vec<(u32, u32)> = self
            .delta
            .deleted
            .iter()
            .map(|&rel| self.endpoints(rel))
            .collect();
        let forward_owners = || {
            let appended = self.delta.forward.keys().map(|&(owner, _)| owner);
            appended.chain(deleted.iter().map(|d| d.0))
        };
        let backward_owners = || {
            let appended = self.delta.backward.keys().map(|&(owner, _)| owner);
            appended.chain(deleted.iter().map(|d| d.1))
        };
        let groups = |owners: &mut dyn Iterator<Item = u32>| {
            let mut groups: Vec<u32> = owners.map(|v| v >> GROUP_SHIFT).collect();
            groups.sort_unstable();
            groups.dedup();
            groups.len()
        };
        if PatchedCsr::too_many_groups(groups(&mut forward_owners()), from_rows)
            || PatchedCsr::too_many_groups(groups(&mut backward_owners()), to_rows)
        {
            return self.merged_base();
        }
        (
            PatchedCsr::build(&self.forward, &forward_delta, forward_owners(), from_rows),
            PatchedCsr::build(&self.backward, &backward_delta, backward_owners(), to_rows),
        )
    }

    /// Both directions with the whole delta merged into a new base and nothing patched: what a
    /// large delta reads fastest (O(edges) once; later versions patch over it).
    fn merged_base(&self) -> (PatchedCsr, PatchedCsr) {
        let (forward, backward) = self.merge_delta();
        (
            PatchedCsr::merged(&self.forward, forward),
            PatchedCsr::merged(&self.backward, backward),
        )
    }

    /// Appends one rel to a delta (a helper for [`RelTable::with_delta`]).
    pub fn append_to(delta: &mut RelDelta, stored_rows: u64, rel: AppendedRel) -> u64 {
        let id = stored_rows + delta.appended.len() as u64;
        assert!(id < u64::from(u32::MAX), "rel id beyond u32");
        delta.append(id as u32, rel);
        id
    }

    /// Both CSRs with the delta applied: stored entries minus deleted rels, then appended
    /// rels, per node in rel order. Built on two threads (one per direction).
    fn merge_delta(&self) -> (Csr, Csr) {
        if self.delta.deleted.is_empty() {
            // Inserts only: stored runs are copied whole between the nodes that gained rels.
            return std::thread::scope(|scope| {
                let backward = scope
                    .spawn(|| merge_appended(&self.backward, &self.delta.backward, self.to_rows));
                let forward = merge_appended(&self.forward, &self.delta.forward, self.from_rows);
                (
                    forward,
                    backward.join().expect("the backward merge panicked"),
                )
            });
        }
        let deleted = self.delta_deleted_bitmap();
        let live = |rel: u32| !deleted.get(rel as usize);
        std::thread::scope(|scope| {
            let backward =
                scope.spawn(|| merge_csr(&self.backward, &self.delta, false, self.to_rows, &live));
            let forward = merge_csr(&self.forward, &self.delta, true, self.from_rows, &live);
            (
                forward,
                backward.join().expect("the backward merge panicked"),
            )
        })
    }

    fn delta_deleted_bitmap(&self) -> Bitmap {
        let mut bits = vec![false; self.num_rows() as usize];
        for &rel in &self.delta.deleted {
            bits[rel as usize] = true;
        }
        Bitmap::from_bits(&bits)
    }

    /// The same rels with the delta folded into new in-memory arrays, columns and CSRs: what a
    /// checkpoint writes. O(table).
    pub fn folded(&self) -> Result<Self, String> {
        if self.delta.is_empty() {
            return Ok(self.clone());
        }
        let mut sources = self.sources().to_vec();
        let mut targets = self.targets().to_vec();
        for rel in &self.delta.appended {
            sources.push(rel.source);
            targets.push(rel.target);
        }
        let mut columns = Vec::with_capacity(self.columns.len());
        for (index, column) in self.columns.iter().enumerate() {
            let mut builder = ColumnBuilder::new(column.ty().clone());
            builder.reserve(self.num_rows() as usize);
            for rel in 0..self.num_rows() {
                builder.push(&self.value(rel, index))?;
            }
            columns.push(builder.finish());
        }
        let rows = self.num_rows() as usize;
        let deleted = fold_tombstones(self.deleted.as_ref(), &self.delta.deleted, rows);
        Self::build(
            sources,
            targets,
            columns,
            deleted,
            self.from_rows,
            self.to_rows,
        )
    }
}

/// One direction's CSR with appended entries (owner node, rel) -> neighbour and no deletions,
/// covering `num_nodes` nodes: the stored neighbours and rel ids between two owners are copied
/// as one run, and the offsets are the stored ones shifted by the entries inserted before.
fn merge_appended(stored: &Csr, appended: &OrdMap<(u32, u32), u32>, num_nodes: u64) -> Csr {
    let mut merged = AppendMerge::new(stored, num_nodes as usize, appended.len());
    let mut entries = appended.iter().peekable();
    while let Some((&(owner, _), _)) = entries.peek() {
        let owner = owner as usize;
        assert!(
            owner < merged.num_nodes,
            "delta entry beyond the node table"
        );
        merged.copy_stored_until(owner + 1);
        while let Some((&(o, rel), &neighbour)) = entries.peek() {
            if o as usize != owner {
                break;
            }
            merged.neighbours.push(neighbour);
            merged.rel_ids.push(rel);
            merged.shift += 1;
            entries.next();
        }
    }
    merged.finish()
}

/// The state of [`merge_appended`]: nodes before `next` are complete, and `shift` appended
/// entries precede node `next`.
struct AppendMerge<'a> {
    stored: &'a Csr,
    num_nodes: usize,
    offsets: Vec<u64>,
    neighbours: Vec<u32>,
    rel_ids: Vec<u32>,
    next: usize,
    shift: u64,
}

impl<'a> AppendMerge<'a> {
    fn new(stored: &'a Csr, num_nodes: usize, appended: usize) -> Self {
        let total = stored.num_edges() + appended;
        Self {
            stored,
            num_nodes,
            offsets: Vec::with_capacity(num_nodes + 1),
            neighbours: Vec::with_capacity(total),
            rel_ids: Vec::with_capacity(total),
            next: 0,
            shift: 0,
        }
    }

    /// Where node `v`'s stored entries start (nodes the stored CSR does not cover: its end).
    fn stored_start(&self, v: usize) -> usize {
        let offsets = self.stored.offsets();
        offsets[v.min(offsets.len() - 1)] as usize
    }

    /// Offsets and stored entries of nodes `next..until`.
    fn copy_stored_until(&mut self, until: usize) {
        let stored_offsets = self.stored.offsets();
        // Nodes below `covered` have stored offsets; later ones have no stored entries.
        let covered = until.min(stored_offsets.len() - 1);
        let shift = self.shift;
        if self.next < covered {
            self.offsets
                .extend(stored_offsets[self.next..covered].iter().map(|o| o + shift));
        }
        let end = self.stored.num_edges() as u64 + shift;
        let uncovered = until - covered.max(self.next);
        self.offsets.extend(std::iter::repeat_n(end, uncovered));
        let (from, to) = (self.stored_start(self.next), self.stored_start(until));
        self.neighbours
            .extend_from_slice(&self.stored.neighbours()[from..to]);
        self.rel_ids
            .extend_from_slice(&self.stored.rel_ids()[from..to]);
        self.next = until;
    }

    fn finish(mut self) -> Csr {
        self.copy_stored_until(self.num_nodes);
        self.offsets.push(self.neighbours.len() as u64);
        assert_eq!(self.offsets.len(), self.num_nodes + 1);
        Csr::from_parts(
            Bytes::from_vec(self.offsets),
            Bytes::from_slice(&self.neighbours),
            Bytes::from_slice(&self.rel_ids),
        )
    }
}

/// One direction's CSR with the delta applied, covering `num_nodes` nodes.
fn merge_csr(
    stored: &Csr,
    delta: &RelDelta,
    forward: bool,
    num_nodes: u64,
    live: &impl Fn(u32) -> bool,
) -> Csr {
    let num_nodes = num_nodes as usize;
    let added = delta.appended.len();
    let mut offsets = Vec::with_capacity(num_nodes + 1);
    let mut neighbours = Vec::with_capacity(stored.num_edges() + added);
    let mut rel_ids = Vec::with_capacity(stored.num_edges() + added);
    let appended = if forward {
        &delta.forward
    } else {
        &delta.backward
    };
    let mut pending = appended.iter().peekable();
    offsets.push(0u64);
    let (stored_neighbours, stored_rels) = (stored.neighbours(), stored.rel_ids());
    for node in 0..num_nodes as u32 {
        for i in stored.range(node) {
            let rel = stored_rels[i];
            if live(rel) {
                neighbours.push(stored_neighbours[i]);
                rel_ids.push(rel);
            }
        }
        while let Some((&(owner, rel), &neighbour)) = pending.peek() {
            if owner != node {
                break;
            }
            if live(rel) {
                neighbours.push(neighbour);
                rel_ids.push(rel);
            }
            pending.next();
        }
        offsets.push(neighbours.len() as u64);
    }
    assert!(
        pending.next().is_none(),
        "delta entry beyond the node table"
    );
    Csr::from_parts(
        Bytes::from_vec(offsets),
        Bytes::from_slice(&neighbours),
        Bytes::from_slice(&rel_ids),
    )
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// The CSR of `direction` with the whole delta merged in (the reference the patched
    /// adjacency is compared with).
    fn merged_csr(table: &RelTable, direction: Direction) -> Csr {
        let (forward, backward) = table.merge_delta();
        match direction {
            Direction::Forward => forward,
            Direction::Backward => backward,
        }
    }

    fn csr_rows(csr: &Csr, nodes: u32) -> Vec<Vec<(u32, u32)>> {
        (0..nodes)
            .map(|v| {
                let range = csr.range(v);
                csr.neighbours()[range.clone()]
                    .iter()
                    .copied()
                    .zip(csr.rel_ids()[range].iter().copied())
                    .collect()
            })
            .collect()
    }

    fn view_rows(view: AdjacencyView<'_>) -> Vec<Vec<(u32, u32)>> {
        (0..view.num_nodes() as u32)
            .map(|v| {
                let (neighbours, rels) = view.entries(v);
                neighbours
                    .iter()
                    .copied()
                    .zip(rels.iter().copied())
                    .collect()
            })
            .collect()
    }

    proptest! {
        /// Versions derived commit by commit (inserts, deletes and new nodes), some traversed
        /// and some not, traverse like the CSR merged from scratch: patches derived from a
        /// parent's equal patches built fresh.
        #[test]
        fn patched_adjacency_follows_commits(
            stored_nodes in 1u32..5000,
            stored in proptest::collection::vec((0u32..5000, 0u32..5000), 0..600),
            commits in proptest::collection::vec(
                (0u32..40, proptest::collection::vec((0u32..6000, 0u32..6000), 0..6), proptest::collection::vec(0usize..700, 0..3), any::<bool>()),
                1..10,
            ),
        ) {
            let stored: Vec<(u32, u32)> = stored.into_iter().map(|(s, t)| (s % stored_nodes, t % stored_nodes)).collect();
            let (sources, targets): (Vec<u32>, Vec<u32>) = stored.iter().copied().unzip();
            let mut table = RelTable::build(sources, targets, Vec::new(), None, u64::from(stored_nodes), u64::from(stored_nodes)).unwrap();
            let mut nodes = stored_nodes;
            for (new_nodes, appended, deletions, traverse) in commits {
                nodes += new_nodes;
                let total = table.num_rows() + appended.len() as u64;
                table = table.with_delta(u64::from(nodes), u64::from(nodes), |delta, stored_rows| {
                    for &(source, target) in &appended {
                        let rel = AppendedRel { source: source % nodes, target: target % nodes, values: Arc::from(Vec::new()) };
                        RelTable::append_to(delta, stored_rows, rel);
                    }
                    for &rel in &deletions {
                        if (rel as u64) < total {
                            delta.deleted.insert(rel as u64);
                        }
                    }
                });
                if traverse {
                    for direction in [Direction::Forward, Direction::Backward] {
                        let merged = csr_rows(&merged_csr(&table, direction), nodes);
                        prop_assert_eq!(view_rows(table.adjacency(direction)), merged);
                    }
                }
            }
        }

        /// A table with rels in its delta (appended, some deleted) traverses exactly like the
        /// same rels built fresh, in both directions, by both merge paths; point lookups too.
        #[test]
        fn a_delta_merges_into_the_csr_a_fresh_build_gives(
            stored_nodes in 1u32..12,
            extra_nodes in 0u32..4,
            stored in proptest::collection::vec((0u32..12, 0u32..12), 0..30),
            appended in proptest::collection::vec((0u32..16, 0u32..16), 0..30),
            deletions in proptest::collection::vec(0usize..60, 0..6),
        ) {
            let nodes = stored_nodes + extra_nodes;
            let stored: Vec<(u32, u32)> = stored.into_iter().map(|(s, t)| (s % stored_nodes, t % stored_nodes)).collect();
            let appended: Vec<(u32, u32)> = appended.into_iter().map(|(s, t)| (s % nodes, t % nodes)).collect();
            let (sources, targets): (Vec<u32>, Vec<u32>) = stored.iter().copied().unzip();
            let base = RelTable::build(sources, targets, Vec::new(), None, u64::from(stored_nodes), u64::from(stored_nodes)).unwrap();
            let total = stored.len() + appended.len();
            let deleted: Vec<u64> = deletions.iter().filter(|&&d| d < total).map(|&d| d as u64).collect();
            let with_delta = base.with_delta(u64::from(nodes), u64::from(nodes), |delta, stored_rows| {
                for &(source, target) in &appended {
                    RelTable::append_to(delta, stored_rows, AppendedRel { source, target, values: Arc::from(Vec::new()) });
                }
                for &rel in &deleted {
                    delta.deleted.insert(rel);
                }
            });
            let all: Vec<(u32, u32)> = stored.iter().chain(&appended).copied().collect();
            let (sources, targets): (Vec<u32>, Vec<u32>) = all.iter().copied().unzip();
            let mut bits = vec![false; total];
            for &rel in &deleted {
                bits[rel as usize] = true;
            }
            let dead = bits.iter().any(|&b| b).then(|| Bitmap::from_bits(&bits));
            let fresh = RelTable::build(sources, targets, Vec::new(), dead, u64::from(nodes), u64::from(nodes)).unwrap();
            for direction in [Direction::Forward, Direction::Backward] {
                let merged = csr_rows(&merged_csr(&with_delta, direction), nodes);
                prop_assert_eq!(&merged, &csr_rows(fresh.stored_csr(direction), nodes));
                prop_assert_eq!(&view_rows(with_delta.adjacency(direction)), &merged);
                for v in 0..nodes {
                    prop_assert_eq!(&with_delta.entries(v, direction), &merged[v as usize]);
                }
            }
            let folded = with_delta.folded().unwrap();
            prop_assert_eq!(csr_rows(folded.stored_csr(Direction::Forward), nodes), csr_rows(fresh.stored_csr(Direction::Forward), nodes));
        }
    }
}

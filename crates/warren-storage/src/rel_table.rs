//! The stored rels of one FROM/TO pair of a rel table: source and destination offsets in rel
//! order, one column per property, CSR adjacency in both directions, and a deletion bitmap.

use warren_common::value::Value;

use crate::buffer::{Bitmap, Bytes};
use crate::column::Column;
use crate::csr::Csr;

/// The traversal direction of an adjacency lookup.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Direction {
    /// From FROM nodes to TO nodes.
    Forward,
    /// From TO nodes to FROM nodes.
    Backward,
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
        let num_rows = sources.len();
        if targets.len() != num_rows || columns.iter().any(|c| c.len() != num_rows) {
            return Err("rel table arrays have different lengths".into());
        }
        if sources.iter().any(|&s| u64::from(s) >= from_rows)
            || targets.iter().any(|&t| u64::from(t) >= to_rows)
        {
            return Err("rel endpoint out of range".into());
        }
        let live = |rel: usize| !deleted.as_ref().is_some_and(|d| d.get(rel));
        // The two directions are independent: build them on two threads.
        let (forward, backward) = std::thread::scope(|scope| {
            let backward = scope.spawn(|| Csr::build(to_rows as usize, &targets, &sources, live));
            let forward = Csr::build(from_rows as usize, &sources, &targets, live);
            (
                forward,
                backward.join().expect("the backward CSR build panicked"),
            )
        });
        Ok(Self {
            num_rows: num_rows as u64,
            sources: Bytes::from_slice(&sources),
            targets: Bytes::from_slice(&targets),
            columns,
            forward,
            backward,
            deleted,
        })
    }

    /// Assembles a rel table from parts read from disk, validating the CSRs.
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
        let sources_slice: &[u32] = sources.cast();
        let targets_slice: &[u32] = targets.cast();
        if sources_slice.iter().any(|&s| u64::from(s) >= from_rows)
            || targets_slice.iter().any(|&t| u64::from(t) >= to_rows)
        {
            return Err("rel endpoint out of range".into());
        }
        forward.validate(to_rows, num_rows)?;
        backward.validate(from_rows, num_rows)?;
        Ok(Self {
            num_rows,
            sources,
            targets,
            columns,
            forward,
            backward,
            deleted,
        })
    }

    /// The same rels with other property columns (ALTER TABLE).
    pub fn with_columns(&self, columns: Vec<Column>) -> Result<Self, String> {
        if columns.iter().any(|c| c.len() as u64 != self.num_rows) {
            return Err("property columns must have one value per rel".into());
        }
        Ok(Self {
            columns,
            ..self.clone()
        })
    }

    pub fn num_rows(&self) -> u64 {
        self.num_rows
    }

    pub fn sources(&self) -> &[u32] {
        self.sources.cast()
    }

    pub fn targets(&self) -> &[u32] {
        self.targets.cast()
    }

    pub fn source_bytes(&self) -> &Bytes {
        &self.sources
    }

    pub fn target_bytes(&self) -> &Bytes {
        &self.targets
    }

    pub fn columns(&self) -> &[Column] {
        &self.columns
    }

    pub fn csr(&self, direction: Direction) -> &Csr {
        match direction {
            Direction::Forward => &self.forward,
            Direction::Backward => &self.backward,
        }
    }

    pub fn deleted(&self) -> Option<&Bitmap> {
        self.deleted.as_ref()
    }

    #[inline]
    pub fn is_deleted(&self, rel: u64) -> bool {
        self.deleted.as_ref().is_some_and(|d| d.get(rel as usize))
    }

    pub fn value(&self, rel: u64, property: usize) -> Value {
        self.columns[property].get(rel as usize)
    }

    /// Live rels (not deleted).
    pub fn num_live_rows(&self) -> u64 {
        self.num_rows - self.deleted.as_ref().map_or(0, |d| d.count_ones() as u64)
    }
}

//! Committed changes that are not yet in a table's segment: the delta over a node table's
//! columns and over a rel table's CSR. A delta is immutable and shared between snapshots
//! (persistent maps and vectors with structural sharing), so a commit that changes one row
//! costs O(change · log n), never a copy of the table. A checkpoint folds deltas into new
//! segments (see [`crate::node_table::NodeTable::folded`]).
//!
//! Row offsets never move: appended rows take the offsets after the stored rows, deleted rows
//! become tombstones. Within a node's adjacency, appended rels come after stored ones and in
//! rel-id order, which is the order a fresh load of the same rels in commit order gives.

use std::sync::Arc;

use imbl::{HashMap, OrdMap, OrdSet, Vector};
use warren_common::value::Value;

use crate::buffer::Bitmap;

/// How many rows are deleted: the stored tombstones, and the delta's that are not stored ones.
pub fn deleted_rows(stored: Option<&Bitmap>, deleted: &OrdSet<u64>) -> u64 {
    let is_stored = |row: u64| stored.is_some_and(|d| d.get(row as usize));
    let stored_deleted = stored.map_or(0, |d| d.count_ones() as u64);
    stored_deleted + deleted.iter().filter(|&&row| !is_stored(row)).count() as u64
}

/// The tombstones of `rows` rows after a fold: the stored bitmap's and the delta's; `None` when
/// no row is deleted.
pub fn fold_tombstones(
    stored: Option<&Bitmap>,
    deleted: &OrdSet<u64>,
    rows: usize,
) -> Option<Bitmap> {
    let mut bits = stored.map_or_else(|| vec![false; rows], Bitmap::to_bits);
    bits.resize(rows, false);
    for &row in deleted {
        bits[row as usize] = true;
    }
    bits.iter().any(|&b| b).then(|| Bitmap::from_bits(&bits))
}

/// The changes to one node table since its segment was written.
#[derive(Clone, Debug, Default)]
pub struct NodeDelta {
    /// Rows appended after the stored rows, in offset order; values in schema order.
    pub appended: Vector<Arc<[Value]>>,
    /// New values of stored rows, by (row, property).
    pub updates: HashMap<(u64, u32), Value>,
    /// Rows deleted since the segment was written (stored or appended).
    pub deleted: OrdSet<u64>,
    /// Primary keys of live appended rows.
    pub keys: HashMap<Value, u64>,
}

impl NodeDelta {
    pub fn is_empty(&self) -> bool {
        self.appended.is_empty() && self.updates.is_empty() && self.deleted.is_empty()
    }

    /// How many changes the delta holds (a rough size for checkpoint decisions).
    pub fn changes(&self) -> usize {
        self.appended.len() + self.updates.len() + self.deleted.len()
    }
}

/// One rel appended after the stored rels.
#[derive(Clone, Debug, PartialEq)]
pub struct AppendedRel {
    pub source: u32,
    pub target: u32,
    pub values: Arc<[Value]>,
}

/// The changes to one rel pair since its segment was written.
#[derive(Clone, Debug, Default)]
pub struct RelDelta {
    /// Rels appended after the stored rels, in rel-id order.
    pub appended: Vector<AppendedRel>,
    /// New property values of stored rels, by (rel, property).
    pub updates: HashMap<(u64, u32), Value>,
    /// Rels deleted since the segment was written (stored or appended).
    pub deleted: OrdSet<u64>,
    /// Appended rels by (FROM node, rel id) -> TO node: a node's new forward entries in rel order.
    pub forward: OrdMap<(u32, u32), u32>,
    /// Appended rels by (TO node, rel id) -> FROM node.
    pub backward: OrdMap<(u32, u32), u32>,
}

impl RelDelta {
    pub fn is_empty(&self) -> bool {
        self.appended.is_empty() && self.updates.is_empty() && self.deleted.is_empty()
    }

    pub fn changes(&self) -> usize {
        self.appended.len() + self.updates.len() + self.deleted.len()
    }

    /// Records an appended rel with id `rel`.
    pub fn append(&mut self, rel: u32, appended: AppendedRel) {
        self.forward.insert((appended.source, rel), appended.target);
        self.backward
            .insert((appended.target, rel), appended.source);
        self.appended.push_back(appended);
    }

    /// The appended entries of `node` in one direction: (neighbour, rel) in rel order.
    pub fn appended_entries(
        &self,
        node: u32,
        forward: bool,
    ) -> impl Iterator<Item = (u32, u32)> + '_ {
        let map = if forward {
            &self.forward
        } else {
            &self.backward
        };
        let end = node.checked_add(1).map_or((u32::MAX, u32::MAX), |n| (n, 0));
        map.range((node, 0)..end)
            .map(|(&(_, rel), &neighbour)| (neighbour, rel))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn appended_entries_come_per_node_in_rel_order() {
        let mut delta = RelDelta::default();
        let rel = |source, target| AppendedRel {
            source,
            target,
            values: Arc::from(Vec::new()),
        };
        delta.append(10, rel(1, 2));
        delta.append(11, rel(0, 2));
        delta.append(12, rel(1, 0));
        assert_eq!(
            delta.appended_entries(1, true).collect::<Vec<_>>(),
            vec![(2, 10), (0, 12)]
        );
        assert_eq!(
            delta.appended_entries(2, false).collect::<Vec<_>>(),
            vec![(1, 10), (0, 11)]
        );
        assert_eq!(delta.appended_entries(5, true).count(), 0);
        assert_eq!(delta.appended_entries(u32::MAX, true).count(), 0);
    }
}

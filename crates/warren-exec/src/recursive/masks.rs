//! Bitsets over global node and edge ids: which nodes are destinations, which nodes may be
//! intermediate (the recursive node filter), and which rels may be followed (the rel filter and
//! rel property maps). Filters are evaluated once per node or rel, not once per visit.

use std::sync::Arc;

use warren_common::value::{NodeValue, RelValue, Value};
use warren_common::{Result, TableId};
use warren_planner::expr::Expr;

use super::graph::Graph;
use crate::context::ExecContext;
use crate::eval::prefilter::{
    collect_prefilters, filter_decided, is_conjunction_of_prefilters, resolve_prefilters,
};
use crate::eval::prefiltered_rows::PrefilteredCursor;
use crate::eval::Evaluator;

#[derive(Clone, Debug)]
pub struct Bitset {
    words: Vec<u64>,
}

impl Bitset {
    pub fn new(bits: usize) -> Self {
        Self {
            words: vec![0; bits.div_ceil(64)],
        }
    }

    pub fn full(bits: usize) -> Self {
        let mut set = Self {
            words: vec![u64::MAX; bits.div_ceil(64)],
        };
        if !bits.is_multiple_of(64) {
            if let Some(last) = set.words.last_mut() {
                *last = (1u64 << (bits % 64)) - 1;
            }
        }
        set
    }

    #[inline]
    pub fn get(&self, i: u32) -> bool {
        self.words[(i / 64) as usize] >> (i % 64) & 1 == 1
    }

    #[inline]
    pub fn set(&mut self, i: u32) {
        self.words[(i / 64) as usize] |= 1 << (i % 64);
    }

    pub fn clear(&mut self, i: u32) {
        self.words[(i / 64) as usize] &= !(1 << (i % 64));
    }

    /// Sets bits `start..end`, a word at a time where whole words are covered.
    pub fn set_range(&mut self, start: u32, end: u32) {
        assert!(start <= end, "a range ends after it starts");
        assert!(
            end as usize <= self.words.len() * 64,
            "the range lies within the set"
        );
        let (mut i, end) = (start as usize, end as usize);
        while i < end && !i.is_multiple_of(64) {
            self.set(i as u32);
            i += 1;
        }
        let whole_end = end - end % 64;
        if i < whole_end {
            self.words[i / 64..whole_end / 64].fill(u64::MAX);
            i = whole_end;
        }
        while i < end {
            self.set(i as u32);
            i += 1;
        }
    }

    pub fn count(&self) -> usize {
        self.words.iter().map(|w| w.count_ones() as usize).sum()
    }

    pub fn bytes(&self) -> u64 {
        (self.words.len() * 8) as u64
    }
}

/// Nodes that may end a path.
#[derive(Clone, Debug)]
pub enum DestinationMask {
    Set(Arc<Bitset>),
    /// Exactly one node (the destination is already bound).
    Single(u32),
}

/// The masks one recursive join uses.
#[derive(Clone, Debug)]
pub struct Masks {
    pub destination: DestinationMask,
    /// Nodes that may be intermediate (`None`: all).
    pub intermediate: Option<Arc<Bitset>>,
    /// Edges that may be followed (`None`: all).
    pub edges: Option<Arc<Bitset>>,
}

impl Masks {
    /// Whether every node of a graph of `nodes` nodes is a destination (a pass over the set:
    /// once per query, not per search).
    pub fn every_node_is_destination(&self, nodes: u32) -> bool {
        match &self.destination {
            DestinationMask::Set(set) => set.count() == nodes as usize,
            DestinationMask::Single(_) => false,
        }
    }

    #[inline]
    pub fn is_destination(&self, node: u32) -> bool {
        match &self.destination {
            DestinationMask::Set(set) => set.get(node),
            DestinationMask::Single(single) => *single == node,
        }
    }

    /// Every destination node, ascending.
    pub fn destinations(&self, nodes: u32) -> Vec<u32> {
        match &self.destination {
            DestinationMask::Set(set) => (0..nodes).filter(|&v| set.get(v)).collect(),
            DestinationMask::Single(single) => vec![*single],
        }
    }

    #[inline]
    pub fn expandable(&self, node: u32) -> bool {
        self.intermediate.as_ref().is_none_or(|m| m.get(node))
    }

    #[inline]
    pub fn follows(&self, edge: u32) -> bool {
        self.edges.as_ref().is_none_or(|m| m.get(edge))
    }

    /// Whether a level at `level` follows every edge from every frontier node: no rel filter,
    /// and the first level (the sources expand whatever the node filter) or no node filter.
    /// The traversal kernels then need no mask test per edge or node.
    #[inline]
    pub fn unfiltered_at(&self, level: u32) -> bool {
        self.edges.is_none() && (level == 1 || self.intermediate.is_none())
    }
}

/// Live nodes of `tables` passing `filter` (evaluated with the node in `slot` of a row of
/// `width` slots).
pub fn node_mask(
    graph: &Graph,
    ctx: &ExecContext,
    tables: &[TableId],
    filter: Option<(usize, &Expr)>,
    width: usize,
) -> Result<Bitset> {
    let snapshot = ctx.snapshot();
    let evaluator = Evaluator::new(&snapshot, ctx);
    let mut mask = Bitset::new(graph.num_nodes() as usize);
    let mut row = vec![Value::Null; width];
    let mut prefilters = Vec::new();
    let mut conjunction = false;
    if let Some((slot, expr)) = filter {
        collect_prefilters(expr, slot, &mut prefilters);
        conjunction = is_conjunction_of_prefilters(expr, slot);
    }
    for &(table, base, rows) in graph.node_tables() {
        if !tables.contains(&table) {
            continue;
        }
        let data = snapshot.node_table(table);
        data.try_verify_deleted()?;
        if filter.is_none() {
            set_live_rows(&mut mask, data, base, rows);
            ctx.interrupt.check()?;
            continue;
        }
        let resolved = resolve_prefilters(&prefilters, table, data)?;
        // Prefilters that decide the filter leave nothing to evaluate.
        let evaluated =
            filter.filter(|_| !filter_decided(conjunction, prefilters.len(), &resolved));
        debug_assert_eq!(
            u64::from(rows),
            data.num_rows(),
            "the graph's rows are the table's"
        );
        // The live rows passing the prefilters, found on the query's threads when they decide
        // the filter on a large table.
        let mut cursor = PrefilteredCursor::default();
        while let Some(offset) = cursor.next_row(data, &resolved, evaluated.is_none(), ctx)? {
            if let Some((slot, expr)) = evaluated {
                row[slot] = Value::Node(NodeValue {
                    id: warren_common::InternalId::new(table, offset),
                    projection: None,
                });
                if !evaluator.test(expr, &row)? {
                    continue;
                }
            }
            mask.set(base + offset as u32);
        }
    }
    Ok(mask)
}

/// Sets the bits of a table's live rows (global ids `base..base + rows`): the whole range a
/// word at a time, then clears deleted rows, so an unfiltered mask costs O(rows / 64) when
/// nothing was deleted.
fn set_live_rows(mask: &mut Bitset, data: &warren_storage::NodeTable, base: u32, rows: u32) {
    mask.set_range(base, base + rows);
    if data.deleted().is_none() && data.delta().deleted.is_empty() {
        return;
    }
    for offset in 0..rows {
        if data.is_deleted(u64::from(offset)) {
            mask.clear(base + offset);
        }
    }
}

/// Edges whose rel passes `filter` (with the rel in `slot`).
pub fn edge_mask(
    graph: &Graph,
    ctx: &ExecContext,
    slot: usize,
    filter: &Expr,
    width: usize,
) -> Result<Bitset> {
    let snapshot = ctx.snapshot();
    let evaluator = Evaluator::new(&snapshot, ctx);
    let mut mask = Bitset::new(graph.num_edges() as usize);
    let mut row = vec![Value::Null; width];
    for edge in 0..graph.num_edges() {
        row[slot] = Value::Rel(RelValue {
            id: graph.rel(edge),
            projection: None,
        });
        if evaluator.test(filter, &row)? {
            mask.set(edge);
        }
        if edge % (1 << 16) == 0 {
            ctx.interrupt.check()?;
        }
    }
    Ok(mask)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn set_range_sets_exactly_the_range() {
        for (bits, start, end) in [(200, 0, 200), (200, 3, 5), (200, 60, 130), (64, 0, 64)] {
            let mut set = Bitset::new(bits);
            set.set_range(start, end);
            for i in 0..bits as u32 {
                assert_eq!(
                    set.get(i),
                    (start..end).contains(&i),
                    "bit {i} of {start}..{end}"
                );
            }
            assert_eq!(set.count(), (end - start) as usize);
        }
        let mut empty = Bitset::new(10);
        empty.set_range(4, 4);
        assert_eq!(empty.count(), 0);
    }
}

//! The graph a recursive pattern traverses, in one dense id space. Node tables get consecutive
//! ranges of global node ids and rel pairs consecutive ranges of global edge ids. When the
//! pattern follows one rel pair between nodes of one table, the stored CSRs are used in place
//! (no copy); otherwise the adjacency of every (pair, direction) step is merged per node.
//! Stored adjacency is verified block by block as the traversal reads it; a checksum mismatch
//! is recorded in the graph's [`CorruptionSlot`] and returned by [`Graph::check_corruption`].

use std::sync::{Arc, OnceLock};

use warren_common::{Error, InternalId, Result, TableId};
use warren_planner::plan::Step;
use warren_storage::adjacency::AdjacencyView;
use warren_storage::section_check::CorruptionSlot;
use warren_storage::{Direction, RelTable, Snapshot};

/// Adjacency in one direction: neighbours of global node `v` are
/// `targets[offsets[v]..offsets[v+1]]`, reached through the edges alongside.
#[derive(Debug)]
pub enum Adjacency {
    Stored {
        table: Arc<RelTable>,
        direction: Direction,
        /// The graph's slot for a checksum mismatch met while reading.
        corruption: Arc<CorruptionSlot>,
    },
    Built {
        offsets: Vec<u64>,
        targets: Vec<u32>,
        edges: Vec<u32>,
    },
}

impl Adjacency {
    /// The view the traversal loops read: node `v`'s (neighbours, edges).
    #[inline]
    pub fn view(&self) -> AdjacencyView<'_> {
        match self {
            Adjacency::Stored {
                table,
                direction,
                corruption,
            } => table.adjacency_checked(*direction, corruption),
            Adjacency::Built {
                offsets,
                targets,
                edges,
            } => AdjacencyView::csr(offsets, targets, edges),
        }
    }
}

/// The traversal graph of one recursive pattern.
#[derive(Debug)]
pub struct Graph {
    /// (node table, first global id, rows), ascending by first global id.
    node_tables: Vec<(TableId, u32, u32)>,
    num_nodes: u32,
    /// (rel pair, first global edge id, rels), ascending by first global edge id.
    edge_tables: Vec<(TableId, u32, u32)>,
    num_edges: u32,
    /// Edges in traversal direction.
    pub forward: Adjacency,
    /// The same edges reversed.
    pub backward: Adjacency,
    /// The forward edges of each (pair, direction) step on its own, when there are several;
    /// breadth-first search visits steps in this order (as Kùzu does), which decides ties.
    per_step: Vec<Adjacency>,
    /// The first checksum mismatch met reading stored adjacency (building or traversing).
    corruption: Arc<CorruptionSlot>,
    /// Which nodes have an in-edge, a bit per node (see [`Graph::in_edge_bits`]).
    in_edge_bits: OnceLock<Vec<u64>>,
}

fn flip(direction: Direction) -> Direction {
    match direction {
        Direction::Forward => Direction::Backward,
        Direction::Backward => Direction::Forward,
    }
}

impl Graph {
    /// Builds the graph of `steps`, including the node tables of the steps' endpoints and
    /// `extra_tables` (source and destination tables).
    pub fn build(snapshot: &Snapshot, steps: &[Step], extra_tables: &[TableId]) -> Result<Self> {
        let mut tables: Vec<TableId> = extra_tables.to_vec();
        for step in steps {
            let (start, end) = snapshot.pair_ends(step.pair, step.direction);
            tables.extend([start, end]);
        }
        tables.sort_unstable();
        tables.dedup();
        let mut pairs: Vec<TableId> = steps.iter().map(|s| s.pair).collect();
        pairs.sort_unstable();
        pairs.dedup();
        let mut node_tables = Vec::with_capacity(tables.len());
        let mut next: u64 = 0;
        for &table in &tables {
            let rows = snapshot.node_table(table).num_rows();
            node_tables.push((table, next as u32, rows as u32));
            next += rows;
        }
        let mut edge_tables = Vec::with_capacity(pairs.len());
        let mut next_edge: u64 = 0;
        for &pair in &pairs {
            let rels = snapshot.rel_table(pair).num_rows();
            edge_tables.push((pair, next_edge as u32, rels as u32));
            next_edge += rels;
        }
        if next >= u64::from(u32::MAX) || next_edge >= u64::from(u32::MAX) {
            return Err(Error::LimitExceeded(
                "a recursive pattern over several tables may span at most 4294967294 nodes and rels".into(),
            ));
        }
        let num_nodes = next as u32;
        let corruption = Arc::new(CorruptionSlot::default());
        if let Some(stored) = Self::stored(snapshot, steps, &tables, &corruption) {
            let (forward, backward) = stored;
            return Ok(Self {
                node_tables,
                num_nodes,
                edge_tables,
                num_edges: next_edge as u32,
                forward,
                backward,
                per_step: Vec::new(),
                corruption,
                in_edge_bits: OnceLock::new(),
            });
        }
        let mut graph = Self {
            node_tables,
            num_nodes,
            edge_tables,
            num_edges: next_edge as u32,
            forward: Adjacency::Built {
                offsets: vec![0; num_nodes as usize + 1],
                targets: Vec::new(),
                edges: Vec::new(),
            },
            backward: Adjacency::Built {
                offsets: vec![0; num_nodes as usize + 1],
                targets: Vec::new(),
                edges: Vec::new(),
            },
            per_step: Vec::new(),
            corruption,
            in_edge_bits: OnceLock::new(),
        };
        graph.forward = graph.merge(snapshot, steps, false);
        graph.backward = graph.merge(snapshot, steps, true);
        if steps.len() > 1 {
            graph.per_step = steps
                .iter()
                .map(|step| graph.merge(snapshot, std::slice::from_ref(step), false))
                .collect();
        }
        graph.check_corruption()?;
        Ok(graph)
    }

    /// `Err` with `corrupt database: checksum mismatch in ...` if reading stored adjacency met
    /// a damaged block; a traversal's results are void then, and the operator returns this.
    pub fn check_corruption(&self) -> Result<()> {
        self.corruption.check()
    }

    /// The stored CSRs, when one pair connects one node table to itself and covers all its rows.
    fn stored(
        snapshot: &Snapshot,
        steps: &[Step],
        tables: &[TableId],
        corruption: &Arc<CorruptionSlot>,
    ) -> Option<(Adjacency, Adjacency)> {
        let [step] = steps else { return None };
        let (start, end) = snapshot.pair_ends(step.pair, step.direction);
        if start != end || tables != [start] {
            return None;
        }
        let table = snapshot.rel_table(step.pair).clone();
        let rows = snapshot.node_table(start).num_rows() as usize;
        let nodes = |direction| table.adjacency_checked(direction, corruption).num_nodes();
        if nodes(Direction::Forward) != rows || nodes(Direction::Backward) != rows {
            return None;
        }
        Some((
            Adjacency::Stored {
                table: table.clone(),
                direction: step.direction,
                corruption: corruption.clone(),
            },
            Adjacency::Stored {
                table,
                direction: flip(step.direction),
                corruption: corruption.clone(),
            },
        ))
    }

    /// Merges the adjacency of every step (reversed when `reverse`) per global node.
    fn merge(&self, snapshot: &Snapshot, steps: &[Step], reverse: bool) -> Adjacency {
        let mut offsets = vec![0u64; self.num_nodes as usize + 1];
        let mut targets = Vec::new();
        let mut edges = Vec::new();
        for &(table, base, rows) in &self.node_tables {
            for offset in 0..rows {
                let node = base + offset;
                for step in steps {
                    let direction = if reverse {
                        flip(step.direction)
                    } else {
                        step.direction
                    };
                    let (start, end) = snapshot.pair_ends(step.pair, direction);
                    if start != table {
                        continue;
                    }
                    let Some(end_base) = self.table_base(end) else {
                        continue;
                    };
                    let edge_base = self.edge_base(step.pair).expect("pair in graph");
                    let view = snapshot
                        .rel_table(step.pair)
                        .adjacency_checked(direction, &self.corruption);
                    if offset as usize >= view.num_nodes() {
                        continue; // a node newer than every rel of this table
                    }
                    let (neighbours, rels) = view.entries(offset);
                    for (&target, &rel) in neighbours.iter().zip(rels) {
                        targets.push(end_base + target);
                        edges.push(edge_base + rel);
                    }
                }
                offsets[node as usize + 1] = targets.len() as u64;
            }
        }
        Adjacency::Built {
            offsets,
            targets,
            edges,
        }
    }

    /// The forward adjacency of each step, in step order (one entry for a single step).
    pub fn steps(&self) -> &[Adjacency] {
        if self.per_step.is_empty() {
            std::slice::from_ref(&self.forward)
        } else {
            &self.per_step
        }
    }

    pub fn num_nodes(&self) -> u32 {
        self.num_nodes
    }

    /// Bit `v % 64` of word `v / 64` is set when node `v` has an in-edge: the nodes a
    /// bottom-up level can reach at all (on Graph500 graphs about 40% of the nodes have none,
    /// and a search would otherwise test them at every bottom-up level). Computed on first use
    /// from the stored backward offsets without verifying them: they are read only where those
    /// offsets are verified and unpatched (the many-source kernel's verified node ranges, a
    /// one-source search's map on a plain view).
    pub fn in_edge_bits(&self) -> &[u64] {
        // A stored CSR read as stored keeps its bits between queries (OPTIMIZATION_LOG 226).
        if let Adjacency::Stored {
            table, direction, ..
        } = &self.backward
        {
            let words = (self.num_nodes as usize).div_ceil(64);
            if let Some(bits) = table.stored_nonempty_bits(*direction) {
                if bits.len() == words
                    && self.backward.view().num_nodes() == self.num_nodes as usize
                {
                    return bits;
                }
            }
        }
        self.in_edge_bits.get_or_init(|| {
            let backward = self.backward.view();
            backward.unverified_nonempty_words(self.num_nodes.min(backward.num_nodes() as u32))
        })
    }

    pub fn num_edges(&self) -> u32 {
        self.num_edges
    }

    pub fn node_tables(&self) -> &[(TableId, u32, u32)] {
        &self.node_tables
    }

    fn table_base(&self, table: TableId) -> Option<u32> {
        self.node_tables
            .iter()
            .find(|(t, ..)| *t == table)
            .map(|(_, base, _)| *base)
    }

    fn edge_base(&self, pair: TableId) -> Option<u32> {
        self.edge_tables
            .iter()
            .find(|(p, ..)| *p == pair)
            .map(|(_, base, _)| *base)
    }

    /// The global id of a node, if its table is part of the graph.
    pub fn global(&self, id: InternalId) -> Option<u32> {
        let (_, base, rows) = self.node_tables.iter().find(|(t, ..)| *t == id.table)?;
        (id.offset < u64::from(*rows)).then(|| base + id.offset as u32)
    }

    /// The node with a global id.
    pub fn node(&self, global: u32) -> InternalId {
        let index = self
            .node_tables
            .partition_point(|(_, base, _)| *base <= global)
            - 1;
        let (table, base, _) = self.node_tables[index];
        InternalId::new(table, u64::from(global - base))
    }

    /// The rel with a global edge id.
    pub fn rel(&self, edge: u32) -> InternalId {
        let index = self
            .edge_tables
            .partition_point(|(_, base, _)| *base <= edge)
            - 1;
        let (pair, base, _) = self.edge_tables[index];
        InternalId::new(pair, u64::from(edge - base))
    }

    /// The tables of the graph whose nodes are among `tables`, as global id ranges.
    pub fn ranges_of(&self, tables: &[TableId]) -> Vec<std::ops::Range<u32>> {
        self.node_tables
            .iter()
            .filter(|(t, ..)| tables.contains(t))
            .map(|&(_, base, rows)| base..base + rows)
            .collect()
    }
}

#[cfg(test)]
impl Graph {
    /// A graph of one node table (`nodes` nodes) and one rel table holding `edges` (edge id =
    /// position), for unit tests of the traversals.
    pub fn from_edges(nodes: u32, edges: &[(u32, u32)]) -> Self {
        let csr = |pairs: Vec<(u32, u32, u32)>| {
            let mut offsets = vec![0u64; nodes as usize + 1];
            for &(from, ..) in &pairs {
                offsets[from as usize + 1] += 1;
            }
            for v in 0..nodes as usize {
                offsets[v + 1] += offsets[v];
            }
            let mut sorted = pairs;
            sorted.sort_by_key(|&(from, _, edge)| (from, edge));
            Adjacency::Built {
                offsets,
                targets: sorted.iter().map(|&(_, to, _)| to).collect(),
                edges: sorted.iter().map(|&(.., edge)| edge).collect(),
            }
        };
        let numbered = edges.iter().zip(0u32..);
        Self {
            node_tables: vec![(0, 0, nodes)],
            num_nodes: nodes,
            edge_tables: vec![(1, 0, edges.len() as u32)],
            num_edges: edges.len() as u32,
            forward: csr(numbered.clone().map(|(&(a, b), e)| (a, b, e)).collect()),
            backward: csr(numbered.map(|(&(a, b), e)| (b, a, e)).collect()),
            per_step: Vec::new(),
            corruption: Arc::default(),
            in_edge_bits: OnceLock::new(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn in_edge_bits_mark_the_nodes_with_an_in_edge() {
        // 130 nodes (three words): node v has an in-edge when some edge ends at v.
        let edges: Vec<(u32, u32)> = (0..130u32)
            .filter(|v| v % 3 == 0)
            .map(|v| (v, (v * 7 + 1) % 130))
            .chain([(5, 64), (6, 129)])
            .collect();
        let graph = Graph::from_edges(130, &edges);
        let bits = graph.in_edge_bits();
        assert_eq!(bits.len(), 3);
        for v in 0..130u32 {
            let expected = edges.iter().any(|&(_, to)| to == v);
            let got = bits[(v / 64) as usize] >> (v % 64) & 1 == 1;
            assert_eq!(got, expected, "node {v}");
        }
        assert_eq!(bits[2] >> 2, 0, "no bits past the last node");
    }
}

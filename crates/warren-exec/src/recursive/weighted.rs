//! Weighted shortest paths (WSHORTEST, ALL WSHORTEST): Dijkstra's algorithm from one source over
//! non-negative rel weights. One parent per node (the first found at the final distance) for
//! WSHORTEST; every parent at the final distance for ALL WSHORTEST, enumerated backwards.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use warren_common::value::Value;
use warren_common::{Error, Result, TableId};

use super::graph::Graph;
use super::masks::Masks;
use crate::context::{ExecContext, Interrupt};

/// The weight of every edge of the graph (NaN for a NULL weight: the edge is not followed).
pub fn edge_weights(
    graph: &Graph,
    ctx: &ExecContext,
    columns: &[(TableId, usize)],
) -> Result<Vec<f64>> {
    let snapshot = ctx.snapshot();
    let mut weights = vec![f64::NAN; graph.num_edges() as usize];
    for (edge, weight) in weights.iter_mut().enumerate() {
        let rel = graph.rel(edge as u32);
        let Some((_, column)) = columns.iter().find(|(pair, _)| *pair == rel.table) else {
            continue;
        };
        match snapshot.rel_table(rel.table).value(rel.offset, *column) {
            Value::Null => {}
            value => *weight = value.as_f64().unwrap_or(f64::NAN),
        }
    }
    Ok(weights)
}

#[derive(PartialEq)]
struct Entry {
    distance: f64,
    node: u32,
}

impl Eq for Entry {}

impl Ord for Entry {
    fn cmp(&self, other: &Self) -> Ordering {
        // Smallest distance first, then smallest node id.
        other
            .distance
            .total_cmp(&self.distance)
            .then_with(|| other.node.cmp(&self.node))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The result of one weighted search.
pub struct Weighted {
    pub distance: Vec<f64>,
    /// (parent node, edge) pairs per node: one for WSHORTEST, all tied ones for ALL WSHORTEST.
    pub parents: Vec<Vec<(u32, u32)>>,
    /// Settled nodes in order.
    pub settled: Vec<u32>,
    pub source: u32,
}

/// Runs Dijkstra from `source`. A negative weight is an error naming `algorithm`.
pub fn dijkstra(
    graph: &Graph,
    masks: &Masks,
    weights: &[f64],
    source: u32,
    all_parents: bool,
    algorithm: &str,
    interrupt: &Interrupt,
) -> Result<Weighted> {
    let n = graph.num_nodes() as usize;
    let mut result = Weighted {
        distance: vec![f64::INFINITY; n],
        parents: vec![Vec::new(); n],
        settled: Vec::new(),
        source,
    };
    let mut done = vec![false; n];
    result.distance[source as usize] = 0.0;
    let mut heap = BinaryHeap::new();
    heap.push(Entry {
        distance: 0.0,
        node: source,
    });
    let targets = graph.forward.targets();
    let edges = graph.forward.edges();
    while let Some(Entry { distance, node: u }) = heap.pop() {
        if done[u as usize] || distance > result.distance[u as usize] {
            continue;
        }
        done[u as usize] = true;
        result.settled.push(u);
        if result.settled.len().is_multiple_of(4096) {
            interrupt.check()?;
        }
        if u != source && !masks.expandable(u) {
            continue;
        }
        for i in graph.forward.range(u) {
            let edge = edges[i];
            let weight = weights[edge as usize];
            if weight.is_nan() || !masks.follows(edge) {
                continue;
            }
            if weight < 0.0 {
                return Err(Error::runtime(format!(
                    "Found negative weight {}. This is not a supported weight for {algorithm}",
                    warren_common::format::to_kuzu_string(
                        &Value::Double(weight),
                        &warren_common::value::NoGraph
                    )
                    .trim_end_matches('0')
                    .trim_end_matches('.')
                )));
            }
            let v = targets[i];
            if v == source {
                continue;
            }
            let candidate = distance + weight;
            let current = result.distance[v as usize];
            if candidate < current {
                result.distance[v as usize] = candidate;
                result.parents[v as usize].clear();
                result.parents[v as usize].push((u, edge));
                heap.push(Entry {
                    distance: candidate,
                    node: v,
                });
            } else if all_parents && candidate == current && !done[v as usize] {
                result.parents[v as usize].push((u, edge));
            }
        }
    }
    Ok(result)
}

impl Weighted {
    /// Every minimum-weight path to `target` (all tied ones, or the first when parents hold one):
    /// (intermediate nodes, edges) in forward order.
    pub fn paths_to(&self, target: u32, limit_paths: usize) -> Result<Vec<(Vec<u32>, Vec<u32>)>> {
        let mut out = Vec::new();
        let mut nodes = Vec::new();
        let mut edges = Vec::new();
        self.collect(target, &mut nodes, &mut edges, &mut out, limit_paths)?;
        Ok(out)
    }

    fn collect(
        &self,
        v: u32,
        nodes: &mut Vec<u32>,
        edges: &mut Vec<u32>,
        out: &mut Vec<(Vec<u32>, Vec<u32>)>,
        limit_paths: usize,
    ) -> Result<()> {
        if v == self.source {
            // `nodes` holds the target and then each node back towards the source.
            let forward_edges: Vec<u32> = edges.iter().rev().copied().collect();
            let intermediate: Vec<u32> = nodes
                .iter()
                .rev()
                .copied()
                .take(nodes.len().saturating_sub(1))
                .collect();
            out.push((intermediate, forward_edges));
            if out.len() > limit_paths {
                return Err(Error::LimitExceeded(
                    "too many tied weighted shortest paths".into(),
                ));
            }
            return Ok(());
        }
        for &(u, edge) in &self.parents[v as usize] {
            nodes.push(v);
            edges.push(edge);
            self.collect(u, nodes, edges, out, limit_paths)?;
            nodes.pop();
            edges.pop();
        }
        Ok(())
    }
}

//! Weighted shortest paths (WSHORTEST, ALL WSHORTEST): Dijkstra's algorithm from one source over
//! non-negative rel weights. One parent per node (the first found at the final distance) for
//! WSHORTEST; every parent at the final distance for ALL WSHORTEST, enumerated backwards.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use warren_common::value::Value;
use warren_common::{Error, Result, TableId};

use super::graph::Graph;
use super::masks::Masks;
use super::scheduler::PhasedSearch;
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
        match snapshot
            .rel_table(rel.table)
            .try_value(rel.offset, *column)?
        {
            Value::Null => {}
            value => *weight = value.as_f64().unwrap_or(f64::NAN),
        }
    }
    Ok(weights)
}

/// Kùzu's error for a negative rel weight met by `algorithm`.
fn negative_weight(weight: f64, algorithm: &str) -> Error {
    let shown = warren_common::format::to_kuzu_string(
        &Value::Double(weight),
        &warren_common::value::NoGraph,
    );
    Error::runtime(format!(
        "Found negative weight {}. This is not a supported weight for {algorithm}",
        shown.trim_end_matches('0').trim_end_matches('.')
    ))
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
    let forward = graph.forward.view();
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
        let (targets, edges) = forward.entries(u);
        for i in 0..targets.len() {
            let edge = edges[i];
            let weight = weights[edge as usize];
            if weight.is_nan() || !masks.follows(edge) {
                continue;
            }
            if weight < 0.0 {
                return Err(negative_weight(weight, algorithm));
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

/// Weighted shortest paths from one source, in parallel: rounds over a frontier of nodes whose
/// distance dropped, each frontier cut into morsels whose threads lower their out-neighbours'
/// distances with a compare-and-swap minimum (a non-negative `f64` orders like its bits). It
/// ends when no distance drops (label correcting, as Bellman-Ford over a frontier). Parents are
/// then derived from the final distances exactly as [`dijkstra`] picks them: nodes settle in
/// (distance, node id) order, and a parent is an in-neighbour settled earlier whose distance
/// plus the rel's weight equals the node's (the first such rel for WSHORTEST, all of them for
/// ALL WSHORTEST, in settle order and rel order).
pub struct ParallelWeighted<'a> {
    pub graph: &'a Graph,
    pub masks: &'a Masks,
    pub weights: &'a [f64],
    pub algorithm: &'a str,
    pub all_parents: bool,
    pub morsel_size: usize,
    distance: Vec<std::sync::atomic::AtomicU64>,
    queued: Vec<std::sync::atomic::AtomicBool>,
    state: std::sync::RwLock<WeightedRound>,
    pieces: std::sync::Mutex<Vec<Vec<u32>>>,
}

/// The frontier of the current round, and every node reached.
#[derive(Debug, Default)]
struct WeightedRound {
    source: u32,
    frontier: Vec<u32>,
    reached: Vec<u32>,
}

impl<'a> ParallelWeighted<'a> {
    pub fn new(
        graph: &'a Graph,
        masks: &'a Masks,
        weights: &'a [f64],
        (algorithm, all_parents): (&'a str, bool),
        morsel_size: usize,
    ) -> Self {
        let n = graph.num_nodes() as usize;
        Self {
            graph,
            masks,
            weights,
            algorithm,
            all_parents,
            morsel_size: morsel_size.max(1),
            distance: (0..n)
                .map(|_| std::sync::atomic::AtomicU64::new(f64::INFINITY.to_bits()))
                .collect(),
            queued: (0..n)
                .map(|_| std::sync::atomic::AtomicBool::new(false))
                .collect(),
            state: std::sync::RwLock::new(WeightedRound::default()),
            pieces: std::sync::Mutex::new(Vec::new()),
        }
    }

    fn load(&self, v: u32) -> f64 {
        f64::from_bits(self.distance[v as usize].load(std::sync::atomic::Ordering::Relaxed))
    }

    /// Lowers `v`'s distance to `candidate` if smaller; true when it did.
    fn lower(&self, v: u32, candidate: f64) -> bool {
        use std::sync::atomic::Ordering::Relaxed;
        let slot = &self.distance[v as usize];
        let mut current = slot.load(Relaxed);
        while candidate < f64::from_bits(current) {
            match slot.compare_exchange_weak(current, candidate.to_bits(), Relaxed, Relaxed) {
                Ok(_) => return true,
                Err(actual) => current = actual,
            }
        }
        false
    }

    /// Relaxes the out-edges of frontier nodes `nodes`; returns the nodes whose distance
    /// dropped and that were not queued yet.
    fn relax(&self, source: u32, nodes: &[u32]) -> Result<Vec<u32>> {
        use std::sync::atomic::Ordering::Relaxed;
        let forward = self.graph.forward.view();
        let mut dropped = Vec::new();
        for &u in nodes {
            if u != source && !self.masks.expandable(u) {
                continue;
            }
            let distance_u = self.load(u);
            let (targets, edges) = forward.entries(u);
            for i in 0..targets.len() {
                let edge = edges[i];
                let weight = self.weights[edge as usize];
                if weight.is_nan() || !self.masks.follows(edge) {
                    continue;
                }
                if weight < 0.0 {
                    return Err(negative_weight(weight, self.algorithm));
                }
                let v = targets[i];
                if v != source
                    && self.lower(v, distance_u + weight)
                    && !self.queued[v as usize].swap(true, Relaxed)
                {
                    dropped.push(v);
                }
            }
        }
        Ok(dropped)
    }

    /// The order in which [`dijkstra`] settles the reached nodes: by distance, and within one
    /// distance by node id among the nodes discovered so far — a node reached only through a
    /// zero-weight rel from a node of the same distance is discovered when that node settles.
    fn settle_order(&self, source: u32, reached: &[u32], distance: &[f64]) -> Vec<u32> {
        let mut nodes: Vec<u32> = reached.to_vec();
        nodes.push(source);
        nodes.sort_unstable();
        nodes.dedup();
        nodes.sort_by(|&a, &b| distance[a as usize].total_cmp(&distance[b as usize]));
        let n = self.graph.num_nodes() as usize;
        let mut settled = vec![false; n];
        let mut discovered = vec![false; n];
        let mut order = Vec::with_capacity(nodes.len());
        let forward = self.graph.forward.view();
        let backward = self.graph.backward.view();
        for group in nodes.chunk_by(|&a, &b| distance[a as usize] == distance[b as usize]) {
            let d = distance[group[0] as usize];
            let mut heap = std::collections::BinaryHeap::new();
            for &v in group {
                // Discovered by a rel from a node settled earlier (or the source itself).
                let from_settled = v == source || {
                    let (sources, in_edges) = backward.entries(v);
                    sources.iter().zip(in_edges).any(|(&u, &edge)| {
                        settled[u as usize] && self.relaxes(source, u, edge, d, distance)
                    })
                };
                if from_settled {
                    discovered[v as usize] = true;
                    heap.push(std::cmp::Reverse(v));
                }
            }
            while let Some(std::cmp::Reverse(u)) = heap.pop() {
                settled[u as usize] = true;
                order.push(u);
                let (targets, edges) = forward.entries(u);
                for i in 0..targets.len() {
                    let (v, edge) = (targets[i], edges[i]);
                    if distance[v as usize] == d
                        && !discovered[v as usize]
                        && v != source
                        && self.relaxes(source, u, edge, d, distance)
                    {
                        discovered[v as usize] = true;
                        heap.push(std::cmp::Reverse(v));
                    }
                }
            }
        }
        order
    }

    /// Whether settling `u` offers distance `d` through `edge`.
    fn relaxes(&self, source: u32, u: u32, edge: u32, d: f64, distance: &[f64]) -> bool {
        let weight = self.weights[edge as usize];
        (u == source || self.masks.expandable(u))
            && !weight.is_nan()
            && self.masks.follows(edge)
            && distance[u as usize] + weight == d
    }

    /// The finished search in [`Weighted`] form, with Dijkstra's parents.
    pub fn result(&self) -> Weighted {
        let state = self.state.read().expect("weighted state lock");
        let source = state.source;
        let n = self.graph.num_nodes() as usize;
        let distance: Vec<f64> = (0..n as u32).map(|v| self.load(v)).collect();
        let settled = self.settle_order(source, &state.reached, &distance);
        let mut rank = vec![u32::MAX; n];
        for (position, &v) in settled.iter().enumerate() {
            rank[v as usize] = position as u32;
        }
        let mut parents = vec![Vec::new(); n];
        let forward = self.graph.forward.view();
        for &u in &settled {
            if u != source && !self.masks.expandable(u) {
                continue;
            }
            let (targets, edges) = forward.entries(u);
            for i in 0..targets.len() {
                let (v, edge) = (targets[i], edges[i]);
                let weight = self.weights[edge as usize];
                if v == source || weight.is_nan() || !self.masks.follows(edge) {
                    continue;
                }
                let list: &mut Vec<(u32, u32)> = &mut parents[v as usize];
                let ties = distance[u as usize] + weight == distance[v as usize];
                if ties
                    && rank[u as usize] < rank[v as usize]
                    && (self.all_parents || list.is_empty())
                {
                    list.push((u, edge));
                }
            }
        }
        Weighted {
            distance,
            parents,
            settled,
            source,
        }
    }
}

impl PhasedSearch for ParallelWeighted<'_> {
    type Task = u32;
    type Output = ();

    fn start(&self, &source: &u32) -> Result<usize> {
        use std::sync::atomic::Ordering::Relaxed;
        let mut state = self.state.write().expect("weighted state lock");
        for &v in state.reached.iter().chain(std::iter::once(&state.source)) {
            if let Some(slot) = self.distance.get(v as usize) {
                slot.store(f64::INFINITY.to_bits(), Relaxed);
            }
        }
        state.source = source;
        state.reached.clear();
        state.frontier = vec![source];
        self.distance[source as usize].store(0f64.to_bits(), Relaxed);
        Ok(1)
    }

    fn process(&self, morsel: usize) -> Result<()> {
        let state = self.state.read().expect("weighted state lock");
        let start = morsel * self.morsel_size;
        let end = (start + self.morsel_size).min(state.frontier.len());
        let dropped = self.relax(state.source, &state.frontier[start..end])?;
        drop(state);
        self.pieces.lock().expect("pieces lock").push(dropped);
        Ok(())
    }

    fn advance(&self) -> Result<usize> {
        use std::sync::atomic::Ordering::Relaxed;
        let mut state = self.state.write().expect("weighted state lock");
        let pieces = std::mem::take(&mut *self.pieces.lock().expect("pieces lock"));
        let mut frontier: Vec<u32> = pieces.into_iter().flatten().collect();
        frontier.sort_unstable();
        for &v in &frontier {
            self.queued[v as usize].store(false, Relaxed);
        }
        // A node whose distance drops again is listed again; `result` removes duplicates.
        state.reached.extend_from_slice(&frontier);
        state.frontier = frontier;
        Ok(state.frontier.len().div_ceil(self.morsel_size))
    }

    fn finish(&self) -> Result<()> {
        Ok(())
    }
}

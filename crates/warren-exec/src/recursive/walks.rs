//! Variable-length paths (WALK, TRAIL, ACYCLIC). Counting: walks are counted level by level by
//! dynamic programming, one sweep over the frontier's edges per hop, never one step per walk.
//! Enumerating: a depth-first search whose memory is bounded by the path length, pruned by each
//! node's distance to the nearest destination, streams one path at a time.

use warren_common::Result;

use super::bfs::UNREACHED;
use super::graph::Graph;
use super::masks::Masks;
use super::stats::PathStats;
use crate::context::Interrupt;

/// Hop distance from every node to the nearest destination (through nodes that may be
/// intermediate), up to `upper`; `UNREACHED` beyond. A path through `v` at depth `d` can only
/// end at a destination if `distance[v] <= upper - d`.
pub fn distance_to_destinations(
    graph: &Graph,
    masks: &Masks,
    upper: u32,
    interrupt: &Interrupt,
) -> Result<Vec<u32>> {
    let mut distance = vec![UNREACHED; graph.num_nodes() as usize];
    let mut frontier: Vec<u32> = masks.destinations(graph.num_nodes());
    for &v in &frontier {
        distance[v as usize] = 0;
    }
    let backward = graph.backward.view();
    let mut next = Vec::new();
    for level in 1..=upper {
        for &v in &frontier {
            // v continues a path only as an intermediate node (level > 1) or as its end.
            if level > 1 && !masks.expandable(v) {
                continue;
            }
            let (sources, edges) = backward.entries(v);
            for (&u, &edge) in sources.iter().zip(edges) {
                if distance[u as usize] == UNREACHED && masks.follows(edge) {
                    distance[u as usize] = level;
                    next.push(u);
                }
            }
        }
        // A destination reached again at a later level may still continue as an intermediate.
        if next.is_empty() {
            break;
        }
        std::mem::swap(&mut frontier, &mut next);
        next.clear();
        interrupt.check()?;
    }
    // Destinations that may also be intermediate need their continuation distance too; the
    // pruning only needs a lower bound, and 0 is one, so nothing more is required.
    Ok(distance)
}

/// Counts walks of `lower..=upper` hops from `source` to destinations, overall or per
/// destination (`per_destination` receives (node, stats) for every destination reached).
pub fn count_walks(
    graph: &Graph,
    masks: &Masks,
    source: u32,
    lower: u32,
    upper: u32,
    per_destination: Option<&mut Vec<(u32, PathStats)>>,
    interrupt: &Interrupt,
) -> Result<PathStats> {
    let n = graph.num_nodes() as usize;
    let mut total = PathStats::default();
    let mut by_node: Option<(Vec<PathStats>, Vec<u32>)> = per_destination
        .as_ref()
        .map(|_| (vec![PathStats::default(); n], Vec::new()));
    let mut record = |v: u32, level: u32, count: u64, total: &mut PathStats| -> Result<()> {
        if !masks.is_destination(v) || level < lower {
            return Ok(());
        }
        total.add(level, count)?;
        if let Some((stats, touched)) = by_node.as_mut() {
            if stats[v as usize].count == 0 {
                touched.push(v);
            }
            stats[v as usize].add(level, count)?;
        }
        Ok(())
    };
    let mut counts = vec![0u64; n];
    let mut next_counts = vec![0u64; n];
    let mut frontier = vec![source];
    let mut next = Vec::new();
    counts[source as usize] = 1;
    record(source, 0, 1, &mut total)?;
    let forward = graph.forward.view();
    for level in 1..=upper {
        for &u in &frontier {
            let paths = counts[u as usize];
            counts[u as usize] = 0;
            if level > 1 && !masks.expandable(u) {
                continue;
            }
            let (targets, edges) = forward.entries(u);
            for (&v, &edge) in targets.iter().zip(edges) {
                if !masks.follows(edge) {
                    continue;
                }
                let v = v as usize;
                if next_counts[v] == 0 {
                    next.push(v as u32);
                }
                next_counts[v] = next_counts[v].checked_add(paths).ok_or_else(|| {
                    warren_common::Error::LimitExceeded(
                        "the number of paths exceeds the INT64 range".into(),
                    )
                })?;
            }
        }
        for &v in &next {
            record(v, level, next_counts[v as usize], &mut total)?;
        }
        std::mem::swap(&mut counts, &mut next_counts);
        std::mem::swap(&mut frontier, &mut next);
        next.clear();
        if frontier.is_empty() {
            break;
        }
        interrupt.check()?;
    }
    if let (Some(out), Some((stats, touched))) = (per_destination, by_node) {
        out.extend(touched.into_iter().map(|v| (v, stats[v as usize])));
    }
    Ok(total)
}

/// Which repetition a path may contain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Semantic {
    /// Any node and rel may repeat.
    Walk,
    /// No rel repeats.
    Trail,
    /// No intermediate node repeats (the ends may equal an intermediate node).
    Acyclic,
}

/// A path found: (destination, intermediate nodes, edges).
pub type FoundPath = (u32, Vec<u32>, Vec<u32>);

/// One frame of the depth-first search: a node and its next edge entry.
#[derive(Clone, Copy, Debug)]
struct Frame {
    node: u32,
    cursor: usize,
    end: usize,
    /// Whether this node was checked and admitted as an intermediate node.
    expanded: bool,
}

/// Streams the paths of `lower..=upper` hops from one source, one at a time. The graph, masks
/// and destination distances are passed to every call (the enumerator owns only its stack).
#[derive(Debug)]
pub struct PathEnumerator {
    semantic: Semantic,
    lower: u32,
    upper: u32,
    stack: Vec<Frame>,
    edges: Vec<u32>,
    /// The zero-length path still has to be considered.
    pending_empty: bool,
    steps: u64,
}

impl PathEnumerator {
    pub fn new(graph: &Graph, semantic: Semantic, source: u32, lower: u32, upper: u32) -> Self {
        let degree = graph.forward.view().degree(source) as usize;
        Self {
            semantic,
            lower,
            upper,
            stack: vec![Frame {
                node: source,
                cursor: 0,
                end: degree,
                expanded: true,
            }],
            edges: Vec::new(),
            pending_empty: lower == 0,
            steps: 0,
        }
    }

    /// May the path continue from the node on top of the stack?
    fn admits_expansion(&self, masks: &Masks, depth: usize) -> bool {
        let node = self.stack[depth].node;
        if depth == 0 {
            return true;
        }
        if !masks.expandable(node) {
            return false;
        }
        if self.semantic == Semantic::Acyclic {
            // Intermediate nodes are positions 1..depth; this one must not repeat an earlier one.
            return !self.stack[1..depth].iter().any(|f| f.node == node);
        }
        true
    }

    fn accepts_edge(&self, edge: u32) -> bool {
        self.semantic != Semantic::Trail || !self.edges.contains(&edge)
    }

    /// The next path as (destination, intermediate nodes, edges), or `None` when done.
    pub fn next_path(
        &mut self,
        graph: &Graph,
        masks: &Masks,
        distance: &[u32],
        interrupt: &Interrupt,
    ) -> Result<Option<FoundPath>> {
        if std::mem::take(&mut self.pending_empty) {
            let source = self.stack[0].node;
            if masks.is_destination(source) {
                return Ok(Some((source, Vec::new(), Vec::new())));
            }
        }
        let forward = graph.forward.view();
        while !self.stack.is_empty() {
            self.steps += 1;
            if self.steps.is_multiple_of(1 << 16) {
                interrupt.check()?;
            }
            let depth = self.stack.len() - 1;
            let top = *self.stack.last().expect("non-empty");
            if !top.expanded {
                let admitted = depth < self.upper as usize && self.admits_expansion(masks, depth);
                if !admitted {
                    self.pop();
                    continue;
                }
                self.stack[depth].expanded = true;
            }
            if depth >= self.upper as usize {
                self.pop();
                continue;
            }
            let remaining = self.upper - depth as u32 - 1;
            let mut chosen = None;
            let frame = &mut self.stack[depth];
            let (targets, edge_ids) = forward.entries(frame.node);
            while frame.cursor < frame.end {
                let i = frame.cursor;
                frame.cursor += 1;
                let (v, edge) = (targets[i], edge_ids[i]);
                if masks.follows(edge) && distance[v as usize] <= remaining {
                    chosen = Some((v, edge));
                    break;
                }
            }
            let Some((v, edge)) = chosen else {
                self.pop();
                continue;
            };
            if !self.accepts_edge(edge) {
                continue;
            }
            self.edges.push(edge);
            self.stack.push(Frame {
                node: v,
                cursor: 0,
                end: forward.degree(v) as usize,
                expanded: false,
            });
            let length = self.edges.len() as u32;
            if length >= self.lower && masks.is_destination(v) {
                let nodes = self.stack[1..self.stack.len() - 1]
                    .iter()
                    .map(|f| f.node)
                    .collect();
                return Ok(Some((v, nodes, self.edges.clone())));
            }
        }
        Ok(None)
    }

    fn pop(&mut self) {
        self.stack.pop();
        if !self.stack.is_empty() {
            self.edges.pop();
        }
    }
}

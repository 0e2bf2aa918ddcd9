//! Level-synchronous breadth-first search from one source for SHORTEST and ALL SHORTEST:
//! distances, the number of shortest paths, and the first parent found. Ties are decided the
//! way Kùzu decides them: each level scans the (rel pair, direction) steps one after another,
//! and within a step the frontier in discovery order and each node's rels in rel order.

use warren_common::{Error, Result};

use super::graph::Graph;
use super::masks::Masks;
use crate::context::Interrupt;

pub const UNREACHED: u32 = u32::MAX;

/// Reusable per-source search state; arrays are sized to the graph once.
#[derive(Debug)]
pub struct Bfs {
    pub dist: Vec<u32>,
    pub parent: Vec<u32>,
    pub parent_edge: Vec<u32>,
    /// Number of shortest paths from the source (filled when counting).
    pub paths: Vec<u64>,
    /// Nodes reached at distance >= 1, in order of discovery.
    pub reached: Vec<u32>,
    pub source: u32,
}

impl Bfs {
    pub fn new(nodes: u32) -> Self {
        let n = nodes as usize;
        Self {
            dist: vec![UNREACHED; n],
            parent: vec![UNREACHED; n],
            parent_edge: vec![UNREACHED; n],
            paths: vec![0; n],
            reached: Vec::new(),
            source: UNREACHED,
        }
    }

    /// Bytes this state holds.
    pub fn bytes(nodes: u32) -> u64 {
        u64::from(nodes) * 20
    }

    fn reset(&mut self) {
        for &v in &self.reached {
            self.dist[v as usize] = UNREACHED;
            self.parent[v as usize] = UNREACHED;
            self.parent_edge[v as usize] = UNREACHED;
            self.paths[v as usize] = 0;
        }
        if self.source != UNREACHED {
            self.dist[self.source as usize] = UNREACHED;
            self.paths[self.source as usize] = 0;
        }
        self.reached.clear();
    }

    /// Searches from `source` up to `upper` hops. `count_paths` also counts shortest paths.
    pub fn run(
        &mut self,
        graph: &Graph,
        masks: &Masks,
        source: u32,
        upper: u32,
        count_paths: bool,
        interrupt: &Interrupt,
    ) -> Result<()> {
        self.reset();
        self.source = source;
        self.dist[source as usize] = 0;
        self.paths[source as usize] = 1;
        let mut frontier = vec![source];
        let mut next = Vec::new();
        for level in 1..=upper {
            for step in graph.steps() {
                self.expand(step, masks, &frontier, level, count_paths, &mut next)?;
            }
            if next.is_empty() {
                break;
            }
            std::mem::swap(&mut frontier, &mut next);
            next.clear();
            interrupt.check()?;
        }
        Ok(())
    }

    /// Expands `frontier` (at `level - 1`) along one step's adjacency into `next`.
    fn expand(
        &mut self,
        step: &super::graph::Adjacency,
        masks: &Masks,
        frontier: &[u32],
        level: u32,
        count_paths: bool,
        next: &mut Vec<u32>,
    ) -> Result<()> {
        let targets = step.targets();
        let edges = step.edges();
        for &u in frontier {
            if level > 1 && !masks.expandable(u) {
                continue;
            }
            let paths_u = self.paths[u as usize];
            for i in step.range(u) {
                let edge = edges[i];
                if !masks.follows(edge) {
                    continue;
                }
                let v = targets[i];
                let dist_v = self.dist[v as usize];
                if dist_v == UNREACHED {
                    self.dist[v as usize] = level;
                    self.parent[v as usize] = u;
                    self.parent_edge[v as usize] = edge;
                    self.reached.push(v);
                    next.push(v);
                    if count_paths {
                        self.paths[v as usize] = paths_u;
                    }
                } else if count_paths && dist_v == level {
                    let total = self.paths[v as usize].checked_add(paths_u);
                    self.paths[v as usize] = total.ok_or_else(|| {
                        Error::LimitExceeded(
                            "the number of shortest paths exceeds the INT64 range".into(),
                        )
                    })?;
                }
            }
        }
        Ok(())
    }

    /// The shortest path to `target` found first: (intermediate nodes, edges), source excluded.
    pub fn path_to(&self, target: u32) -> (Vec<u32>, Vec<u32>) {
        let mut nodes = Vec::new();
        let mut edges = Vec::new();
        let mut v = target;
        while v != self.source {
            edges.push(self.parent_edge[v as usize]);
            let u = self.parent[v as usize];
            if u != self.source {
                nodes.push(u);
            }
            v = u;
        }
        nodes.reverse();
        edges.reverse();
        (nodes, edges)
    }
}

/// Enumerates every shortest path from a finished search's source to one target, walking
/// parents backwards (a parent is any predecessor one level closer). Memory is the path depth.
#[derive(Debug)]
pub struct AllShortestPaths {
    /// Backward walk: (node, next predecessor entry, end).
    stack: Vec<(u32, usize, usize)>,
    edges: Vec<u32>,
    started: bool,
    target: u32,
}

impl AllShortestPaths {
    pub fn new(target: u32) -> Self {
        Self {
            stack: Vec::new(),
            edges: Vec::new(),
            started: false,
            target,
        }
    }

    pub fn target(&self) -> u32 {
        self.target
    }

    fn push(&mut self, graph: &Graph, node: u32) {
        let range = graph.backward.range(node);
        self.stack.push((node, range.start, range.end));
    }

    /// The next path as (intermediate nodes, edges) in forward order.
    pub fn next_path(
        &mut self,
        bfs: &Bfs,
        graph: &Graph,
        masks: &Masks,
    ) -> Option<(Vec<u32>, Vec<u32>)> {
        if !self.started {
            self.started = true;
            self.push(graph, self.target);
        } else {
            // Resume after the last emitted path: drop the source frame.
            self.stack.pop();
            self.edges.pop();
        }
        let sources = graph.backward.targets();
        let edge_ids = graph.backward.edges();
        while let Some(&mut (node, ref mut cursor, end)) = self.stack.last_mut() {
            let level = bfs.dist[node as usize];
            let mut found = None;
            while *cursor < end {
                let i = *cursor;
                *cursor += 1;
                let u = sources[i];
                let edge = edge_ids[i];
                if bfs.dist[u as usize] != level.wrapping_sub(1) || !masks.follows(edge) {
                    continue;
                }
                if u != bfs.source && !masks.expandable(u) {
                    continue;
                }
                found = Some((u, edge));
                break;
            }
            match found {
                Some((u, edge)) => {
                    self.edges.push(edge);
                    self.push(graph, u);
                    if u == bfs.source {
                        let mut nodes: Vec<u32> = self.stack[1..self.stack.len() - 1]
                            .iter()
                            .map(|f| f.0)
                            .collect();
                        nodes.reverse();
                        let mut edges = self.edges.clone();
                        edges.reverse();
                        return Some((nodes, edges));
                    }
                }
                None => {
                    self.stack.pop();
                    self.edges.pop();
                }
            }
        }
        None
    }
}

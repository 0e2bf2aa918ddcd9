//! Walk counting by meeting in the middle. The number of walks of length L from a source s to
//! the destinations is `sum over v of F_a(v) * B_(L-a)(v)`, where `F_a(v)` counts the walks of
//! a hops from s to v and `B_j(v)` the walks of j hops from v to a destination. Each source
//! runs forward only while its frontier is small (a few sparse levels); the backward vectors
//! are computed once per query, shared by every source, sparse (pushed from the destinations)
//! while their support is small and dense (pulled in parallel over all nodes) after. A query
//! counting the walks of 1..5 hops from a few sources to a few hundred destinations thus costs a
//! few sweeps over the graph in total, instead of five per source.
//!
//! Masks: a node strictly inside a walk must pass the intermediate-node filter; every rel must
//! pass the rel filter. `B_j(u) = sum over u->v of [j-1 = 0 or v may be intermediate] B_(j-1)(v)`
//! leaves u's own check to the caller, who knows whether u is the source. Backward values
//! saturate at `u64::MAX`; a saturated value that contributes to a count is an overflow error,
//! which is exact because a walk count is at least every term it sums.

use std::sync::Mutex;

use warren_common::{Error, Result};

use super::graph::Graph;
use super::masks::Masks;
use super::morsels::for_each_morsel;
use super::stats::PathStats;
use crate::context::{Interrupt, MemoryTracker};
use crate::workers::WorkerPool;

/// A sparse backward level is pushed while its support's in-edges are below edges / this: a
/// pushed edge costs a few pulled ones (a scattered add and a support check against a gather).
const SPARSE_PUSH_FRACTION: u64 = 4;

/// A forward edge costs about this many pulled ones in planning: it adds into a scattered
/// count, and each node it reaches is listed, tested and has its degree read for the next
/// level (30 instructions per forward edge against 12.5 per pulled one at scale 12).
const FORWARD_EDGE_WEIGHT: u64 = 2;

/// A group of sources scanning fewer edges than this moves forward on the calling thread alone:
/// starting a thread (tens of microseconds, a scheduler tick on a busy machine) costs more
/// than scanning them.
const SERIAL_FORWARD_EDGES: u64 = 1 << 16;

fn overflow() -> Error {
    Error::LimitExceeded("the number of paths exceeds the INT64 range".into())
}

/// One source's forward side: the walks counted directly so far, and its frontier.
#[derive(Clone, Debug, Default)]
pub struct ForwardPart {
    /// The length of the walks in `frontier`.
    pub depth: u32,
    /// Walks of length `lower..=depth` to destinations.
    pub direct: PathStats,
    /// `F_depth`: (node, walks) for every node with walks; emptied once `depth` reaches the
    /// upper bound (nothing is left to combine).
    pub frontier: Vec<(u32, u64)>,
    /// Edges the last forward level scanned.
    pub last_cost: u64,
    /// Edges the next level will scan (the frontier's out-degrees where walks continue),
    /// summed while the frontier is built so that planning reads it for free.
    next_cost: u64,
}

impl ForwardPart {
    /// The source alone, at depth 0 (the zero-length walk counts when `lower` is 0).
    pub fn new(graph: &Graph, masks: &Masks, source: u32, lower: u32) -> Result<Self> {
        let mut part = ForwardPart {
            frontier: vec![(source, 1)],
            next_cost: graph.forward.view().degree(source),
            ..ForwardPart::default()
        };
        if lower == 0 && masks.is_destination(source) {
            part.direct.add(0, 1)?;
        }
        Ok(part)
    }

    /// Whether the walks in the frontier continue from `v` (the source always does).
    #[inline]
    fn continues(&self, masks: &Masks, v: u32) -> bool {
        self.depth == 0 || masks.expandable(v)
    }

    /// Edges the next level would scan.
    #[inline]
    pub fn next_cost(&self) -> u64 {
        self.next_cost
    }

    /// Moves the frontier one hop forward, counting the walks that end at destinations.
    pub fn advance(
        &mut self,
        graph: &Graph,
        masks: &Masks,
        (lower, upper): (u32, u32),
        scratch: &mut ForwardScratch,
    ) -> Result<()> {
        assert!(self.depth < upper, "a frontier below the upper bound");
        self.last_cost = self.next_cost;
        let n = graph.num_nodes() as usize;
        if scratch.counts.len() != n {
            scratch.counts = vec![0; n];
        }
        let forward = graph.forward.view();
        // Every scanned edge may reach a new node: room for one per edge of the level.
        let room = usize::try_from(self.next_cost).expect("a level's edges fit in memory");
        if scratch.next.len() < room {
            scratch.next.resize(room, 0);
        }
        let ForwardScratch { counts, next } = scratch;
        let mut reached = 0;
        for &(v, walks) in &self.frontier {
            if !self.continues(masks, v) {
                continue;
            }
            if masks.edges.is_none() {
                for &w in forward.neighbours(v) {
                    reached = reach(counts, next, reached, w, walks)?;
                }
            } else {
                let (targets, edges) = forward.entries(v);
                for (&w, &edge) in targets.iter().zip(edges) {
                    if masks.follows(edge) {
                        reached = reach(counts, next, reached, w, walks)?;
                    }
                }
            }
        }
        self.depth += 1;
        self.frontier.clear();
        let mut next_cost = 0;
        for &w in &next[..reached] {
            let walks = std::mem::take(&mut counts[w as usize]);
            if self.depth >= lower && masks.is_destination(w) {
                self.direct.add(self.depth, walks)?;
            }
            if masks.expandable(w) {
                next_cost += forward.degree(w);
            }
            self.frontier.push((w, walks));
        }
        self.next_cost = next_cost;
        if self.depth == upper {
            self.frontier = Vec::new();
            self.next_cost = 0;
        }
        Ok(())
    }
}

/// Adds `walks` to `w`'s count and lists `w` in `next` at `reached` when it had none; returns
/// the nodes listed. Without a branch on the count: `w` is written at `reached` either way and
/// kept only when new (a new node is unpredictable, so a branch would often be mispredicted).
#[inline(always)]
fn reach(
    counts: &mut [u64],
    next: &mut [u32],
    reached: usize,
    w: u32,
    walks: u64,
) -> Result<usize> {
    let count = &mut counts[w as usize];
    let new = usize::from(*count == 0);
    next[reached] = w;
    *count = count.checked_add(walks).ok_or_else(overflow)?;
    Ok(reached + new)
}

/// Dense per-thread scratch for forward levels.
#[derive(Debug, Default)]
pub struct ForwardScratch {
    /// Walks per node reached by the level being computed (zero elsewhere).
    counts: Vec<u64>,
    /// The nodes the level reached, in the order first reached (room for one per edge).
    next: Vec<u32>,
}

/// How a walk count's parallel loops run: threads, nodes per morsel (times 8 for a pull), and
/// the pool they run on.
#[derive(Clone, Copy)]
pub struct Parallel<'a> {
    pub threads: usize,
    pub morsel_size: usize,
    pub workers: &'a WorkerPool,
}

/// The backward walk-count vectors `B_0..=B_depth`, shared by every source of a query.
#[derive(Debug)]
pub struct BackwardCounts {
    levels: Vec<Vec<u64>>,
    /// Nodes with a non-zero value, per level.
    support: Vec<Vec<u32>>,
    /// Whether the last level holds every node's value, or only those of the nodes it was
    /// restricted to (the last level a group of sources needed).
    last_complete: bool,
}

impl BackwardCounts {
    /// `B_0`: one walk (of no hops) from each destination.
    pub fn new(graph: &Graph, masks: &Masks) -> Self {
        let n = graph.num_nodes();
        let support = masks.destinations(n);
        let mut level = vec![0u64; n as usize];
        for &v in &support {
            level[v as usize] = 1;
        }
        Self {
            levels: vec![level],
            support: vec![support],
            last_complete: true,
        }
    }

    pub fn depth(&self) -> u32 {
        self.levels.len() as u32 - 1
    }

    /// Drops a restricted last level (computed only for one group's frontier nodes), so that
    /// other sources never read it; true when there was one.
    pub fn discard_restricted(&mut self) -> bool {
        if self.last_complete {
            return false;
        }
        self.levels.pop();
        self.support.pop();
        self.last_complete = true;
        true
    }

    /// Bytes one more level takes.
    pub fn level_bytes(graph: &Graph) -> u64 {
        u64::from(graph.num_nodes()) * 12
    }

    /// `B_hops` over every node (only the frontier nodes' values for a restricted level).
    #[inline]
    pub fn level(&self, hops: u32) -> &[u64] {
        &self.levels[hops as usize]
    }

    /// In-edges of the last level's support: the cost of pushing the next level.
    fn push_edges(&self, graph: &Graph) -> u64 {
        let backward = graph.backward.view();
        self.support[self.depth() as usize]
            .iter()
            .map(|&v| backward.degree(v))
            .sum()
    }

    /// Edges the next level scans: pushed from a small support, else pulled over every node.
    pub fn next_cost(&self, graph: &Graph) -> u64 {
        let all_edges = graph.backward.view().num_entries();
        if !self.last_complete {
            // The restricted last level is computed again in full first.
            return all_edges.saturating_mul(2);
        }
        let push_edges = self.push_edges(graph);
        if push_edges < all_edges / SPARSE_PUSH_FRACTION {
            push_edges
        } else {
            all_edges
        }
    }

    /// Computes one more level over every node; returns the edges scanned. A last level
    /// computed for a few nodes only is completed first.
    pub fn extend(
        &mut self,
        graph: &Graph,
        masks: &Masks,
        parallel: Parallel<'_>,
        interrupt: &Interrupt,
    ) -> Result<u64> {
        let mut scanned = 0;
        if self.discard_restricted() {
            // The restricted last level is computed again in full first.
            scanned += self.extend(graph, masks, parallel, interrupt)?;
        }
        let previous = self.depth() as usize;
        let all_edges = graph.backward.view().num_entries();
        let cost = self.next_cost(graph);
        let (level, support) = if cost < all_edges {
            self.push(previous, graph, masks)
        } else {
            self.pull(previous, None, graph, masks, parallel, interrupt)?
        };
        self.levels.push(level);
        self.support.push(support);
        interrupt.check()?;
        Ok(scanned + cost)
    }

    /// Edges a level restricted to `nodes` scans.
    pub fn restricted_cost(graph: &Graph, nodes: &[u32]) -> u64 {
        let forward = graph.forward.view();
        nodes.iter().map(|&v| forward.degree(v)).sum()
    }

    /// Computes one more level for `nodes` only (the last level a group of sources needs);
    /// returns the edges scanned.
    pub fn extend_restricted(
        &mut self,
        nodes: &[u32],
        graph: &Graph,
        masks: &Masks,
        parallel: Parallel<'_>,
        interrupt: &Interrupt,
    ) -> Result<u64> {
        assert!(
            self.last_complete,
            "a restricted level extends a complete one"
        );
        let previous = self.depth() as usize;
        let (level, support) =
            self.pull(previous, Some(nodes), graph, masks, parallel, interrupt)?;
        self.levels.push(level);
        self.support.push(support);
        self.last_complete = false;
        interrupt.check()?;
        Ok(Self::restricted_cost(graph, nodes))
    }

    /// Whether `v` may continue a walk backwards from level `previous` (it is intermediate
    /// unless it is the destination itself, at level 0).
    #[inline]
    fn gate(previous: usize, masks: &Masks, v: u32) -> bool {
        previous == 0 || masks.expandable(v)
    }

    /// The next level from a small support: each node pushes its value to its in-neighbours.
    fn push(&self, previous: usize, graph: &Graph, masks: &Masks) -> (Vec<u64>, Vec<u32>) {
        let mut level = vec![0u64; graph.num_nodes() as usize];
        let mut support = Vec::new();
        let backward = graph.backward.view();
        for &v in &self.support[previous] {
            if !Self::gate(previous, masks, v) {
                continue;
            }
            let value = self.levels[previous][v as usize];
            let (sources, edges) = backward.entries(v);
            for (&u, &edge) in sources.iter().zip(edges) {
                if !masks.follows(edge) {
                    continue;
                }
                let u = u as usize;
                if level[u] == 0 {
                    support.push(u as u32);
                }
                level[u] = level[u].saturating_add(value);
            }
        }
        (level, support)
    }

    /// The next level, in parallel: each node (of `nodes`, or every node) sums its
    /// out-neighbours' values.
    fn pull(
        &self,
        previous: usize,
        nodes: Option<&[u32]>,
        graph: &Graph,
        masks: &Masks,
        parallel: Parallel<'_>,
        interrupt: &Interrupt,
    ) -> Result<(Vec<u64>, Vec<u32>)> {
        let n = graph.num_nodes() as usize;
        let values = &self.levels[previous];
        let forward = graph.forward.view();
        let node_at = |i: usize| nodes.map_or(i, |list| list[i] as usize);
        // Without a rel filter and with every out-neighbour passing the gate, a node's sum is
        // a branch-free fold over its neighbours (rel ids unread).
        let unmasked = masks.edges.is_none() && (previous == 0 || masks.intermediate.is_none());
        let mut pieces: Vec<(usize, Vec<u64>, Vec<u32>)> = Vec::new();
        for_each_morsel(
            nodes.map_or(n, <[u32]>::len),
            parallel.morsel_size.max(1) * 8,
            parallel.threads,
            parallel.workers,
            interrupt,
            |range| {
                let mut out = Vec::with_capacity(range.len());
                let mut support = Vec::new();
                for i in range.clone() {
                    let u = node_at(i);
                    let sum = if unmasked {
                        // The rel ids are neither read nor verified.
                        sum_unmasked(forward.neighbours(u as u32), values)
                    } else {
                        let (targets, edges) = forward.entries(u as u32);
                        let mut sum = 0u64;
                        for (&v, &edge) in targets.iter().zip(edges) {
                            let value = values[v as usize];
                            if value != 0 && masks.follows(edge) && Self::gate(previous, masks, v) {
                                sum = sum.saturating_add(value);
                            }
                        }
                        sum
                    };
                    if sum != 0 {
                        support.push(u as u32);
                    }
                    out.push(sum);
                }
                Ok((range.start, out, support))
            },
            |piece| pieces.push(piece),
        )?;
        pieces.sort_unstable_by_key(|(start, ..)| *start);
        if nodes.is_none() && pieces.len() == 1 {
            // One morsel covered every node: its values are the level, in node order.
            let (_, level, support) = pieces.pop().expect("one piece");
            assert_eq!(level.len(), n, "a single morsel covers every node");
            return Ok((level, support));
        }
        let mut level = vec![0u64; n];
        let mut support = Vec::new();
        for (start, out, piece_support) in pieces {
            match nodes {
                None => level[start..start + out.len()].copy_from_slice(&out),
                Some(list) => {
                    for (offset, value) in out.into_iter().enumerate() {
                        level[list[start + offset] as usize] = value;
                    }
                }
            }
            support.extend(piece_support);
        }
        Ok((level, support))
    }
}

/// The saturating sum of `values` over `targets`, without branches on the values.
#[inline]
fn sum_unmasked(targets: &[u32], values: &[u64]) -> u64 {
    targets
        .iter()
        .fold(0u64, |sum, &v| sum.saturating_add(values[v as usize]))
}

/// The walks of `depth+1..=upper` hops (and at least `lower`) of a source whose forward sweep
/// stopped at `part.depth`, through the backward vectors.
pub fn combine(
    part: &ForwardPart,
    backward: &BackwardCounts,
    masks: &Masks,
    (lower, upper): (u32, u32),
) -> Result<PathStats> {
    let mut stats = part.direct;
    if part.frontier.is_empty() {
        return Ok(stats);
    }
    assert!(
        backward.depth() >= upper - part.depth,
        "backward levels meet the frontier"
    );
    let first = (part.depth + 1).max(lower);
    for length in first..=upper {
        let level = backward.level(length - part.depth);
        let mut sum: u128 = 0;
        let mut saturated = false;
        for &(v, walks) in &part.frontier {
            if part.depth > 0 && !masks.expandable(v) {
                continue;
            }
            let value = level[v as usize];
            saturated |= value == u64::MAX;
            sum += u128::from(walks) * u128::from(value);
        }
        if saturated {
            return Err(overflow());
        }
        let sum = u64::try_from(sum).map_err(|_| overflow())?;
        stats.add(length, sum)?;
    }
    Ok(stats)
}

/// Counts the walks of many sources. Each round either moves the sources that are furthest
/// behind one level forward, or computes one more shared backward level, whichever costs less
/// (edges scanned, a forward edge weighted as `FORWARD_EDGE_WEIGHT` pulled ones), until every
/// source's frontier meets the backward levels (or reaches the upper bound). With `meet` off,
/// or when the backward levels do not fit in memory, sources only go forward. Returns the
/// stats per source and the edges scanned.
#[allow(clippy::too_many_arguments)]
pub fn count_walks_meeting(
    graph: &Graph,
    masks: &Masks,
    sources: &[u32],
    (lower, upper): (u32, u32),
    backward: &mut BackwardCounts,
    meet: bool,
    parallel: Parallel<'_>,
    interrupt: &Interrupt,
    memory: &MemoryTracker,
) -> Result<(Vec<PathStats>, u64)> {
    let mut parts = sources
        .iter()
        .map(|&source| ForwardPart::new(graph, masks, source, lower))
        .collect::<Result<Vec<_>>>()?;
    // A restricted level left by an earlier batch of sources holds values for that batch's
    // frontier nodes only.
    if backward.discard_restricted() {
        memory.release(BackwardCounts::level_bytes(graph));
    }
    let mut scanned = 0u64;
    let mut meet = meet;
    let scratch_pool: Mutex<Vec<ForwardScratch>> = Mutex::new(Vec::new());
    loop {
        let open: Vec<usize> = (0..parts.len())
            .filter(|&i| !parts[i].frontier.is_empty())
            .filter(|&i| !meet || backward.depth() < upper - parts[i].depth)
            .collect();
        let Some(behind) = open.iter().map(|&i| parts[i].depth).min() else {
            break;
        };
        let group: Vec<usize> = open
            .into_iter()
            .filter(|&i| parts[i].depth == behind)
            .collect();
        let step = if meet {
            plan_step(graph, masks, &parts, &group, backward, upper - behind)
        } else {
            Step::Forward
        };
        let level_bytes = BackwardCounts::level_bytes(graph);
        match step {
            Step::Forward => {
                let cost = group.iter().map(|&i| parts[i].next_cost()).sum::<u64>();
                scanned += cost;
                let threads = if cost < SERIAL_FORWARD_EDGES {
                    1
                } else {
                    parallel.threads
                };
                advance_group(
                    graph,
                    masks,
                    &mut parts,
                    &group,
                    (lower, upper),
                    Parallel {
                        threads,
                        ..parallel
                    },
                    interrupt,
                    &scratch_pool,
                )?;
            }
            Step::Backward | Step::Restricted(_)
                if memory.reserve(level_bytes, "backward walk counts").is_err() =>
            {
                // No memory for another shared level: every source goes forward to the end.
                meet = false;
            }
            Step::Backward => scanned += backward.extend(graph, masks, parallel, interrupt)?,
            Step::Restricted(nodes) => {
                scanned += backward.extend_restricted(&nodes, graph, masks, parallel, interrupt)?;
            }
        }
    }
    let stats = parts
        .iter()
        .map(|part| combine(part, backward, masks, (lower, upper)))
        .collect::<Result<Vec<_>>>()?;
    Ok((stats, scanned))
}

/// The next round of walk counting for the `group` of sources furthest behind, which needs
/// `meeting_depth` backward levels.
enum Step {
    /// Move the group one level forward.
    Forward,
    /// Compute one more backward level over every node.
    Backward,
    /// Compute the last backward level the group needs, only for the group's frontier nodes.
    Restricted(Vec<u32>),
}

/// Chooses the cheaper round, a forward edge counting as `FORWARD_EDGE_WEIGHT` pulled ones:
/// with one backward level left, the cheapest of going forward, a full level and a level
/// restricted to the group's frontier; with two left, it compares the two-round plans (a full
/// level then a restricted one, or forward then a restricted one whose cost grows as the
/// forward levels have grown); else the cheaper of one forward and one backward level.
fn plan_step(
    graph: &Graph,
    masks: &Masks,
    parts: &[ForwardPart],
    group: &[usize],
    backward: &BackwardCounts,
    meeting_depth: u32,
) -> Step {
    let remaining = meeting_depth - backward.depth();
    let forward_edges: u64 = group.iter().map(|&i| parts[i].next_cost()).sum();
    let forward = forward_edges.saturating_mul(FORWARD_EDGE_WEIGHT);
    let full = backward.next_cost(graph);
    if remaining >= 3 {
        return if forward < full {
            Step::Forward
        } else {
            Step::Backward
        };
    }
    let union = group_frontier(graph, masks, parts, group);
    let restricted = BackwardCounts::restricted_cost(graph, &union);
    if remaining == 1 {
        return if forward < restricted.min(full) {
            Step::Forward
        } else if restricted < full {
            Step::Restricted(union)
        } else {
            Step::Backward
        };
    }
    let previous: u64 = group.iter().map(|&i| parts[i].last_cost).sum();
    let growth = if previous > 0 {
        forward_edges.div_ceil(previous)
    } else {
        (graph.forward.view().num_entries() / u64::from(graph.num_nodes()).max(1)).max(1)
    };
    // After one more forward level, the restricted level scans about the frontier's edges
    // times their growth (pulled edges, unweighted).
    let plan_forward = forward.saturating_add(full.min(forward_edges.saturating_mul(growth)));
    let plan_backward = full.saturating_add(restricted);
    if plan_forward < plan_backward {
        Step::Forward
    } else {
        Step::Backward
    }
}

/// The distinct frontier nodes of the group from which walks continue.
fn group_frontier(
    graph: &Graph,
    masks: &Masks,
    parts: &[ForwardPart],
    group: &[usize],
) -> Vec<u32> {
    let mut seen = super::masks::Bitset::new(graph.num_nodes() as usize);
    let mut nodes = Vec::new();
    for &i in group {
        for &(v, _) in &parts[i].frontier {
            if parts[i].continues(masks, v) && !seen.get(v) {
                seen.set(v);
                nodes.push(v);
            }
        }
    }
    nodes
}

/// Moves the sources of `group` one level forward, one source per thread.
#[allow(clippy::too_many_arguments)]
fn advance_group(
    graph: &Graph,
    masks: &Masks,
    parts: &mut [ForwardPart],
    group: &[usize],
    bounds: (u32, u32),
    parallel: Parallel<'_>,
    interrupt: &Interrupt,
    scratch_pool: &Mutex<Vec<ForwardScratch>>,
) -> Result<()> {
    let moving: Vec<Mutex<ForwardPart>> = group
        .iter()
        .map(|&i| Mutex::new(std::mem::take(&mut parts[i])))
        .collect();
    for_each_morsel(
        moving.len(),
        1,
        parallel.threads,
        parallel.workers,
        interrupt,
        |range| {
            let mut scratch = scratch_pool
                .lock()
                .expect("scratch lock")
                .pop()
                .unwrap_or_default();
            let mut part = moving[range.start].lock().expect("part lock");
            let result = part.advance(graph, masks, bounds, &mut scratch);
            scratch_pool.lock().expect("scratch lock").push(scratch);
            result
        },
        |()| {},
    )?;
    for (&i, part) in group.iter().zip(moving) {
        parts[i] = part.into_inner().expect("part lock");
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::super::masks::DestinationMask;
    use super::*;

    /// Source 0 reaches 1, 2 and 3, each of which reaches the one destination 9.
    fn fan_in() -> (Graph, Masks) {
        let edges = [(0, 1), (0, 2), (0, 3), (1, 9), (2, 9), (3, 9)];
        let masks = Masks {
            destination: DestinationMask::Single(9),
            intermediate: None,
            edges: None,
        };
        (Graph::from_edges(10, &edges), masks)
    }

    #[test]
    fn a_forward_level_over_half_a_full_one_loses_to_the_full_one() {
        let (graph, masks) = fan_in();
        let parts = vec![ForwardPart::new(&graph, &masks, 0, 1).unwrap()];
        let backward = BackwardCounts::new(&graph, &masks);
        // Forward: 3 edges (weighted 6); a full backward level: the 6 edges (the destination's
        // 3 in-edges are not below a quarter of them, so the level is pulled).
        assert_eq!(parts[0].next_cost(), 3);
        assert_eq!(backward.next_cost(&graph), 6);
        let step = plan_step(&graph, &masks, &parts, &[0], &backward, 5);
        assert!(matches!(step, Step::Backward));
    }

    #[test]
    fn a_forward_level_under_half_a_full_one_goes_forward() {
        let (graph, masks) = fan_in();
        let mut parts = vec![ForwardPart::new(&graph, &masks, 0, 1).unwrap()];
        parts[0].next_cost = 2;
        let backward = BackwardCounts::new(&graph, &masks);
        let step = plan_step(&graph, &masks, &parts, &[0], &backward, 5);
        assert!(matches!(step, Step::Forward));
    }
}

//! Top-down morsels of about equal work. A top-down level's cost is its frontier's out-edges,
//! not its frontier's nodes: on a skewed graph a frontier of a few hundred nodes can hold a
//! hub with a hundred thousand out-edges, and a morsel of `morsel_size` frontier nodes then
//! holds the whole level, run by one thread while the others wait (measured on a 16-core
//! machine: OPTIMIZATION_LOG 162). A small frontier is therefore cut by its out-degrees: runs
//! of whole nodes holding at most `edges_max` out-edges (or `nodes_max` nodes), and a node
//! with more out-edges than that alone, in slices of its neighbour list. A large frontier
//! already makes many morsels: it is cut by node count alone, without reading a degree.

use std::ops::Range;

use warren_storage::adjacency::AdjacencyView;

/// Out-edges a balanced morsel holds at most, per node of `morsel_size`.
pub const EDGES_PER_MORSEL_NODE: u64 = 2;
/// Frontiers of up to this many morsels of `morsel_size` nodes (16,384 nodes by default) are
/// cut by their out-degrees. The plan reads one degree per node on one thread, a random read
/// that misses the cache on a large graph; the hub levels it is for hold a few hundred nodes,
/// and a larger frontier already makes enough morsels to share.
pub const BALANCED_MORSELS_MAX: usize = 8;

/// One top-down morsel: frontier positions `nodes`; for a slice of one node's out-edges,
/// `edges` is the range of its neighbour list to scan (else the whole list of every node).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FrontierMorsel {
    pub nodes: Range<usize>,
    pub edges: Option<Range<usize>>,
}

impl FrontierMorsel {
    /// The part of one node's neighbour list (and rel ids, when read) that this morsel scans.
    /// An empty `rel_ids` (rel ids not read) stays empty. The range is clamped to the list: a
    /// list shorter than the degree the plan read (a block that failed its checksum reads as
    /// empty) yields less, never a panic.
    #[inline]
    pub fn slice<'a>(&self, neighbours: &'a [u32], rel_ids: &'a [u32]) -> (&'a [u32], &'a [u32]) {
        match &self.edges {
            None => (neighbours, rel_ids),
            Some(range) => {
                let clamp = |len: usize| range.start.min(len)..range.end.min(len);
                let rel_ids = if rel_ids.is_empty() {
                    rel_ids
                } else {
                    &rel_ids[clamp(rel_ids.len())]
                };
                (&neighbours[clamp(neighbours.len())], rel_ids)
            }
        }
    }
}

/// How a frontier is cut.
#[derive(Clone, Copy, Debug)]
pub struct MorselBudget {
    /// Frontier nodes per morsel at most (the engine's `morsel_size`).
    pub nodes_max: usize,
    /// Out-edges per morsel at most; a node above it is cut into slices.
    pub edges_max: u64,
    /// Whether one node's out-edges may be split across morsels (a search that ranks its
    /// claims by frontier position, `Parents` mode, scans each node whole).
    pub split_nodes: bool,
}

impl MorselBudget {
    /// The engine's budget for `morsel_size` frontier nodes per morsel.
    pub fn for_morsel_size(morsel_size: usize, split_nodes: bool) -> Self {
        let nodes_max = morsel_size.max(1);
        Self {
            nodes_max,
            edges_max: (nodes_max as u64 * EDGES_PER_MORSEL_NODE).max(1),
            split_nodes,
        }
    }
}

/// Cuts `frontier` into `out` (cleared first) by its nodes' degrees in `adjacency` (the
/// adjacency a top-down level scans).
pub fn plan_frontier(
    frontier: &[u32],
    adjacency: &AdjacencyView<'_>,
    budget: MorselBudget,
    out: &mut Vec<FrontierMorsel>,
) {
    plan(
        frontier.len(),
        |i| adjacency.degree(frontier[i]),
        budget,
        out,
    );
}

/// Cuts a frontier of `len` nodes into `out` (cleared first); `degree(i)` is the out-degree
/// of the node at frontier position `i`, read only for a small frontier.
pub fn plan(
    len: usize,
    degree: impl Fn(usize) -> u64,
    budget: MorselBudget,
    out: &mut Vec<FrontierMorsel>,
) {
    out.clear();
    let nodes_max = budget.nodes_max.max(1);
    if len > nodes_max * BALANCED_MORSELS_MAX {
        out.extend((0..len).step_by(nodes_max).map(|start| FrontierMorsel {
            nodes: start..(start + nodes_max).min(len),
            edges: None,
        }));
        return;
    }
    let edges_max = budget.edges_max.max(1);
    let mut run_start = 0;
    let mut run_edges = 0u64;
    for i in 0..len {
        let d = degree(i);
        if budget.split_nodes && d > edges_max {
            close_run(out, run_start..i);
            split_node(out, i, d, edges_max);
            run_start = i + 1;
            run_edges = 0;
            continue;
        }
        if i > run_start && (run_edges + d > edges_max || i - run_start == nodes_max) {
            close_run(out, run_start..i);
            run_start = i;
            run_edges = 0;
        }
        run_edges += d;
    }
    close_run(out, run_start..len);
}

fn close_run(out: &mut Vec<FrontierMorsel>, nodes: Range<usize>) {
    if !nodes.is_empty() {
        out.push(FrontierMorsel { nodes, edges: None });
    }
}

/// Slices of at most `edges_max` of node `i`'s `degree` out-edges, of about equal size.
fn split_node(out: &mut Vec<FrontierMorsel>, i: usize, degree: u64, edges_max: u64) {
    assert!(degree > edges_max, "only a node above the budget is split");
    let slices = degree.div_ceil(edges_max);
    let degree = degree as usize;
    let slices = slices as usize;
    for s in 0..slices {
        let start = degree * s / slices;
        let end = degree * (s + 1) / slices;
        out.push(FrontierMorsel {
            nodes: i..i + 1,
            edges: Some(start..end),
        });
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// Every (frontier position, edge) pair is covered exactly once, in order.
    fn covered(degrees: &[u64], morsels: &[FrontierMorsel]) -> Vec<(usize, usize)> {
        let mut pairs = Vec::new();
        for morsel in morsels {
            for i in morsel.nodes.clone() {
                let range = morsel.edges.clone().unwrap_or(0..degrees[i] as usize);
                pairs.extend(range.map(|e| (i, e)));
            }
        }
        pairs
    }

    fn every_pair(degrees: &[u64]) -> Vec<(usize, usize)> {
        (0..degrees.len())
            .flat_map(|i| (0..degrees[i] as usize).map(move |e| (i, e)))
            .collect()
    }

    proptest! {
        #[test]
        fn morsels_cover_every_edge_once_within_the_budget(
            degrees in prop::collection::vec(prop_oneof![0u64..5, 0u64..200], 0..300),
            nodes_max in 1usize..10,
            edges_per_node in 1u64..4,
            split_nodes: bool,
        ) {
            let budget = MorselBudget { nodes_max, edges_max: nodes_max as u64 * edges_per_node, split_nodes };
            let mut morsels = vec![FrontierMorsel { nodes: 0..1, edges: None }];
            plan(degrees.len(), |i| degrees[i], budget, &mut morsels);
            prop_assert_eq!(covered(&degrees, &morsels), every_pair(&degrees));
            let balanced = degrees.len() <= nodes_max * BALANCED_MORSELS_MAX;
            for morsel in &morsels {
                prop_assert!(!morsel.nodes.is_empty() && morsel.nodes.len() <= nodes_max);
                if let Some(edges) = &morsel.edges {
                    prop_assert!(split_nodes && morsel.nodes.len() == 1);
                    prop_assert!(!edges.is_empty() && edges.len() as u64 <= budget.edges_max);
                } else if balanced && morsel.nodes.len() > 1 {
                    let edges: u64 = degrees[morsel.nodes.clone()].iter().sum();
                    prop_assert!(edges <= budget.edges_max);
                }
            }
        }
    }

    #[test]
    fn a_hub_is_cut_into_slices_of_about_equal_size() {
        let degrees = [3u64, 100_000, 2, 1];
        let mut morsels = Vec::new();
        let budget = MorselBudget::for_morsel_size(2048, true);
        plan(degrees.len(), |i| degrees[i], budget, &mut morsels);
        let slices: Vec<_> = morsels.iter().filter_map(|m| m.edges.clone()).collect();
        assert_eq!(slices.len(), 25, "100,000 edges in slices of at most 4,096");
        assert!(slices.iter().all(|s| s.len() == 4000));
        assert_eq!(morsels.first().unwrap().nodes, 0..1);
        assert_eq!(morsels.last().unwrap().nodes, 2..4);
    }

    #[test]
    fn a_hub_is_scanned_whole_when_nodes_may_not_be_split() {
        let degrees = [3u64, 100_000, 2, 1];
        let mut morsels = Vec::new();
        plan(
            degrees.len(),
            |i| degrees[i],
            MorselBudget::for_morsel_size(2048, false),
            &mut morsels,
        );
        assert_eq!(morsels.len(), 3);
        assert!(morsels.iter().all(|m| m.edges.is_none()));
        assert_eq!(morsels[1].nodes, 1..2);
    }

    #[test]
    fn a_large_frontier_is_cut_by_node_count_without_reading_degrees() {
        let len = 2048 * BALANCED_MORSELS_MAX + 1;
        let mut morsels = Vec::new();
        plan(
            len,
            |_| panic!("no degree is read"),
            MorselBudget::for_morsel_size(2048, true),
            &mut morsels,
        );
        assert_eq!(morsels.len(), BALANCED_MORSELS_MAX + 1);
        assert_eq!(morsels.last().unwrap().nodes, len - 1..len);
    }

    #[test]
    fn the_slice_of_a_node_without_rel_ids_reads_none() {
        let morsel = FrontierMorsel {
            nodes: 0..1,
            edges: Some(1..3),
        };
        let neighbours = [10u32, 11, 12, 13];
        assert_eq!(morsel.slice(&neighbours, &[]), (&neighbours[1..3], &[][..]));
        let ids = [20u32, 21, 22, 23];
        assert_eq!(
            morsel.slice(&neighbours, &ids),
            (&neighbours[1..3], &ids[1..3])
        );
        // A list shorter than the planned degree: what is there, no panic.
        assert_eq!(
            morsel.slice(&neighbours[..2], &[]),
            (&neighbours[1..2], &[][..])
        );
        assert_eq!(morsel.slice(&[], &[]), (&[][..], &[][..]));
    }
}

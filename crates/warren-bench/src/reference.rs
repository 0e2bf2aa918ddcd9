//! Reference answers: plain, single-threaded graph algorithms over an edge list, written for
//! obviousness rather than speed, that each benchmark workload checks the engine against.
//!
//! The graph is a forward adjacency (CSR) over dense indices; node IDs (the `Person.ID` values)
//! map to indices in the order they were given. Parallel edges are kept (they are distinct rels,
//! so they count as distinct walks and distinct shortest paths); self loops are kept too.

use std::collections::HashMap;

/// A directed graph in compressed sparse row form, keyed by node ID.
#[derive(Clone, Debug)]
pub struct ReferenceGraph {
    /// The ID of each dense index.
    ids: Vec<i64>,
    index_of_id: HashMap<i64, u32>,
    /// `targets[offsets[v]..offsets[v + 1]]` are the out-neighbours of `v`.
    offsets: Vec<usize>,
    targets: Vec<u32>,
}

/// Shortest-path lengths from one source: reachable nodes (the source excluded) and the sum of
/// their distances, as `count(*), sum(length(p))` of a `SHORTEST` query report them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShortestLengths {
    pub reached: u64,
    pub length_sum: u64,
}

/// Walks counted by length: how many, and their lengths summed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct WalkCount {
    pub walks: u128,
    pub length_sum: u128,
}

impl ReferenceGraph {
    /// Builds the graph from node IDs (each once) and edges between them.
    pub fn new(node_ids: &[i64], edges: &[(i64, i64)]) -> Result<ReferenceGraph, String> {
        assert!(
            u32::try_from(node_ids.len()).is_ok(),
            "the reference graph holds at most 2^32 nodes"
        );
        let mut index_of_id = HashMap::with_capacity(node_ids.len());
        for (index, &id) in node_ids.iter().enumerate() {
            if index_of_id.insert(id, index as u32).is_some() {
                return Err(format!("node ID {id} appears twice"));
            }
        }
        let resolve = |id: i64| {
            index_of_id
                .get(&id)
                .copied()
                .ok_or_else(|| format!("edge endpoint {id} is not a node"))
        };
        let mut degrees = vec![0usize; node_ids.len() + 1];
        let mut resolved = Vec::with_capacity(edges.len());
        for &(from, to) in edges {
            let (from, to) = (resolve(from)?, resolve(to)?);
            degrees[from as usize + 1] += 1;
            resolved.push((from, to));
        }
        let offsets = prefix_sums(degrees);
        let mut cursor = offsets.clone();
        let mut targets = vec![0u32; resolved.len()];
        for (from, to) in resolved {
            targets[cursor[from as usize]] = to;
            cursor[from as usize] += 1;
        }
        let graph = ReferenceGraph {
            ids: node_ids.to_vec(),
            index_of_id,
            offsets,
            targets,
        };
        graph.assert_valid();
        Ok(graph)
    }

    fn assert_valid(&self) {
        assert_eq!(self.offsets.len(), self.ids.len() + 1);
        assert_eq!(*self.offsets.last().unwrap_or(&0), self.targets.len());
        assert!(self.offsets.windows(2).all(|w| w[0] <= w[1]));
        assert!(self.targets.iter().all(|&t| (t as usize) < self.ids.len()));
    }

    pub fn node_count(&self) -> usize {
        self.ids.len()
    }

    pub fn edge_count(&self) -> usize {
        self.targets.len()
    }

    /// Node IDs in their given order.
    pub fn ids(&self) -> &[i64] {
        &self.ids
    }

    pub fn index_of(&self, id: i64) -> Option<u32> {
        self.index_of_id.get(&id).copied()
    }

    fn neighbours(&self, node: u32) -> &[u32] {
        let node = node as usize;
        &self.targets[self.offsets[node]..self.offsets[node + 1]]
    }

    /// Breadth-first distances from `source` up to `hops_max`; `u32::MAX` marks unreached.
    pub fn distances(&self, source: u32, hops_max: u32) -> Vec<u32> {
        let mut distance = vec![u32::MAX; self.ids.len()];
        distance[source as usize] = 0;
        let mut frontier = vec![source];
        let mut level = 0;
        while !frontier.is_empty() && level < hops_max {
            level += 1;
            let mut next = Vec::new();
            for &node in &frontier {
                for &neighbour in self.neighbours(node) {
                    if distance[neighbour as usize] == u32::MAX {
                        distance[neighbour as usize] = level;
                        next.push(neighbour);
                    }
                }
            }
            frontier = next;
        }
        distance
    }

    /// Nodes reachable from `source` in 1..=`hops_max` hops (the source itself excluded, as a
    /// shortest path to itself has length 0) and the sum of their distances.
    pub fn shortest_lengths(&self, source: u32, hops_max: u32) -> ShortestLengths {
        let mut lengths = ShortestLengths {
            reached: 0,
            length_sum: 0,
        };
        for (node, &distance) in self.distances(source, hops_max).iter().enumerate() {
            if node != source as usize && distance != u32::MAX {
                lengths.reached += 1;
                lengths.length_sum += u64::from(distance);
            }
        }
        lengths
    }

    /// The number of shortest paths from `source` to every other node within `hops_max` hops,
    /// summed (what `ALL SHORTEST ... RETURN count(*)` counts). `None` on overflow of u128.
    pub fn shortest_path_count(&self, source: u32, hops_max: u32) -> Option<u128> {
        let mut distance = vec![u32::MAX; self.ids.len()];
        let mut paths = vec![0u128; self.ids.len()];
        distance[source as usize] = 0;
        paths[source as usize] = 1;
        let mut frontier = vec![source];
        let mut level = 0;
        let mut total: u128 = 0;
        while !frontier.is_empty() && level < hops_max {
            level += 1;
            let mut next = Vec::new();
            for &node in &frontier {
                let through = paths[node as usize];
                for &neighbour in self.neighbours(node) {
                    let slot = neighbour as usize;
                    if distance[slot] == u32::MAX {
                        distance[slot] = level;
                        next.push(neighbour);
                    }
                    if distance[slot] == level {
                        paths[slot] = paths[slot].checked_add(through)?;
                    }
                }
            }
            for &node in &next {
                total = total.checked_add(paths[node as usize])?;
            }
            frontier = next;
        }
        Some(total)
    }

    /// Walks (nodes and rels may repeat) from `source` of `hops_min..=hops_max` rels that end at
    /// a node whose `is_destination` is true, counted level by level. `None` on overflow.
    pub fn walk_count(
        &self,
        source: u32,
        hops_min: u32,
        hops_max: u32,
        is_destination: &[bool],
    ) -> Option<WalkCount> {
        assert_eq!(is_destination.len(), self.ids.len());
        assert!(hops_min <= hops_max);
        let mut current = vec![0u128; self.ids.len()];
        current[source as usize] = 1;
        let mut count = WalkCount::default();
        for length in 1..=hops_max {
            let mut next = vec![0u128; self.ids.len()];
            for (node, &walks) in current.iter().enumerate() {
                if walks == 0 {
                    continue;
                }
                for &neighbour in self.neighbours(node as u32) {
                    let slot = &mut next[neighbour as usize];
                    *slot = slot.checked_add(walks)?;
                }
            }
            if length >= hops_min {
                let ending = next
                    .iter()
                    .zip(is_destination)
                    .filter(|(_, &destination)| destination)
                    .try_fold(0u128, |sum, (&walks, _)| sum.checked_add(walks))?;
                count.walks = count.walks.checked_add(ending)?;
                let lengths = ending.checked_mul(u128::from(length))?;
                count.length_sum = count.length_sum.checked_add(lengths)?;
            }
            current = next;
        }
        Some(count)
    }

    /// The dense indices of nodes whose ID satisfies `predicate`, in ID order.
    pub fn indices_where(&self, predicate: impl Fn(i64) -> bool) -> Vec<u32> {
        let mut chosen: Vec<(i64, u32)> = self
            .ids
            .iter()
            .enumerate()
            .filter(|(_, &id)| predicate(id))
            .map(|(index, &id)| (id, index as u32))
            .collect();
        chosen.sort_unstable();
        chosen.into_iter().map(|(_, index)| index).collect()
    }

    /// A mask over dense indices of the nodes whose ID satisfies `predicate`.
    /// Spreading activation with unit weights along the edges (docs/SEMANTICS.md), from
    /// `seeds` with activation 1 each: per first hop, the nodes first reached then and the
    /// sum of their total activations, ascending by hop.
    pub fn spread_by_hop(
        &self,
        seeds: &[u32],
        decay: f64,
        threshold: f64,
        hops: u32,
    ) -> Vec<(u32, u64, f64)> {
        let n = self.ids.len();
        let mut total = vec![0.0f64; n];
        let mut first: Vec<Option<u32>> = vec![None; n];
        let mut arrivals: HashMap<u32, f64> = HashMap::new();
        for &seed in seeds {
            *arrivals.entry(seed).or_default() += 1.0;
        }
        for hop in 0..=hops {
            if hop > 0 {
                let mut next: HashMap<u32, f64> = HashMap::new();
                for (&u, &a) in &arrivals {
                    if a < threshold {
                        continue;
                    }
                    for &v in &self.targets[self.offsets[u as usize]..self.offsets[u as usize + 1]]
                    {
                        *next.entry(v).or_default() += a * decay;
                    }
                }
                arrivals = next;
            }
            for (&v, &a) in &arrivals {
                total[v as usize] += a;
                first[v as usize].get_or_insert(hop);
            }
        }
        let mut by_hop = vec![(0u64, 0.0f64); hops as usize + 1];
        for (v, hop) in first.iter().enumerate() {
            if let Some(hop) = hop {
                by_hop[*hop as usize].0 += 1;
                by_hop[*hop as usize].1 += total[v];
            }
        }
        (0..=hops)
            .zip(by_hop)
            .filter(|(_, (nodes, _))| *nodes > 0)
            .map(|(hop, (nodes, sum))| (hop, nodes, sum))
            .collect()
    }

    pub fn mask_where(&self, predicate: impl Fn(i64) -> bool) -> Vec<bool> {
        self.ids.iter().map(|&id| predicate(id)).collect()
    }
}

fn prefix_sums(mut counts: Vec<usize>) -> Vec<usize> {
    for index in 1..counts.len() {
        counts[index] += counts[index - 1];
    }
    counts
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 0 -> 1 -> 2 -> 0, 0 -> 2, 2 -> 3; node 4 isolated. IDs are given out of order.
    fn triangle() -> ReferenceGraph {
        ReferenceGraph::new(&[3, 0, 4, 2, 1], &[(0, 1), (1, 2), (2, 0), (0, 2), (2, 3)]).unwrap()
    }

    fn index(graph: &ReferenceGraph, id: i64) -> u32 {
        graph.index_of(id).unwrap()
    }

    #[test]
    fn builds_csr_and_rejects_bad_input() {
        let graph = triangle();
        assert_eq!(graph.node_count(), 5);
        assert_eq!(graph.edge_count(), 5);
        assert!(ReferenceGraph::new(&[1, 1], &[]).is_err());
        assert!(ReferenceGraph::new(&[1], &[(1, 2)]).is_err());
    }

    #[test]
    fn shortest_lengths_exclude_the_source() {
        // Warren (like Kùzu) gives 0: 3 nodes, lengths 1+1+2; 1: 2(1), 0(2), 3(2).
        let graph = triangle();
        let from_zero = graph.shortest_lengths(index(&graph, 0), 30);
        assert_eq!(
            from_zero,
            ShortestLengths {
                reached: 3,
                length_sum: 4
            }
        );
        let from_one = graph.shortest_lengths(index(&graph, 1), 30);
        assert_eq!(from_one.reached, 3);
        assert_eq!(from_one.length_sum, 5);
        let isolated = graph.shortest_lengths(index(&graph, 4), 30);
        assert_eq!(isolated.reached, 0);
        // A hop limit cuts the search.
        let near = graph.shortest_lengths(index(&graph, 1), 1);
        assert_eq!(near.reached, 1);
    }

    #[test]
    fn shortest_path_counts_add_alternatives() {
        // Diamond 0 -> {1, 2} -> 3 -> 4: two shortest paths to 3 and two to 4.
        let graph = ReferenceGraph::new(
            &[0, 1, 2, 3, 4],
            &[(0, 1), (0, 2), (1, 3), (2, 3), (3, 4), (4, 0)],
        )
        .unwrap();
        assert_eq!(graph.shortest_path_count(0, 30), Some(1 + 1 + 2 + 2));
        assert_eq!(graph.shortest_path_count(0, 2), Some(1 + 1 + 2));
        // Parallel edges are distinct paths.
        let parallel = ReferenceGraph::new(&[0, 1], &[(0, 1), (0, 1)]).unwrap();
        assert_eq!(parallel.shortest_path_count(0, 30), Some(2));
    }

    #[test]
    fn walk_counts_match_hand_counts() {
        // Sources {0, 1}, destinations {0, 1, 2}, 1..3 hops on the triangle graph: Warren counts
        // 11 (checked with `warren query`). By hand: from 0: len1 {1,2} = 2; len2 0->1->2,
        // 0->2->0 = 2; len3 0->1->2->0, 0->2->0->1, 0->2->0->2 = 3 (0->2->3 leaves the set).
        // From 1: len1 {2} = 1; len2 1->2->0 = 1; len3 1->2->0->1, 1->2->0->2 = 2. Total 11.
        let graph = triangle();
        let destinations = graph.mask_where(|id| id < 3);
        let mut total = WalkCount::default();
        for source in graph.indices_where(|id| id < 2) {
            let count = graph.walk_count(source, 1, 3, &destinations).unwrap();
            total.walks += count.walks;
            total.length_sum += count.length_sum;
        }
        assert_eq!(total.walks, 11);
        assert_eq!(total.length_sum, 2 + 2 * 2 + 3 * 3 + 1 + 2 + 2 * 3);
    }

    #[test]
    fn walk_counts_include_self_loops_and_respect_the_lower_bound() {
        let graph = ReferenceGraph::new(&[0, 1], &[(0, 0), (0, 1)]).unwrap();
        let all = graph.mask_where(|_| true);
        // Walks of length 2: 0-0-0, 0-0-1.
        let count = graph.walk_count(0, 2, 2, &all).unwrap();
        assert_eq!(count.walks, 2);
        assert_eq!(count.length_sum, 4);
    }

    #[test]
    fn indices_come_in_id_order() {
        let graph = triangle();
        let chosen: Vec<i64> = graph
            .indices_where(|id| id < 3)
            .into_iter()
            .map(|i| graph.ids()[i as usize])
            .collect();
        assert_eq!(chosen, vec![0, 1, 2]);
    }
}

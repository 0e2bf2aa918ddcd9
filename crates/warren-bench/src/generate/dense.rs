//! The dense uniform random graph: every node gets `degree` distinct random out-neighbours.
//!
//! Out-neighbours are a uniform random `degree`-subset of the other `node_count - 1` nodes,
//! drawn with Floyd's algorithm (exactly `degree` draws per node, however close `degree` is to
//! `node_count`). Edges are written grouped by source in increasing order, targets sorted, so
//! the out-degree of every node is exactly `degree` and in-degrees are binomial.

use super::parallel::{chunk_count, map_chunks};
use super::rng::Rng;

const STREAM_NEIGHBOURS: u64 = 4;
const NODES_PER_CHUNK: u64 = 256;

/// Generates the dense graph. Returns the node count and the edges, grouped by source.
///
/// # Panics
/// If `node_count` exceeds `2^32` or `degree` is not below `node_count`.
pub fn dense_edges(node_count: u64, degree: u32, seed: u64) -> (u64, Vec<(u32, u32)>) {
    assert!(node_count <= 1 << 32, "node ids must fit in u32");
    assert!(
        u64::from(degree) < node_count.max(1),
        "degree must be below the node count"
    );
    let chunks = map_chunks(chunk_count(node_count, NODES_PER_CHUNK), |chunk| {
        let first = chunk as u64 * NODES_PER_CHUNK;
        let last = (first + NODES_PER_CHUNK).min(node_count);
        let mut rng = Rng::for_chunk(seed, STREAM_NEIGHBOURS, chunk as u64);
        let mut sampler = SubsetSampler::new(node_count - 1);
        let mut edges = Vec::with_capacity(((last - first) * u64::from(degree)) as usize);
        for from in first..last {
            let targets = sampler.sample(degree, &mut rng);
            edges.extend(targets.iter().map(|&target| {
                // Candidates skip the source itself: 0..from stay, from.. shift up by one.
                let to = if u64::from(target) >= from {
                    target + 1
                } else {
                    target
                };
                (from as u32, to)
            }));
        }
        edges
    });
    (node_count, chunks.concat())
}

/// Draws uniform random subsets of `0..candidate_count` with Floyd's algorithm, remembering
/// membership in a stamp array so that no clearing is needed between draws.
struct SubsetSampler {
    stamps: Vec<u32>,
    stamp: u32,
    chosen: Vec<u32>,
}

impl SubsetSampler {
    fn new(candidate_count: u64) -> Self {
        Self {
            stamps: vec![0; candidate_count as usize],
            stamp: 0,
            chosen: Vec::new(),
        }
    }

    /// A sorted uniform random subset of `size` distinct candidates.
    fn sample(&mut self, size: u32, rng: &mut Rng) -> &[u32] {
        let candidate_count = self.stamps.len() as u64;
        debug_assert!(u64::from(size) <= candidate_count);
        self.next_stamp();
        self.chosen.clear();
        for upper in (candidate_count - u64::from(size))..candidate_count {
            let mut pick = rng.below(upper + 1) as usize;
            if self.stamps[pick] == self.stamp {
                pick = upper as usize;
            }
            self.stamps[pick] = self.stamp;
            self.chosen.push(pick as u32);
        }
        self.chosen.sort_unstable();
        &self.chosen
    }

    fn next_stamp(&mut self) {
        if self.stamp == u32::MAX {
            self.stamps.fill(0);
            self.stamp = 0;
        }
        self.stamp += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::super::stats::{assert_simple, in_degrees, out_degrees};
    use super::*;

    #[test]
    fn every_node_has_exactly_degree_out_neighbours() {
        let (node_count, edges) = dense_edges(1000, 50, 9);
        assert_simple(&edges, node_count);
        assert_eq!(edges.len(), 50_000);
        assert!(out_degrees(&edges, node_count)
            .iter()
            .all(|&degree| degree == 50));
        assert!(edges.windows(2).all(|pair| pair[0] < pair[1]));
    }

    #[test]
    fn complete_graph_when_degree_is_node_count_minus_one() {
        let (node_count, edges) = dense_edges(30, 29, 2);
        assert_simple(&edges, node_count);
        assert_eq!(edges.len(), 30 * 29);
    }

    #[test]
    fn targets_are_spread_over_all_nodes() {
        let (node_count, edges) = dense_edges(2000, 20, 4);
        let in_degrees = in_degrees(&edges, node_count);
        // Binomial(39980, 1/1999): mean 20, a maximum far from hub-like values.
        assert!(*in_degrees.iter().max().unwrap() < 60);
        assert!(in_degrees.iter().filter(|&&degree| degree == 0).count() < 5);
    }

    #[test]
    fn tiny_graphs() {
        assert_eq!(dense_edges(1, 0, 1), (1, vec![]));
        assert_eq!(dense_edges(2, 1, 1), (2, vec![(0, 1), (1, 0)]));
    }

    #[test]
    fn deterministic_per_seed() {
        assert_eq!(dense_edges(500, 10, 1), dense_edges(500, 10, 1));
        assert_ne!(dense_edges(500, 10, 1), dense_edges(500, 10, 2));
    }
}

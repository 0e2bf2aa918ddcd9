//! A social-network-like graph: Chung–Lu power law, communities and reciprocity.
//!
//! The model, in generation order (before vertices are renamed):
//!
//! - **Power-law activity and popularity.** Node `i` has weight `w(i) = (i + 10)^(-3/4)`. A
//!   Chung–Lu graph with weights `i^(-α)` has degrees distributed as `k^(-(1 + 1/α))`, so both
//!   out- and in-degrees follow a power law with exponent about 2.33. The same weight drives
//!   a node's out-degree (activity) and in-degree (popularity), so the two are correlated, as
//!   in real social networks. The offset 10 caps the largest hub at about 0.2% of all edges.
//! - **Communities.** Node `i` belongs to community `i mod K`, with `K = ceil(N / 128)`, so each
//!   community holds about 128 nodes with a mix of weights. A quarter of the draws pick the
//!   target uniformly inside the source's community (friends); the rest pick it by weight
//!   across the whole graph (followed accounts).
//! - **Reciprocity.** A fifth of the draws also add the reverse edge (mutual follows).
//!
//! Draws come from an endless deterministic stream; self loops and repeated pairs are dropped
//! (first occurrence kept), and the graph is the first `N * degree` distinct edges of that
//! stream, so the average out-degree is exactly `degree` whenever so many edges can be found.
//! Vertex ids are then assigned by a random permutation and the edge list is shuffled, as for
//! Graph500. Weights use only `sqrt`, multiplication and division, which IEEE 754 rounds
//! exactly, and sampling uses integer prefix sums, so every machine builds the same graph.

use super::dedup::dedup_keep_first;
use super::parallel::{chunk_count, map_chunks};
use super::permutation::{random_permutation, relabel, shuffle};
use super::rng::{scale_u32, Rng};

/// Nodes per community, on average.
pub const COMMUNITY_SIZE: u64 = 128;
/// Draws whose target is chosen inside the source's community, per thousand.
pub const LOCAL_PER_MILLE: u32 = 250;
/// Draws that also add the reverse edge, per thousand.
pub const RECIPROCAL_PER_MILLE: u32 = 200;
/// Added to the rank before the power law, to bound the largest weight.
const WEIGHT_RANK_OFFSET: u64 = 10;
/// Fixed-point scale of the integer weights.
const WEIGHT_UNIT: f64 = (1u64 << 24) as f64;

const STREAM_DRAWS: u64 = 5;
const STREAM_VERTEX_PERMUTATION: u64 = 6;
const STREAM_EDGE_SHUFFLE: u64 = 7;
const DRAWS_PER_CHUNK: u64 = 1 << 15;
/// Draws per wanted edge after which the stream is taken to have run dry.
const DRAWS_PER_EDGE_MAX: u64 = 4;

/// Generates the social graph of `node_count` nodes and average out-degree `degree`. Returns the
/// node count and the edges, without self loops or duplicates, in shuffled order.
///
/// # Panics
/// If `node_count` exceeds `2^32` or `degree` is not below `node_count`.
pub fn social_edges(node_count: u64, degree: u32, seed: u64) -> (u64, Vec<(u32, u32)>) {
    assert!(node_count <= 1 << 32, "node ids must fit in u32");
    assert!(
        u64::from(degree) < node_count.max(1),
        "degree must be below the node count"
    );
    let edge_target = node_count * u64::from(degree);
    let model = Model::new(node_count);
    let mut edges = distinct_edges(&model, edge_target, seed);
    let permutation = random_permutation(
        node_count,
        &mut Rng::for_chunk(seed, STREAM_VERTEX_PERMUTATION, 0),
    );
    relabel(&mut edges, &permutation);
    shuffle(
        &mut edges,
        &mut Rng::for_chunk(seed, STREAM_EDGE_SHUFFLE, 0),
    );
    (node_count, edges)
}

/// The first `edge_target` distinct non-loop edges of the draw stream (fewer only when the
/// stream keeps repeating itself, as in nearly complete graphs).
fn distinct_edges(model: &Model, edge_target: u64, seed: u64) -> Vec<(u32, u32)> {
    let draw_limit = edge_target.saturating_mul(DRAWS_PER_EDGE_MAX) + 1024;
    let mut draw_count = edge_target;
    loop {
        let mut edges = draw_edges(model, draw_count, seed);
        dedup_keep_first(&mut edges, model.node_count);
        let found = edges.len() as u64;
        if found >= edge_target || draw_count == draw_limit {
            edges.truncate(edge_target as usize);
            return edges;
        }
        // The stream's prefix does not change with its length, so drawing more only appends;
        // ask for twice the estimated shortfall.
        let shortfall = draw_count * (edge_target - found) / found.max(1);
        draw_count = (draw_count + 2 * shortfall + 1024).min(draw_limit);
    }
}

/// The edges of the first `draw_count` draws, in stream order.
fn draw_edges(model: &Model, draw_count: u64, seed: u64) -> Vec<(u32, u32)> {
    let chunks = map_chunks(chunk_count(draw_count, DRAWS_PER_CHUNK), |chunk| {
        let first = chunk as u64 * DRAWS_PER_CHUNK;
        let count = DRAWS_PER_CHUNK.min(draw_count - first);
        let mut rng = Rng::for_chunk(seed, STREAM_DRAWS, chunk as u64);
        let mut edges = Vec::with_capacity(count as usize * 5 / 4);
        for _ in 0..count {
            model.draw(&mut rng, &mut edges);
        }
        edges
    });
    chunks.concat()
}

/// Weights and communities of the nodes, in generation order.
struct Model {
    node_count: u64,
    community_count: u64,
    /// `weight_prefix[i]` is the sum of the integer weights of nodes `0..=i`.
    weight_prefix: Vec<u64>,
}

impl Model {
    fn new(node_count: u64) -> Self {
        let mut total = 0u64;
        let weight_prefix = (0..node_count)
            .map(|rank| {
                total += integer_weight(rank);
                total
            })
            .collect();
        Self {
            node_count,
            community_count: node_count.div_ceil(COMMUNITY_SIZE).max(1),
            weight_prefix,
        }
    }

    /// One draw: an edge, sometimes followed by its reverse.
    #[inline]
    fn draw(&self, rng: &mut Rng, edges: &mut Vec<(u32, u32)>) {
        let choices = rng.next_u64();
        let from = self.by_weight(rng);
        let to = if scale_u32(choices as u32, 1000) < LOCAL_PER_MILLE {
            self.in_community(from, rng)
        } else {
            self.by_weight(rng)
        };
        edges.push((from, to));
        if scale_u32((choices >> 32) as u32, 1000) < RECIPROCAL_PER_MILLE {
            edges.push((to, from));
        }
    }

    /// A node chosen with probability proportional to its weight.
    #[inline]
    fn by_weight(&self, rng: &mut Rng) -> u32 {
        let total = *self.weight_prefix.last().expect("at least one node");
        let point = rng.below(total);
        self.weight_prefix
            .partition_point(|&prefix| prefix <= point) as u32
    }

    /// A node chosen uniformly from the community of `node`.
    #[inline]
    fn in_community(&self, node: u32, rng: &mut Rng) -> u32 {
        let community = u64::from(node) % self.community_count;
        let member_count = (self.node_count - community).div_ceil(self.community_count);
        (community + self.community_count * rng.below(member_count)) as u32
    }
}

/// The fixed-point weight `(rank + offset)^(-3/4)`, at least 1.
fn integer_weight(rank: u64) -> u64 {
    let x = (rank + WEIGHT_RANK_OFFSET) as f64;
    let root = x.sqrt();
    let power = root * root.sqrt();
    ((WEIGHT_UNIT / power) as u64).max(1)
}

#[cfg(test)]
mod tests {
    use super::super::stats::{assert_simple, in_degrees, out_degrees};
    use super::*;

    #[test]
    fn average_degree_is_exact_and_graph_is_simple() {
        let (node_count, edges) = social_edges(5000, 8, 1);
        assert_simple(&edges, node_count);
        assert_eq!(edges.len(), 40_000);
    }

    #[test]
    fn degrees_are_heavy_tailed() {
        let (node_count, edges) = social_edges(20_000, 10, 2);
        let mut degrees = out_degrees(&edges, node_count);
        degrees.sort_unstable();
        let degree_max = *degrees.last().unwrap();
        let degree_median = degrees[degrees.len() / 2];
        assert!(degree_max > 50 * 10, "max {degree_max}");
        assert!(degree_median < 10, "median {degree_median}");
        let in_degrees = in_degrees(&edges, node_count);
        assert!(*in_degrees.iter().max().unwrap() > 50 * 10);
    }

    #[test]
    fn some_edges_are_reciprocated() {
        let (node_count, mut edges) = social_edges(5000, 8, 3);
        let forward = edges.clone();
        edges.iter_mut().for_each(|edge| *edge = (edge.1, edge.0));
        let mut all = forward;
        all.extend(edges);
        let before = all.len();
        dedup_keep_first(&mut all, node_count);
        // An edge whose reverse also exists appears twice in `all`.
        let reciprocated_edges = before - all.len();
        assert!(
            reciprocated_edges * 5 > before / 2,
            "{reciprocated_edges} of {}",
            before / 2
        );
    }

    #[test]
    fn weights_decrease_and_stay_positive() {
        assert!(integer_weight(0) > integer_weight(1));
        let expected = WEIGHT_UNIT / 10f64.powf(0.75);
        assert!((integer_weight(0) as f64 - expected).abs() <= 1.0);
        assert!(integer_weight(u64::from(u32::MAX)) >= 1);
    }

    #[test]
    fn community_members_share_the_community() {
        let model = Model::new(1000);
        let mut rng = Rng::from_seed(1);
        for node in [0, 7, 999] {
            for _ in 0..100 {
                let other = model.in_community(node, &mut rng);
                assert!(u64::from(other) < 1000);
                assert_eq!(
                    u64::from(other) % model.community_count,
                    u64::from(node) % 8
                );
            }
        }
    }

    #[test]
    fn tiny_graphs_are_complete_or_empty() {
        assert_eq!(social_edges(1, 0, 1), (1, vec![]));
        let (node_count, mut edges) = social_edges(2, 1, 1);
        edges.sort_unstable();
        assert_eq!((node_count, edges), (2, vec![(0, 1), (1, 0)]));
        let (node_count, edges) = social_edges(12, 11, 1);
        assert_simple(&edges, node_count);
        assert!(edges.len() > 100, "{} of 132 edges", edges.len());
    }

    #[test]
    fn deterministic_per_seed() {
        assert_eq!(social_edges(800, 5, 4), social_edges(800, 5, 4));
        assert_ne!(social_edges(800, 5, 4), social_edges(800, 5, 5));
    }
}

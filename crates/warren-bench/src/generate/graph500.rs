//! The Graph500 Kronecker (R-MAT) generator.
//!
//! Follows the Graph500 specification's reference (Octave) generator: `N = 2^scale` vertices,
//! `M = edge_factor * N` edge draws, initiator probabilities A = 0.57, B = 0.19, C = 0.19,
//! D = 0.05, and no noise. Each draw descends `scale` levels of the adjacency matrix; at every
//! level one 32-bit random number picks a quadrant (A: no bit set, B: the column bit, C: the row
//! bit, D: both), which is the reference's two conditional per-bit draws folded into one. As in
//! the reference, vertex labels are then renamed by a random permutation (so ids `0..N-1` are
//! given to the generated vertices in random order) and the edge list is shuffled. Finally self
//! loops and repeated directed pairs are dropped, keeping the first occurrence in shuffled order.
//!
//! Probabilities are integers in parts per [`PROBABILITY_DENOMINATOR`], so no floating point
//! is involved and the output is the same on every machine.

use super::dedup::dedup_keep_first;
use super::parallel::{chunk_count, map_chunks};
use super::permutation::{random_permutation, relabel, shuffle};
use super::rng::{scale_u32, Rng};

/// The denominator of the initiator probabilities.
pub const PROBABILITY_DENOMINATOR: u32 = 10_000;
/// Initiator probability A (top-left quadrant), in parts per [`PROBABILITY_DENOMINATOR`].
pub const INITIATOR_A: u32 = 5_700;
/// Initiator probability B (top-right quadrant), in parts per [`PROBABILITY_DENOMINATOR`].
pub const INITIATOR_B: u32 = 1_900;
/// Initiator probability C (bottom-left quadrant), in parts per [`PROBABILITY_DENOMINATOR`].
pub const INITIATOR_C: u32 = 1_900;
/// The largest scale: vertex ids must fit in `u32`.
pub const SCALE_MAX: u32 = 32;

const STREAM_EDGES: u64 = 1;
const STREAM_VERTEX_PERMUTATION: u64 = 2;
const STREAM_EDGE_SHUFFLE: u64 = 3;
const EDGES_PER_CHUNK: u64 = 1 << 16;

/// Generates the Graph500 graph of `2^scale` vertices from `edge_factor * 2^scale` edge draws.
/// Returns the node count and the edges, without self loops or duplicates, in shuffled order.
///
/// # Panics
/// If `scale` is 0 or above [`SCALE_MAX`].
pub fn graph500_edges(scale: u32, edge_factor: u32, seed: u64) -> (u64, Vec<(u32, u32)>) {
    assert!(
        (1..=SCALE_MAX).contains(&scale),
        "scale must be in 1..={SCALE_MAX}"
    );
    let node_count = 1u64 << scale;
    let draw_count = u64::from(edge_factor) * node_count;
    let mut edges = kronecker_draws(scale, draw_count, seed);
    let permutation = random_permutation(
        node_count,
        &mut Rng::for_chunk(seed, STREAM_VERTEX_PERMUTATION, 0),
    );
    relabel(&mut edges, &permutation);
    shuffle(
        &mut edges,
        &mut Rng::for_chunk(seed, STREAM_EDGE_SHUFFLE, 0),
    );
    dedup_keep_first(&mut edges, node_count);
    (node_count, edges)
}

/// `draw_count` raw R-MAT edges over `2^scale` vertices, before relabelling and clean-up.
fn kronecker_draws(scale: u32, draw_count: u64, seed: u64) -> Vec<(u32, u32)> {
    let chunks = map_chunks(chunk_count(draw_count, EDGES_PER_CHUNK), |chunk| {
        let first = chunk as u64 * EDGES_PER_CHUNK;
        let count = EDGES_PER_CHUNK.min(draw_count - first);
        let mut rng = Rng::for_chunk(seed, STREAM_EDGES, chunk as u64);
        (0..count)
            .map(|_| kronecker_edge(scale, &mut rng))
            .collect::<Vec<_>>()
    });
    chunks.concat()
}

/// One R-MAT descent: a quadrant per level, each level adding one bit to both endpoints.
#[inline]
fn kronecker_edge(scale: u32, rng: &mut Rng) -> (u32, u32) {
    let mut from = 0u32;
    let mut to = 0u32;
    let mut bits = 0u64;
    for level in 0..scale {
        if level % 2 == 0 {
            bits = rng.next_u64();
        }
        let draw = scale_u32((bits >> (32 * (level % 2))) as u32, PROBABILITY_DENOMINATOR);
        let (row_bit, column_bit) = quadrant(draw);
        from |= row_bit << level;
        to |= column_bit << level;
    }
    (from, to)
}

/// The (row bit, column bit) of the quadrant that `draw` in `0..PROBABILITY_DENOMINATOR` picks.
/// Branch-free: the quadrant is random, so branches on it would mispredict half the time.
#[inline]
fn quadrant(draw: u32) -> (u32, u32) {
    let past_a = u32::from(draw >= INITIATOR_A);
    let past_b = u32::from(draw >= INITIATOR_A + INITIATOR_B);
    let past_c = u32::from(draw >= INITIATOR_A + INITIATOR_B + INITIATOR_C);
    // A: 0,0,0 -> (0, 0); B: 1,0,0 -> (0, 1); C: 1,1,0 -> (1, 0); D: 1,1,1 -> (1, 1).
    (past_b, (past_a ^ past_b) | past_c)
}

#[cfg(test)]
mod tests {
    use super::super::stats::{assert_simple, out_degrees};
    use super::*;

    #[test]
    fn scale_10_has_the_expected_size_and_skew() {
        let (node_count, edges) = graph500_edges(10, 16, 1);
        assert_eq!(node_count, 1024);
        assert_simple(&edges, node_count);
        // 16384 draws; self loops and repeats remove a good share at this small scale.
        assert!(
            (9_000..16_384).contains(&edges.len()),
            "{} edges",
            edges.len()
        );
        let degrees = out_degrees(&edges, node_count);
        let degree_max = u64::from(*degrees.iter().max().unwrap());
        let degree_mean = edges.len() as u64 / node_count;
        assert!(
            degree_max > 10 * degree_mean,
            "max {degree_max}, mean {degree_mean}"
        );
    }

    #[test]
    fn scale_1_is_a_subset_of_the_two_possible_edges() {
        let (node_count, edges) = graph500_edges(1, 16, 1);
        assert_eq!(node_count, 2);
        assert_simple(&edges, node_count);
        assert!(!edges.is_empty());
        assert_eq!(graph500_edges(3, 0, 1), (8, vec![]));
    }

    #[test]
    fn same_seed_same_graph_other_seed_other_graph() {
        assert_eq!(graph500_edges(8, 8, 5), graph500_edges(8, 8, 5));
        assert_ne!(graph500_edges(8, 8, 5), graph500_edges(8, 8, 6));
    }

    #[test]
    fn quadrant_frequencies_match_the_initiator() {
        let mut counts = [0u32; 4];
        for draw in 0..PROBABILITY_DENOMINATOR {
            let (row_bit, column_bit) = quadrant(draw);
            counts[(row_bit * 2 + column_bit) as usize] += 1;
        }
        assert_eq!(counts, [5_700, 1_900, 1_900, 500]);
    }

    #[test]
    fn labels_are_permuted() {
        // Without relabelling vertex 0 would be the hub; the permutation moves it elsewhere.
        let (node_count, edges) = graph500_edges(10, 16, 3);
        let degrees = out_degrees(&edges, node_count);
        let hub = degrees
            .iter()
            .enumerate()
            .max_by_key(|&(_, degree)| *degree)
            .unwrap()
            .0;
        assert_ne!(hub, 0);
    }
}

//! Beam search over one layer (the greedy best-first search of Malkov & Yashunin), with the
//! per-thread scratch it reuses: a visited array stamped with an epoch (no clearing between
//! searches), and either two heaps (a search with a filter) or one sorted beam (a search that
//! accepts every node).

use std::cmp::{Ordering, Reverse};
use std::collections::BinaryHeap;
use std::sync::atomic::Ordering as AtomicOrdering;

use super::layer::{Layer, EMPTY};
use super::measure::Query;

/// A row (or, inside a layer, a node) and its distance to the query. Ordered by distance, then
/// id, so that results are deterministic.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Neighbour {
    pub row: u32,
    pub distance: f32,
}

impl Eq for Neighbour {}

impl Ord for Neighbour {
    fn cmp(&self, other: &Self) -> Ordering {
        self.distance
            .total_cmp(&other.distance)
            .then(self.row.cmp(&other.row))
    }
}

impl PartialOrd for Neighbour {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// What one thread reuses from search to search. Create one per thread.
#[derive(Default)]
pub struct SearchScratch {
    visited: Vec<u32>,
    epoch: u32,
    candidates: BinaryHeap<Reverse<Neighbour>>,
    results: BinaryHeap<Neighbour>,
    /// The sorted beam of [`search_layer_beam`].
    beam: Vec<BeamEntry>,
    pub(crate) found: Vec<Neighbour>,
    pub(crate) entries: Vec<u32>,
    /// The query as the graph measures it (its codes).
    pub(crate) query: Query,
    /// The unvisited neighbours of the node being expanded.
    fresh: Vec<u32>,
    /// Skip the prefetch of neighbour vectors (for measuring it; see `set_prefetch`).
    no_prefetch: bool,
    /// Distances computed by the searches of this scratch so far, per layer.
    pub(crate) counts: DistanceCounts,
}

/// Distances computed by the searches of one scratch, per layer (for profiling: the work of a
/// query is about its distance count times the cost of one distance).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DistanceCounts {
    pub upper: u64,
    pub lower: u64,
}

/// How many neighbours ahead of the distance loop their vectors are prefetched: enough to
/// cover a miss, few enough that the prefetches do not queue behind each other (measured
/// against prefetching every neighbour at once; docs/OPTIMIZATION_LOG.md).
const PREFETCH_AHEAD: usize = 8;

impl SearchScratch {
    pub fn new() -> Self {
        Self::default()
    }

    /// Whether searches with this scratch prefetch the vectors of a node's unvisited
    /// neighbours before computing their distances (on by default).
    pub fn set_prefetch(&mut self, prefetch: bool) {
        self.no_prefetch = !prefetch;
    }

    pub fn prefetches(&self) -> bool {
        !self.no_prefetch
    }

    /// Distances computed by index searches with this scratch since it was made (the build's
    /// searches are not counted).
    pub fn distance_counts(&self) -> DistanceCounts {
        self.counts
    }

    /// Starts a search over `nodes` nodes: a new epoch marks every node unvisited.
    fn begin(&mut self, nodes: usize) {
        if self.visited.len() < nodes {
            self.visited.resize(nodes, 0);
        }
        self.epoch = self.epoch.wrapping_add(1);
        if self.epoch == 0 {
            self.visited.fill(0);
            self.epoch = 1;
        }
        self.candidates.clear();
        self.results.clear();
        self.beam.clear();
    }
}

/// Marks `node` visited; false when it already was.
#[inline]
fn visit(visited: &mut [u32], epoch: u32, node: u32) -> bool {
    let stamp = &mut visited[node as usize];
    if *stamp == epoch {
        return false;
    }
    *stamp = epoch;
    true
}

/// Lists in `fresh` the neighbours of `node` not visited yet in this search, marking them
/// visited.
#[inline(always)]
fn unvisited_neighbours(
    layer: &Layer,
    node: u32,
    visited: &mut [u32],
    epoch: u32,
    fresh: &mut Vec<u32>,
) {
    fresh.clear();
    for slot in layer.slots(node) {
        let neighbour = slot.load(AtomicOrdering::Relaxed);
        if neighbour != EMPTY && visit(visited, epoch, neighbour) {
            fresh.push(neighbour);
        }
    }
}

/// Hands `measured` each node of `fresh` with its distance, in order; when `prefetching`,
/// each node's vector is prefetched [`PREFETCH_AHEAD`] nodes before it is measured.
#[inline(always)]
fn measure_each<D, P>(
    fresh: &[u32],
    prefetching: bool,
    distance: &D,
    prefetch: &P,
    mut measured: impl FnMut(Neighbour),
) where
    D: Fn(u32) -> f32,
    P: Fn(u32),
{
    if prefetching {
        for &node in fresh.iter().take(PREFETCH_AHEAD) {
            prefetch(node);
        }
    }
    for (index, &node) in fresh.iter().enumerate() {
        if prefetching {
            if let Some(&later) = fresh.get(index + PREFETCH_AHEAD) {
                prefetch(later);
            }
        }
        measured(Neighbour {
            row: node,
            distance: distance(node),
        });
    }
}

/// Searches `layer` from `entries` with beam width `ef`, writing the (at most `ef`) nearest
/// accepted nodes into `out`, nearest first. Nodes that `accept` rejects are still traversed
/// (so tombstones and filters never cut the graph), and the search does not stop while fewer
/// than `ef` nodes were accepted: a selective filter makes it expand until it finds `ef` or
/// exhausts what it can reach. `prefetch(node)` starts loading a node's vector. Returns the
/// number of distances computed.
#[allow(clippy::too_many_arguments)]
pub fn search_layer<D, A, P>(
    layer: &Layer,
    entries: &[u32],
    ef: usize,
    distance: D,
    accept: A,
    prefetch: P,
    scratch: &mut SearchScratch,
    out: &mut Vec<Neighbour>,
) -> u64
where
    D: Fn(u32) -> f32,
    A: Fn(u32) -> bool,
    P: Fn(u32),
{
    assert!(ef > 0, "a beam needs a positive width");
    scratch.begin(layer.nodes());
    let SearchScratch {
        visited,
        epoch,
        candidates,
        results,
        fresh,
        no_prefetch,
        ..
    } = scratch;
    let prefetching = !*no_prefetch;
    let epoch = *epoch;
    let mut computed = 0u64;
    for &entry in entries {
        if visit(visited, epoch, entry) {
            computed += 1;
            let found = Neighbour {
                row: entry,
                distance: distance(entry),
            };
            candidates.push(Reverse(found));
            if accept(entry) {
                results.push(found);
            }
        }
    }
    while results.len() > ef {
        results.pop();
    }
    while let Some(Reverse(nearest)) = candidates.pop() {
        let worst = results.peek().map_or(f32::INFINITY, |worst| worst.distance);
        if results.len() >= ef && nearest.distance > worst {
            break;
        }
        // The next candidate's list is likely read next: start loading it now.
        if let Some(Reverse(next)) = candidates.peek() {
            layer.prefetch(next.row);
        }
        unvisited_neighbours(layer, nearest.row, visited, epoch, fresh);
        computed += fresh.len() as u64;
        measure_each(fresh, prefetching, &distance, &prefetch, |found| {
            let worst = results.peek().map_or(f32::INFINITY, |worst| worst.distance);
            if results.len() < ef || found.distance < worst {
                candidates.push(Reverse(found));
                if accept(found.row) {
                    results.push(found);
                    if results.len() > ef {
                        results.pop();
                    }
                }
            }
        });
    }
    out.clear();
    out.extend(results.drain());
    out.sort_unstable();
    computed
}

/// One node of a sorted beam: the node, its distance, and whether its list was read.
#[derive(Clone, Copy, Debug)]
struct BeamEntry {
    hit: Neighbour,
    expanded: bool,
}

/// [`search_layer`] for a search that accepts every node (the build, the upper layer, an
/// unfiltered query over an index without deletions), with the beam as one sorted array of at
/// most `ef` nodes instead of two heaps: the nearest node not yet expanded is the first such
/// entry, a node found joins at its place by binary search (the farthest falls off the end), and
/// the search ends when every node of the beam was expanded. It expands the same nodes in the
/// same order as the heaps would (the heaps' candidates beyond the `ef` nearest are never
/// expanded, as the search stops at the first of them), up to nodes at exactly the distance of
/// the beam's farthest. Returns the number of distances computed.
pub fn search_layer_beam<D, P>(
    layer: &Layer,
    entries: &[u32],
    ef: usize,
    distance: D,
    prefetch: P,
    scratch: &mut SearchScratch,
    out: &mut Vec<Neighbour>,
) -> u64
where
    D: Fn(u32) -> f32,
    P: Fn(u32),
{
    assert!(ef > 0, "a beam needs a positive width");
    scratch.begin(layer.nodes());
    let SearchScratch {
        visited,
        epoch,
        beam,
        fresh,
        no_prefetch,
        ..
    } = scratch;
    let prefetching = !*no_prefetch;
    let epoch = *epoch;
    let mut computed = 0u64;
    for &entry in entries {
        if visit(visited, epoch, entry) {
            computed += 1;
            let found = Neighbour {
                row: entry,
                distance: distance(entry),
            };
            join_beam(beam, ef, found);
        }
    }
    // Every entry before `unexpanded` has been expanded.
    let mut unexpanded = 0;
    while let Some(offset) = beam[unexpanded..].iter().position(|entry| !entry.expanded) {
        let at = unexpanded + offset;
        beam[at].expanded = true;
        let nearest = beam[at].hit;
        unexpanded = at + 1;
        // The next candidate's list is likely read next: start loading it now.
        if let Some(next) = beam[unexpanded..].iter().find(|entry| !entry.expanded) {
            layer.prefetch(next.hit.row);
        }
        unvisited_neighbours(layer, nearest.row, visited, epoch, fresh);
        computed += fresh.len() as u64;
        measure_each(fresh, prefetching, &distance, &prefetch, |found| {
            let farthest = beam
                .last()
                .map_or(f32::INFINITY, |entry| entry.hit.distance);
            if beam.len() < ef || found.distance < farthest {
                unexpanded = unexpanded.min(join_beam(beam, ef, found));
            }
        });
    }
    out.clear();
    out.extend(beam.iter().map(|entry| entry.hit));
    debug_assert!(out.windows(2).all(|pair| pair[0] <= pair[1]));
    computed
}

/// Inserts `found` into the sorted `beam` (at most `ef` entries, the farthest dropped when it is
/// full); returns its position. The caller checked that it is nearer than the farthest, or that
/// the beam has room.
#[inline]
fn join_beam(beam: &mut Vec<BeamEntry>, ef: usize, found: Neighbour) -> usize {
    let at = beam.partition_point(|entry| entry.hit < found);
    if beam.len() == ef {
        if at == ef {
            return at;
        }
        beam.pop();
    }
    beam.insert(
        at,
        BeamEntry {
            hit: found,
            expanded: false,
        },
    );
    at
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    /// A path graph 0 - 1 - ... - 9 with the distance |node - 7|.
    fn path_layer() -> Layer {
        let layer = Layer::new(2, 10);
        for node in 0..10u32 {
            let list: Vec<u32> = [node.checked_sub(1), (node < 9).then_some(node + 1)]
                .into_iter()
                .flatten()
                .collect();
            let guard = layer.lock(node);
            layer.set_neighbours(&guard, node, &list);
        }
        layer
    }

    #[test]
    fn walks_to_the_nearest_and_respects_accept() {
        let layer = path_layer();
        let mut scratch = SearchScratch::new();
        let mut out = Vec::new();
        let distance = |node: u32| (node as f32 - 7.0).abs();
        let none = |_| ();
        search_layer(
            &layer,
            &[0],
            3,
            distance,
            |_| true,
            none,
            &mut scratch,
            &mut out,
        );
        let rows: Vec<u32> = out.iter().map(|found| found.row).collect();
        assert_eq!(rows, [7, 6, 8]);
        // Only even nodes pass: the search walks through odd ones and still finds three.
        search_layer(
            &layer,
            &[0],
            3,
            distance,
            |node| node % 2 == 0,
            none,
            &mut scratch,
            &mut out,
        );
        let rows: Vec<u32> = out.iter().map(|found| found.row).collect();
        assert_eq!(rows, [6, 8, 4]);
    }

    /// A random layer: `nodes` nodes (1 to 2,000), each with up to `degree` distinct
    /// neighbours other than itself; distinct distances (a permutation of the nodes, scaled);
    /// and 1 to 3 entry nodes.
    fn random_layer() -> impl Strategy<Value = (usize, Vec<Vec<u32>>, Vec<u32>, Vec<u32>)> {
        (
            prop::sample::select(vec![1usize, 2, 17, 300, 2000]),
            prop::sample::select(vec![1usize, 4, 16, 60]),
        )
            .prop_flat_map(|(nodes, degree)| {
                let node = 0..nodes as u32;
                (
                    Just(degree),
                    prop::collection::vec(prop::collection::vec(node.clone(), 0..=degree), nodes),
                    Just((0..nodes as u32).collect::<Vec<u32>>()).prop_shuffle(),
                    prop::collection::vec(node, 1..4),
                )
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(60))]

        /// On random layers with distinct distances, the sorted beam computes the same
        /// distances and returns the same nodes, in the same order, as the two heaps accepting
        /// every node.
        #[test]
        fn the_beam_finds_what_the_heaps_find(
            (degree, lists, rank, entries) in random_layer(),
        ) {
            let layer = Layer::new(degree, lists.len());
            for (node, list) in lists.iter().enumerate() {
                let node = node as u32;
                let mut list = list.clone();
                list.retain(|&other| other != node);
                list.sort_unstable();
                list.dedup();
                let guard = layer.lock(node);
                layer.set_neighbours(&guard, node, &list);
            }
            let distance = |node: u32| rank[node as usize] as f32 * 0.5;
            for ef in [1, 2, 8, 64, 5000] {
                let (mut heaps, mut beam) = (Vec::new(), Vec::new());
                let mut scratch = SearchScratch::new();
                let by_heaps = search_layer(
                    &layer,
                    &entries,
                    ef,
                    distance,
                    |_| true,
                    |_| (),
                    &mut scratch,
                    &mut heaps,
                );
                let by_beam =
                    search_layer_beam(&layer, &entries, ef, distance, |_| (), &mut scratch, &mut beam);
                prop_assert_eq!(by_beam, by_heaps, "ef {}: distances computed", ef);
                prop_assert_eq!(&beam, &heaps, "ef {}", ef);
                prop_assert!(beam.len() <= ef);
            }
        }
    }

    #[test]
    fn the_returned_count_is_the_distances_computed() {
        let layer = path_layer();
        let mut scratch = SearchScratch::new();
        let mut out = Vec::new();
        let calls = std::cell::Cell::new(0u64);
        let distance = |node: u32| {
            calls.set(calls.get() + 1);
            (node as f32 - 7.0).abs()
        };
        let computed = search_layer(
            &layer,
            &[0],
            2,
            distance,
            |_| true,
            |_| (),
            &mut scratch,
            &mut out,
        );
        assert_eq!(computed, calls.get());
        // From 0 the walk measures every node up to 7 and both of its neighbours.
        assert_eq!(computed, 9);
    }
}

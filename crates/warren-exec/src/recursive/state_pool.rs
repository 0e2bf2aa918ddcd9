//! One-source BFS states kept between queries. A [`Bfs`]'s per-node arrays (distances, path
//! counts, claims, frontier bitmaps) cost O(nodes) to allocate and fill, while a search resets
//! only the nodes it reached. The pool lends a state sized for a graph's node count and takes
//! it back after the search, so a query that reaches few nodes costs O(reached), not O(nodes),
//! from its second run on. Idle states are bounded in bytes ([`IDLE_BYTES_MAX`] by default);
//! the oldest go first when a returned state would exceed the bound.

use super::bfs::{Bfs, BfsConfig};
use super::idle_pool::{HeldBytes, IdlePool};

/// The default bound on the bytes of idle states one pool keeps (a database's pool holds them
/// between queries; 256 MiB keeps two ALL SHORTEST states at Graph500 scale 22, 4.2M nodes).
pub const IDLE_BYTES_MAX: u64 = 256 << 20;

/// Idle BFS states, lent to one search at a time.
#[derive(Debug)]
pub struct SearchStatePool {
    idle: IdlePool<Bfs>,
}

impl HeldBytes for Bfs {
    fn held_bytes(&self) -> u64 {
        Bfs::held_bytes(self)
    }
}

impl Default for SearchStatePool {
    fn default() -> Self {
        Self::new(IDLE_BYTES_MAX)
    }
}

impl SearchStatePool {
    /// A pool keeping at most `limit_bytes` of idle states.
    pub fn new(limit_bytes: u64) -> Self {
        Self {
            idle: IdlePool::new(limit_bytes),
        }
    }

    /// A state for a graph of `nodes` nodes searched with `config`: an idle one whose arrays
    /// fit, reconfigured, or a new one.
    pub fn take(&self, nodes: u32, config: BfsConfig) -> Bfs {
        match self.idle.take_newest(|bfs| bfs.fits(nodes, &config)) {
            Some(mut bfs) => {
                bfs.reconfigure(config);
                bfs
            }
            None => Bfs::new(nodes, config),
        }
    }

    /// Keeps `bfs` for a later search (see [`IdlePool::give_back`]).
    pub fn give_back(&self, bfs: Bfs) {
        self.idle.give_back(bfs);
    }

    /// Bytes the idle states hold.
    pub fn idle_bytes(&self) -> u64 {
        self.idle.idle_bytes()
    }

    /// Idle states.
    pub fn idle_states(&self) -> usize {
        self.idle.idle_states()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    use proptest::prelude::*;

    use super::super::bfs::{BfsMode, BfsSearch, CountOutput};
    use super::super::graph::Graph;
    use super::super::masks::{Bitset, DestinationMask, Masks};
    use super::super::scheduler::run_tasks;
    use super::*;
    use crate::context::Interrupt;

    /// Counts from each source in turn, every search through `bfs` (`per_destination`: the
    /// per-destination pass; else totals counted level by level in `Lengths` mode).
    fn searches(
        bfs: &Bfs,
        graph: &Graph,
        sources: &[u32],
        per_destination: bool,
        threads: usize,
    ) -> Vec<CountOutput> {
        sources
            .iter()
            .map(|&source| {
                search_once(bfs, graph, source, per_destination, threads, false)
                    .expect("the search runs")
            })
            .collect()
    }

    /// One counting search from `source` through `bfs` (as [`searches`]), its error (a path
    /// count past `u64`, an interrupt) as text; `interrupted`: the query's interrupt is raised
    /// before the search runs.
    fn search_once(
        bfs: &Bfs,
        graph: &Graph,
        source: u32,
        per_destination: bool,
        threads: usize,
        interrupted: bool,
    ) -> Result<CountOutput, String> {
        let masks = Masks {
            destination: DestinationMask::Set(Arc::new(Bitset::full(graph.num_nodes() as usize))),
            intermediate: None,
            edges: None,
        };
        let search = BfsSearch {
            bfs,
            graph,
            masks: &masks,
            recorder: None,
            counting: Some((1, per_destination)),
            all_destinations: true,
        };
        let interrupt = Interrupt::new(None, Arc::new(AtomicBool::new(interrupted)));
        let outputs = run_tasks(
            std::slice::from_ref(&search),
            &[(source, None)],
            threads,
            &crate::workers::WorkerPool::new(),
            &interrupt,
        )
        .map_err(|error| error.to_string())?;
        Ok(outputs[0].clone().expect("counting mode keeps counts"))
    }

    /// A path-count search's configuration, pulling bottom-up where the direction choice
    /// says (`direction_optimizing`) or pushing top-down only.
    fn path_counts(direction_optimizing: bool) -> BfsConfig {
        BfsConfig {
            mode: BfsMode::PathCounts,
            upper: 30,
            direction_optimizing,
            morsel_size: 3,
            prefetch_distance: 0,
            binned_edges_min: None,
            list_prefetch_min_bytes: None,
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// A state reused from the pool, whether its last search touched few nodes (reset node
        /// by node) or most (reset wholesale), gives every search the answer of a new state;
        /// with `Lengths` claims binned, the answer of the compare-and-swap claims.
        #[test]
        fn a_reused_state_answers_as_a_new_one(
            nodes in 1u32..120,
            picks in proptest::collection::vec((0u32..1000, 0u32..1000), 0..500),
            sources in proptest::collection::vec(0u32..1000, 1..12),
            mode in prop_oneof![Just(BfsMode::Lengths), Just(BfsMode::PathCounts), Just(BfsMode::Parents)],
            direction_optimizing in proptest::bool::ANY,
            per_destination in proptest::bool::ANY,
            threads in 1usize..3,
            binned in proptest::bool::ANY,
            list_prefetch in proptest::bool::ANY,
        ) {
            let edges: Vec<(u32, u32)> = picks.iter().map(|(a, b)| (a % nodes, b % nodes)).collect();
            let graph = Graph::from_edges(nodes, &edges);
            let sources: Vec<u32> = sources.iter().map(|s| s % nodes).collect();
            let config = BfsConfig {
                mode,
                upper: 30,
                direction_optimizing,
                morsel_size: 3,
                prefetch_distance: 0,
                binned_edges_min: binned.then_some(0),
                list_prefetch_min_bytes: list_prefetch.then_some(0),
            };
            let pool = SearchStatePool::default();
            let mut reused = Vec::new();
            for &source in &sources {
                let bfs = pool.take(nodes, config);
                reused.extend(searches(&bfs, &graph, &[source], per_destination, threads));
                pool.give_back(bfs);
            }
            prop_assert_eq!(pool.idle_states(), 1);
            let fresh: Vec<CountOutput> = sources
                .iter()
                .flat_map(|&source| {
                    searches(&Bfs::new(nodes, config), &graph, &[source], per_destination, threads)
                })
                .collect();
            prop_assert_eq!(&reused, &fresh);
            // Claims through destination bins (every top-down level binned) answer as the
            // compare-and-swap claims do, and bottom-up levels that prefetch in-lists as those
            // that do not.
            let direct = BfsConfig {
                binned_edges_min: None,
                list_prefetch_min_bytes: None,
                ..config
            };
            let claimed: Vec<CountOutput> = sources
                .iter()
                .flat_map(|&source| {
                    searches(&Bfs::new(nodes, direct), &graph, &[source], per_destination, threads)
                })
                .collect();
            prop_assert_eq!(&fresh, &claimed);
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

        /// Path counts pulled bottom-up (the flat pull of dense levels, `bfs::find_parents_flat`,
        /// and the node-by-node pull, with the prefetches of a graph past the cache and without:
        /// `bfs::find_parents_pipelined`) equal those pushed top-down, on graphs dense enough for
        /// the flat pull, with a node of more in-edges than a flat run holds (`hub`) and with
        /// parallel edges whose counts grow past what a run may sum flat, up to overflow
        /// (`chain`: both directions must fail alike).
        #[test]
        fn pulled_path_counts_equal_pushed_ones(
            nodes in 2u32..160,
            picks in proptest::collection::vec((0u32..1000, 0u32..1000), 0..2500),
            sources in proptest::collection::vec(0u32..1000, 1..6),
            hub in proptest::bool::ANY,
            chain in 0u32..14,
            per_destination in proptest::bool::ANY,
            threads in 1usize..3,
        ) {
            let mut edges: Vec<(u32, u32)> =
                picks.iter().map(|(a, b)| (a % nodes, b % nodes)).collect();
            if hub {
                edges.extend((0..4_200).map(|i| ((i * 7 + 1) % nodes, 0)));
            }
            // A chain 0 -> 1 -> ... of 64 parallel edges per link: 64^k paths to its k-th node.
            for link in 0..chain.min(nodes - 1) {
                edges.extend(std::iter::repeat_n((link, link + 1), 64));
            }
            let graph = Graph::from_edges(nodes, &edges);
            let sources: Vec<u32> = sources.iter().map(|s| s % nodes).collect();
            let (pulled, pushed) = (path_counts(true), path_counts(false));
            let run = |config: BfsConfig| -> Vec<Result<CountOutput, String>> {
                sources
                    .iter()
                    .map(|&source| {
                        search_once(&Bfs::new(nodes, config), &graph, source, per_destination, threads, false)
                    })
                    .collect()
            };
            let pushed = run(pushed);
            prop_assert_eq!(&run(pulled), &pushed);
            prop_assert_eq!(&run(prefetching(pulled)), &pushed);
        }
    }

    /// `config` prefetching as on a graph past the cache, however small the graph.
    fn prefetching(config: BfsConfig) -> BfsConfig {
        BfsConfig {
            list_prefetch_min_bytes: Some(0),
            ..config
        }
    }

    /// A pull level whose parents' counts sum past `u64` fails as the push does, and one that
    /// stays below sums exactly: the flat pull sums a run only where the frontier's total times
    /// its in-edges fits `u64`. A chain of eight links of 64 parallel edges gives its end 2^48
    /// paths; `wide` nodes after it, 16 parallel edges each, get 2^52 each; 16 nodes after
    /// those (one bitmap word's worth of nodes to test flat) have each of them as a parent
    /// `parallel` times: 2^55 paths each with 8 wide nodes once, and with 128 wide nodes 32
    /// times 2^64 (which a wrapping sum takes for 0) over 4,096 in-edges, as many as a flat
    /// run holds.
    #[test]
    fn a_pulled_sum_past_u64_fails_as_a_pushed_one() {
        for (wide, parallel, overflows) in [(8u32, 1, false), (128, 32, true)] {
            let chain_end = 8;
            let first_wide = chain_end + 1;
            let first_last = first_wide + wide;
            let nodes = first_last + 16;
            let mut edges = Vec::new();
            for link in 0..chain_end {
                edges.extend(std::iter::repeat_n((link, link + 1), 64));
            }
            for w in first_wide..first_last {
                edges.extend(std::iter::repeat_n((chain_end, w), 16));
                for last in first_last..nodes {
                    edges.extend(std::iter::repeat_n((w, last), parallel));
                }
            }
            let graph = Graph::from_edges(nodes, &edges);
            let (pulled, pushed) = (path_counts(true), path_counts(false));
            for (threads, per_destination) in [(1, false), (2, false), (1, true)] {
                let run = |config| {
                    search_once(
                        &Bfs::new(nodes, config),
                        &graph,
                        0,
                        per_destination,
                        threads,
                        false,
                    )
                };
                let answer = run(pushed);
                assert_eq!(answer.is_err(), overflows, "{wide}: {answer:?}");
                assert_eq!(run(pulled), answer, "{wide} wide, {threads} threads");
                assert_eq!(run(prefetching(pulled)), answer, "{wide} wide, prefetching");
            }
        }
    }

    /// A search interrupted in its reset phase (every node to rewrite, in chunks on the
    /// query's threads) leaves its state half reset; the next search on it must rewrite every
    /// node again and answer as a new state does.
    #[test]
    fn a_search_abandoned_in_its_reset_phase_leaves_a_state_that_answers_as_a_new_one() {
        let nodes = 300u32;
        let edges: Vec<(u32, u32)> = (0..nodes)
            .flat_map(|v| [(v, (v + 1) % nodes), (v, (v * 7 + 3) % nodes)])
            .collect();
        let graph = Graph::from_edges(nodes, &edges);
        for mode in [BfsMode::Lengths, BfsMode::PathCounts, BfsMode::Parents] {
            let config = config(mode);
            let bfs = Bfs::new(nodes, config);
            searches(&bfs, &graph, &[0], true, 2);
            // Interrupted before the reset phase's first chunk: every node still holds the
            // first search's values.
            let stopped = search_once(&bfs, &graph, 5, true, 2, true);
            assert!(stopped.is_err(), "{mode:?}: the interrupt stops the search");
            assert_eq!(
                searches(&bfs, &graph, &[7], true, 2),
                searches(&Bfs::new(nodes, config), &graph, &[7], true, 2),
                "{mode:?}"
            );
        }
    }

    fn config(mode: BfsMode) -> BfsConfig {
        BfsConfig {
            mode,
            upper: 30,
            direction_optimizing: true,
            morsel_size: 64,
            prefetch_distance: 0,
            binned_edges_min: None,
            list_prefetch_min_bytes: None,
        }
    }

    #[test]
    fn a_returned_state_is_lent_again_only_where_it_fits() {
        let pool = SearchStatePool::default();
        pool.give_back(Bfs::new(1000, config(BfsMode::Lengths)));
        assert_eq!(pool.idle_states(), 1);
        // Another size or mode gets a new state; the idle one stays.
        let other = pool.take(999, config(BfsMode::Lengths));
        let counts = pool.take(1000, config(BfsMode::PathCounts));
        assert_eq!(pool.idle_states(), 1);
        pool.give_back(other);
        pool.give_back(counts);
        assert_eq!(pool.idle_states(), 3);
        let mut wider = config(BfsMode::Lengths);
        wider.upper = 5;
        let lent = pool.take(1000, wider);
        assert_eq!(pool.idle_states(), 2);
        assert_eq!(
            lent.config().upper,
            5,
            "the lent state takes the new config"
        );
    }

    #[test]
    fn idle_states_stay_within_the_bound() {
        let one = Bfs::new(10_000, config(BfsMode::Lengths)).held_bytes();
        let pool = SearchStatePool::new(one * 2 + one / 2);
        for _ in 0..5 {
            pool.give_back(Bfs::new(10_000, config(BfsMode::Lengths)));
        }
        assert_eq!(pool.idle_states(), 2);
        assert!(pool.idle_bytes() <= one * 2 + one / 2);
        let small = SearchStatePool::new(one - 1);
        small.give_back(Bfs::new(10_000, config(BfsMode::Lengths)));
        assert_eq!(
            small.idle_states(),
            0,
            "a state above the bound is not kept"
        );
    }
}

//! Choosing k, the number of sources traversed at once, when the `max_active_sources` setting
//! is `auto`. The inputs are the graph's degree distribution (average out-degree, and the share
//! of edges held by the largest hubs), the number of sources and threads, and the algorithm.
//! The rules come from the k-sweeps recorded in `docs/OPTIMIZATION_LOG.md`.

use super::graph::Graph;
use super::multi_source_bfs::LANES;

/// Average out-degree from which a graph counts as dense.
pub const DENSE_DEGREE: u64 = 64;

/// Which traversal k is chosen for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Traversal {
    /// Bit-parallel sweeps: k sources share each sweep (lanes), up to 64 per sweep.
    MultiSource,
    /// One search per source, each with its own level array of `state_bytes`.
    PerSource { state_bytes: u64 },
}

/// The k a query runs with, and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KChoice {
    pub k: usize,
    pub reason: String,
}

/// The graph's shape, as far as the choice of k needs it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DegreeProfile {
    pub nodes: u64,
    pub edges: u64,
}

impl DegreeProfile {
    pub fn of(graph: &Graph) -> Self {
        Self {
            nodes: u64::from(graph.num_nodes()),
            edges: graph.forward.view().num_entries(),
        }
    }

    pub fn average_degree(&self) -> u64 {
        self.edges / self.nodes.max(1)
    }
}

/// k for `sources` sources on `threads` threads: the setting when there is one, else the rule
/// for the traversal.
pub fn choose_k(
    setting: Option<usize>,
    profile: DegreeProfile,
    sources: usize,
    threads: usize,
    traversal: Traversal,
) -> KChoice {
    let sources = sources.max(1);
    if let Some(k) = setting {
        return KChoice {
            k: k.max(1),
            reason: "set (max_active_sources)".into(),
        };
    }
    let degree = profile.average_degree();
    match traversal {
        Traversal::MultiSource => KChoice {
            k: sources.min(LANES),
            reason: format!(
                "auto: one bit-parallel sweep carries up to {LANES} sources (average degree {degree})"
            ),
        },
        Traversal::PerSource { state_bytes } => {
            let dense = degree >= DENSE_DEGREE;
            let wanted = if dense {
                dense_k(threads)
            } else {
                SPARSE_SOURCES_PER_THREAD * threads.max(1)
            };
            let k = within_cache(wanted, threads, state_bytes).min(sources);
            let shape = if dense { "dense" } else { "sparse" };
            KChoice {
                k,
                reason: format!(
                    "auto: {shape} graph (average degree {degree}), {k} search state(s) of \
                     {} KiB; more sources than threads only while their states fit in {} MiB",
                    state_bytes / 1024,
                    CACHED_STATES_BYTES >> 20
                ),
            }
        }
    }
}

/// Sources per thread on a sparse graph: a thread whose source waits at a level barrier, or
/// ends, finds another source with work at once. The k-sweeps on two cores (graph500, social,
/// dense; docs/OPTIMIZATION_LOG.md, entry 10) measured k = 8 best or within noise of the best.
const SPARSE_SOURCES_PER_THREAD: usize = 4;

/// Search states beyond one per thread are allowed only while they all fit in this many bytes
/// (a typical last-level cache), the seed's memory-traffic argument against large k.
pub const CACHED_STATES_BYTES: u64 = 32 << 20;

/// k on a dense graph: a quarter of the threads share each source (its frontier is most of the
/// graph after one level), and at least 4 sources: on two cores one shared source measured
/// 2.5x slower than two, and k from 4 to 16 within noise of each other.
fn dense_k(threads: usize) -> usize {
    (threads.max(1) / 4).max(4)
}

/// `wanted` cut down so that the states beyond one per thread fit in [`CACHED_STATES_BYTES`]
/// (never below one per thread, or `wanted` when that is smaller).
fn within_cache(wanted: usize, threads: usize, state_bytes: u64) -> usize {
    let floor = wanted.min(threads.max(1));
    let cached = (CACHED_STATES_BYTES / state_bytes.max(1)).min(usize::MAX as u64) as usize;
    wanted.min(cached).max(floor).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(nodes: u64, degree: u64) -> DegreeProfile {
        DegreeProfile {
            nodes,
            edges: nodes * degree,
        }
    }

    /// One search state of a graph with `nodes` nodes (8 bytes per node).
    fn per_source(nodes: u64) -> Traversal {
        Traversal::PerSource {
            state_bytes: nodes * 8,
        }
    }

    #[test]
    fn a_setting_wins() {
        let choice = choose_k(Some(3), profile(100, 2), 64, 8, per_source(100));
        assert_eq!(choice.k, 3);
        assert!(choice.reason.starts_with("set"));
    }

    #[test]
    fn sparse_graphs_get_four_sources_per_thread_while_states_fit_in_cache() {
        let g18 = 1 << 18;
        assert_eq!(
            choose_k(None, profile(g18, 15), 64, 2, per_source(g18)).k,
            8
        );
        assert_eq!(choose_k(None, profile(g18, 15), 3, 8, per_source(g18)).k, 3);
        // 2 MiB states: 16 fit in the cache budget, so 8 threads get 16, not 32.
        assert_eq!(
            choose_k(None, profile(g18, 15), 64, 8, per_source(g18)).k,
            16
        );
        // Huge states: one per thread, never fewer.
        let huge = 1 << 28;
        assert_eq!(
            choose_k(None, profile(huge, 15), 64, 8, per_source(huge)).k,
            8
        );
        assert_eq!(
            choose_k(None, profile(huge, 15), 64, 1, per_source(huge)).k,
            1
        );
    }

    #[test]
    fn dense_graphs_share_sources_between_threads() {
        let nodes = 20_000;
        let dense = |threads| choose_k(None, profile(nodes, 500), 64, threads, per_source(nodes)).k;
        assert_eq!(dense(1), 4);
        assert_eq!(dense(2), 4);
        assert_eq!(dense(16), 4);
        assert_eq!(dense(32), 8);
        assert!(dense(64) < choose_k(None, profile(nodes, 15), 64, 64, per_source(nodes)).k);
    }

    #[test]
    fn sweeps_carry_up_to_a_word_of_sources() {
        assert_eq!(
            choose_k(None, profile(1000, 4), 200, 2, Traversal::MultiSource).k,
            64
        );
        assert_eq!(
            choose_k(None, profile(1000, 4), 5, 2, Traversal::MultiSource).k,
            5
        );
    }
}

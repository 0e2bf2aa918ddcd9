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
    /// One search per source, each with its own level array.
    PerSource,
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
            edges: graph.forward.targets().len() as u64,
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
        Traversal::PerSource if degree >= DENSE_DEGREE => KChoice {
            k: dense_k(threads).min(sources),
            reason: format!(
                "auto: dense graph (average degree {degree}): about 4 threads share each source, \
                 whose frontier alone keeps them busy, so fewer level arrays compete for cache"
            ),
        },
        Traversal::PerSource => KChoice {
            k: threads.max(1).min(sources),
            reason: format!(
                "auto: sparse graph (average degree {degree}): one source per thread, no \
                 synchronization inside a search"
            ),
        },
    }
}

/// k on a dense graph: a quarter of the threads, so that each source's frontier (most of the
/// graph after one or two levels) is shared by about four threads, but never below two where
/// there are two threads: the k-sweep on two cores measured one shared source 2.5x slower
/// than two (docs/OPTIMIZATION_LOG.md, "auto-k on dense graphs").
fn dense_k(threads: usize) -> usize {
    let threads = threads.max(1);
    (threads / 4).max(2).min(threads)
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

    #[test]
    fn a_setting_wins() {
        let choice = choose_k(Some(3), profile(100, 2), 64, 8, Traversal::PerSource);
        assert_eq!(choice.k, 3);
        assert!(choice.reason.starts_with("set"));
    }

    #[test]
    fn sparse_graphs_get_one_source_per_thread_and_dense_graphs_few() {
        assert_eq!(
            choose_k(None, profile(1 << 18, 15), 64, 8, Traversal::PerSource).k,
            8
        );
        assert_eq!(
            choose_k(None, profile(1 << 18, 15), 3, 8, Traversal::PerSource).k,
            3
        );
        assert_eq!(
            choose_k(None, profile(20_000, 500), 64, 2, Traversal::PerSource).k,
            2
        );
        assert_eq!(
            choose_k(None, profile(20_000, 500), 64, 8, Traversal::PerSource).k,
            2
        );
        assert_eq!(
            choose_k(None, profile(20_000, 500), 64, 32, Traversal::PerSource).k,
            8
        );
        assert_eq!(
            choose_k(None, profile(20_000, 500), 64, 1, Traversal::PerSource).k,
            1
        );
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

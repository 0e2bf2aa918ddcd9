//! Choosing k, the number of sources traversed at once, when the `max_active_sources` setting
//! is `auto`. The inputs are the graph's degree distribution (average out-degree, and the share
//! of edges held by the largest hubs), the number of sources and threads, and the algorithm.
//! The rules come from the k-sweeps recorded in `docs/OPTIMIZATION_LOG.md`. For bit-parallel
//! sweeps, k is split into lanes per sweep (the lane word's width) and sweeps at once, from
//! the per-node state size and the cache budget.

use super::graph::Graph;
use super::lanes::{state_bytes_per_node, word_bits};
use super::multi_source_bfs::LANES;

/// Average out-degree from which a graph counts as dense.
pub const DENSE_DEGREE: u64 = 64;

/// Which traversal k is chosen for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Traversal {
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

/// How many-source SHORTEST runs as bit-parallel sweeps: `lanes` sources per sweep in words of
/// `word_bits` bits, `sweeps` sweeps at once (k = lanes x sweeps), and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SweepChoice {
    pub lanes: usize,
    pub word_bits: usize,
    pub sweeps: usize,
    pub reason: String,
}

impl SweepChoice {
    /// Sources active at once.
    pub fn k(&self) -> usize {
        self.lanes * self.sweeps
    }
}

/// Lanes and sweeps for `sources` sources on `threads` threads. A setting k gives k lanes (up
/// to 64) in the narrowest word that holds them, and ceil(k / 64) sweeps at once. Automatic:
/// as many lanes as sources, up to 64, since every further sweep repeats the scan of the
/// edges; the narrowest word that holds them; and more sweeps at once than one only while
/// their states all fit in [`CACHED_STATES_BYTES`] (at most one per thread: each sweep is
/// parallel inside its levels, a second one only fills a level barrier's idle time).
pub fn choose_sweeps(
    setting: Option<usize>,
    profile: DegreeProfile,
    sources: usize,
    threads: usize,
) -> SweepChoice {
    let sources = sources.max(1);
    let lanes = setting.unwrap_or(sources).clamp(1, LANES);
    let bits = word_bits(lanes);
    let state = profile.nodes * state_bytes_per_node(bits);
    let batches = sources.div_ceil(lanes);
    let fitting = (CACHED_STATES_BYTES / state.max(1)).min(usize::MAX as u64) as usize;
    let sweeps = match setting {
        Some(k) => k.max(1).div_ceil(LANES),
        None => fitting.min(threads.max(1)),
    }
    .clamp(1, batches);
    let fits = if state <= CACHED_STATES_BYTES {
        "fits in"
    } else {
        "exceeds"
    };
    let how = if setting.is_some() {
        "set (max_active_sources)"
    } else {
        "auto"
    };
    let reason = format!(
        "{how}: lanes {lanes} x u{bits}, {sweeps} sweep(s) at once, {batches} in all: state \
         {} B/node x {} nodes = {} per sweep, which {fits} the {} MiB cache budget{}",
        state_bytes_per_node(bits),
        count(profile.nodes),
        mebibytes(state),
        CACHED_STATES_BYTES >> 20,
        if setting.is_some() || state <= CACHED_STATES_BYTES {
            ""
        } else {
            "; narrower lanes would fit but repeat the scan of the edges once per extra sweep, \
             which costs more than the misses they save (k-sweep at scale 21)"
        }
    );
    SweepChoice {
        lanes,
        word_bits: bits,
        sweeps,
        reason,
    }
}

/// `n` with a k/M suffix and one decimal (2.1M).
fn count(n: u64) -> String {
    match n {
        0..1_000 => n.to_string(),
        1_000..1_000_000 => format!("{:.1}k", n as f64 / 1e3),
        _ => format!("{:.1}M", n as f64 / 1e6),
    }
}

/// Bytes as MiB with one decimal, or KiB below one MiB, or bytes below one KiB.
fn mebibytes(bytes: u64) -> String {
    if bytes < 1 << 10 {
        format!("{bytes} B")
    } else if bytes < 1 << 20 {
        format!("{:.1} KiB", bytes as f64 / 1024.0)
    } else {
        format!("{:.1} MiB", bytes as f64 / f64::from(1u32 << 20))
    }
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
    fn sweeps_carry_up_to_a_word_of_sources_in_the_narrowest_word() {
        let choice = choose_sweeps(None, profile(1000, 4), 200, 2);
        assert_eq!((choice.lanes, choice.word_bits, choice.sweeps), (64, 64, 2));
        let choice = choose_sweeps(None, profile(1000, 4), 5, 2);
        assert_eq!((choice.lanes, choice.word_bits, choice.sweeps), (5, 8, 1));
        let choice = choose_sweeps(None, profile(1000, 4), 20, 2);
        assert_eq!((choice.lanes, choice.word_bits), (20, 32));
    }

    #[test]
    fn concurrent_sweeps_only_while_their_states_fit() {
        // Scale 18: 6 MiB per 64-lane sweep, two fit in the budget.
        let s18 = choose_sweeps(None, profile(1 << 18, 15), 256, 2);
        assert_eq!((s18.lanes, s18.sweeps), (64, 2));
        assert!(
            s18.reason.contains("24 B/node x 262.1k nodes = 6.0 MiB"),
            "{}",
            s18.reason
        );
        // Scale 21: 48 MiB per sweep, one at a time, still 64 lanes.
        let s21 = choose_sweeps(None, profile(1 << 21, 15), 256, 2);
        assert_eq!((s21.lanes, s21.word_bits, s21.sweeps), (64, 64, 1));
        assert!(
            s21.reason
                .contains("= 48.0 MiB per sweep, which exceeds the 32 MiB"),
            "{}",
            s21.reason
        );
        // Never more sweeps than batches.
        assert_eq!(choose_sweeps(None, profile(1 << 10, 15), 64, 8).sweeps, 1);
    }

    #[test]
    fn a_sweep_setting_gives_lanes_and_sweeps() {
        let set = |k| {
            let c = choose_sweeps(Some(k), profile(1 << 21, 15), 256, 2);
            (c.lanes, c.word_bits, c.sweeps)
        };
        assert_eq!(set(8), (8, 8, 1));
        assert_eq!(set(16), (16, 16, 1));
        assert_eq!(set(32), (32, 32, 1));
        assert_eq!(set(64), (64, 64, 1));
        assert_eq!(set(128), (64, 64, 2));
        assert_eq!(set(1000), (64, 64, 4));
        assert!(choose_sweeps(Some(8), profile(8, 1), 3, 2)
            .reason
            .starts_with("set"));
    }
}

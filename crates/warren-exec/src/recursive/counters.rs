//! What a traversal did, for `PROFILE` and `warren bench`: the algorithm, the number of active
//! sources (k) it ran with, and software counters per level (frontier sizes, edges scanned,
//! compare-and-swap failures, time). Workers count into thread-local [`LevelCounters`] and merge
//! them once per morsel, so counting costs nothing measurable.

use std::sync::Mutex;
use std::time::Duration;

/// The summary of one recursive join's work over a whole query.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TraversalSummary {
    /// The algorithm that ran, e.g. `multi-source BFS (64 lanes)`.
    pub algorithm: String,
    pub threads: usize,
    /// The k used (sources traversed at once).
    pub max_active_sources: usize,
    /// Whether k was chosen automatically, and why.
    pub k_reason: String,
    pub sources: u64,
    pub edges_scanned: u64,
    pub cas_failures: u64,
    pub time: Duration,
    /// Per level (index 0 is level 1), summed over sources.
    pub levels: Vec<LevelSummary>,
}

/// One BFS or DP level, summed over the sources that reached it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LevelSummary {
    /// Nodes in the frontier the level expanded.
    pub frontier: u64,
    pub edges_scanned: u64,
    /// (source, level) pairs expanded top-down and bottom-up.
    pub top_down: u64,
    pub bottom_up: u64,
    pub time: Duration,
}

/// Thread-local counts of one level, merged into a [`TraversalRecorder`].
#[derive(Clone, Copy, Debug, Default)]
pub struct LevelCounters {
    pub edges_scanned: u64,
    pub cas_failures: u64,
}

/// Collects the counters of one recursive join from many threads.
#[derive(Debug, Default)]
pub struct TraversalRecorder {
    summary: Mutex<TraversalSummary>,
}

impl TraversalRecorder {
    pub fn new(algorithm: impl Into<String>, threads: usize, k: usize, k_reason: &str) -> Self {
        Self {
            summary: Mutex::new(TraversalSummary {
                algorithm: algorithm.into(),
                threads,
                max_active_sources: k,
                k_reason: k_reason.to_string(),
                ..TraversalSummary::default()
            }),
        }
    }

    /// Names the algorithm and the k it runs with (the latest description wins).
    pub fn describe(&self, algorithm: &str, threads: usize, k: usize, k_reason: &str) {
        self.with(|s| {
            s.algorithm = algorithm.to_string();
            s.threads = threads;
            s.max_active_sources = k;
            s.k_reason = k_reason.to_string();
        });
    }

    fn with<R>(&self, f: impl FnOnce(&mut TraversalSummary) -> R) -> R {
        f(&mut self.summary.lock().expect("traversal summary lock"))
    }

    /// Records that a level (1-based) expanded `frontier` nodes in one direction.
    pub fn level(&self, level: u32, frontier: u64, bottom_up: bool, time: Duration) {
        assert!(level >= 1, "levels are 1-based");
        self.with(|s| {
            let index = level as usize - 1;
            if s.levels.len() <= index {
                s.levels.resize(index + 1, LevelSummary::default());
            }
            let entry = &mut s.levels[index];
            entry.frontier += frontier;
            entry.time += time;
            if bottom_up {
                entry.bottom_up += 1;
            } else {
                entry.top_down += 1;
            }
        });
    }

    /// Adds a morsel's counters to `level` (1-based).
    pub fn merge(&self, level: u32, counters: LevelCounters) {
        if counters.edges_scanned == 0 && counters.cas_failures == 0 {
            return;
        }
        self.with(|s| {
            let index = level.max(1) as usize - 1;
            if s.levels.len() <= index {
                s.levels.resize(index + 1, LevelSummary::default());
            }
            s.levels[index].edges_scanned += counters.edges_scanned;
            s.edges_scanned += counters.edges_scanned;
            s.cas_failures += counters.cas_failures;
        });
    }

    pub fn add_sources(&self, sources: u64) {
        self.with(|s| s.sources += sources);
    }

    pub fn add_time(&self, time: Duration) {
        self.with(|s| s.time += time);
    }

    pub fn summary(&self) -> TraversalSummary {
        self.with(|s| s.clone())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_and_counters_add_up() {
        let recorder = TraversalRecorder::new("BFS", 2, 1, "fixed");
        recorder.level(1, 1, false, Duration::from_millis(1));
        recorder.level(2, 10, true, Duration::from_millis(2));
        recorder.merge(
            2,
            LevelCounters {
                edges_scanned: 40,
                cas_failures: 3,
            },
        );
        recorder.merge(
            1,
            LevelCounters {
                edges_scanned: 5,
                cas_failures: 0,
            },
        );
        let summary = recorder.summary();
        assert_eq!(summary.edges_scanned, 45);
        assert_eq!(summary.cas_failures, 3);
        assert_eq!(summary.levels.len(), 2);
        assert_eq!(summary.levels[1].frontier, 10);
        assert_eq!(summary.levels[1].bottom_up, 1);
        assert_eq!(summary.levels[0].top_down, 1);
    }
}

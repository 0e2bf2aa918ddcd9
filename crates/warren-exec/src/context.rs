//! The state one query runs with: the snapshot it reads (replaced when an updating clause
//! commits its edits), the tables changed so far, limits (memory, deadline, interruption) and
//! the number of worker threads.

use std::cell::RefCell;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use warren_common::{Error, Limits, Result};
use warren_storage::editor::Changes;
use warren_storage::Snapshot;

use crate::recursive::counters::{TraversalRecorder, TraversalSummary};

/// Counts bytes held by a query's materializing state against its memory limit.
#[derive(Debug)]
pub struct MemoryTracker {
    used: AtomicU64,
    peak: AtomicU64,
    limit: u64,
}

impl MemoryTracker {
    pub fn new(limit: u64) -> Self {
        Self {
            used: AtomicU64::new(0),
            peak: AtomicU64::new(0),
            limit,
        }
    }

    /// Reserves `bytes`; fails with `LimitExceeded` when the limit would be passed.
    pub fn reserve(&self, bytes: u64, what: &str) -> Result<()> {
        let used = self.used.fetch_add(bytes, Ordering::Relaxed) + bytes;
        if used > self.limit {
            self.used.fetch_sub(bytes, Ordering::Relaxed);
            return Err(Error::LimitExceeded(format!(
                "{what} needs more than the query memory limit of {} bytes (memory_limit); narrow the query, add LIMIT, or raise the limit with CALL memory_limit=<bytes>",
                self.limit
            )));
        }
        self.peak.fetch_max(used, Ordering::Relaxed);
        Ok(())
    }

    pub fn release(&self, bytes: u64) {
        self.used.fetch_sub(
            bytes.min(self.used.load(Ordering::Relaxed)),
            Ordering::Relaxed,
        );
    }

    pub fn used(&self) -> u64 {
        self.used.load(Ordering::Relaxed)
    }

    pub fn peak(&self) -> u64 {
        self.peak.load(Ordering::Relaxed)
    }
}

/// Tells long-running work to stop: a deadline and a flag another thread may set.
#[derive(Clone, Debug)]
pub struct Interrupt {
    deadline: Option<Instant>,
    flag: Arc<AtomicBool>,
}

impl Interrupt {
    pub fn new(deadline: Option<Instant>, flag: Arc<AtomicBool>) -> Self {
        Self { deadline, flag }
    }

    pub fn none() -> Self {
        Self {
            deadline: None,
            flag: Arc::new(AtomicBool::new(false)),
        }
    }

    /// An error if the query should stop now.
    pub fn check(&self) -> Result<()> {
        if self.flag.load(Ordering::Relaxed) {
            return Err(Error::Interrupted("the query was interrupted".into()));
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(Error::Interrupted(
                "the query exceeded its timeout (CALL timeout=<ms>)".into(),
            ));
        }
        Ok(())
    }
}

/// Settings the executor reads.
#[derive(Clone, Debug)]
pub struct ExecSettings {
    pub threads: usize,
    pub limits: Limits,
    pub engine: EngineSettings,
}

impl Default for ExecSettings {
    fn default() -> Self {
        Self {
            threads: 1,
            limits: Limits::default(),
            engine: EngineSettings::default(),
        }
    }
}

/// Knobs of the recursive engine. Each optimization that has one can be switched off, so that
/// `docs/OPTIMIZATION_LOG.md` measures before and after on the same binary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EngineSettings {
    /// `max_active_sources` (k): sources traversed at once; `None`: chosen per query.
    pub max_active_sources: Option<usize>,
    /// `prefetch_distance`: how many entries ahead the neighbour loops prefetch (0: off).
    pub prefetch_distance: usize,
    /// `morsel_size`: frontier nodes (or node ids, bottom-up) per unit of parallel work.
    pub morsel_size: usize,
    /// `bfs_direction`: switch between top-down and bottom-up levels (`auto`) or not.
    pub direction_optimizing: bool,
    /// `multi_source_bfs`: answer many-source SHORTEST lengths with bit-parallel sweeps.
    pub multi_source_bfs: bool,
    /// `binned_push`: top-down levels with many out-edges of many-source sweeps (and of
    /// one-source searches for lengths and path counts) go through destination bins instead of
    /// an atomic per edge.
    pub binned_push: bool,
    /// `walk_count_meet`: count walks by meeting a shared backward sweep from the
    /// destinations; off: one forward sweep per source.
    pub walk_count_meet: bool,
    /// `varlen_paths`: enumerate variable-length paths by depth-first search (`dfs`) or by
    /// per-level lock-free entry lists (`levels`).
    pub varlen_levels: bool,
}

impl Default for EngineSettings {
    fn default() -> Self {
        Self {
            max_active_sources: None,
            prefetch_distance: 16,
            morsel_size: 2048,
            direction_optimizing: true,
            multi_source_bfs: true,
            binned_push: true,
            walk_count_meet: true,
            varlen_levels: false,
        }
    }
}

/// Rows processed between two interrupt checks.
const TICKS_PER_CHECK: u64 = 4096;

#[derive(Debug)]
pub struct ExecContext {
    snapshot: RefCell<Arc<Snapshot>>,
    ticks: std::cell::Cell<u64>,
    changes: RefCell<Changes>,
    pub settings: ExecSettings,
    pub memory: Arc<MemoryTracker>,
    pub interrupt: Interrupt,
    /// One recorder per recursive join that ran, for PROFILE and benchmarks.
    pub traversals: Arc<Mutex<Vec<Arc<TraversalRecorder>>>>,
    /// Patterns `regexp_replace` compiled for this query.
    pub regex_cache: crate::eval::RegexCache,
    /// Where the rows LOAD FROM skips with `IGNORE_ERRORS` are recorded; `None` outside a
    /// connection (the rows are still skipped).
    pub warnings: Option<crate::warnings::WarningSink>,
    /// The database's built vector index graphs (a private, empty cache outside a database).
    pub vector_indexes: Arc<crate::vector_index::VectorIndexCache>,
    /// The database's int8 copies of stored vector blocks (a private cache outside a
    /// database).
    pub vector_copies: Arc<crate::vector_copy::VectorCopyCache>,
    /// Idle one-source search states, reused across queries (a private pool outside a
    /// database).
    pub search_states: Arc<crate::recursive::state_pool::SearchStatePool>,
    /// Idle spreading activation states, reused across queries (a private pool outside a
    /// database).
    pub spread_states: Arc<crate::recursive::spread::SpreadStatePool>,
    /// The threads the query's parallel loops run on, kept between queries (a private pool
    /// outside a database).
    pub workers: Arc<crate::workers::WorkerPool>,
}

impl ExecContext {
    /// A context over an empty snapshot with default settings and no deadline (for unit tests
    /// of operators that read no tables).
    #[cfg(test)]
    pub(crate) fn for_tests() -> Self {
        Self::new(
            Arc::new(Snapshot::default()),
            ExecSettings::default(),
            Interrupt::new(None, Arc::new(std::sync::atomic::AtomicBool::new(false))),
        )
    }

    pub fn new(snapshot: Arc<Snapshot>, settings: ExecSettings, interrupt: Interrupt) -> Self {
        let memory = Arc::new(MemoryTracker::new(settings.limits.query_memory_bytes));
        Self {
            snapshot: RefCell::new(snapshot),
            ticks: std::cell::Cell::new(0),
            changes: RefCell::new(Changes::default()),
            settings,
            memory,
            interrupt,
            traversals: Arc::default(),
            regex_cache: crate::eval::RegexCache::default(),
            warnings: None,
            vector_indexes: Arc::default(),
            vector_copies: Arc::default(),
            search_states: Arc::default(),
            workers: Arc::default(),
            spread_states: Arc::default(),
        }
    }

    /// The context, using the database's int8 copies of vector blocks.
    #[must_use]
    pub fn with_vector_copies(mut self, cache: Arc<crate::vector_copy::VectorCopyCache>) -> Self {
        self.vector_copies = cache;
        self
    }

    /// The context, using the database's vector index graphs.
    #[must_use]
    pub fn with_vector_indexes(
        mut self,
        cache: Arc<crate::vector_index::VectorIndexCache>,
    ) -> Self {
        self.vector_indexes = cache;
        self
    }

    /// The context, lending one-source search states from the database's `pool`.
    #[must_use]
    pub fn with_search_states(
        mut self,
        pool: Arc<crate::recursive::state_pool::SearchStatePool>,
    ) -> Self {
        self.search_states = pool;
        self
    }

    /// The context, lending spreading activation states from the database's `pool`.
    #[must_use]
    pub fn with_spread_states(
        mut self,
        pool: Arc<crate::recursive::spread::SpreadStatePool>,
    ) -> Self {
        self.spread_states = pool;
        self
    }

    /// The context, running its parallel loops on `workers`.
    pub fn with_workers(mut self, workers: Arc<crate::workers::WorkerPool>) -> Self {
        self.workers = workers;
        self
    }

    /// The context, recording its statement's warnings in `sink`.
    #[must_use]
    pub fn with_warnings(mut self, sink: crate::warnings::WarningSink) -> Self {
        self.warnings = Some(sink);
        self
    }

    /// Counts one unit of work; every few thousand, checks the deadline and the interrupt flag.
    #[inline]
    pub fn tick(&self) -> Result<()> {
        let ticks = self.ticks.get() + 1;
        self.ticks.set(ticks);
        if ticks.is_multiple_of(TICKS_PER_CHECK) {
            self.interrupt.check()?;
        }
        Ok(())
    }

    /// The snapshot reads see now.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.snapshot.borrow().clone()
    }

    /// Installs the snapshot an updating clause produced; later reads see it.
    pub fn install(&self, snapshot: Snapshot, changes: Changes) {
        *self.snapshot.borrow_mut() = Arc::new(snapshot);
        self.changes.borrow_mut().extend(changes);
    }

    /// Worker threads a query may use.
    pub fn threads(&self) -> usize {
        self.settings
            .threads
            .clamp(1, warren_common::limits::THREADS_MAX)
    }

    /// Registers a recursive join's recorder.
    pub fn record_traversal(&self, recorder: Arc<TraversalRecorder>) {
        self.traversals
            .lock()
            .expect("traversal list lock")
            .push(recorder);
    }

    /// What every recursive join of the query did so far.
    pub fn traversal_summaries(&self) -> Vec<TraversalSummary> {
        self.traversals
            .lock()
            .expect("traversal list lock")
            .iter()
            .map(|r| r.summary())
            .collect()
    }

    /// What this query's updating clauses changed.
    pub fn changes(&self) -> Changes {
        self.changes.borrow().clone()
    }
}
